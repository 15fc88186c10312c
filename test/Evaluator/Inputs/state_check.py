"""Checks --save-state files and --print-state output for state.mlir.

usage: state_check.py file STATE.safetensors RUN.json
       state_check.py same-state A.json B.json
       state_check.py params-only STATE.safetensors OUT.safetensors
       state_check.py make-layout-init OUT.safetensors

(and for sharded-state.mlir)
"""

import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalref  # noqa: E402


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def check_file(path, run_path):
    """The layout of the safetensors spec, and the values of the run."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    if n % 8:
        fail("header length %d is not a multiple of 8" % n)
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__")
    end = 0
    for name, entry in header.items():  # json keeps the file's order
        print(name, entry["dtype"], entry["shape"])
        begin, stop = entry["data_offsets"]
        if begin != end:
            fail("%s does not start where the previous tensor ends" % name)
        end = stop
    if 8 + n + end != len(data):
        fail("the data does not end the file")
    print("metadata: " + " ".join("%s=%s" % kv for kv in sorted(metadata.items())))
    tensors, _, _ = evalref.read_safetensors(path)
    state = evalref.load_run(run_path)["state"]
    if sorted(tensors) != sorted(state):
        fail("the file holds %s, the run printed %s" % (sorted(tensors), sorted(state)))
    for name, (_, _, values) in tensors.items():
        if values != state[name]:
            fail("%s: file %r, printed %r" % (name, values, state[name]))
    print("file ok: matches the printed state")


def same_state(a, b):
    sa = evalref.load_run(a)["state"]
    sb = evalref.load_run(b)["state"]
    if sa != sb:
        fail("states differ:\n%r\n%r" % (sa, sb))
    print("same state: %d tensors" % len(sa))


def params_only(path, out):
    tensors, _, _ = evalref.read_safetensors(path)
    evalref.write_safetensors(out, [
        (name, dtype, shape, values) for name, (dtype, shape, values)
        in tensors.items() if name in ("w", "h")])


def make_layout_init(out):
    """Params of sharded-state.mlir's layout.mlir with recognizable values."""
    evalref.write_safetensors(out, [
        ("wpe", "F32", [8], [float(i) for i in range(8)]),
        ("rep", "F32", [2, 1], [5.0, 6.0])])


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "file":
        check_file(sys.argv[2], sys.argv[3])
    elif command == "same-state":
        same_state(sys.argv[2], sys.argv[3])
    elif command == "params-only":
        params_only(sys.argv[2], sys.argv[3])
    elif command == "make-layout-init":
        make_layout_init(sys.argv[2])
