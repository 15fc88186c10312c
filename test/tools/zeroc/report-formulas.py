# RUN: %python %s %zeroc_build/bin/zeroc
"""The memory report of the real pipeline matches the ZeRO paper's formulas.

For the tiny GPT-2 (every parameter size divides by 1..4, so shards have no
padding), every stage 0-3, N = 1..4 and both precisions: per-rank model
states are (bytes per parameter) x Psi, divided by N where the stage
partitions them, and the gradient traffic is what ring collectives send:
2(N-1)/N Psi for an all-reduce, (N-1)/N Psi for a reduce-scatter or an
all-gather of every parameter.
"""
import json
import subprocess
import sys
import tempfile

ZEROC = sys.argv[1]
failures = []


def check(what, got, expected, tolerance=0):
    if abs(got - expected) > tolerance:
        failures.append(f"{what}: got {got}, expected {expected}")


with tempfile.TemporaryDirectory() as tmp:
    model = f"{tmp}/tiny.mlir"
    subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", "--preset", "tiny",
                    "-o", model], check=True)
    for precision in ("fp32", "bf16"):
        # bytes per parameter: (param, grad, optimizer state)
        p, g, k = (4, 4, 8) if precision == "fp32" else (2, 2, 12)
        for n in (1, 2, 3, 4):
            for stage in (0, 1, 2, 3):
                out = subprocess.run(
                    [ZEROC, model, f"--zero-stage={stage}", f"--world-size={n}",
                     f"--precision={precision}", "--emit=memory-report"],
                    check=True, capture_output=True, text=True).stdout
                r = json.loads(out)
                psi = r["parameters"]
                tag = f"{precision} N={n} stage {stage}"
                check(f"{tag} psi", psi, 69744)
                check(f"{tag} precision", 0 if r["precision"] == precision else 1, 0)
                b = r["per_rank_bytes"]
                check(f"{tag} parameters", b["parameters"], p * psi // (n if stage >= 3 else 1))
                check(f"{tag} gradients", b["gradients"], g * psi // (n if stage >= 2 else 1))
                check(f"{tag} optimizer_states", b["optimizer_states"],
                      k * psi // (n if stage >= 1 else 1))
                check(f"{tag} model_states", b["model_states"],
                      b["parameters"] + b["gradients"] + b["optimizer_states"])
                # Gradient traffic: the collectives over packed buckets.
                kinds = {}
                for c in r["collectives"]:
                    if c["tensors"] > 0:
                        kinds[c["op"]] = kinds.get(c["op"], 0) + c["elements"]
                slack = len(r["collectives"])  # per-collective rounding
                ring = (n - 1) / n * psi
                if stage == 0:
                    check(f"{tag} all-reduce", kinds.get("all_reduce", 0), 2 * ring, slack)
                else:
                    check(f"{tag} reduce-scatter", kinds.get("reduce_scatter", 0), ring, slack)
                    gathered = kinds.get("all_gather", 0)
                    if stage < 3:
                        check(f"{tag} all-gather", gathered, ring, slack)
                    elif not (ring - slack <= gathered <= 2 * ring + slack):
                        failures.append(f"{tag} all-gather {gathered} outside "
                                        f"[{ring}, {2 * ring}]")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ZeRO formulas hold for 32 configurations")
