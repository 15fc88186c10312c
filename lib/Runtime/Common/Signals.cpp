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
/// The process that sent the first signal (0: unknown).
volatile sig_atomic_t firstSender = 0;

void writeError(const char *text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void onStopSignal(int signal, siginfo_t *info, void *) {
  if (firstSignal == 0) {
    firstSender = info ? static_cast<sig_atomic_t>(info->si_pid) : 0;
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

std::string stopDescription(int signal) {
  std::string text = signalName(signal);
  // Open MPI's mpirun passes a SIGINT (Ctrl-C) or a SIGTERM on to the
  // ranks as SIGTERM: the rank cannot tell which the user sent.
  if (signal == SIGTERM && firstSignal == SIGTERM && firstSender != 0 &&
      firstSender == static_cast<sig_atomic_t>(::getppid()))
    text += " from the launcher (mpirun sends SIGTERM when it gets SIGINT, "
            "Ctrl-C, or SIGTERM)";
  return text;
}

void installStopSignals() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = onStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_SIGINFO; // a write or a read goes on
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
