"""What the integration tests share: their arguments, the tiny models,
runs of the reference evaluator and of compiled executables under mpirun,
and the check that measured peaks equal the memory report.

A test imports it with its folder on sys.path:

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
    import harness
"""
import argparse
import json
import os
import subprocess
import sys


def parse_args(tools=("--zeroc", "--zeroc-opt", "--zeroc-run")):
    """The tools' paths, --src (the source tree), --work (the test's own
    folder) and --mpirun (lit's %mpirun), all required."""
    parser = argparse.ArgumentParser()
    for flag in (*tools, "--src", "--work", "--mpirun"):
        parser.add_argument(flag, required=True)
    return parser.parse_args()


def mpirun(args):
    """The mpirun command with the test's own TMPDIR: Open MPI's session
    folder under a shared one can collide with a concurrent test's."""
    return ["env", f"TMPDIR={args.work}", *args.mpirun.split()]


def text_data(args):
    """The byte-level training text (--data-format=text)."""
    return os.path.join(args.src, "data", "tinyshakespeare.txt")


def build_model(args, name, module, flags):
    """Writes the model `module` (zeroc.models.gpt2 or .llama) builds with
    `flags` to WORK/NAME.mlir and returns its path."""
    path = os.path.join(args.work, f"{name}.mlir")
    subprocess.run([sys.executable, "-m", module, *flags, "-o", path], check=True)
    return path


def worst(values, reference):
    """The largest relative difference between two series."""
    return max(abs(a - b) / abs(b) for a, b in zip(values, reference))


def evaluate(args, model, pipeline, ranks, steps, tag, seed=3):
    """Partitions `model` with zeroc-opt --train-pipeline=PIPELINE (written
    to WORK/TAG.mlir) and runs it on the reference evaluator over `ranks`
    ranks: the evaluator's per-step records (each with every rank's
    results)."""
    step = os.path.join(args.work, f"{tag}.mlir")
    subprocess.run([args.zeroc_opt, model, f"--train-pipeline={pipeline}", "-o", step],
                   check=True)
    run = subprocess.run([args.zeroc_run, step, "--ranks", str(ranks), "--steps",
                          str(steps), "--seed", str(seed)], check=True,
                         capture_output=True, text=True)
    return json.loads(run.stdout)["steps"]


def compile_executable(args, model, flags, exe):
    """Compiles `model` with `flags` to `exe`; returns the memory report of
    the same flags."""
    subprocess.run([args.zeroc, model, *flags, "-o", exe], check=True)
    return memory_report(args, model, flags)


def memory_report(args, model, flags):
    return json.loads(subprocess.run(
        [args.zeroc, model, *flags, "--emit=memory-report"], check=True,
        capture_output=True, text=True).stdout)


def train(args, exe, ranks, steps, seed=5, extra=()):
    """Runs `exe` on `ranks` ranks over the text data with --log-json
    EXE.jsonl: its records."""
    log = exe + ".jsonl"
    subprocess.run(mpirun(args) + ["-np", str(ranks), exe, "--data", text_data(args),
                                   "--data-format=text", "--steps", str(steps), "--seed",
                                   str(seed), "--log-json", log, "--quiet", *extra],
                   check=True, stdout=subprocess.DEVNULL)
    return [json.loads(line) for line in open(log)]


def losses(records):
    return [r["loss"] for r in records if "loss" in r]


def rank0(records):
    """Rank 0's part of the run's summary record (peak_bytes, bytes_sent)."""
    return next(r for r in records if r.get("summary"))["ranks"][0]


def peak_mismatches(records, report, tag):
    """One message per memory category whose peak rank 0 measured differs
    from the report's figure (persistent and transient alike)."""
    static = {**report["per_rank_bytes"], **report["transient_bytes"]}
    return [f"{tag}: measured {key} {value} != report {static[key]}"
            for key, value in rank0(records)["peak_bytes"].items() if value != static[key]]


def finish(failures, message):
    """Prints the failures and exits 1, or prints `message`."""
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(message)
