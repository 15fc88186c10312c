//===- Timeout.cpp - --collective-timeout: no rank waits forever ----------===//
//
// The CPU runtime's collectives (Comm.cpp) and the per-step reductions of
// the services wait through waitWithDeadline(): MPI_Testall in a loop
// instead of MPI_Waitall. A collective that makes no progress for
// --collective-timeout seconds (default 600; 0 waits forever) ends the
// whole job with an error that names the step, the collective and the
// ranks not heard from, then MPI_Abort.
//
// Finding the silent ranks: MPI does not say which ranks a collective still
// waits for, so a rank that times out asks every other rank, on a
// communicator of its own (a duplicate of the world's), where it is. Every
// rank that waits in a collective answers such questions while it polls
// (its step, the collective's number in the step, how long it has waited);
// a rank that is stopped (SIGSTOP, a stuck device, a dead link), or busy
// outside any collective, cannot answer within the grace period and is
// named as not heard from. To print one message, not one per rank, the
// lowest-numbered rank that answered (or the asking rank itself) reports
// and aborts; the others give it time, then abort too.
//
//===----------------------------------------------------------------------===//

#include "Services.h"
#include "Timeout.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <mpi.h>
#include <sched.h>

namespace zeroc::rt {

namespace {

constexpr int kQueryTag = 7101;
constexpr int kReplyTag = 7102;

double seconds = 600;
MPI_Comm sideComm = MPI_COMM_NULL;
const char *phase = "start-up";
int64_t phaseStep = -1;
int64_t sequenceInStep = 0;
bool waiting = false; // inside waitWithDeadline
int64_t currentSequence = -1;
double waitStart = 0;

/// What a rank answers: {rank, step, collective number, waiting (0/1),
/// milliseconds waited}.
struct Reply {
  int64_t values[5];
};

/// Sends that must stay alive until MPI is done with them.
std::deque<std::pair<MPI_Request, Reply>> pendingSends;

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void reapSends() {
  while (!pendingSends.empty()) {
    int done = 0;
    MPI_Test(&pendingSends.front().first, &done, MPI_STATUS_IGNORE);
    if (!done)
      return;
    pendingSends.pop_front();
  }
}

Reply whereAmI() {
  Reply reply;
  reply.values[0] = worldRank();
  reply.values[1] = phaseStep;
  reply.values[2] = waiting ? currentSequence : -1;
  reply.values[3] = waiting ? 1 : 0;
  reply.values[4] =
      waiting ? static_cast<int64_t>((now() - waitStart) * 1000) : 0;
  return reply;
}

/// Answers every question another rank has sent us.
void serviceQueries() {
  if (sideComm == MPI_COMM_NULL)
    return;
  reapSends();
  while (true) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, sideComm, &flag, &status);
    if (!flag)
      return;
    int64_t ignored = 0;
    MPI_Recv(&ignored, 1, MPI_INT64_T, status.MPI_SOURCE, kQueryTag, sideComm,
             MPI_STATUS_IGNORE);
    pendingSends.emplace_back(MPI_REQUEST_NULL, whereAmI());
    auto &send = pendingSends.back();
    MPI_Isend(send.second.values, 5, MPI_INT64_T, status.MPI_SOURCE,
              kReplyTag, sideComm, &send.first);
  }
}

std::string rankList(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? (i + 1 == ranks.size() ? " and " : ", ") : "") +
            std::to_string(ranks[i]);
  return text;
}

std::string whereText() {
  if (phaseStep < 0)
    return phase;
  return std::string(phase) + " " + std::to_string(phaseStep);
}

/// The collective timed out: asks the other ranks where they are, reports
/// and aborts. Returns only if the collective completed meanwhile.
void timedOut(std::vector<MPI_Request> &requests, const CollectiveInfo &what,
              double waited) {
  int rank = worldRank(), ranks = worldSize();
  double grace = std::min(10.0, std::max(1.0, seconds / 10));
  // The questions' buffers live in pendingSends until MPI is done with
  // them, even if the collective completes and this returns.
  for (int r = 0; r < ranks; ++r) {
    if (r == rank)
      continue;
    pendingSends.emplace_back(MPI_REQUEST_NULL, Reply{{rank, 0, 0, 0, 0}});
    auto &send = pendingSends.back();
    MPI_Isend(send.second.values, 1, MPI_INT64_T, r, kQueryTag, sideComm,
              &send.first);
  }
  std::vector<Reply> replies;
  std::vector<bool> heard(ranks, false);
  heard[rank] = true;
  auto collect = [&](double until) {
    while (now() < until) {
      int done = 0;
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                  MPI_STATUSES_IGNORE);
      if (done)
        return true;
      serviceQueries();
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kReplyTag, sideComm, &flag, &status);
      if (flag) {
        Reply reply;
        MPI_Recv(reply.values, 5, MPI_INT64_T, status.MPI_SOURCE, kReplyTag,
                 sideComm, MPI_STATUS_IGNORE);
        if (!heard[status.MPI_SOURCE]) {
          heard[status.MPI_SOURCE] = true;
          replies.push_back(reply);
        }
      } else {
        sched_yield();
      }
    }
    return false;
  };
  if (collect(now() + grace))
    return; // it went through after all
  std::vector<int> silent, elsewhere;
  std::string others;
  for (int r = 0; r < ranks; ++r)
    if (!heard[r])
      silent.push_back(r);
  for (const Reply &reply : replies) {
    int64_t step = reply.values[1], sequence = reply.values[2];
    if (reply.values[3] && step == phaseStep && sequence == what.sequence)
      continue; // waiting in this same collective
    elsewhere.push_back(static_cast<int>(reply.values[0]));
    others += "; rank " + std::to_string(reply.values[0]) + " is " +
              (reply.values[3]
                   ? "waiting in collective #" + std::to_string(sequence) +
                         " of step " + std::to_string(step)
                   : std::string("not in a collective"));
  }
  int lowestHeard = rank;
  for (const Reply &reply : replies)
    lowestHeard = std::min(lowestHeard, static_cast<int>(reply.values[0]));
  // One report: the lowest rank that answered speaks first; the others
  // keep answering for a while, then report and abort themselves.
  if (lowestHeard != rank && collect(now() + 3 * grace))
    return;
  char head[512];
  std::snprintf(head, sizeof head,
                "%s: %s #%" PRId64 " (%zu elements of %s) made no progress "
                "for %.0f s (--collective-timeout %g)",
                whereText().c_str(), what.kind, what.sequence, what.count,
                what.dtype, waited, seconds);
  std::string message = head;
  message += silent.empty() ? "; every rank answered"
                            : "; not heard from: " + rankList(silent);
  message += others;
  message += "; ending the job";
  zrt_fail("%s", message.c_str());
}

} // namespace

