//===- Pipeline.cpp - zeroc's training pipeline ---------------------------===//

#include "zeroc/Pipeline/Pipeline.h"

#include "zeroc/Dialect/Train/IR/TrainOps.h"
#include "zeroc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>

namespace zeroc {

/// What train-partition runs: everything of train-zero after the buckets,
/// one decision per pass, each reading the earlier ones from the IR.
static void addPartitionPasses(mlir::OpPassManager &pm, int64_t stage,
                               int64_t worldSize) {
  pm.addPass(createTrainShardStates({stage, worldSize}));
  pm.addPass(createTrainGatherParams());
  pm.addPass(createTrainReduceGradients());
  pm.addPass(createTrainShardOptimizer());
}

static void addZeroPasses(mlir::OpPassManager &pm, int64_t stage,
                          int64_t worldSize, int64_t bucketBytes) {
  pm.addPass(createTrainAssignBuckets({bucketBytes}));
  addPartitionPasses(pm, stage, worldSize);
}

void buildTrainingPipelineSection(mlir::OpPassManager &pm,
                                  const PipelineOptions &options,
                                  PipelineSection section) {
  switch (section) {
  case PipelineSection::Front:
    if (options.raise)
      pm.addPass(createTrainRaise());
    if (options.globalBatch)
      pm.addPass(createTrainBatchSize({options.globalBatch}));
    if (!options.precision.empty())
      pm.addPass(createTrainMixedPrecision({options.precision}));
    pm.addPass(createTrainLogits({/*required=*/false}));
    pm.addPass(createTrainDataParallel({options.worldSize}));
    pm.addPass(createTrainAutodiff());
    return;
  case PipelineSection::Remat:
    pm.addPass(createTrainRemat({options.remat}));
    pm.addPass(createTrainAccumulate({options.gradAccum}));
    pm.addPass(createTrainOptimizer());
    return;
  case PipelineSection::Zero:
    addZeroPasses(pm, options.zeroStage, options.worldSize,
                  options.bucketBytes);
    pm.addPass(createTrainSchedule({options.maxInFlight}));
    pm.addPass(createTrainDeferGathers({options.maxInFlight}));
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    return;
  }
}

void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const PipelineOptions &options) {
  for (PipelineSection section :
       {PipelineSection::Front, PipelineSection::Remat, PipelineSection::Zero})
    buildTrainingPipelineSection(pm, options, section);
}

int64_t defaultBucketBytes(int64_t gradientBytes) {
  constexpr int64_t kRound = int64_t{64} << 10;
  int64_t share = (std::max<int64_t>(gradientBytes, 0) + kDefaultBucketCount -
                   1) / kDefaultBucketCount;
  share = (share + kRound - 1) / kRound * kRound;
  return std::clamp(share, kMinDefaultBucketBytes, kMaxDefaultBucketBytes);
}

int64_t modelGradientBytes(mlir::ModuleOp module, llvm::StringRef precision) {
  int64_t bytes = 0;
  for (auto param : module.getOps<train::ParamOp>()) {
    mlir::RankedTensorType type = param.getTensorType();
    int64_t width = precision == "bf16"   ? 2
                    : precision == "fp32" ? 4
                                          : (type.getElementTypeBitWidth() + 7) / 8;
    bytes += type.getNumElements() * width;
  }
  return bytes;
}

/// train-bufferize: each decision a pass that writes it into the IR
/// (where producers compute, which reads copy), then the rewrite that
/// executes them, the allocations' memory categories, and the entry
/// point's signature.
static void addBufferizePasses(mlir::OpPassManager &pm) {
  pm.addPass(createTrainEmplace());
  pm.addPass(createTrainElideCopies());
  pm.addPass(createTrainBufferizeOps());
  pm.addPass(createTrainAllocate());
  pm.addPass(createTrainEntryABI());
}

void buildPlanningPipeline(mlir::OpPassManager &pm, int64_t maxInFlight) {
  pm.addPass(createTrainFuseOptimizer());
  pm.addPass(createTrainFuseGradAverage());
  pm.addPass(createTrainFuseMatmulBias());
  pm.addPass(createTrainFuseHeadSplit());
  pm.addPass(createTrainFuseElementwise());
  addBufferizePasses(pm);
  pm.addPass(mlir::createCSEPass());
  // The fp32 stage 1-2 parameter gathers, in place on the buffers.
  pm.addPass(createTrainDeferGathers({maxInFlight}));
  pm.addPass(createTrainDeallocate());
  pm.addPass(createTrainVerifyEmittable());
}

namespace {
/// train-partition's options: train-shard-states'.
struct PartitionPipelineOptions
    : public mlir::PassPipelineOptions<PartitionPipelineOptions> {
  Option<int64_t> stage{*this, "stage",
                        llvm::cl::desc("ZeRO stage: 0, 1, 2 or 3"),
                        llvm::cl::init(0)};
  Option<int64_t> worldSize{*this, "world-size",
                            llvm::cl::desc("Number of data-parallel ranks"),
                            llvm::cl::init(1)};
};

/// train-zero's options: train-partition's and train-assign-buckets'.
struct ZeroPipelineOptions : public PartitionPipelineOptions {
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Target size of a gradient bucket (and of a stage-3 "
                     "gather group)"),
      llvm::cl::init(26214400)};
};

