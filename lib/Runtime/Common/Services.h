//===- Services.h - the runtimes' main and its helpers ----------*- C++ -*-===//
//
// Internal to lib/Runtime: what Main.cpp uses from the argument parser, the
// token reader, the checkpoint code, the logger, the collectives and the
// device. Generated code sees only include/zeroc/Runtime/zrt.h.
//
// Both runtimes compile the same services, here in lib/Runtime/Common
// (CMake: zeroc_rt_services_cpu, zeroc_rt_services_cuda): Args, Checkpoint
// (initialization; the checkpoint files of Checkpoint.h), Data, Log, Main,
// Sample, Signals and Runtime (process helpers, memory accounting).
// The CPU runtime (lib/Runtime/Cpu) adds Comm.cpp (MPI collectives),
// Memory.cpp (host allocator) and Device.cpp (trivial device hooks); the
// CUDA runtime (lib/Runtime/Cuda) adds its own Comm, Memory and Device, and
// compiles the services against an MPI facade
// (lib/Runtime/Cuda/MpiFacade/mpi.h) that loads the real MPI only when the
// program runs on more than one rank.
//
// Error handling: a function that can fail returns an error message ("" on
// success). Main passes every such message to agree(), which every rank
// calls at the same point: if any rank has an error, the lowest such rank
// prints it and every rank exits with status 1 — no rank is left waiting in
// a collective, and no MPI_Abort banner hides the message. Failures inside
// a training step (zrt_fail) cannot be agreed on and abort every rank.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_RUNTIME_COMMON_SERVICES_H
#define ZEROC_LIB_RUNTIME_COMMON_SERVICES_H

#include "zeroc/Runtime/zrt.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace zeroc::rt {

//===----------------------------------------------------------------------===//
// Process (Runtime.cpp)
//===----------------------------------------------------------------------===//

/// This process's rank and the world size (0 and 1 before MPI is up).
int worldRank();
int worldSize();

/// Every rank calls this at the same point with its own error ("" when
/// fine). If any rank has one, the lowest such rank prints it and every rank
/// finalizes MPI and exits with status 1.
void agree(const std::string &error);

/// Prints `message` as an error on rank 0 only, then every rank finalizes
/// MPI and exits with status 1. For errors every rank detects identically
/// (arguments, the world size), so one copy is printed.
[[noreturn]] void failEverywhere(const std::string &message);

/// Finalizes MPI (if it is up) and exits with `status`.
[[noreturn]] void exitAll(int status);

/// "1.2 GiB" style.
std::string humanBytes(int64_t bytes);

/// This process's rank, the number of processes and its rank on this node as
/// the launcher tells them through the environment (before MPI is up:
/// Open MPI, MPICH/Hydra, Slurm, torchrun), or 0, 0 and 0 when unknown.
int launcherRank();
int launcherSize();
int launcherLocalRank();
/// Processes the launcher started on this node, 0 when unknown.
int launcherLocalSize();

/// Runs body(begin, end) over contiguous chunks of [0, n) on the threads of
/// this rank: OpenMP's (OMP_NUM_THREADS) where the services are compiled
/// with OpenMP (the CPU runtime), else std::threads (OMP_NUM_THREADS too, or
/// the cores divided among the node's ranks). Chunks are static: chunk i of
/// k covers [i*n/k, (i+1)*n/k).
void parallelChunks(int64_t n,
                    const std::function<void(int64_t, int64_t)> &body);

//===----------------------------------------------------------------------===//
// Memory accounting (Runtime.cpp; the allocators are Memory.cpp and
// Cuda/Memory.cu)
//===----------------------------------------------------------------------===//

/// "parameters", "gradients", ... ("?" for no category).
const char *categoryName(zrt_mem_category category);
/// Fails naming `function` unless `category` is one of zrt.h's.
void checkCategory(const char *function, zrt_mem_category category);
/// Counts `bytes` in (out of) `category`, updating its peak.
void countAllocation(zrt_mem_category category, size_t bytes);
void countFree(zrt_mem_category category, size_t bytes);
/// Bytes zrt_alloc has handed out in every category together.
int64_t totalAllocated();
/// The highest totalAllocated() has been: the rank's measured peak, which
/// the static report's peak_bytes_per_rank predicts.
int64_t peakTotalAllocated();

