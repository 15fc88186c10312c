//===- Main.cpp - main() of every zeroc executable, CPU or CUDA -----------===//
//
//   mpirun -np N EXE --data PATH [--steps K] [--seed S] [--init W.safetensors]
//       [--save DIR [--save-every K] [--keep-last M]] [--resume DIR]
//       [--log-json PATH]
//       [--eval-every K --val-data PATH] [--data-format=bin|text] [--quiet]
//       [--trace PATH [--trace-steps A:B]]
//
// The generated code defines zeroc_program(); this file checks the world
// size, maps the token data, allocates and initializes every state, runs
// program->train_step once per step, logs, checkpoints (periodically, at
// the end, and after the step in which a stop signal came) and prints a
// per-rank summary. docs/executable.md describes the behaviour.
//
// Both runtimes compile this file; what differs goes through Services.h's
// collective and device hooks: on a GPU the ids are uploaded to device
// memory before each entry point, the states are initialized in host memory
// and moved to the device before the first step (a checkpoint copies them
// out through a bounded host buffer).
//
// Every check before the first step is agreed on by all ranks (see
// Services.h): a bad input stops every rank with one message and status 1.
//
//===----------------------------------------------------------------------===//

#include "Services.h"
#include "Trace.h"

#include "zeroc/Support/OutputFile.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include <mpi.h>

using namespace zeroc::rt;

namespace {

/// Completes the parameter gathers a stage 1-2 step defers to the next one
/// (train-defer-gathers), so that every rank holds the updated parameters
/// before they are read between steps (evaluation, checkpoints).
void gatherParameters(const zrt_program &program, zrt_comm *comm) {
  if (program.gather_params)
    program.gather_params(comm);
}

size_t batchBytes(const zrt_program &program) {
  return static_cast<size_t>(program.batch_per_rank * program.seq_len) *
         zrt_dtype_size(program.id_dtype);
}

/// This rank's tokens and targets of one step.
struct Batch {
  IdBuffer tokens, targets;

  explicit Batch(const zrt_program &program)
      : tokens(batchBytes(program)), targets(batchBytes(program)) {}

  /// Fills the batch of `step` from `file` (`offset`: TokenFile::fillBatch).
  void fill(const TokenFile &file, const zrt_program &program, int64_t step,
            int ranks, int rank, int64_t offset = 0) {
    file.fillBatch(step, ranks, rank, program.batch_per_rank, program.seq_len,
                   program.id_dtype, tokens.host(), targets.host(), offset);
  }
};

/// The mean over ranks of a per-rank value (every rank calls; under
/// --collective-timeout).
double meanOverRanks(double value) {
  double sum = value;
  sumOverRanks(&sum, 1);
  return sum / worldSize();
}

/// Every `interval` steps when a run has more than 100.
int64_t progressInterval(int64_t steps) {
  return steps <= 100 ? 1 : (steps + 99) / 100;
}

} // namespace

