//===- Trace.cpp - the executable's --trace: window, events, JSON ---------===//
//
// --trace PATH --trace-steps A:B records steps A..B-1 (default: the three
// steps after the first) and writes one Chrome / Perfetto trace-event file
// (JSON, opens in ui.perfetto.dev or chrome://tracing): per rank (a process,
// "rank R"), a track of steps, one of compute (each op of the step, named
// after its op and layer, `cat` its op kind, `args` its phase, location and
// step), the collectives as asynchronous spans (several are in flight at
// once; `args` their bytes and buffer elements), and one of waits (the time
// the compute stream stalls for a collective). Timestamps are microseconds
// from the first traced step, when every rank synchronizes.
//
// Events stay in memory until the end of the run; then rank 0 gathers every
// rank's and writes PATH (through a temporary renamed at the end, so a
// failed run leaves no half-written trace). docs/executable.md and the
// guide's "Seeing a step" describe the output; `python3 -m zeroc
// trace-summary PATH` sums it up.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "Services.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include <mpi.h>

extern "C" {
int zrt_trace_enabled = 0;
}

namespace zeroc::rt {

namespace {

struct Event {
  TraceTrack track;
  const zrt_trace_site *site; // null for a step
  double begin, end;
  int64_t step;
};

struct TraceState {
  std::string path, temporary;
  FILE *out = nullptr;         // rank 0
  int64_t first = 0, last = 0; // steps [first, last)
  bool synchronized = false;
  std::chrono::steady_clock::time_point epoch;
  int64_t step = -1;
  double stepBegin = 0;
  std::vector<Event> events;
  std::string model;
  int64_t worldSize = 1, stage = 0;
};

TraceState state;

bool active() { return !state.path.empty(); }

bool traced(int64_t step) {
  return active() && step >= state.first && step < state.last;
}

/// A JSON string literal.
std::string quoted(const char *text) {
  std::string out = "\"";
  for (const char *c = text ? text : ""; *c; ++c) {
    unsigned char ch = static_cast<unsigned char>(*c);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += *c;
    } else if (ch < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", ch);
      out += escaped;
    } else {
      out += *c;
    }
  }
  return out + "\"";
}

std::string micros(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

/// This rank's events as trace-event lines (each ending in ",\n").
std::string serialize(int rank) {
  std::string out;
  std::string pid = std::to_string(rank);
  auto meta = [&](const char *name, int tid, const std::string &value,
                  bool thread) {
    out += "{\"ph\":\"M\",\"pid\":" + pid;
    if (thread)
      out += ",\"tid\":" + std::to_string(tid);
    out += std::string(",\"name\":\"") + name +
           "\",\"args\":{\"name\":" + quoted(value.c_str()) + "}},\n";
  };
  meta("process_name", 0, "rank " + pid, false);
  out += "{\"ph\":\"M\",\"pid\":" + pid +
         ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + pid +
         "}},\n";
  meta("thread_name", static_cast<int>(TraceTrack::Step), "steps", true);
  meta("thread_name", static_cast<int>(TraceTrack::Compute), "compute", true);
  meta("thread_name", static_cast<int>(TraceTrack::Waits), "waits", true);

  // Nested tracks in time order; each span starts no earlier than the
  // previous one on its track ended (device timings are resolved to
  // microseconds and may touch).
  std::vector<const Event *> sorted;
  for (const Event &event : state.events)
    sorted.push_back(&event);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Event *a, const Event *b) {
                     if (a->track != b->track)
                       return a->track < b->track;
                     return a->begin < b->begin;
                   });
  double trackEnd[4] = {0, 0, 0, 0};
  uint64_t asyncId = 0;
  for (const Event *event : sorted) {
    const zrt_trace_site *site = event->site;
    std::string name =
        site ? site->name : "step " + std::to_string(event->step);
    std::string kind = site ? site->kind : "step";
    std::string args = "\"step\":" + std::to_string(event->step);
    if (site) {
      args += std::string(",\"phase\":") + quoted(site->phase);
      if (site->location && *site->location)
        args += std::string(",\"location\":") + quoted(site->location);
      if (site->collective >= 0) {
        static const char *const kinds[] = {"all_reduce", "reduce_scatter",
                                            "all_gather"};
        int k = site->collective_kind;
        args += ",\"collective\":" + std::to_string(site->collective) +
                ",\"collective_kind\":" +
                quoted(k >= 0 && k <= 2 ? kinds[k] : "?") +
                ",\"bytes\":" + std::to_string(site->bytes) +
                ",\"elements\":" + std::to_string(site->elements);
      }
    }
    int tid = static_cast<int>(event->track);
    double begin = event->begin, end = std::max(event->end, event->begin);
    if (event->track == TraceTrack::Communication) {
      std::string id =
          "\"r" + std::to_string(rank) + "." + std::to_string(asyncId++) + "\"";
      std::string common = ",\"pid\":" + pid +
                           ",\"tid\":" + std::to_string(tid) +
                           ",\"cat\":\"communication\",\"id\":" + id +
                           ",\"name\":" + quoted(name.c_str());
      out += "{\"ph\":\"b\",\"ts\":" + micros(begin) + common + ",\"args\":{" +
             args + ",\"kind\":" + quoted(kind.c_str()) + "}},\n";
      out += "{\"ph\":\"e\",\"ts\":" + micros(end) + common + "},\n";
      continue;
    }
    begin = std::max(begin, trackEnd[tid]);
    end = std::max(end, begin);
    trackEnd[tid] = end;
    std::string where = ",\"pid\":" + pid + ",\"tid\":" + std::to_string(tid);
    out += "{\"ph\":\"B\",\"ts\":" + micros(begin) + where +
           ",\"name\":" + quoted(name.c_str()) +
           ",\"cat\":" + quoted(kind.c_str()) + ",\"args\":{" + args + "}},\n";
    out += "{\"ph\":\"E\",\"ts\":" + micros(end) + where + "},\n";
  }
  return out;
}

