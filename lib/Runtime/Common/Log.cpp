//===- Log.cpp - progress lines, JSON Lines records, the summary ----------===//

#include "Services.h"

#include "zeroc/Support/Format.h"

#include <cinttypes>
#include <cmath>
#include <cstdlib>

namespace zeroc::rt {

namespace {

const char *const kCategoryKeys[ZRT_MEM_CATEGORIES] = {
    "parameters",          "gradients",        "optimizer_states",
    "gathered_parameters", "gradient_buckets", "activations"};

std::string format(const char *pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  int64_t total = static_cast<int64_t>(seconds + 0.5);
  char text[64];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%" PRId64 "h%02" PRId64 "m", total / 3600,
                  total / 60 % 60);
  else if (total >= 60)
    std::snprintf(text, sizeof text, "%" PRId64 "m%02" PRId64 "s", total / 60,
                  total % 60);
  else
    std::snprintf(text, sizeof text, "%" PRId64 "s", total);
  return text;
}


} // namespace

std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value)
      break;
  }
  return text;
}

std::string progressLine(const StepRecord &record, int64_t lastStep,
                         double etaSeconds) {
  std::string line =
      "step " + std::to_string(record.step) + "/" + std::to_string(lastStep);
  line += " | loss " + format("%.4f", record.loss);
  line += " | lr " + format("%.3e", record.lr);
  line += " | grad norm " + format("%.4f", record.gradNorm);
  line += " | " + format("%.1f", record.ms) + " ms";
  line += " | " +
          withCommas(static_cast<int64_t>(std::llround(
              std::isfinite(record.tokensPerSecond) ? record.tokensPerSecond
                                                    : 0))) +
          " tok/s";
  line += " | ETA " + duration(etaSeconds);
  return line;
}

std::string stepJson(const StepRecord &record) {
  return "{\"step\": " + std::to_string(record.step) +
         ", \"loss\": " + jsonNumber(record.loss) +
         ", \"lr\": " + jsonNumber(record.lr) +
         ", \"grad_norm\": " + jsonNumber(record.gradNorm) +
         ", \"ms\": " + jsonNumber(std::round(record.ms * 1e3) / 1e3) +
         ", \"tokens_per_s\": " +
         jsonNumber(std::round(record.tokensPerSecond * 10) / 10) + "}";
}

std::string evalJson(int64_t step, double valLoss) {
  return "{\"step\": " + std::to_string(step) +
         ", \"val_loss\": " + jsonNumber(valLoss) + "}";
}

std::string summaryJson(int64_t steps, const std::vector<RankSummary> &ranks) {
  std::string text = "{\"summary\": true, \"steps\": " + std::to_string(steps) +
                     ", \"ranks\": [";
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankSummary &rank = ranks[r];
    text += r ? ", " : "";
    text += "{\"rank\": " + std::to_string(r) + ", \"peak_bytes\": {";
    for (int c = 0; c < ZRT_MEM_CATEGORIES; ++c)
      text += std::string(c ? ", " : "") + "\"" + kCategoryKeys[c] +
              "\": " + std::to_string(rank.peak[c]);
    text += "}, \"bytes_sent\": " + std::to_string(rank.bytesSent) +
            ", \"seconds_waiting\": " + jsonNumber(rank.secondsWaiting) +
            ", \"peak_total_bytes\": " + std::to_string(rank.peakTotal);
    if (rank.devicePeak >= 0)
      text += ", \"device_peak_bytes\": " + std::to_string(rank.devicePeak);
    text += "}";
  }
  text += "]";
  if (const char *core = blasCoreName())
    text += std::string(", \"blas_core\": \"") + core + "\"";
  return text + "}";
}

std::string summaryTable(const zrt_program &program, int64_t steps,
                         const std::vector<RankSummary> &ranks) {
  std::string text;
  text += "zeroc: " + std::to_string(steps) + " step(s) of '" +
          std::string(program.model ? program.model : "model") + "' on " +
          std::to_string(ranks.size()) + " rank(s), ZeRO stage " +
          std::to_string(program.zero_stage) + "\n";
  static const char *const headers[] = {"rank",        "params",   "grads",
                                        "optim",       "gathered", "buckets",
                                        "activations", "sent",     "waiting",
                                        "device"};
  // A runtime with a device (CUDA) adds the memory pool's peak reservation.
  bool device = !ranks.empty() && ranks[0].devicePeak >= 0;
  char line[256];
  std::snprintf(line, sizeof line,
                "%4s %11s %11s %11s %11s %11s %11s %11s %9s", headers[0],
                headers[1], headers[2], headers[3], headers[4], headers[5],
                headers[6], headers[7], headers[8]);
  if (device)
    text += "  peak bytes per category, bytes sent, seconds blocked in "
            "zrt_wait (0 on a GPU), peak device memory reserved\n";
  else
    text += "  peak bytes per category, bytes sent, seconds blocked in "
            "zrt_wait\n";
  text += line;
  if (device) {
    std::snprintf(line, sizeof line, " %11s", headers[9]);
    text += line;
  }
  text += "\n";
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankSummary &rank = ranks[r];
    std::snprintf(
        line, sizeof line, "%4zu %11s %11s %11s %11s %11s %11s %11s %8.3fs", r,
        humanBytes(rank.peak[0]).c_str(), humanBytes(rank.peak[1]).c_str(),
        humanBytes(rank.peak[2]).c_str(), humanBytes(rank.peak[3]).c_str(),
        humanBytes(rank.peak[4]).c_str(), humanBytes(rank.peak[5]).c_str(),
        humanBytes(rank.bytesSent).c_str(), rank.secondsWaiting);
    text += line;
    if (device) {
      std::snprintf(line, sizeof line, " %11s",
                    humanBytes(rank.devicePeak).c_str());
      text += line;
    }
    text += "\n";
  }
  return text;
}

} // namespace zeroc::rt
