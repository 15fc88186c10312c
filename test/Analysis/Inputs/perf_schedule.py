"""Checks the performance model on Inputs/perf-schedule.mlir against figures
worked out by hand on Inputs/unit.machine (microseconds):

  matmul 16x256 @ 256x256: 2*16*256*256 = 2,097,152 FLOPs at 1 TFLOP/s * 0.5
      = 4.194304 (memory: 294,912 B at 500 GB/s = 0.59, less) + 1 overhead
      -> [0, 5.194304]
  all-reduce of 65,536 f32 = 262,144 B over 4 ranks of one node, ring:
      2*3 steps * 2 + 2*3/4 * 262,144 B / 100 GB/s = 12 + 3.93216 = 15.93216
      -> starts after the matmul: [5.194304, 21.126464]
  gelu of 4,096 elements: 20 FLOPs each at 10 GFLOP/s = 8.192 (memory 0.066)
      + 1 -> [5.194304, 14.386304]
  wait: the compute stream stalls 21.126464 - 14.386304 = 6.74016
  squared_norm of 65,536: 2 FLOPs each = 13.1072 + 1 -> [21.126464, 35.233664]
  step: 35.233664 + 10 step overhead = 45.233664

Without asynchronous progress the all-reduce runs at the wait:
  [14.386304, 30.318464], exposed 15.93216, norm to 44.425664, step 54.425664.

Derived for 64 ranks (8 nodes of 8): ring 2*63 * 20 + 2*63/64 * 262,144 /
10 GB/s = 2571.6 loses to the tree 2*(3*20 + 7*2) + 2 * 262,144 / 10 GB/s =
148 + 52.4288 = 200.4288: [5.194304, 205.623104], exposed 191.2368, norm to
219.730304, step 229.730304.
"""
import json
import sys


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-30)


def check(path, label, step_us, exposed_us, comm_us, extra=None):
    p = json.load(open(path))["predictions"]
    p = p[0] if extra is None else next(x for x in p if x["world_size"] == extra)
    errors = []
    for name, got, want in [("step", p["step_seconds"], step_us * 1e-6),
                            ("exposed", p["exposed_comm_seconds"], exposed_us * 1e-6),
                            ("comm", p["comm_seconds"], comm_us * 1e-6)]:
        if not close(got, want):
            errors.append(f"{label}: {name} {got!r} s, expected {want!r} s")
    return p, errors


errors = []
p, e = check(sys.argv[1], "async", 45.233664, 6.74016, 15.93216)
errors += e
spans = {op["kind"]: (op["start"] * 1e6, op["end"] * 1e6) for op in p["ops"]}
for kind, (start, end) in {"matmul": (0, 5.194304), "all_reduce_start": (5.194304, 21.126464),
                           "gelu": (5.194304, 14.386304), "wait": (14.386304, 21.126464),
                           "squared_norm": (21.126464, 35.233664)}.items():
    got = spans.get(kind)
    if not got or not (abs(got[0] - start) < 1e-6 and abs(got[1] - end) < 1e-6):
        errors.append(f"async: {kind} spans {got}, expected {(start, end)}")
if p["model_flops"] != 2097152 or p["bytes_sent"] != 393216 or p["tokens_per_step"] != 64:
    errors.append(f"async: flops {p['model_flops']}, bytes {p['bytes_sent']}, "
                  f"tokens {p['tokens_per_step']}")
if not close(p["mfu"], 2097152 / (45.233664e-6 * 1e12)):
    errors.append(f"async: MFU {p['mfu']}")
if not close(p["overlap"], 1 - 6.74016 / 15.93216):
    errors.append(f"async: overlap {p['overlap']}")
print("async: step 45.233664 us, exposed 6.74016 us: "
      + ("as computed by hand" if not errors else "WRONG"))

n = len(errors)
p, e = check(sys.argv[2], "sync", 54.425664, 15.93216, 15.93216)
errors += e
print("sync: step 54.425664 us, exposed 15.93216 us: "
      + ("as computed by hand" if len(errors) == n else "WRONG"))

n = len(errors)
p, e = check(sys.argv[3], "64 ranks", 229.730304, 191.2368, 200.4288, extra=64)
errors += e
if p["tokens_per_step"] != 2 * 8 * 64:
    errors.append(f"64 ranks: tokens {p['tokens_per_step']}")
print("64 ranks: step 229.730304 us, tree all-reduce: "
      + ("as computed by hand" if len(errors) == n else "WRONG"))
for error in errors:
    print("error:", error)
sys.exit(1 if errors else 0)
