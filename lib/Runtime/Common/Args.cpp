//===- Args.cpp - the executable's command line ---------------------------===//
//
// `--flag value` and `--flag=value` both work. Every error names the flag.
//
//===----------------------------------------------------------------------===//

#include "Services.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace zeroc::rt {

namespace {

bool parseInt(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  value = parsed;
  return true;
}

bool parseUnsigned(const std::string &text, uint64_t &value) {
  if (text.empty() || text[0] == '-' || text[0] == '+')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  value = parsed;
  return true;
}

} // namespace

std::string parseArguments(int argc, char **argv, Options &options) {
  // Flags that take a value.
  static const char *const valued[] = {
      "--data",        "--steps",       "--seed",       "--init",
      "--save",        "--resume",      "--log-json",   "--eval-every",
      "--val-data",    "--data-format", "--sample",     "--prompt",
      "--temperature", "--save-every",  "--keep-last",  "--skip-nonfinite",
      "--collective-timeout", "--trace",     "--trace-steps", "--top-k",
      "--top-p",       "--prompts",     "--logits"};
  bool sawEvalEvery = false, sawTemperature = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    if (arg == "--quiet" || arg == "-q") {
      options.quiet = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0)
      return "unexpected argument '" + arg + "' (see --help)";
    std::string flag = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    bool known = false;
    for (const char *name : valued)
      known |= flag == name;
    if (!known)
      return "unknown option '" + flag + "' (see --help)";
    if (!hasValue) {
      if (i + 1 >= argc)
        return "option '" + flag + "' needs a value";
      value = argv[++i];
    }
    if (value.empty() && flag != "--data-format" && flag != "--prompt")
      return "option '" + flag + "' needs a non-empty value";

    if (flag == "--data") {
      options.data = value;
    } else if (flag == "--steps") {
      if (!parseInt(value, options.steps) || options.steps < 0)
        return "--steps: '" + value + "' is not a non-negative integer";
    } else if (flag == "--seed") {
      if (!parseUnsigned(value, options.seed))
        return "--seed: '" + value + "' is not a non-negative integer";
    } else if (flag == "--init") {
      options.init = value;
    } else if (flag == "--save") {
      options.save = value;
    } else if (flag == "--save-every") {
      if (!parseInt(value, options.saveEvery) || options.saveEvery <= 0)
        return "--save-every: '" + value + "' is not a positive integer";
    } else if (flag == "--keep-last") {
      if (!parseInt(value, options.keepLast) || options.keepLast <= 0)
        return "--keep-last: '" + value + "' is not a positive integer";
    } else if (flag == "--resume") {
      options.resume = value;
    } else if (flag == "--log-json") {
      options.logJson = value;
    } else if (flag == "--eval-every") {
      if (!parseInt(value, options.evalEvery) || options.evalEvery <= 0)
        return "--eval-every: '" + value + "' is not a positive integer";
      sawEvalEvery = true;
    } else if (flag == "--val-data") {
      options.valData = value;
    } else if (flag == "--sample") {
      if (!parseInt(value, options.sample) || options.sample <= 0)
        return "--sample: '" + value + "' is not a positive integer";
    } else if (flag == "--prompt") {
      options.prompt = value;
    } else if (flag == "--prompts") {
      options.promptsFile = value;
    } else if (flag == "--logits") {
      auto endsWith = [&](const std::string &suffix) {
        return value.size() >= suffix.size() &&
               value.compare(value.size() - suffix.size(), suffix.size(),
                             suffix) == 0;
      };
      if (!endsWith(".npy") && !endsWith(".safetensors"))
        return "--logits: '" + value +
               "' must end in .npy or .safetensors (the file's format)";
      options.logitsPath = value;
    } else if (flag == "--temperature") {
      char *end = nullptr;
      options.temperature = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.temperature >= 0) ||
          !std::isfinite(options.temperature))
        return "--temperature: '" + value +
               "' is not a number >= 0 (0: greedy, the most likely token)";
      sawTemperature = true;
    } else if (flag == "--top-k") {
      if (!parseInt(value, options.topK) || options.topK <= 0)
        return "--top-k: '" + value + "' is not a positive integer";
    } else if (flag == "--top-p") {
      char *end = nullptr;
      options.topP = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.topP > 0 && options.topP <= 1))
        return "--top-p: '" + value + "' is not a number in (0, 1]";
    } else if (flag == "--skip-nonfinite") {
      if (!parseInt(value, options.skipNonfinite) || options.skipNonfinite < 0)
        return "--skip-nonfinite: '" + value +
               "' is not a non-negative integer";
    } else if (flag == "--collective-timeout") {
      char *end = nullptr;
      options.collectiveTimeout = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.collectiveTimeout >= 0) ||
          options.collectiveTimeout > 1e9)
        return "--collective-timeout: '" + value +
               "' is not a number of seconds (0 waits forever)";
    } else if (flag == "--trace") {
      options.tracePath = value;
    } else if (flag == "--trace-steps") {
      size_t colon = value.find(':');
      if (colon == std::string::npos ||
          !parseInt(value.substr(0, colon), options.traceFirst) ||
          !parseInt(value.substr(colon + 1), options.traceLast) ||
          options.traceFirst < 0 || options.traceLast <= options.traceFirst)
        return "--trace-steps: '" + value +
               "' is not A:B with 0 <= A < B (steps A to B-1)";
      options.traceStepsGiven = true;
    } else if (flag == "--data-format") {
      if (value == "bin")
        options.format = DataFormat::Bin;
      else if (value == "text")
        options.format = DataFormat::Text;
      else
        return "--data-format: '" + value + "' is not 'bin' or 'text'";
    }
  }
  if (options.help)
    return "";
  if (options.traceStepsGiven && options.tracePath.empty())
    return "--trace-steps needs --trace PATH";
  if (!options.sample) {
    // The flags of sampling mode, which --sample N (or --logits) turns on.
    const char *samplingFlag = options.topK                 ? "--top-k"
                               : options.topP < 1           ? "--top-p"
                               : sawTemperature             ? "--temperature"
                               : nullptr;
    if (samplingFlag)
      return std::string(samplingFlag) + " needs --sample N";
    if (!options.promptsFile.empty() && options.logitsPath.empty())
      return "--prompts needs --sample N or --logits FILE";
  }
  if (!options.promptsFile.empty() && !options.prompt.empty())
    return "--prompt and --prompts cannot be combined (put the prompt in the "
           "file)";
  if (options.sample || !options.logitsPath.empty()) {
    const char *mode = options.sample ? "--sample" : "--logits";
    if (!options.data.empty() || !options.save.empty() || sawEvalEvery)
      return std::string(mode) +
             " generates text from weights (--init or --resume); it "
             "takes no --data, --save or --eval-every";
    if (!options.tracePath.empty())
      return std::string("--trace records training steps; it does not go "
                         "with ") +
             mode;
    return "";
  }
  if ((options.saveEvery || options.keepLast) && options.save.empty())
    return std::string(options.saveEvery ? "--save-every" : "--keep-last") +
           " needs --save DIR";
  if (options.data.empty())
    return "--data PATH is required (a uint16 token file, or text with "
           "--data-format=text)";
  if (!options.init.empty() && !options.resume.empty())
    return "--init and --resume cannot be combined (a checkpoint already "
           "holds the weights)";
  if (sawEvalEvery && options.valData.empty())
    return "--eval-every needs --val-data PATH";
  if (!sawEvalEvery && !options.valData.empty())
    return "--val-data needs --eval-every K";
  return "";
}

