"""Prints the micro-batch starts and collective starts of @train_step, in order.

    collectives.py ZEROC_OPT MODEL STAGE K [--count]

runs --train-pipeline="stage=STAGE world-size=3 grad-accum=K bucket-bytes=64"
on MODEL and prints one line per micro-batch start ("micro-batch M", the
train.slice of the first argument) and per collective start ("all_reduce
tensor<NxT>"), then "end"; with --count, the number of each kind of
collective instead.
"""
import collections
import re
import subprocess
import sys

opt, model, stage, k = sys.argv[1:5]
ir = subprocess.run([opt, model, f"--train-pipeline=stage={stage} world-size=3 "
                     f"grad-accum={k} bucket-bytes=64"], check=True, capture_output=True,
                    text=True).stdout
step = ir[ir.index("func.func @train_step"):]
step = step[:step.index("\n  }\n")]
events = []
for line in step.splitlines():
    slice_ = re.search(r"train\.slice %arg0 .*train\.micro_batch = (\d+)", line)
    start = re.search(r"train\.(all_reduce|reduce_scatter|all_gather)_start %\S+ .*: "
                      r"(tensor<\w+>) ->", line)
    if slice_:
        events.append(f"micro-batch {slice_.group(1)}")
    elif start:
        events.append(f"{start.group(1)} {start.group(2)}")
if "--count" in sys.argv:
    counts = collections.Counter(e.split()[0] for e in events if not e.startswith("micro"))
    print(", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())))
else:
    print("\n".join(events + ["end"]))