int main(int argc, char **argv) {
  // The program and the arguments first, without MPI: --help and argument
  // errors need no launcher and cost no MPI start-up.
  const zrt_program *programPointer = zeroc_program();
  if (!programPointer) {
    if (launcherRank() == 0)
      std::fprintf(stderr, "zeroc: error: zeroc_program() returned NULL\n");
    return 1;
  }
  const zrt_program &program = *programPointer;
  std::string model = program.model ? program.model : "model";
  Options options;
  std::string argumentError = parseArguments(argc, argv, options);
  if (options.help || !argumentError.empty()) {
    if (launcherRank() == 0) {
      if (options.help)
        std::fputs(usage(argv[0], program).c_str(), stdout);
      else
        std::fprintf(stderr, "zeroc: error: %s\n", argumentError.c_str());
    }
    return options.help ? 0 : 1;
  }

  // Before MPI starts: MPI_Init itself waits for every rank (Timeout.cpp).
  if (std::string error = configureCollectiveTimeout(options.collectiveTimeout);
      !error.empty()) {
    if (launcherRank() == 0)
      std::fprintf(stderr, "zeroc: error: %s\n", error.c_str());
    return 1;
  }
  commInitialize(argc, argv, program);
  int rank = worldRank(), ranks = worldSize();
  zrt_comm *comm = defaultComm();

  if (program.world_size != ranks)
    failEverywhere("this executable was compiled for " +
                   std::to_string(program.world_size) +
                   " rank(s) (world size " +
                   std::to_string(program.world_size) + ") but runs on " +
                   std::to_string(ranks) + "; start it with mpirun -np " +
                   std::to_string(program.world_size));
  if (std::string error = validateProgram(program, ranks); !error.empty())
    failEverywhere(error);
  // Divergence (Guard.cpp).
  if (std::string error =
          configureDivergenceGuard(program, options.skipNonfinite);
      !error.empty())
    failEverywhere(error);
  if (options.evalEvery && !program.forward)
    failEverywhere("--eval-every: the program '" + model +
                   "' has no forward entry point to evaluate with");
  if ((options.sample || !options.logitsPath.empty()) && !program.logits)
    failEverywhere(std::string(options.sample ? "--sample" : "--logits") +
                   ": the program '" + model +
                   "' has no logits entry point (its loss is not a "
                   "cross-entropy of logits)");

  if (options.sample || !options.logitsPath.empty()) {
    std::vector<std::string> prompts;
    agree(readPrompts(options, prompts));
    deviceInitialize(program);
    allocateStates(program);
    CheckpointInfo info;
    info.seed = options.seed;
    if (!options.resume.empty())
      agree(loadCheckpoint(program, options.resume, info));
    else if (!options.init.empty())
      agree(initializeFromFile(program, options.init));
    else
      initializeFromSeed(program, options.seed);
    statesToDevice(program);
    std::string text;
    agree(sampleText(program, comm, options, prompts, text));
    if (rank == 0 && options.sample) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
    exitAll(0);
  }

  // From now on a stop signal ends the run after a step, with a checkpoint.
  installStopSignals();

  // Token data: every rank maps the files and checks its share of the ids.
  TokenFile train, validation;
  agree(train.open(options.data, options.format, program.seq_len));
  agree(train.validate(program.vocab));
  if (!options.valData.empty()) {
    agree(validation.open(options.valData, options.format, program.seq_len));
    agree(validation.validate(program.vocab));
  }

  // Outputs that must be writable before any step is spent.
  // The log is written to PATH.partial and renamed over PATH when the run
  // ends (a device or a FIFO is written in place; OutputFile.h), so that a
  // run that fails early leaves the previous log as it was.
  static zeroc::output::Stream logOutput;
  FILE *logFile = nullptr;
  {
    std::string error;
    if (rank == 0 && !options.logJson.empty()) {
      error = logOutput.open(options.logJson, /*visibleTemporary=*/true);
      if (error.empty())
        logFile = logOutput.stream();
      else
        error = "--log-json: " + error;
    }
    agree(error);
  }
  if (!options.save.empty())
    agree(probeCheckpointDirectory(options.save));
  auto logLine = [&](const std::string &line) {
    if (!logFile || line.empty())
      return;
    std::fputs((line + "\n").c_str(), logFile);
    std::fflush(logFile);
  };

  // The device (a GPU, with its communicator), then the state.
  deviceInitialize(program);
  allocateStates(program);
  CheckpointInfo info;
  info.seed = options.seed;
  if (!options.resume.empty()) {
    agree(loadCheckpoint(program, options.resume, info));
    logLine(info.log);
  } else if (!options.init.empty()) {
    agree(initializeFromFile(program, options.init));
  } else {
    initializeFromSeed(program, options.seed);
  }
  statesToDevice(program);
  int64_t start = info.step;
  int64_t end = std::max(options.steps, start);
  int64_t globalBatch = program.batch_per_rank * ranks;
  // A checkpoint of another global batch: the data goes on where it stopped.
  int64_t sequenceOffset =
      options.resume.empty() ? 0 : info.dataPosition - start * globalBatch;
  agree(traceOpen(options, program, start, end));
  if (rank == 0 && !options.quiet) {
    std::printf("zeroc: training '%s' on %d rank(s), ZeRO stage %" PRId64
                ", global batch %" PRId64 " x %" PRId64
                " tokens, steps %" PRId64 "..%" PRId64 "%s\n",
                model.c_str(), ranks, program.zero_stage,
                program.batch_per_rank * ranks, program.seq_len, start, end,
                options.resume.empty()
                    ? ""
                    : (" (resumed from " + info.folder + ")").c_str());
    if (!options.resume.empty() && info.globalBatch != globalBatch)
      std::printf("zeroc: note: the checkpoint's run had a global batch of "
                  "%" PRId64 " sequences, this one %" PRId64
                  ": the data goes on at sequence %" PRId64 "\n",
                  info.globalBatch, globalBatch, info.dataPosition);
    if (options.steps < start)
      std::printf("zeroc: the checkpoint is at step %" PRId64
                  ", past --steps %" PRId64 ": nothing to train\n",
                  start, options.steps);
    std::fflush(stdout);
  }

  Batch batch(program);
  auto evaluate = [&](int64_t step) {
    setRunPhase("validation at step", step);
    gatherParameters(program, comm);
    batch.fill(validation, program, step, ranks, rank);
    float loss = 0;
    program.forward(comm, batch.tokens.upload(), batch.targets.upload(),
                    &loss);
    double mean = meanOverRanks(loss);
    if (rank != 0)
      return;
    logLine(evalJson(step, mean));
    if (!options.quiet) {
      std::printf("step %" PRId64 " | val loss %.4f\n", step, mean);
      std::fflush(stdout);
    }
  };

  // Training.
  double tokensPerStep =
      static_cast<double>(program.batch_per_rank * ranks * program.seq_len);
  int64_t interval = progressInterval(end - start);
  double measuredSeconds = 0;
  int64_t measuredSteps = 0;
  int64_t savedStep = options.resume == options.save ? start : -1;
  bool diverged = false; // a non-finite step stopped the run (Guard.cpp)
  bool refused = false;  // a save was refused (said once)
  // Writes the checkpoint that resumes at step `next`, unless the run
  // diverged or a state is not finite: then the last good one stays.
  auto save = [&](int64_t next) {
    info.step = next;
    info.dataPosition = next * globalBatch + sequenceOffset;
    setRunPhase("the checkpoint after step", next - 1);
    gatherParameters(program, comm);
    statesToHost(program);
    if (std::string refusal = checkpointRefusal(program); !refusal.empty()) {
      if (rank == 0) {
        std::fflush(stdout);
        std::fprintf(stderr,
                     "zeroc: %s--save %s: no checkpoint written (%s); what "
                     "the directory held stays as it was\n",
                     diverged ? "" : "error: ", options.save.c_str(),
                     refusal.c_str());
      }
      diverged = refused = true;
      return;
    }
    saveCheckpoint(program, options.save, info, options.keepLast);
    savedStep = next;
    logLine(info.log);
    if (rank == 0 && !options.quiet) {
      std::printf("zeroc: %s\n", info.note.c_str());
      std::fflush(stdout);
    }
  };
  int stopSignal = 0;
  for (int64_t step = start; step < end && !stopSignal; ++step) {
    if (options.evalEvery && step % options.evalEvery == 0)
      evaluate(step);
    batch.fill(train, program, step, ranks, rank, sequenceOffset);
    const void *tokens = batch.tokens.upload();
    const void *targets = batch.targets.upload();
    float loss = 0, gradNorm = 0, lr = 0;
    traceStepBegin(step);
    double before = MPI_Wtime();
    guardBeginStep(step);
    program.train_step(comm, tokens, targets, step, &loss, &gradNorm, &lr);
    double seconds = MPI_Wtime() - before;
    traceStepEnd(step);
    StepCheck check = checkStep(step, loss, gradNorm);
    double meanLoss = check.meanLoss;
    diverged = check.stop;
    if (diverged)
      end = step + 1;
    // A stop signal on any rank: every rank stops after this step.
    if (!diverged && (stopSignal = agreeOnStop()) != 0)
      end = step + 1;
    // Rank 0 logs the step first, then what follows it (a stop, a
    // checkpoint), in the order they happen.
    if (rank == 0) {
      // The first step warms caches; leave it out of the ETA when we can.
      if (step > start || end - start == 1) {
        measuredSeconds += seconds;
        ++measuredSteps;
      }
      StepRecord record;
      record.step = step;
      record.loss = meanLoss;
      record.gradNorm = gradNorm;
      record.lr = lr;
      record.ms = seconds * 1e3;
      record.tokensPerSecond = seconds > 0 ? tokensPerStep / seconds : 0;
      logLine(stepJson(record));
      bool last = step + 1 == end;
      if (!diverged && !options.quiet &&
          (last || (step - start) % interval == 0)) {
        double perStep =
            measuredSteps ? measuredSeconds / measuredSteps : seconds;
        std::puts(
            progressLine(record, end, perStep * (end - step - 1)).c_str());
        std::fflush(stdout);
      }
      if (stopSignal) {
        std::printf("zeroc: %s: stopping after step %" PRId64 "\n",
                    stopDescription(stopSignal).c_str(), step);
        std::fflush(stdout);
      }
    }
    if (diverged)
      break;
    if (!options.save.empty() && options.saveEvery &&
        (step + 1) % options.saveEvery == 0 && step + 1 < end)
      save(step + 1); // refused (diverged) when a state is not finite
  }
  if (!diverged && options.evalEvery && end % options.evalEvery == 0 &&
      !stopSignal)
    evaluate(end);
  traceClose();

  // The checkpoint of the last step, unless it is the one already there.
  // A diverged run writes none (the last good one stays).
  if (!options.save.empty() && !refused && (diverged || savedStep != end))
    save(end); // a diverged run's is refused, saying so

  else if (!options.save.empty() && !diverged && rank == 0 && !options.quiet)
    std::printf("zeroc: step %" PRId64 " is already saved in %s\n", end,
                info.folder.c_str());

  // The summary, gathered to rank 0.
  RankSummary mine;
  for (int c = 0; c < ZRT_MEM_CATEGORIES; ++c)
    mine.peak[c] = zrt_mem_peak(static_cast<zrt_mem_category>(c));
  mine.peakTotal = peakTotalAllocated();
  mine.bytesSent = zrt_comm_bytes_sent();
  mine.secondsWaiting = zrt_comm_seconds_waited();
  mine.devicePeak = devicePeakBytes();
  constexpr int kPacked = ZRT_MEM_CATEGORIES + 3;
  int64_t packed[kPacked];
  std::copy(mine.peak, mine.peak + ZRT_MEM_CATEGORIES, packed);
  packed[ZRT_MEM_CATEGORIES] = mine.bytesSent;
  packed[ZRT_MEM_CATEGORIES + 1] = mine.devicePeak;
  packed[ZRT_MEM_CATEGORIES + 2] = mine.peakTotal;
  std::vector<int64_t> allPacked(rank == 0 ? kPacked * ranks : 0);
  std::vector<double> allWaiting(rank == 0 ? ranks : 0);
  MPI_Gather(packed, kPacked, MPI_INT64_T, allPacked.data(), kPacked,
             MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Gather(&mine.secondsWaiting, 1, MPI_DOUBLE, allWaiting.data(), 1,
             MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::vector<RankSummary> summaries(ranks);
    for (int r = 0; r < ranks; ++r) {
      const int64_t *row = &allPacked[r * kPacked];
      std::copy(row, row + ZRT_MEM_CATEGORIES, summaries[r].peak);
      summaries[r].bytesSent = row[ZRT_MEM_CATEGORIES];
      summaries[r].devicePeak = row[ZRT_MEM_CATEGORIES + 1];
      summaries[r].peakTotal = row[ZRT_MEM_CATEGORIES + 2];
      summaries[r].secondsWaiting = allWaiting[r];
    }
    logLine(summaryJson(end - start, summaries));
    if (logFile)
      if (std::string error = logOutput.commit(); !error.empty())
        std::fprintf(stderr, "zeroc: warning: --log-json %s\n",
                     error.c_str());
    if (!options.quiet)
      std::fputs(summaryTable(program, end - start, summaries).c_str(),
                 stdout);
  }

  freeStates(program);
  if (diverged)
    exitAll(1);
  if (stopSignal) {
    if (rank == 0 && !options.save.empty())
      std::printf("zeroc: stopped by %s at step %" PRId64 " of %" PRId64
                  "; resume with --resume %s\n",
                  stopDescription(stopSignal).c_str(), end, options.steps,
                  options.save.c_str());
    else if (rank == 0)
      std::fprintf(stderr,
                   "zeroc: error: stopped by %s at step %" PRId64 " of %" PRId64
                   ": no checkpoint written (no --save)\n",
                   stopDescription(stopSignal).c_str(), end, options.steps);
    exitAll(options.save.empty() ? 128 + stopSignal : 0);
  }
  exitAll(0);
}