//===----------------------------------------------------------------------===//
// Collectives (Comm.cpp, Cuda/Comm.cu)
//===----------------------------------------------------------------------===//

/// Starts MPI (MPI_Init_thread, funneled) for `program` and sets up what the
/// collectives need (the CPU runtime: the bf16 datatype and sum). The CUDA
/// runtime loads MPI only when the program's world size, or the launcher's,
/// is above 1; a world of one needs no MPI library.
void commInitialize(int &argc, char **&argv, const zrt_program &program);
/// The BLAS kernels the run uses, for the summary: OpenBLAS's core type on
/// the CPU (openblas_get_corename, lib/Runtime/Cpu/BlasCore.cpp), null on
/// the GPU (cuBLAS).
const char *blasCoreName();
/// Frees what commInitialize set up; before MPI_Finalize.
void commFinalize();
/// The world group that the runtime passes to the program.
zrt_comm *defaultComm();

//===----------------------------------------------------------------------===//
// The device (Device.cpp: the CPU, where every hook is trivial;
// Cuda/Device.cu: one GPU per rank)
//===----------------------------------------------------------------------===//

/// On every rank, once the inputs are checked and before the states are
/// allocated: opens the device (the CUDA runtime: GPU = the launcher's local
/// rank, its streams, cuBLASLt, the memory pool, then one NCCL communicator
/// for the run). An error that a rank finds is agreed on (every rank exits);
/// a failure of the communicator's set-up (NCCL) stops every rank through
/// zrt_fail.
void deviceInitialize(const zrt_program &program);

/// Ids (tokens or targets) as the program's entry points take them: host
/// memory on the CPU, device memory on a GPU. The services write host()
/// and pass upload() to the entry point. Not accounted (runtime buffers).
class IdBuffer {
public:
  explicit IdBuffer(size_t bytes);
  IdBuffer(const IdBuffer &) = delete;
  IdBuffer &operator=(const IdBuffer &) = delete;
  ~IdBuffer();

  /// Host memory of `bytes` bytes to write the ids to (free to overwrite:
  /// a GPU's previous upload from it is complete).
  void *host();
  /// The ids where the program reads them (CPU: host(); GPU: a device copy,
  /// ordered before the next kernel on the compute stream).
  const void *upload();

private:
  size_t bytes = 0;
  void *hostData = nullptr;
  void *deviceData = nullptr;
  void *uploaded = nullptr; // a GPU's event: the last upload is done
};

/// A state's own storage: its category and bytes (Checkpoint.cpp; 0 bytes
/// for a member of a flat buffer, which lives in the buffer).
zrt_mem_category stateCategory(const zrt_state &state);
size_t stateBytes(const zrt_state &state);

/// State storage. The services initialize, load and save every state
/// through host memory (state.data): allocateStates gives each flat buffer
/// and each state with its own storage zeroed host storage (the CPU:
/// zrt_alloc, which is host memory) and points the buffers' members into
/// them (StateLayout.h); statesToDevice
/// moves it to where the program's kernels read it before the first entry
/// point runs (the CUDA runtime: zrt_alloc'ed device memory, accounted in
/// the state's category; a state keeps its device address for the whole
/// run); statesToHost brings the current values back to host memory for a
/// checkpoint; freeStates releases everything. Trivial on the CPU.
void allocateStates(const zrt_program &program);
void statesToDevice(const zrt_program &program);
void statesToHost(const zrt_program &program);
void freeStates(const zrt_program &program);

/// Copies bytes [offset, offset + bytes) of a state's storage, counted from
/// state.data (for a member of a flat buffer: from the first element this
/// rank holds, StateLayout.h), to host memory `host`, wherever the storage
/// is (on a GPU: after the kernels queued before; the checkpoint's bounded
/// staging buffer goes through this, so that a save never needs a host
/// copy of a whole state).
void stateToHost(const zrt_state &state, size_t offset, size_t bytes,
                 void *host);