/// Every rank's text on rank 0, in rank order (MPI_Gather in chunks of the
/// longest, which every rank learns first).
std::vector<std::string> gatherTexts(const std::string &mine) {
  int rank = worldRank(), ranks = worldSize();
  int64_t length = static_cast<int64_t>(mine.size()), longest = length;
  MPI_Allreduce(&length, &longest, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  std::vector<int64_t> lengths(rank == 0 ? ranks : 0);
  MPI_Gather(&length, 1, MPI_INT64_T, lengths.data(), 1, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  std::vector<std::string> texts(rank == 0 ? ranks : 0);
  constexpr int64_t kChunk = int64_t(1) << 24;
  std::vector<char> send(static_cast<size_t>(std::min(longest, kChunk)) + 1);
  std::vector<char> receive(rank == 0 ? send.size() * ranks : 0);
  for (int64_t offset = 0; offset < longest; offset += kChunk) {
    int64_t piece = std::min(kChunk, longest - offset);
    std::fill(send.begin(), send.end(), '\0');
    if (offset < length)
      std::memcpy(send.data(), mine.data() + offset,
                  static_cast<size_t>(std::min(piece, length - offset)));
    MPI_Gather(send.data(), static_cast<int>(piece), MPI_BYTE, receive.data(),
               static_cast<int>(piece), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0)
      continue;
    for (int r = 0; r < ranks; ++r) {
      int64_t have = std::min(piece, std::max<int64_t>(0, lengths[r] - offset));
      texts[r].append(receive.data() + static_cast<size_t>(r) * piece,
                      static_cast<size_t>(have));
    }
  }
  return texts;
}

} // namespace

std::string traceOpen(const Options &options, const zrt_program &program,
                      int64_t first, int64_t end) {
  if (options.tracePath.empty())
    return "";
  if (first >= end)
    return "--trace: this run trains no step (it starts at step " +
           std::to_string(first) + " and --steps is " +
           std::to_string(options.steps) + ")";
  int64_t a = options.traceFirst, b = options.traceLast;
  if (!options.traceStepsGiven) {
    // The three steps after the first (which warms caches), as many as
    // the run has.
    a = end - first >= 2 ? first + 1 : first;
    b = std::min(end, a + 3);
  }
  if (a < first || b > end || a >= b)
    return "--trace-steps " + std::to_string(a) + ":" + std::to_string(b) +
           ": this run trains steps " + std::to_string(first) + " to " +
           std::to_string(end - 1) +
           " (the window A:B traces steps A to B-1 and must lie within them)";
  state.path = options.tracePath;
  state.first = a;
  state.last = b;
  state.model = program.model ? program.model : "model";
  state.worldSize = program.world_size;
  state.stage = program.zero_stage;
  if (worldRank() != 0)
    return "";
  state.temporary =
      state.path + ".tmp-" + std::to_string(launcherRank()) + "-" +
      std::to_string(static_cast<long long>(
          std::chrono::steady_clock::now().time_since_epoch().count() %
          1000000));
  state.out = std::fopen(state.temporary.c_str(), "w");
  if (!state.out)
    return "--trace: " + state.path +
           ": cannot create: " + std::strerror(errno);
  return "";
}

double traceClockMicros() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - state.epoch)
      .count();
}

void traceEvent(TraceTrack track, const zrt_trace_site *site, double begin,
                double end) {
  state.events.push_back({track, site, begin, end, state.step});
}

void traceStepBegin(int64_t step) {
  if (!traced(step))
    return;
  if (!state.synchronized) {
    // Every rank leaves this reduction at about the same time: the epoch.
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    state.epoch = std::chrono::steady_clock::now();
    state.synchronized = true;
  }
  state.step = step;
  traceDeviceStepBegin();
  state.stepBegin = traceClockMicros();
  zrt_trace_enabled = 1;
}

void traceStepEnd(int64_t step) {
  if (!traced(step))
    return;
  zrt_trace_enabled = 0;
  traceDeviceStepEnd();
  traceEvent(TraceTrack::Step, nullptr, state.stepBegin, traceClockMicros());
}

void traceClose() {
  if (!active())
    return;
  std::vector<std::string> texts = gatherTexts(serialize(worldRank()));
  if (worldRank() != 0)
    return;
  FILE *out = state.out;
  std::string text = "{\"traceEvents\":[\n";
  for (const std::string &rank : texts)
    text += rank;
  text += "{\"ph\":\"M\",\"pid\":0,\"name\":\"trace_end\",\"args\":{}}\n],\n";
  text += "\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"model\":" +
          quoted(state.model.c_str()) +
          ",\"world_size\":" + std::to_string(state.worldSize) +
          ",\"zero_stage\":" + std::to_string(state.stage) +
          ",\"first_step\":" + std::to_string(state.first) +
          ",\"last_step\":" + std::to_string(state.last - 1) +
          ",\"clock\":" + quoted(traceClockName()) + "}}\n";
  bool ok = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  ok &= std::fclose(out) == 0;
  state.out = nullptr;
  if (!ok || std::rename(state.temporary.c_str(), state.path.c_str()) != 0) {
    std::fprintf(stderr, "zeroc: warning: --trace %s: cannot write: %s\n",
                 state.path.c_str(), std::strerror(errno));
    std::remove(state.temporary.c_str());
  }
}

} // namespace zeroc::rt
