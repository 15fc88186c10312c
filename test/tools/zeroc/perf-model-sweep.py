# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --work %t
"""--sweep at a fixed per-rank batch: trends that must hold, and the derived
rows equal to compiling the model for that world size.

A small GPT-2 (4 layers, n_embd 256, block 128, 2 sequences per rank, bf16)
is compiled for 8 ranks at each ZeRO stage and swept to 1,024 ranks on the
H100 and A100 presets. For every stage:

- the tokens of a step grow as N (the per-rank batch is kept);
- communication in flight and exposed communication never shrink as N
  grows, per-device throughput never grows, and persistent model states
  never grow (they shrink as 1/N from stage 1 on, and stay at stage 0);
- the rows for 16 and 64 ranks equal (to 0.5%) the prediction of the model
  built with that global batch and compiled for that many ranks: the sweep's
  derivation from one schedule is the schedule the back end would emit.

Across stages, at 8 ranks: stage 3 sends 1.5x the bytes of stage 0 (ZeRO
paper), stages 1 and 2 the same as stage 0.
"""
import argparse
import json
import subprocess
import sys

PER_RANK = 2
CONFIG = ["--n-layer", "4", "--n-head", "4", "--n-embd", "256", "--vocab-size", "1024",
          "--block-size", "128", "--dtype", "bf16"]


def model(work, global_batch):
    path = f"{work}/gpt2-b{global_batch}.mlir"
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", *CONFIG, "--batch-size",
                    str(global_batch), "-o", path], check=True)
    return path


def predict(zeroc, path, stage, ranks, machine, sweep=False):
    args = [zeroc, path, f"--zero-stage={stage}", f"--world-size={ranks}",
            "--emit=perf-model-json", f"--machine={machine}"] + (["--sweep"] if sweep else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["predictions"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zeroc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    failures = []
    base = model(args.work, PER_RANK * 8)
    exact = {n: model(args.work, PER_RANK * n) for n in (16, 64)}
    sent = {}
    for machine in ("h100-sxm-ib", "a100-sxm-ib"):
        for stage in (0, 1, 2, 3):
            rows = predict(args.zeroc, base, stage, 8, machine, sweep=True)
            tag = f"{machine} stage {stage}"
            sizes = [r["world_size"] for r in rows]
            if sizes != [8, 16, 32, 64, 128, 256, 512, 1024]:
                failures.append(f"{tag}: world sizes {sizes}")
            for r in rows:
                if r["tokens_per_step"] != PER_RANK * 128 * r["world_size"]:
                    failures.append(f"{tag}: N={r['world_size']} tokens {r['tokens_per_step']}")
            for a, b in zip(rows, rows[1:]):
                n = f"N={a['world_size']}->{b['world_size']}"
                if b["exposed_comm_seconds"] < a["exposed_comm_seconds"] * (1 - 1e-9):
                    failures.append(f"{tag}: exposed communication shrinks {n}")
                if b["comm_seconds"] < a["comm_seconds"] * (1 - 1e-9):
                    failures.append(f"{tag}: communication shrinks {n}")
                if b["tokens_per_second_per_device"] > a["tokens_per_second_per_device"] * (1 + 1e-9):
                    failures.append(f"{tag}: tokens/s per device grows {n}")
                if b["model_state_bytes"] > a["model_state_bytes"]:
                    failures.append(f"{tag}: model states grow {n}")
                if stage == 0 and b["model_state_bytes"] != a["model_state_bytes"]:
                    failures.append(f"{tag}: stage 0 model states change {n}")
                if stage > 0 and not b["model_state_bytes"] < a["model_state_bytes"]:
                    failures.append(f"{tag}: sharded model states do not shrink {n}")
            print(f"{tag}: exposed communication {rows[0]['exposed_comm_seconds'] * 1e3:.3f} ms at 8 "
                  f"ranks -> {rows[-1]['exposed_comm_seconds'] * 1e3:.3f} ms at 1024; tokens/s per GPU "
                  f"{rows[0]['tokens_per_second_per_device']:,.0f} -> "
                  f"{rows[-1]['tokens_per_second_per_device']:,.0f}")
            for n, path in exact.items():
                compiled = predict(args.zeroc, path, stage, n, machine)[0]
                derived = next(r for r in rows if r["world_size"] == n)
                for key in ("step_seconds", "exposed_comm_seconds", "bytes_sent"):
                    a, b = compiled[key], derived[key]
                    if abs(a - b) > 5e-3 * max(abs(a), 1e-12):
                        failures.append(f"{tag}: N={n} {key}: compiled {a}, derived {b}")
            sent[stage] = rows[0]["bytes_sent"]
    ratio = sent[3] / sent[0]
    print(f"bytes sent at 8 ranks, stage 3 / stage 0: {ratio:.3f}")
    if not 1.45 < ratio < 1.55:
        failures.append(f"stage 3 sends {ratio:.3f}x stage 0's bytes, expected 1.5x")
    for stage in (1, 2):
        if abs(sent[stage] / sent[0] - 1) > 0.02:
            failures.append(f"stage {stage} sends {sent[stage] / sent[0]:.3f}x stage 0's bytes")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
