"""Prints the simulated span of the first op of each kind named, in us:
`perf_spans.py PREDICTION.json KIND...` (perf-model-attention.test)."""
import json
import sys

ops = json.load(open(sys.argv[1]))["predictions"][0]["ops"]
for kind in sys.argv[2:]:
    op = next(op for op in ops if op["kind"] == kind)
    print(f"{kind} {(op['end'] - op['start']) * 1e6:.6f} us")
