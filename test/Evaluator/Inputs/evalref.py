"""Helpers of the reference evaluator's tests: standard library only.

Reads safetensors files and zeroc-run's JSON independently of the C++ code,
rounds like f32/bf16 hardware does, and compares numbers with tolerances.
"""

import json
import math
import struct
import sys

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1

_FORMATS = {"F32": ("f", 4), "F64": ("d", 8), "I32": ("i", 4),
            "I64": ("q", 8), "U16": ("H", 2), "BF16": ("H", 2)}


def read_safetensors(path):
    """Returns ({name: (dtype, shape, [values])}, metadata, header_bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header_bytes = data[8:8 + n]
    header = json.loads(header_bytes)
    base = 8 + n
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        fmt, size = _FORMATS[entry["dtype"]]
        count = (end - begin) // size
        raw = struct.unpack("<%d%s" % (count, fmt), data[base + begin:base + end])
        if entry["dtype"] == "BF16":
            raw = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in raw]
        tensors[name] = (entry["dtype"], entry["shape"], list(raw))
    return tensors, metadata, header_bytes


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, dtype, shape, values)."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs = []
    offset = 0
    for name, dtype, shape, values in tensors:
        fmt, size = _FORMATS[dtype]
        if dtype == "BF16":
            values = [bf16_bits(v) for v in values]
        blob = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def f32(x):
    """Rounds to the nearest f32, as a C (float) cast does."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def bf16_bits(x):
    (bits,) = struct.unpack("<I", struct.pack("<f", f32(x)))
    if math.isnan(x):
        return (bits >> 16) | 0x40
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16) & 0xFFFF


def bf16(x):
    """Rounds to bf16: to f32 first, then to nearest even of the f32 bits."""
    return struct.unpack("<f", struct.pack("<I", bf16_bits(x) << 16))[0]


# The initializer RNG of include/zeroc/Support/Random.h, re-implemented from
# its documented formula.
def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK
    return h


def splitmix64(x):
    z = (x + GAMMA) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def key(name, seed):
    return fnv1a64(name) ^ ((seed * GAMMA) & MASK)


def draw(k, j):
    return splitmix64((k + j * GAMMA) & MASK)


def normal(name, seed, std, i):
    k = key(name, seed)
    u1 = ((draw(k, 2 * i) >> 11) + 1) * 2.0 ** -53
    u2 = (draw(k, 2 * i + 1) >> 11) * 2.0 ** -53
    return std * math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def uniform_int(name, seed, k_range, i):
    u = (draw(key(name, seed), i) >> 11) * 2.0 ** -53
    return min(k_range - 1, int(math.floor(u * k_range)))


def load_run(path):
    """zeroc-run's JSON output, with "nan"/"inf" strings made floats."""
    with open(path) as f:
        doc = json.load(f)

    def fix(value):
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        if value in ("nan", "inf", "-inf"):
            return float(value)
        return value

    return fix(doc)


class Checker:
    """Compares values and remembers the worst mismatch."""

    def __init__(self, label, rtol, atol):
        self.label, self.rtol, self.atol = label, rtol, atol
        self.count = 0
        self.failures = []

    def close(self, what, got, want):
        self.count += 1
        if math.isinf(want) or math.isnan(want):
            ok = (math.isnan(want) and math.isnan(got)) or got == want
        else:
            ok = abs(got - want) <= self.atol + self.rtol * abs(want)
        if not ok:
            self.failures.append("%s: got %r, want %r" % (what, got, want))

    def all(self, what, got, want):
        if len(got) != len(want):
            self.failures.append("%s: got %d values, want %d"
                                 % (what, len(got), len(want)))
            return
        for i, (g, w) in enumerate(zip(got, want)):
            self.close("%s[%d]" % (what, i), g, w)

    def finish(self):
        if self.failures:
            print("%s: %d of %d values differ" % (self.label, len(self.failures),
                                                  self.count))
            for failure in self.failures[:20]:
                print("  " + failure)
            sys.exit(1)
        print("%s: %d values ok" % (self.label, self.count))
