"""Inputs and checks of the fault tests (divergence, --skip-nonfinite,
--collective-timeout, the safetensors reader's rules), standard library
only, on examples/mlp.mlir (vocabulary 37, embedding 8) and
linear_program.cpp.

usage: faults.py spiky-init IN.safetensors OUT.safetensors
       faults.py spiky-data OUT.bin
       faults.py same-states CKPT_A CKPT_B   (checkpoints of --save)
       faults.py finite CKPT
       faults.py bad-offsets MODEL.safetensors OUT_DIR
       faults.py load FILE.safetensors   (python's reader: ok, or its error)
       faults.py meta FILE.safetensors KEY
"""

import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "python"))
from zeroc import checkpoint, weights  # noqa: E402


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def floats(raw):
    return list(struct.unpack("<%df" % raw.numel, raw.data))


def spiky_init(source, target):
    """examples/mlp.mlir's weights with token 5's embedding at 1e37: a batch
    that holds token 5 has an infinite gradient norm (its squares overflow
    f32) and a finite loss; every other batch trains normally."""
    tensors, metadata = weights.load(source)
    emb = tensors["emb.weight"]
    values = floats(emb)
    for j in range(8):
        values[5 * 8 + j] = 1e37
    tensors["emb.weight"] = weights.RawTensor("F32", emb.shape,
                                              struct.pack("<%df" % len(values), *values))
    weights.save(target, tensors, metadata)


def spiky_data(path):
    """400 tokens below 37, token 5 only at position 123: a few steps of a
    run read it, the others do not."""
    tokens = [(i * 7 + i // 3) % 37 for i in range(400)]
    tokens = [6 if t == 5 else t for t in tokens]
    tokens[123] = 5
    with open(path, "wb") as f:
        f.write(b"".join(struct.pack("<H", t) for t in tokens))


def same_states(a, b):
    """Every tensor of the two checkpoints (--save folders; the gradients,
    which a skipped step still overwrites, are not stored) is bitwise the
    same."""
    ma, mb = checkpoint.read_manifest(a), checkpoint.read_manifest(b)
    names = [t["name"] for t in ma["tensors"] if t["kind"] != "trainer"]
    if names != [t["name"] for t in mb["tensors"] if t["kind"] != "trainer"] or not names:
        fail(f"{a} and {b} hold different tensors")
    for name in names:
        if checkpoint.read_tensor(ma, name) != checkpoint.read_tensor(mb, name):
            fail(f"{name} differs")
    print(f"same states: {len(names)} tensors")


def finite(path):
    """Every F32 and BF16 tensor of checkpoint `path` is finite."""
    manifest = checkpoint.read_manifest(path)
    count = 0
    for tensor in manifest["tensors"]:
        data = checkpoint.read_tensor(manifest, tensor["name"])
        if tensor["dtype"] == "F32":
            values = struct.unpack("<%df" % (len(data) // 4), data)
        elif tensor["dtype"] == "BF16":
            halves = struct.unpack("<%dH" % (len(data) // 2), data)
            values = struct.unpack("<%df" % len(halves),
                                   struct.pack("<%dI" % len(halves), *(h << 16 for h in halves)))
        else:
            continue
        bad = [v for v in values if not math.isfinite(v)]
        if bad:
            fail(f"{path}: {tensor['name']} holds {len(bad)} non-finite values")
        count += 1
    print(f"finite: {count} tensors")


def write_raw(path, header, data):
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def bad_offsets(source, out_dir):
    """Files that break the format's rule on data_offsets, each otherwise
    well formed (every tensor's byte count is right): two tensors at the
    same bytes, overlapping ones, a gap, bytes after the last tensor."""
    tensors, _ = weights.load(source)
    names = list(tensors)
    data = b"".join(t.data for t in tensors.values())
    def header(offsets):
        return {name: {"dtype": "F32", "shape": list(tensors[name].shape),
                       "data_offsets": list(offsets[name])} for name in names}
    spans, at = {}, 0
    for name in names:
        spans[name] = (at, at + len(tensors[name].data))
        at += len(tensors[name].data)
    # fc1.bias (12 floats) read from fc1.weight's first bytes: aliased.
    aliased = dict(spans)
    aliased["fc1.bias"] = (spans["fc1.weight"][0], spans["fc1.weight"][0] + 48)
    write_raw(os.path.join(out_dir, "aliased.safetensors"), header(aliased), data)
    # fc2.bias moved 4 bytes into fc2.weight: overlapping, with 4 bytes left over at the end.
    overlap = dict(spans)
    begin, end = spans["fc2.bias"]
    overlap["fc2.bias"] = (begin - 4, end - 4)
    write_raw(os.path.join(out_dir, "overlap.safetensors"), header(overlap), data)
    # 8 bytes of padding before the last tensor.
    gap = dict(spans)
    gap["fc2.bias"] = (begin + 8, end + 8)
    write_raw(os.path.join(out_dir, "gap.safetensors"), header(gap), data + b"\0" * 8)
    # 8 bytes after the last tensor.
    write_raw(os.path.join(out_dir, "trailing.safetensors"), header(spans), data + b"\0" * 8)
    print("bad offsets: 4 files")


def load(path):
    try:
        tensors, _ = weights.load(path)
    except weights.SafetensorsError as error:
        fail(f"SafetensorsError: {error}")
    print(f"load: {len(tensors)} tensors")


def meta(path, key):
    _, metadata = weights.load(path)
    print(f"{key} = {metadata.get(key)}")


def main(argv):
    command, args = argv[1], argv[2:]
    {"spiky-init": spiky_init, "spiky-data": spiky_data, "same-states": same_states,
     "finite": finite, "bad-offsets": bad_offsets, "load": load, "meta": meta}[command](*args)


if __name__ == "__main__":
    main(sys.argv)