/// The device memory this rank reserved at its peak (the CUDA memory pool's
/// high-water mark), or -1 where there is no device (the CPU).
int64_t devicePeakBytes();

//===----------------------------------------------------------------------===//
// Arguments (Args.cpp)
//===----------------------------------------------------------------------===//

enum class DataFormat { Bin, Text };

struct Options {
  std::string data;
  DataFormat format = DataFormat::Bin;
  int64_t steps = 10; ///< the step counter to train up to (total steps)
  uint64_t seed = 1337;
  std::string init;
  std::string save;
  int64_t saveEvery = 0; ///< 0: save at the end only
  int64_t keepLast = 0;  ///< 0: keep every checkpoint
  std::string resume;
  std::string logJson;
  int64_t evalEvery = 0; ///< 0: no evaluation
  std::string valData;
  bool quiet = false;
  bool help = false;
  /// Sampling mode: generate this many tokens instead of training.
  int64_t sample = 0;
  std::string prompt;
  /// --prompts FILE: one prompt per line, each sampled in turn.
  std::string promptsFile;
  /// 0: greedy (argmax).
  double temperature = 0.8;
  /// --top-k K (0: every id) and --top-p P (1: every id).
  int64_t topK = 0;
  double topP = 1;
  /// --logits FILE (.npy or .safetensors): the logits of each prompt's last
  /// position, prompts x vocabulary float32.
  std::string logitsPath;
  /// --skip-nonfinite K: steps with a non-finite gradient norm whose update
  /// may be skipped before the run stops (0: stop at the first).
  int64_t skipNonfinite = 0;
  /// --collective-timeout S: seconds a collective may make no progress
  /// before the job is ended (0: wait forever).
  double collectiveTimeout = 600;
  /// --trace PATH --trace-steps A:B (Trace.h): steps [traceFirst,
  /// traceLast) when traceStepsGiven.
  std::string tracePath;
  int64_t traceFirst = 0, traceLast = 0;
  bool traceStepsGiven = false;
};

/// The prompts of sampling mode: --prompt's one, or --prompts FILE's lines.
/// Returns "" or an error naming the flag.
std::string readPrompts(const Options &options,
                        std::vector<std::string> &prompts);

/// Sampling mode (every rank calls): generates options.sample tokens after
/// each prompt with the program's logits entry point and sets `output` (on
/// rank 0) to each prompt and its continuation, one newline after each;
/// with --logits, rank 0 writes the logits of each prompt's last position.
/// Returns "" or an error naming the flag (rank 0's; agree on it).
std::string sampleText(const zrt_program &program, zrt_comm *comm,
                       const Options &options,
                       const std::vector<std::string> &prompts,
                       std::string &output);

/// Parses argv. Returns "" or an error naming the flag.
std::string parseArguments(int argc, char **argv, Options &options);
/// The --help text.
std::string usage(const char *argv0, const zrt_program &program);

//===----------------------------------------------------------------------===//
// Token data (Data.cpp)
//===----------------------------------------------------------------------===//

/// A token file, memory-mapped read-only.
class TokenFile {
public:
  TokenFile() = default;
  TokenFile(const TokenFile &) = delete;
  TokenFile &operator=(const TokenFile &) = delete;
  ~TokenFile();

  /// Maps `path`; checks that it holds at least `seqLen` + 2 tokens.
  std::string open(const std::string &path, DataFormat format, int64_t seqLen);
  /// Collective: every rank checks its share of the file for ids >= vocab;
  /// the first bad one (lowest offset) is reported by every rank.
  std::string validate(int64_t vocab) const;

  int64_t numTokens() const { return tokens; }
  int64_t token(int64_t index) const {
    return format == DataFormat::Bin
               ? static_cast<int64_t>(bytes[2 * index] |
                                      (bytes[2 * index + 1] << 8))
               : static_cast<int64_t>(bytes[index]);
  }

