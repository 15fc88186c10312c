"""Checkpoints of zeroc executables (``--save DIR``): inspect, verify, export.

    python3 -m zeroc checkpoint info DIR [--files]
    python3 -m zeroc checkpoint verify DIR
    python3 -m zeroc checkpoint export DIR -o model.safetensors [--dtype f32|stored]

DIR is a checkpoint directory (its ``latest`` file names the newest step
folder) or a step folder ``DIR/step-NNNNNNN`` itself. A step folder holds
``model.rankR.safetensors`` (slices of the parameters), ``optimizer.rankR
.safetensors`` (masters, moments, momentum buffers), ``trainer.safetensors``
(step, data position, seed) and ``manifest.json``, which lists every tensor,
its slices and every file with their CRC-32C, and ends with the CRC-32C of
its own text (docs/executable.md, "Checkpoints").

``export`` merges the weights into one safetensors file named as the
model's parameters (the f32 masters where the run had them), streaming
slice by slice with bounded memory and checking every slice's CRC-32C as it
copies; a parameter the model declared under a second name (its module's
``train.tied``, the manifest's ``aliases``: nanoGPT's ``lm_head.weight`` of
``transformer.wte.weight``, or any other names) gets both names, so that
PyTorch's strict ``load_state_dict`` takes the file. ``verify`` checks every file's size and checksum.

Standard library only. CRC-32C in pure Python: tables applied to whole
columns of bytes with ``bytes.translate`` (about 100 MB/s), since the
standard library has no CRC-32C.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import struct
import sys
from typing import IO, Iterable

from zeroc.files import atomic_open

MANIFEST = "manifest.json"
LATEST = "latest"
_CRC_LINE = '\n  "manifest_crc32c": "'
_SIZES = {"F32": 4, "BF16": 2, "I32": 4, "I64": 8}
_STEP_FOLDER = re.compile(r"step-[0-9]+")


class CheckpointError(ValueError):
    """A checkpoint that cannot be read; the message names the file and,
    where there is one, the tensor."""


# ---------------------------------------------------------------------------
# CRC-32C
# ---------------------------------------------------------------------------

_POLY = 0x82F63B78
_BLOCK = 256  # bytes per column block of the vectorised CRC


class _Crc32c:
    """Tables of the column-wise CRC-32C (built on first use)."""

    def __init__(self) -> None:
        table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ (_POLY if c & 1 else 0)
            table.append(c)
        self.table = table
        # byte[j] of a _BLOCK-byte block adds column[j][byte] to the block's
        # CRC (from a zero register); as 4 translate tables, one per byte of
        # the CRC.
        column = [None] * _BLOCK
        column[_BLOCK - 1] = list(table)
        for j in range(_BLOCK - 2, -1, -1):
            column[j] = [table[c & 0xFF] ^ (c >> 8) for c in column[j + 1]]
        self.translate = [[bytes((c >> (8 * q)) & 0xFF for c in column[j]) for q in range(4)]
                          for j in range(_BLOCK)]

        # The register after _BLOCK zero bytes, as 4 lookup tables.
        def advance(c: int) -> int:
            for _ in range(_BLOCK):
                c = table[c & 0xFF] ^ (c >> 8)
            return c
        self.advance = [[advance(b << (8 * q)) for b in range(256)] for q in range(4)]

    def update(self, register: int, data: bytes) -> int:
        table = self.table
        whole = len(data) // _BLOCK * _BLOCK
        a0, a1, a2, a3 = self.advance
        step = _BLOCK * 16384
        for start in range(0, whole, step):
            chunk = data[start:min(whole, start + step)]
            blocks = len(chunk) // _BLOCK
            acc = [0, 0, 0, 0]
            for j in range(_BLOCK):
                column = chunk[j::_BLOCK]
                tables = self.translate[j]
                for q in range(4):
                    acc[q] ^= int.from_bytes(column.translate(tables[q]), "little")
            r0, r1, r2, r3 = (value.to_bytes(blocks, "little") for value in acc)
            for x0, x1, x2, x3 in zip(r0, r1, r2, r3):
                register = (a0[register & 0xFF] ^ a1[(register >> 8) & 0xFF]
                            ^ a2[(register >> 16) & 0xFF] ^ a3[register >> 24]
                            ^ x0 ^ (x1 << 8) ^ (x2 << 16) ^ (x3 << 24))
        for byte in data[whole:]:
            register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
        return register


_crc_tables: _Crc32c | None = None


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C (Castagnoli) of `data`, continuing `crc`:
    ``crc32c(b, crc32c(a)) == crc32c(a + b)``; ``crc32c(b"123456789") ==
    0xE3069283``. The executables compute the same (Crc32c.cpp)."""
    global _crc_tables
    if _crc_tables is None:
        _crc_tables = _Crc32c()
    data = bytes(data)
    if len(data) < 4096:  # the tables' set-up does not pay
        register = crc ^ 0xFFFFFFFF
        table = _crc_tables.table
        for byte in data:
            register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
        return register ^ 0xFFFFFFFF
    return _crc_tables.update(crc ^ 0xFFFFFFFF, data) ^ 0xFFFFFFFF


