"""Prints the number of targets equal to 0 (the ignored class) in each of
PARTS equal parts of the batch of a zeroc-run --save-inputs file (its arg1,
the targets), then "uneven" when they differ.

Usage: part_counts.py INPUTS.safetensors PARTS
"""
import json
import struct
import sys


def main():
    path, parts = sys.argv[1], int(sys.argv[2])
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    info = header["arg1"]
    begin, end = info["data_offsets"]
    fmt = {"I32": "i", "I64": "q"}[info["dtype"]]
    width = struct.calcsize(fmt)
    values = struct.unpack("<%d%s" % ((end - begin) // width, fmt), data[begin:end])
    per = len(values) // parts
    counts = [sum(1 for v in values[p * per:(p + 1) * per] if v == 0) for p in range(parts)]
    print("ignored per part:", counts)
    print("uneven" if len(set(counts)) > 1 else "even")


if __name__ == "__main__":
    main()
