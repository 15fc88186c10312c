"""Reads --emit=perf-model-json on stdin; checks that each kind named on the
command line was timed (an op with work: bytes moved, or FLOPs), and prints
the kinds, sorted, with the FLOPs of each attention op (as a set)."""
import json
import sys

ops = json.load(sys.stdin)["predictions"][0]["ops"]
kinds = {}
for op in ops:
    work = op.get("bytes", 0) > 0 or op.get("flops", 0) > 0
    kinds[op["kind"]] = kinds.get(op["kind"], False) or work
for kind in sys.argv[1:]:
    if not kinds.get(kind):
        sys.exit(f"no timed {kind} op")
flops = sorted({int(op["flops"]) for op in ops if op["kind"] == "attention"})
print("timed:", " ".join(sorted(k for k in sys.argv[1:])), "attention flops:", flops)