namespace {

std::mutex watchdogMutex;
std::condition_variable watchdogWake;
bool watchdogDone = false;
std::thread watchdog;

} // namespace

void armStartupWatchdog() {
  if (seconds <= 0 || watchdog.joinable())
    return;
  watchdogDone = false;
  watchdog = std::thread([] {
    std::unique_lock<std::mutex> lock(watchdogMutex);
    if (watchdogWake.wait_for(lock, std::chrono::duration<double>(seconds),
                              [] { return watchdogDone; }))
      return;
    // No MPI here: it is not up. The launcher's rank names this process.
    std::fprintf(stderr,
                 "zeroc: error: rank %d: start-up: MPI_Init made no progress "
                 "for %.0f s (--collective-timeout %g): a rank did not start "
                 "or is stopped; ending the job\n",
                 launcherRank(), seconds, seconds);
    std::fflush(stderr);
    std::_Exit(1);
  });
}

void disarmStartupWatchdog() {
  if (!watchdog.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(watchdogMutex);
    watchdogDone = true;
  }
  watchdogWake.notify_all();
  watchdog.join();
}

void timeoutInitialize() {
  if (sideComm == MPI_COMM_NULL)
    MPI_Comm_dup(MPI_COMM_WORLD, &sideComm);
}

void timeoutFinalize() {
  reapSends();
  if (sideComm != MPI_COMM_NULL)
    MPI_Comm_free(&sideComm);
}

int64_t nextCollectiveNumber() { return ++sequenceInStep; }

void waitWithDeadline(std::vector<MPI_Request> &requests,
                      const CollectiveInfo &what) {
  if (requests.empty())
    return;
  if (seconds <= 0 || worldSize() == 1) {
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                MPI_STATUSES_IGNORE);
    return;
  }
  waiting = true;
  currentSequence = what.sequence;
  waitStart = now();
  double lastService = waitStart;
  for (unsigned spins = 0;; ++spins) {
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                MPI_STATUSES_IGNORE);
    if (done)
      break;
    double t = now();
    if (t - lastService > 1e-3) {
      serviceQueries();
      lastService = t;
    }
    if (t - waitStart > seconds) {
      timedOut(requests, what, t - waitStart);
      break; // it completed during the grace period
    }
    if (spins > 64)
      sched_yield();
  }
  waiting = false;
}

void setRunPhase(const char *what, int64_t step) {
  phase = what;
  phaseStep = step;
  sequenceInStep = 0;
}

std::string configureCollectiveTimeout(double limit) {
  if (!(limit >= 0) || !std::isfinite(limit))
    return "--collective-timeout: " + std::to_string(limit) +
           " is not a non-negative number of seconds";
  seconds = limit;
  return "";
}

int minOverRanks(int value) {
  if (worldSize() == 1)
    return value;
  int least = value;
  std::vector<MPI_Request> request(1);
  MPI_Iallreduce(&value, &least, 1, MPI_INT, MPI_MIN,
                 sideComm == MPI_COMM_NULL ? MPI_COMM_WORLD : sideComm,
                 &request[0]);
  CollectiveInfo what{"the services' all-reduce", nextCollectiveNumber(), 1,
                      "i32"};
  waitWithDeadline(request, what);
  return least;
}

void sumOverRanks(double *values, int count) {
  if (worldSize() == 1)
    return;
  std::vector<double> sums(values, values + count);
  std::vector<MPI_Request> request(1);
  MPI_Iallreduce(values, sums.data(), count, MPI_DOUBLE, MPI_SUM,
                 sideComm == MPI_COMM_NULL ? MPI_COMM_WORLD : sideComm,
                 &request[0]);
  CollectiveInfo what{"the services' all-reduce", nextCollectiveNumber(),
                      static_cast<size_t>(count), "f64"};
  waitWithDeadline(request, what);
  std::copy(sums.begin(), sums.end(), values);
}

} // namespace zeroc::rt

// In a sanitizer build (the `sanitize` preset), MPI programs skip
// LeakSanitizer: Open MPI's components keep allocations to the end and are
// unloaded before the check, where no suppression can name them. ASan's
// other checks stay; ASAN_OPTIONS still overrides this. (Here because
// every executable links this file.)
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
extern "C" const char *__asan_default_options() { return "detect_leaks=0"; }
#endif
#endif
