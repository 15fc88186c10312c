//===- Signals.cpp - SIGTERM, SIGINT, SIGUSR1: stop after the step --------===//
//
// What a batch system sends before it preempts a job (Slurm: SIGTERM to
// every task, then SIGKILL after KillWait) must not lose the run. The first
// SIGTERM, SIGINT or SIGUSR1 a rank receives only records the signal; the
// training loop asks, after every step, whether any rank has one
// (agreeOnStop, a collective), and then every rank stops at the same step,
// writes a checkpoint (with --save) and exits. A second signal stops the
// process at once: the handler restores the default action and raises the
// signal again.
//
// SIGUSR1 is there for Open MPI's mpirun, which forwards SIGUSR1 to every
// rank and lets the job run on, whereas on SIGTERM or SIGINT it forwards
// the signal and kills the ranks a second later
// (odls_base_sigkill_timeout).
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <csignal>
#include <cstring>

#include <mpi.h>
#include <unistd.h>

namespace zeroc::rt {

namespace {

volatile sig_atomic_t firstSignal = 0;

void writeError(const char *text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void onStopSignal(int signal) {
  if (firstSignal == 0) {
    firstSignal = signal;
    return;
  }
  // Async-signal-safe only: write, signal, raise.
  writeError("zeroc: a second signal: stopping at once (no checkpoint)\n");
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

} // namespace

const char *signalName(int signal) {
  switch (signal) {
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGUSR1:
    return "SIGUSR1";
  default:
    return "a signal";
  }
}

void installStopSignals() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART; // a write or a read goes on
  for (int signal : {SIGTERM, SIGINT, SIGUSR1})
    sigaction(signal, &action, nullptr);
}

int pendingStopSignal() { return firstSignal; }

int agreeOnStop() {
  int mine = firstSignal, any = mine;
  if (worldSize() > 1)
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

} // namespace zeroc::rt
