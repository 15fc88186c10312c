# RUN: %python %s %zeroc_build/bin/zeroc %zeroc_src/examples/gpt2-tiny.mlir | FileCheck %s
# CHECK: full: the same model FLOPs, a longer step, a lower MFU
# CHECK: selective: the same model FLOPs, a longer step, a lower MFU
"""The performance model times recomputation (--remat) but leaves it out of
MFU: the model FLOPs of a step do not change with the policy, its time
grows, so MFU drops."""
import json
import subprocess
import sys

zeroc, model = sys.argv[1:3]


def predict(policy):
    run = subprocess.run([zeroc, model, "--world-size=2", f"--remat={policy}",
                          "--emit=perf-model-json", "--machine=h100-sxm-ib"],
                         check=True, capture_output=True, text=True)
    return json.loads(run.stdout)["predictions"][0]


none = predict("none")
for policy in ("full", "selective"):
    p = predict(policy)
    if (p["model_flops"] == none["model_flops"] and p["step_seconds"] > none["step_seconds"]
            and p["mfu"] < none["mfu"]):
        print(f"{policy}: the same model FLOPs, a longer step, a lower MFU")
    else:
        print(f"{policy}: {p} against {none}")