  /// Fills this rank's `batchPerRank` sequences of step `step`: sequence i
  /// of the global batch G = worldSize * batchPerRank starts at token
  /// ((step * G + i + sequenceOffset) * seqLen) mod (L - seqLen - 1);
  /// targets are the next tokens. `tokensOut` and `targetsOut` hold
  /// batchPerRank * seqLen ids of `idDtype` (ZRT_I32 or ZRT_I64).
  /// `sequenceOffset` is 0 unless a run resumes a checkpoint written with
  /// another global batch: then the data goes on where it stopped.
  void fillBatch(int64_t step, int64_t worldSize, int64_t rank,
                 int64_t batchPerRank, int64_t seqLen, zrt_dtype idDtype,
                 void *tokensOut, void *targetsOut,
                 int64_t sequenceOffset = 0) const;

private:
  /// "; the file looks like text: ..." when a --data-format=bin file is
  /// text, else "" (for the out-of-range error).
  std::string textHint() const;

  std::string path;
  DataFormat format = DataFormat::Bin;
  const uint8_t *bytes = nullptr;
  size_t mappedBytes = 0;
  int64_t tokens = 0;
};

/// The start token of global sequence `index` of step `step`.
int64_t sequenceStart(int64_t step, int64_t globalBatch, int64_t index,
                      int64_t seqLen, int64_t numTokens,
                      int64_t sequenceOffset = 0);

//===----------------------------------------------------------------------===//
// State, checkpoints (Checkpoint.cpp)
//===----------------------------------------------------------------------===//

/// Checks the program's description (every rank detects the same errors).
std::string validateProgram(const zrt_program &program, int worldSize);

/// Initializes every state on this rank from the initializers and `seed`.
void initializeFromSeed(const zrt_program &program, uint64_t seed);

/// Initializes parameters (and their masters) from full tensors named as
/// the parameters: a safetensors file, a sharded Hugging Face checkpoint
/// (HfCheckpoint.cpp), or a checkpoint (a directory, as --resume takes it:
/// its weights only, the masters' where it has them); other states are
/// zeros. Collective when `path` is a checkpoint.
std::string initializeFromFile(const zrt_program &program,
                               const std::string &path);

struct CheckpointInfo {
  int64_t step = 0;         ///< the next step to run
  int64_t dataPosition = 0; ///< global sequences consumed before `step`
  int64_t globalBatch = 0;  ///< sequences per step of the run that saved
  uint64_t seed = 0;
  std::string folder; ///< loadCheckpoint: the step folder it read
  std::string log;    ///< the --log-json line of the load or save (rank 0)
  std::string note;   ///< a line for the user, or "" (rank 0)
};

/// Check that this rank can create files in DIR (mkdir -p, then removing
/// the folders it created: the first save creates them for good).
std::string probeCheckpointDirectory(const std::string &dir);

/// Collective: writes the checkpoint of step info.step to
/// DIR/step-NNNNNNN (every rank its slices, in parallel, through a bounded
/// staging buffer; rank 0 the manifest, last), then points DIR/latest at it
/// and, with keepLast > 0, removes all but the keepLast newest checkpoints
/// up to it. Errors are agreed on inside (every rank exits); returns "".
/// Fills info.folder, info.log and info.note.
std::string saveCheckpoint(const zrt_program &program, const std::string &dir,
                           CheckpointInfo &info, int64_t keepLast);

/// Collective: loads a checkpoint (DIR/latest, or DIR itself when it is a
/// step folder) of any world size and stage into this rank's storage:
/// every state but the gradients, checked against the program, every file's
/// checksum verified, and the ranks' views of it agreed on. Errors are
/// agreed on inside and name the file and tensor; returns "".
std::string loadCheckpoint(const zrt_program &program, const std::string &dir,
                           CheckpointInfo &info);

//===----------------------------------------------------------------------===//
// Signals (Signals.cpp)
//===----------------------------------------------------------------------===//