def _times(matrix: list[int], vector: int) -> int:
    total, row = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[row]
        vector >>= 1
        row += 1
    return total


def crc32c_combine(first: int, second: int, second_length: int) -> int:
    """The CRC-32C of A followed by B from ``crc32c(A)``, ``crc32c(B)`` and
    ``len(B)`` (zlib's crc32_combine for this polynomial)."""
    if second_length == 0:
        return first
    odd = [_POLY] + [1 << (n - 1) for n in range(1, 32)]
    even = [_times(odd, odd[n]) for n in range(32)]
    odd = [_times(even, even[n]) for n in range(32)]
    while True:
        even = [_times(odd, odd[n]) for n in range(32)]
        if second_length & 1:
            first = _times(even, first)
        second_length >>= 1
        if not second_length:
            break
        odd = [_times(even, even[n]) for n in range(32)]
        if second_length & 1:
            first = _times(odd, first)
        second_length >>= 1
        if not second_length:
            break
    return first ^ second


# ---------------------------------------------------------------------------
# The manifest
# ---------------------------------------------------------------------------

def resolve(path: str) -> str:
    """The step folder of `path`: `path` itself when it holds a manifest,
    else the folder its ``latest`` file names."""
    if os.path.exists(os.path.join(path, MANIFEST)):
        return path
    latest = os.path.join(path, LATEST)
    if os.path.exists(latest):
        with open(latest, encoding="utf-8", errors="replace") as f:
            name = f.read().strip()
        if not _STEP_FOLDER.fullmatch(name):
            raise CheckpointError(f"{latest}: names {name!r}, not a step folder (step-NNNNNNN)")
        folder = os.path.join(path, name)
        if not os.path.exists(os.path.join(folder, MANIFEST)):
            raise CheckpointError(f"{latest}: names {name}, which is not a complete checkpoint")
        return folder
    if not os.path.isdir(path):
        raise CheckpointError(f"{path}: no such checkpoint directory")
    steps = sorted(n for n in os.listdir(path) if _STEP_FOLDER.fullmatch(n))
    if steps:
        raise CheckpointError(f"{path}: no 'latest' file (it has {steps[-1]}; name that folder)")
    raise CheckpointError(f"{path}: not a checkpoint (no manifest.json, no 'latest')")


def manifest_text(manifest: dict) -> str:
    """`manifest` (without ``manifest_crc32c``) as the text of a
    manifest.json, signed: its last member is the CRC-32C of the text
    before that member's line. The executables refuse a manifest whose text
    does not match it; tools that edit a manifest write it back with this."""
    body = {k: v for k, v in manifest.items() if k not in ("manifest_crc32c", "folder")}
    text = json.dumps(body, indent=2)
    assert text.endswith("\n}")
    text = text[:-2] + ",\n"
    return text + '  "manifest_crc32c": "%08x"\n}\n' % crc32c(text.encode())


def read_manifest(path: str) -> dict:
    """The manifest of checkpoint `path` (see `resolve`), its CRC checked;
    the step folder is added as ``"folder"``."""
    folder = resolve(path)
    where = os.path.join(folder, MANIFEST)
    with open(where, "rb") as f:
        raw = f.read()
    at = raw.rfind(_CRC_LINE.encode())
    tail = raw[at + len(_CRC_LINE):] if at >= 0 else b""
    if at < 0 or not re.fullmatch(rb'[0-9a-f]{8}"\n}\n', tail):
        raise CheckpointError(f"{where}: not a zeroc checkpoint manifest (no manifest_crc32c line)")
    actual = crc32c(raw[:at + 1])
    if int(tail[:8], 16) != actual:
        raise CheckpointError(f"{where}: checksum mismatch (manifest_crc32c {tail[:8].decode()}, "
                              f"the text's {actual:08x}): the manifest was modified or damaged")
    try:
        manifest = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{where}: not JSON: {error}") from None
    if manifest.get("format") != "zeroc-checkpoint" or manifest.get("version") != 1:
        raise CheckpointError(f"{where}: not a version-1 zeroc checkpoint manifest")
    manifest["folder"] = folder
    return manifest


