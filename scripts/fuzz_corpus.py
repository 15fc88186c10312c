#!/usr/bin/env python3
"""Writes the seed corpus of one of zeroc's fuzz targets (docs/reliability.md)
from the examples and the tests, standard library only.

    scripts/fuzz_corpus.py TARGET DIR [--bin BUILD/bin]

TARGET is parse-verify, pipeline, passes, emit, evaluator, safetensors or
checkpoint.
The MLIR seeds are every .mlir file of examples/ and test/, cut at
`// -----` (one module per seed), and the modules of the tests' split-file
sections; the targets that read a leading configuration byte get each
seed under a few of them. `emit` gets the per-rank programs zeroc writes for
the examples (--emit=mlir at several stages and world sizes), `safetensors`
the states the evaluator saves for them plus malformed files, `checkpoint`
the files the fuzz target writes itself. The tools come from --bin (default:
build-sanitize/bin, else build/bin).
"""

import argparse
import hashlib
import os
import re
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (stage, world size, bf16) under the configuration bytes of the pipeline
# target: bits 0-1 the stage, 2-3 the world size - 1, 4 bf16, 5 small buckets,
# 6-7 the rematerialization policy (1 full, 2 selective).
PIPELINE_CONFIGS = [0b000000, 0b000101, 0b100110, 0b001011, 0b010111, 0b110011,
                    0b01000101, 0b10100111]
EVALUATOR_CONFIGS = [0b000, 0b101]
# The passes target's list (tools/zeroc-fuzz/FuzzPasses.cpp, kPasses).
PASS_COUNT = 46


def mlir_sources():
    """Every module of the examples and tests, as text."""
    texts = []
    for top in ("examples", "test"):
        for directory, _, names in sorted(os.walk(os.path.join(ROOT, top))):
            for name in sorted(names):
                path = os.path.join(directory, name)
                if name.endswith(".mlir"):
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                    texts.extend(part for part in re.split(r"^// -----.*$", text, flags=re.M)
                                 if part.strip())
                elif name.endswith(".test"):
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                    # split-file sections that hold MLIR.
                    for match in re.finditer(r"^//--- (\S+\.mlir)\n(.*?)(?=^//--- |\Z)", text,
                                             flags=re.M | re.S):
                        texts.append(match.group(2))
    return texts


def write(directory, data):
    """Writes one seed named by its hash (duplicates collapse)."""
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def find_bin(option):
    for candidate in ([option] if option else []) + [
            os.path.join(ROOT, "build-sanitize", "bin"), os.path.join(ROOT, "build", "bin")]:
        if candidate and os.path.exists(os.path.join(candidate, "zeroc")):
            return candidate
    sys.exit("fuzz_corpus.py: no zeroc found (pass --bin BUILD/bin)")


def run(command):
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          env=env, check=False)


def per_rank_programs(bin_dir):
    examples = [os.path.join(ROOT, "examples", n) for n in ("mlp.mlir", "gpt2-tiny.mlir")]
    programs = []
    for example in examples:
        for stage, ranks, precision in ((0, 1, None), (1, 2, None), (2, 2, "bf16"),
                                        (3, 2, None), (3, 3, "bf16")):
            command = [os.path.join(bin_dir, "zeroc"), example, f"--zero-stage={stage}",
                       f"--world-size={ranks}", "--emit=mlir", "-o", "-"]
            if precision:
                command.append(f"--precision={precision}")
            result = run(command)
            if result.returncode == 0:
                programs.append(result.stdout)
    return programs


def safetensors_seeds(bin_dir, directory):
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for example in ("mlp.mlir", "gpt2-tiny.mlir"):
            path = os.path.join(tmp, example + ".safetensors")
            result = run([os.path.join(bin_dir, "zeroc-run"), os.path.join(ROOT, "examples", example),
                          "--steps", "0", "--save-state", path])
            if result.returncode == 0:
                with open(path, "rb") as f:
                    write(directory, f.read())
    # Small hand-made files: empty, metadata only, one tensor, two tensors
    # sharing bytes, a zero-sized tensor.
    def file(header, data=b""):
        import json
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        return struct.pack("<Q", len(text)) + text + data
    write(directory, file({}))
    write(directory, file({"__metadata__": {"format": "pt"}}))
    write(directory, file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8))
    write(directory, file({"a": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]},
                           "b": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}}, b"\1" * 8))
    write(directory, file({"e": {"dtype": "U16", "shape": [0, 3], "data_offsets": [0, 0]}}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=["parse-verify", "pipeline", "passes", "emit",
                                           "evaluator", "safetensors", "checkpoint"])
    parser.add_argument("directory")
    parser.add_argument("--bin")
    args = parser.parse_args()
    os.makedirs(args.directory, exist_ok=True)
    if args.target == "parse-verify":
        for text in mlir_sources():
            write(args.directory, text)
    elif args.target == "pipeline":
        for text in mlir_sources():
            if "train.forward" in text:
                for config in PIPELINE_CONFIGS:
                    write(args.directory, bytes([config]) + text.encode())
    elif args.target == "passes":
        # Each module under three of the target's PASS_COUNT passes (its
        # byte picks one), in turn, so that every pass meets IR of every
        # stage across the modules; mutations of the byte do the rest.
        for i, text in enumerate(mlir_sources()):
            for j in range(3):
                write(args.directory, bytes([(3 * i + j) % PASS_COUNT]) + text.encode())
    elif args.target == "evaluator":
        for text in mlir_sources():
            if "func.func" in text:
                for config in EVALUATOR_CONFIGS:
                    write(args.directory, bytes([config]) + text.encode())
    elif args.target == "emit":
        bin_dir = find_bin(args.bin)
        for program in per_rank_programs(bin_dir):
            write(args.directory, b"\0" + program)
            write(args.directory, b"\1" + program)
    elif args.target == "safetensors":
        safetensors_seeds(find_bin(args.bin), args.directory)
    elif args.target == "checkpoint":
        bin_dir = find_bin(args.bin)
        env = dict(os.environ, ZEROC_FUZZ_WRITE_SEEDS=args.directory)
        subprocess.run([os.path.join(bin_dir, "zeroc-fuzz-checkpoint")], env=env, check=True)
    print(f"fuzz_corpus.py: {len(os.listdir(args.directory))} seeds for {args.target} "
          f"in {args.directory}")


if __name__ == "__main__":
    main()