/// From now on the first SIGTERM, SIGINT or SIGUSR1 is only recorded; a
/// second one stops the process at once.
void installStopSignals();
/// The first stop signal this rank received, or 0.
int pendingStopSignal();
/// Collective: a stop signal that any rank received (0: none).
int agreeOnStop();
/// "SIGTERM", "SIGINT", "SIGUSR1".
const char *signalName(int signal);
/// signalName(signal), and where this rank's own first signal was that
/// one, sent by its parent process (mpirun), that mpirun also turns a
/// SIGINT (Ctrl-C) into it: what the log says about a stop.
std::string stopDescription(int signal);
// Faults: divergence (Guard.cpp) and stalled collectives (Timeout.cpp on the
// CPU, Cuda/Timeout.cu)
//===----------------------------------------------------------------------===//

/// Collective: every rank gets the sums over ranks of `values[0..count)`;
/// under --collective-timeout (the CPU runtime; the CUDA runtime's host
/// reductions are plain MPI).
void sumOverRanks(double *values, int count);

/// Collective: the smallest of the ranks' `value`s, on every rank (under
/// --collective-timeout on the CPU; agree() decides with it).
int minOverRanks(int value);

/// --collective-timeout: after MPI is up, before the first step, on every
/// rank. Returns "" or an error naming the flag.
std::string configureCollectiveTimeout(double seconds);

/// What the run is doing, for the timeout's message: `what` is "step",
/// "validation at step" or "sampling", `step` the step (-1: none).
void setRunPhase(const char *what, int64_t step);

/// --skip-nonfinite: checks that this runtime can skip an update and sets
/// up the kernels' step guard (Common/StepGuard.h). Every rank; "" or an
/// error naming the flag.
std::string configureDivergenceGuard(const zrt_program &program,
                                     int64_t skipLimit);

/// Before each training step (every rank): arms the step guard.
void guardBeginStep(int64_t step);

/// After each training step (every rank, collective): the mean of the
/// ranks' losses, and whether the run must stop: a non-finite loss or
/// gradient norm stops it (the error, naming the step, is printed on rank
/// 0), unless --skip-nonfinite allows one more skipped step (a warning).
struct StepCheck {
  double meanLoss = 0;
  bool skipped = false; ///< the step's updates were skipped
  bool stop = false;
};
StepCheck checkStep(int64_t step, float loss, float gradNorm);

/// Collective: why no checkpoint may be written now ("" when one may): the
/// run stopped on divergence, or a state this rank or another holds is not
/// finite. --save asks this before writing, so that the last good
/// checkpoint stays.
std::string checkpointRefusal(const zrt_program &program);

//===----------------------------------------------------------------------===//
// Logging (Log.cpp)
//===----------------------------------------------------------------------===//

struct StepRecord {
  int64_t step = 0;
  double loss = 0;
  double gradNorm = 0;
  double lr = 0;
  double ms = 0;
  double tokensPerSecond = 0;
};

/// One rank's figures for the end-of-run summary.
struct RankSummary {
  int64_t peak[ZRT_MEM_CATEGORIES] = {};
  /// Every category together at its highest (peakTotalAllocated()).
  int64_t peakTotal = 0;
  int64_t bytesSent = 0;
  double secondsWaiting = 0;
  /// devicePeakBytes(): -1 on the CPU, where the summary has no such column.
  int64_t devicePeak = -1;
};

/// Formats a double for JSON: shortest round-trip text; null if not finite.
std::string jsonNumber(double value);

/// The progress line of one step ("step 3/10 | loss ...").
std::string progressLine(const StepRecord &record, int64_t lastStep,
                         double etaSeconds);
std::string stepJson(const StepRecord &record);
std::string evalJson(int64_t step, double valLoss);
std::string summaryJson(int64_t steps, const std::vector<RankSummary> &ranks);
std::string summaryTable(const zrt_program &program, int64_t steps,
                         const std::vector<RankSummary> &ranks);

} // namespace zeroc::rt

#endif // ZEROC_LIB_RUNTIME_COMMON_SERVICES_H