def _numel(shape: Iterable[int]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def _slices_by_file(manifest: dict) -> dict[str, list[tuple[dict, dict]]]:
    by_file: dict[str, list[tuple[dict, dict]]] = {f["name"]: [] for f in manifest["files"]}
    for tensor in manifest["tensors"]:
        for piece in tensor["slices"]:
            by_file.setdefault(piece["file"], []).append((tensor, piece))
    for pieces in by_file.values():
        pieces.sort(key=lambda item: item[1]["bytes"][0])
    return by_file


def _describe(tensor: dict, piece: dict) -> str:
    begin, end = piece["elements"]
    return f"tensor '{tensor['name']}' (elements [{begin}, {end}))"


def verify(path: str, *, chunk: int = 16 << 20) -> dict:
    """Checks every file of checkpoint `path`: its size, its CRC-32C and
    every slice's; raises `CheckpointError` naming the file and the tensor.
    Returns the manifest."""
    manifest = read_manifest(path)
    folder = manifest["folder"]
    by_file = _slices_by_file(manifest)
    for record in manifest["files"]:
        name = os.path.join(folder, record["name"])
        pieces = by_file.get(record["name"], [])
        try:
            size = os.path.getsize(name)
        except OSError as error:
            held = ", ".join(sorted({t["name"] for t, _ in pieces})[:3]) or "no tensor"
            raise CheckpointError(f"{name}: {error.strerror} (it holds {held})") from None
        if size != record["bytes"]:
            late = next((f" in {_describe(t, p)}" for t, p in pieces if p["bytes"][1] > size), "")
            raise CheckpointError(f"{name}: {size} bytes, the manifest says {record['bytes']}"
                                  + (f": truncated{late}" if size < record["bytes"] else ""))
        # One CRC pass: regions between the slices' bounds; the file's CRC
        # combined from theirs.
        cuts = sorted({0, size, *(p["bytes"][0] for _, p in pieces),
                       *(p["bytes"][1] for _, p in pieces)})
        owner = {p["bytes"][0]: i for i, (_, p) in enumerate(pieces)
                 if p["bytes"][1] > p["bytes"][0]}
        file_crc, slice_crcs = 0, [0] * len(pieces)
        with open(name, "rb") as f:
            for begin, end in zip(cuts, cuts[1:]):
                region, at = 0, begin
                while at < end:
                    data = f.read(min(chunk, end - at))
                    if not data:
                        raise CheckpointError(f"{name}: read error at byte {at}")
                    region = crc32c(data, region)
                    at += len(data)
                if begin in owner:
                    slice_crcs[owner[begin]] = region
                file_crc = crc32c_combine(file_crc, region, end - begin)
        for (tensor, piece), crc in zip(pieces, slice_crcs):
            if crc != int(piece["crc32c"], 16):
                raise CheckpointError(f"{name}: checksum mismatch in {_describe(tensor, piece)}: "
                                      f"crc32c {crc:08x}, the manifest says {piece['crc32c']}")
        if file_crc != int(record["crc32c"], 16):
            raise CheckpointError(f"{name}: checksum mismatch in the safetensors header "
                                  f"(crc32c {file_crc:08x}, the manifest says {record['crc32c']})")
    return manifest


def read_tensor(manifest: dict, name: str) -> bytes:
    """The bytes of tensor `name` of a manifest (`read_manifest`), its
    slices joined in element order (the whole tensor in memory: for tests
    and small tensors; `export` streams)."""
    tensor = next((t for t in manifest["tensors"] if t["name"] == name), None)
    if tensor is None:
        raise CheckpointError(f"{manifest['folder']}: no tensor '{name}'")
    parts = []
    for piece in tensor["slices"]:
        begin, end = piece["bytes"]
        with open(os.path.join(manifest["folder"], piece["file"]), "rb") as f:
            f.seek(begin)
            parts.append(f.read(end - begin))
    return b"".join(parts)


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------

def _bf16_to_f32(data: bytes) -> bytes:
    count = len(data) // 2
    halves = struct.unpack(f"<{count}H", data)
    return struct.pack(f"<{count}I", *(h << 16 for h in halves))


def export(path: str, out: str, *, dtype: str = "f32", check: bool = True,
           chunk: int = 16 << 20) -> dict:
    """Writes the weights of checkpoint `path` to the safetensors file `out`
    (through a temporary file and a rename): every parameter under its name,
    in the manifest's order, from its f32 master where there is one (`dtype`
    ``f32``, every tensor F32) or as stored (``stored``), plus the manifest's
    aliases. At most `chunk` bytes are held at a time; each slice's CRC-32C
    is checked as it is copied unless `check` is false. Returns the
    manifest."""
    if dtype not in ("f32", "stored"):
        raise ValueError(f"dtype must be 'f32' or 'stored', not {dtype!r}")
    manifest = read_manifest(path)
    folder = manifest["folder"]
    tensors = {t["name"]: t for t in manifest["tensors"]}
    masters = {t["of"]: t for t in manifest["tensors"] if t["kind"] == "master"}
    entries: list[tuple[str, dict, str]] = []  # (name, source tensor, output dtype)
    for tensor in manifest["tensors"]:
        if tensor["kind"] != "param":
            continue
        source = masters.get(tensor["name"], tensor) if dtype == "f32" else tensor
        entries.append((tensor["name"], source, "F32" if dtype == "f32" else tensor["dtype"]))
    names = {name for name, _, _ in entries}
    for alias, target in manifest.get("aliases", {}).items():
        if alias not in names and target in names:
            name, source, out_dtype = next(e for e in entries if e[0] == target)
            entries.append((alias, source, out_dtype))
    for name, source, _ in entries:
        if source["dtype"] not in ("F32", "BF16"):
            raise CheckpointError(f"{folder}: tensor '{name}' is {source['dtype']}, not F32 or BF16")

    header: dict[str, object] = {"__metadata__": {
        "format": "pt", "producer": "zeroc", "model": str(manifest["model"]),
        "step": str(manifest["step"])}}
    offset = 0
    for name, source, out_dtype in entries:
        size = _numel(source["shape"]) * _SIZES[out_dtype]
        header[name] = {"dtype": out_dtype, "shape": source["shape"],
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)

    files: dict[str, IO[bytes]] = {}
    try:
        with atomic_open(out) as sink:
            sink.write(struct.pack("<Q", len(text)) + text)
            for name, source, out_dtype in entries:
                element = _SIZES[source["dtype"]]
                for piece in source["slices"]:
                    file_name = os.path.join(folder, piece["file"])
                    if file_name not in files:
                        try:
                            files[file_name] = open(file_name, "rb")
                        except OSError as error:
                            raise CheckpointError(f"{file_name}: {error.strerror}") from None
                    f = files[file_name]
                    begin, end = piece["bytes"]
                    f.seek(begin)
                    crc, at = 0, begin
                    step = max(element, chunk // element * element)
                    while at < end:
                        data = f.read(min(step, end - at))
                        if not data:
                            raise CheckpointError(f"{file_name}: truncated in "
                                                  f"{_describe(source, piece)}")
                        if check:
                            crc = crc32c(data, crc)
                        sink.write(_bf16_to_f32(data)
                                   if source["dtype"] == "BF16" and out_dtype == "F32" else data)
                        at += len(data)
                    if check and crc != int(piece["crc32c"], 16):
                        raise CheckpointError(f"{file_name}: checksum mismatch in "
                                              f"{_describe(source, piece)}: crc32c {crc:08x}, "
                                              f"the manifest says {piece['crc32c']}")
            sink.flush()
            os.fsync(sink.fileno())
    finally:
        for f in files.values():
            f.close()
    return manifest


# ---------------------------------------------------------------------------
# info
# ---------------------------------------------------------------------------

def _human(count: int) -> str:
    value, unit = float(count), 0
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    return f"{count} B" if unit == 0 else f"{value:.2f} {units[unit]}"


def format_info(manifest: dict, *, files: bool = False) -> str:
    """The manifest as a table: a header, one row per tensor (and per file
    with `files`)."""
    total = sum(f["bytes"] for f in manifest["files"])
    lines = [
        f"checkpoint {manifest['folder']}: model '{manifest['model']}', step {manifest['step']}, "
        f"data position {manifest['data_position']} (global batch {manifest['global_batch']} "
        f"x {manifest['seq_len']} tokens), seed {manifest['seed']}",
        f"written by {manifest['world_size']} rank(s) at ZeRO stage {manifest['zero_stage']}: "
        f"{len(manifest['tensors'])} tensors, {len(manifest['files'])} files, {_human(total)}, "
        f"manifest crc32c {manifest.get('manifest_crc32c', '?')}",
    ]
    for alias, target in manifest.get("aliases", {}).items():
        lines.append(f"alias: {alias} = {target}")
    rows = [("tensor", "kind", "dtype", "shape", "slices", "bytes")]
    for t in manifest["tensors"]:
        rows.append((t["name"], t["kind"], t["dtype"], "[" + ", ".join(map(str, t["shape"])) + "]",
                     str(len(t["slices"])), f"{_numel(t['shape']) * _SIZES[t['dtype']]:,}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines.append("")
    for row in rows:
        lines.append("  ".join(cell.rjust(w) if i >= 4 else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    if files:
        lines.append("")
        rows = [("file", "bytes", "crc32c")] + [
            (f["name"], f"{f['bytes']:,}", f["crc32c"]) for f in manifest["files"]]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        for row in rows:
            lines.append("  ".join(cell.rjust(w) if i == 1 else cell.ljust(w)
                                   for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m zeroc checkpoint",
        description="Inspect, verify and export checkpoints written by zeroc executables "
                    "(--save DIR). DIR is the --save directory (its 'latest' step) or a step "
                    "folder DIR/step-NNNNNNN.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    info = commands.add_parser("info", help="print the manifest as a table")
    info.add_argument("dir", metavar="DIR")
    info.add_argument("--files", action="store_true", help="also list the files")
    check = commands.add_parser("verify", help="check every file's size and CRC-32C")
    check.add_argument("dir", metavar="DIR")
    out = commands.add_parser("export", help="merge the weights into one safetensors file, "
                                             "or write a Hugging Face model folder (--hf)")
    out.add_argument("dir", metavar="DIR")
    where = out.add_mutually_exclusive_group(required=True)
    where.add_argument("-o", "--output", metavar="OUT.safetensors")
    where.add_argument("--hf", metavar="FOLDER",
                       help="write a folder from_pretrained loads: config.json and the "
                            "weights in shards with model.safetensors.index.json "
                            "(docs/models.md); needs --config")
    out.add_argument("--config", metavar="PATH",
                     help="with --hf: the config.json (or model folder) the model was built "
                          "from (zeroc.models.llama --config), or a Llama preset name")
    out.add_argument("--max-shard-size", default="5GB", metavar="SIZE",
                     help="with --hf: the largest shard, as save_pretrained's max_shard_size "
                          "(5GB = 5*10^9 bytes, MiB/GiB binary; default 5GB)")
    out.add_argument("--dtype", choices=("f32", "stored", "bf16"), default="f32",
                     help="f32: every weight F32, from the master copy where there is one "
                          "(default); stored: the parameters as the run stored them (not "
                          "with --hf); bf16: every weight BF16 (with --hf only)")
    out.add_argument("--no-verify", action="store_true",
                     help="do not check the slices' CRC-32C while copying")
    args = parser.parse_args(argv)
    try:
        if args.command == "info":
            sys.stdout.write(format_info(read_manifest(args.dir), files=args.files))
        elif args.command == "verify":
            manifest = verify(args.dir)
            total = sum(f["bytes"] for f in manifest["files"])
            print(f"{manifest['folder']}: {len(manifest['files'])} files, {_human(total)}, "
                  f"{len(manifest['tensors'])} tensors: every checksum matches")
        elif args.hf is not None:
            from zeroc import hf
            return hf.export_main(parser.prog + " export", args)
        else:
            if args.dtype == "bf16" or args.config is not None:
                raise CheckpointError("--dtype bf16 and --config go with --hf")
            manifest = export(args.dir, args.output, dtype=args.dtype, check=not args.no_verify)
            count = sum(1 for t in manifest["tensors"] if t["kind"] == "param")
            print(f"{args.output}: {count} parameters of '{manifest['model']}' at step "
                  f"{manifest['step']} (from {manifest['folder']})")
    except (CheckpointError, OSError) as error:
        sys.stderr.write(f"python3 -m zeroc checkpoint {args.command}: error: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