std::string usage(const char *argv0, const zrt_program &program) {
  std::string text;
  // One rank needs no launcher.
  text += program.world_size == 1
              ? "usage: " + std::string(argv0) + " --data PATH [options]\n\n"
              : "usage: mpirun -np " + std::to_string(program.world_size) +
                    " " + argv0 + " --data PATH [options]\n\n";
  text += "Trains '" + std::string(program.model ? program.model : "model") +
          "' (compiled for " + std::to_string(program.world_size) +
          " rank(s), ZeRO stage " + std::to_string(program.zero_stage) + ", " +
          std::to_string(program.batch_per_rank) + " sequence(s) of " +
          std::to_string(program.seq_len) + " tokens per rank, vocabulary " +
          std::to_string(program.vocab) + ").\n\n";
  text +=
      "  --data PATH           training tokens: raw little-endian uint16 (a\n"
      "                        nanoGPT .bin, whatever its extension)\n"
      "  --data-format=FMT     bin (default) or text (bytes, vocabulary 256)\n"
      "  --steps K             train until the step counter reaches K\n"
      "                        (default 10; counts steps of a resumed run)\n"
      "  --seed S              initialization seed (default 1337)\n"
      "  --init W.safetensors  start from these weights instead of the seed\n"
      "                        (or a checkpoint's, --init DIR; or a sharded\n"
      "                        Hugging Face checkpoint: its folder or\n"
      "                        model.safetensors.index.json)\n"
      "  --save DIR            at the end (and on SIGTERM, SIGINT or SIGUSR1:\n"
      "                        after the current step) write the checkpoint\n"
      "                        DIR/step-NNNNNNN and point DIR/latest at it\n"
      "  --save-every K        also every K steps\n"
      "  --keep-last M         then remove all but the M newest checkpoints\n"
      "  --resume DIR          continue from DIR/latest (or from DIR, a step\n"
      "                        folder), written on any world size and stage\n"
      "  --log-json PATH       JSON Lines log (rank 0)\n"
      "  --eval-every K        validation loss every K steps, on...\n"
      "  --val-data PATH       ...this token file (same format as --data)\n"
      "  --quiet               no progress lines or summary table\n"
      "  --skip-nonfinite K    skip the update of up to K steps whose gradient\n"
      "                        norm is not finite (default 0: a non-finite\n"
      "                        loss or gradient norm stops the run, and --save\n"
      "                        writes nothing)\n"
      "  --collective-timeout S  end the job when a collective makes no\n"
      "                        progress for S seconds (default 600; 0: never)\n"
      "  --trace PATH          write a Chrome/Perfetto trace (JSON) of every\n"
      "                        rank's ops, collectives and waits\n"
      "  --trace-steps A:B     the steps it records: A to B-1 (default: the\n"
      "                        three after the first)\n"
      "\nSampling (instead of training):\n"
      "  --sample N            generate N tokens from the weights of --init\n"
      "                        or --resume (or the seed's), then exit\n"
      "  --prompt TEXT         the text to continue (bytes; default empty)\n"
      "  --prompts FILE        several prompts, one per line: each is\n"
      "                        continued in turn, its text printed on the\n"
      "                        lines after the previous one's\n"
      "  --temperature T       softmax temperature (default 0.8; 0: greedy,\n"
      "                        the most likely token, as argmax)\n"
      "  --top-k K             draw among the K most likely tokens only\n"
      "  --top-p P             then among the fewest most likely tokens whose\n"
      "                        probability reaches P (nucleus; 0 < P <= 1)\n"
      "  --seed S              (above) also the draws' random stream\n"
      "  --logits FILE         write the logits of each prompt's last position\n"
      "                        (prompts x vocabulary, float32) to FILE.npy or\n"
      "                        FILE.safetensors (tensor \"logits\"); without\n"
      "                        --sample, only that\n"
      "  --help                this text\n";
  return text;
}

} // namespace zeroc::rt