struct TrainingPipelineOptions
    : public mlir::PassPipelineOptions<TrainingPipelineOptions> {
  Option<int64_t> stage{*this, "stage", llvm::cl::desc("ZeRO stage (0-3)"),
                        llvm::cl::init(0)};
  Option<int64_t> worldSize{*this, "world-size",
                            llvm::cl::desc("Data-parallel ranks"),
                            llvm::cl::init(1)};
  Option<int64_t> globalBatch{
      *this, "global-batch",
      llvm::cl::desc("Global batch in sequences (train-batch-size); 0 keeps "
                     "the model's"),
      llvm::cl::init(0)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("bf16 or fp32; empty keeps the model's precision"),
      llvm::cl::init("")};
  Option<int64_t> bucketBytes{*this, "bucket-bytes",
                              llvm::cl::desc("Gradient bucket size in bytes"),
                              llvm::cl::init(25 << 20)};
  Option<int64_t> maxInFlight{
      *this, "max-in-flight",
      llvm::cl::desc("Gradient buckets in flight at once; also bounds the "
                     "parameter gathers in flight (stage 3's prefetch, "
                     "stages 1-2's deferred gathers)"),
      llvm::cl::init(2)};
  Option<std::string> remat{
      *this, "remat",
      llvm::cl::desc("Activation rematerialization: none, full or selective"),
      llvm::cl::init("none")};
  Option<int64_t> gradAccum{
      *this, "grad-accum",
      llvm::cl::desc("Micro-batches per step (gradient accumulation)"),
      llvm::cl::init(1)};
  Option<bool> raise{
      *this, "raise",
      llvm::cl::desc("Raise written-out attention, norms, activations, "
                     "cross-entropy and rotary embeddings to the fast ops "
                     "(train-raise)"),
      llvm::cl::init(true)};
};
} // namespace

void registerTrainingPipeline() {
  // train-zero checks its options before it builds anything: the stage and
  // world size are read by the last of its passes, after the first has
  // looked at the module.
  mlir::registerPassPipeline(
      "train-zero",
      "ZeRO's partition of a training step: train-assign-buckets, "
      "train-shard-states, train-gather-params, train-reduce-gradients, "
      "train-shard-optimizer",
      [](mlir::OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> error) {
        ZeroPipelineOptions o;
        if (mlir::failed(o.parseFromString(text)))
          return mlir::failure();
        if (o.stage < 0 || o.stage > 3)
          return error("stage must be 0, 1, 2 or 3, got " +
                       llvm::Twine(o.stage));
        if (o.worldSize < 1)
          return error("world-size must be at least 1, got " +
                       llvm::Twine(o.worldSize));
        if (o.bucketBytes < 1)
          return error("bucket-bytes must be positive, got " +
                       llvm::Twine(o.bucketBytes));
        addZeroPasses(pm, o.stage, o.worldSize, o.bucketBytes);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(ZeroPipelineOptions());
      });
  mlir::PassPipelineRegistration<PartitionPipelineOptions>(
      "train-partition",
      "train-zero after its buckets: train-shard-states, "
      "train-gather-params, train-reduce-gradients, train-shard-optimizer",
      [](mlir::OpPassManager &pm, const PartitionPipelineOptions &o) {
        addPartitionPasses(pm, o.stage, o.worldSize);
      });
  mlir::PassPipelineRegistration<>(
      "train-bufferize",
      "Each function of a per-rank step into buffers: train-emplace, "
      "train-elide-copies, train-bufferize-ops, train-allocate, then "
      "train-entry-abi",
      [](mlir::OpPassManager &pm) { addBufferizePasses(pm); });
  mlir::PassPipelineRegistration<>(
      "train-planning",
      "The planning passes: the scheduled per-rank step to the buffer form "
      "the back ends print (fusion, buffers, deallocations, checks)",
      [](mlir::OpPassManager &pm) { buildPlanningPipeline(pm); });
  mlir::PassPipelineRegistration<TrainingPipelineOptions>(
      "train-pipeline",
      "The whole training pipeline: model to the scheduled per-rank step of "
      "a ZeRO stage (the passes zeroc runs)",
      [](mlir::OpPassManager &pm, const TrainingPipelineOptions &o) {
        PipelineOptions options;
        options.zeroStage = o.stage;
        options.worldSize = o.worldSize;
        options.globalBatch = o.globalBatch;
        options.precision = o.precision;
        options.bucketBytes = o.bucketBytes;
        options.maxInFlight = o.maxInFlight;
        options.remat = o.remat;
        options.gradAccum = o.gradAccum;
        options.raise = o.raise;
        buildTrainingPipeline(pm, options);
      });
}

} // namespace zeroc
