# RUN: %python %s
"""Tests of zeroc.checkpoint that need no executable (stdlib only).

CRC-32C: the standard check value, the column-wise fast path against the
byte-at-a-time definition on lengths around its block size, continuation.
Manifests: a signed manifest reads back, an edit without re-signing is
refused, `latest` is resolved and checked; export of a hand-made two-rank
checkpoint (one tensor cut across two files, a BF16 parameter with an F32
master, an alias) merges the slices, and a damaged slice is named. The
executables' side of the same format is tested in test/Runtime/Services.

Runs under lit or directly: ``python3 test/python/checkpoint_unit.py``.
"""

import io
import os
import shutil
import struct
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from zeroc import __main__ as cli  # noqa: E402
from zeroc import checkpoint, weights  # noqa: E402


def slow_crc(data, crc=0):
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


class Crc(unittest.TestCase):
    def test_check_value(self):
        self.assertEqual(checkpoint.crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(checkpoint.crc32c(b""), 0)

    def test_fast_path_matches_definition(self):
        data = bytes((i * 131 + (i >> 7)) & 0xFF for i in range(70000))
        for length in (4095, 4096, 4097, 256 * 17 + 3, 65536, 70000):
            with self.subTest(length=length):
                self.assertEqual(checkpoint.crc32c(data[:length]), slow_crc(data[:length]))

    def test_combine(self):
        data = os.urandom(3000)
        for cut in (0, 1, 1000, 2999, 3000):
            self.assertEqual(checkpoint.crc32c_combine(checkpoint.crc32c(data[:cut]),
                                                       checkpoint.crc32c(data[cut:]),
                                                       len(data) - cut),
                             checkpoint.crc32c(data))

    def test_continuation(self):
        data = os.urandom(20000)
        for cut in (0, 1, 255, 256, 5000, 19999):
            self.assertEqual(checkpoint.crc32c(data[cut:], checkpoint.crc32c(data[:cut])),
                             checkpoint.crc32c(data))


def write_checkpoint(folder):
    """A two-rank checkpoint of a model with one BF16 parameter 'w' [2, 3]
    (an F32 master, cut across both ranks' files) and an alias."""
    os.makedirs(folder)
    master = [0.5, -1.0, 2.0, 3.25, -0.125, 8.0]
    param = [struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in master]
    files, tensors = [], {"w": [], "w.master": []}
    for rank, (begin, end) in enumerate(((0, 4), (4, 6))):
        for stem, name, fmt, values in (("model", "w", "H", param),
                                        ("optimizer", "w.master", "f", master)):
            blob = struct.pack(f"<{end - begin}{fmt}", *values[begin:end])
            dtype = "BF16" if fmt == "H" else "F32"
            file_name = f"{stem}.rank{rank}.safetensors"
            weights.save(os.path.join(folder, file_name),
                         {name: weights.RawTensor(dtype, (end - begin,), blob)})
            path = os.path.join(folder, file_name)
            raw = Path(path).read_bytes()
            start = len(raw) - len(blob)
            files.append({"name": file_name, "bytes": len(raw),
                          "crc32c": "%08x" % checkpoint.crc32c(raw)})
            tensors[name].append({"file": file_name, "elements": [begin, end],
                                  "bytes": [start, len(raw)],
                                  "crc32c": "%08x" % checkpoint.crc32c(blob)})
    manifest = {
        "format": "zeroc-checkpoint", "version": 1, "model": "m", "step": 4,
        "data_position": 8, "global_batch": 2, "seq_len": 3, "seed": 1, "world_size": 2,
        "zero_stage": 3, "aliases": {"head": "w"}, "files": files,
        "tensors": [
            {"name": "w", "kind": "param", "dtype": "BF16", "shape": [2, 3],
             "slices": tensors["w"]},
            {"name": "w.master", "kind": "master", "of": "w", "dtype": "F32", "shape": [2, 3],
             "slices": tensors["w.master"]}]}
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        f.write(checkpoint.manifest_text(manifest))
    return master


class Manifest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.folder = os.path.join(self.dir, "step-0000004")
        self.master = write_checkpoint(self.folder)

    def test_signed_round_trip_and_latest(self):
        with open(os.path.join(self.dir, "latest"), "w") as f:
            f.write("step-0000004\n")
        manifest = checkpoint.read_manifest(self.dir)
        self.assertEqual(manifest["folder"], self.folder)
        self.assertEqual((manifest["step"], manifest["zero_stage"]), (4, 3))
        with open(os.path.join(self.dir, "latest"), "w") as f:
            f.write("../elsewhere\n")
        with self.assertRaisesRegex(checkpoint.CheckpointError, "not a step folder"):
            checkpoint.read_manifest(self.dir)

    def test_unsigned_edit_refused(self):
        path = os.path.join(self.folder, "manifest.json")
        text = Path(path).read_text().replace('"step": 4', '"step": 5')
        Path(path).write_text(text)
        with self.assertRaisesRegex(checkpoint.CheckpointError,
                                    "checksum mismatch .* modified or damaged"):
            checkpoint.read_manifest(self.folder)

    def test_export_merges_slices(self):
        out = os.path.join(self.dir, "out.safetensors")
        checkpoint.export(self.folder, out)
        tensors, metadata = weights.load(out)
        self.assertEqual(list(tensors), ["w", "head"])
        self.assertEqual(metadata["format"], "pt")
        for name in ("w", "head"):
            self.assertEqual((tensors[name].dtype, tensors[name].shape), ("F32", (2, 3)))
            self.assertEqual(list(struct.unpack("<6f", tensors[name].data)), self.master)
        checkpoint.export(self.folder, out, dtype="stored")
        tensors, _ = weights.load(out)
        self.assertEqual(tensors["w"].dtype, "BF16")
        self.assertEqual(checkpoint.read_tensor(checkpoint.read_manifest(self.folder), "w"),
                         tensors["w"].data)

    def test_damage_named(self):
        path = os.path.join(self.folder, "optimizer.rank1.safetensors")
        data = bytearray(Path(path).read_bytes())
        data[-1] ^= 0x40
        Path(path).write_bytes(data)
        with self.assertRaisesRegex(checkpoint.CheckpointError,
                                    r"optimizer.rank1.safetensors: checksum mismatch in "
                                    r"tensor 'w.master' \(elements \[4, 6\)\)"):
            checkpoint.verify(self.folder)
        out = os.path.join(self.dir, "bad.safetensors")
        with self.assertRaisesRegex(checkpoint.CheckpointError, "w.master"):
            checkpoint.export(self.folder, out)
        self.assertFalse(os.path.exists(out))
        # Without the check, the bytes are copied as they are.
        checkpoint.export(self.folder, out, check=False)

    def test_command_line(self):
        stdout, stderr = io.StringIO(), io.StringIO()
        with redirect_stdout(stdout):
            self.assertEqual(cli.main(["checkpoint", "info", self.folder, "--files"]), 0)
        self.assertIn("model 'm', step 4, data position 8", stdout.getvalue())
        self.assertRegex(stdout.getvalue(), r"w\.master +master +F32 +\[2, 3\] +2 +24")
        self.assertIn("optimizer.rank1.safetensors", stdout.getvalue())
        with redirect_stderr(stderr):
            self.assertEqual(cli.main(["checkpoint", "verify", self.dir]), 1)
        self.assertIn("no 'latest' file (it has step-0000004", stderr.getvalue())


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
