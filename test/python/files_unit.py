# RUN: %python %s
"""Tests of zeroc.files.atomic_open, behind every Python writer (the model
builders, the importer, zeroc data, zeroc.weights): outputs never destroy
what they replace. A regular file is replaced whole or not at all, with its
permissions; a symbolic link stays a link; a FIFO (and, as root, a device)
is written in place and never renamed over or removed, also when the
writer fails.

Runs under lit or directly: ``python3 test/python/files_unit.py``.
"""

import os
import stat
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from zeroc import data, files, weights  # noqa: E402


class AtomicOpenTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_regular_file_replaced_with_its_permissions(self):
        out = self.path("out.txt")
        with open(out, "w") as f:
            f.write("old")
        os.chmod(out, 0o640)
        with files.atomic_open(out, "w", encoding="utf-8") as f:
            f.write("new")
        with open(out) as f:
            self.assertEqual(f.read(), "new")
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o640)
        self.assertEqual(os.listdir(self.dir), ["out.txt"])

    def test_failure_leaves_the_old_file(self):
        out = self.path("out.txt")
        with open(out, "w") as f:
            f.write("old")
        with self.assertRaises(RuntimeError):
            with files.atomic_open(out, "w", encoding="utf-8") as f:
                f.write("partial")
                raise RuntimeError("the writer failed")
        with open(out) as f:
            self.assertEqual(f.read(), "old")
        self.assertEqual(os.listdir(self.dir), ["out.txt"])

    def test_symbolic_link_stays_a_link(self):
        target, link = self.path("target.bin"), self.path("link.bin")
        with open(target, "wb") as f:
            f.write(b"old")
        os.symlink("target.bin", link)
        data.write_tokens(link, [1, 2, 3])
        self.assertTrue(os.path.islink(link))
        self.assertEqual(list(data.read_tokens(target)), [1, 2, 3])

    def test_dangling_link_creates_its_target(self):
        link = self.path("link.bin")
        os.symlink("made.bin", link)
        data.write_tokens(link, [4])
        self.assertTrue(os.path.islink(link))
        self.assertEqual(list(data.read_tokens(self.path("made.bin"))), [4])

    def test_fifo_written_in_place(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        received = []
        reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
        reader.start()
        tensors = {"w": weights.RawTensor("F32", (2,), b"\0" * 8)}
        weights.save(fifo, tensors, {"format": "pt"})
        reader.join(10)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        self.assertEqual(sorted(os.listdir(self.dir)), ["fifo"])
        regular = self.path("regular.safetensors")
        weights.save(regular, tensors, {"format": "pt"})
        with open(regular, "rb") as f:
            self.assertEqual(received, [f.read()])

    def test_fifo_kept_when_the_writer_fails(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        reader = threading.Thread(target=lambda: open(fifo, "rb").read())
        reader.start()
        with self.assertRaises(RuntimeError):
            with files.atomic_open(fifo) as f:
                f.write(b"x")
                raise RuntimeError("the writer failed")
        reader.join(10)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    @unittest.skipUnless(hasattr(os, "geteuid") and os.geteuid() == 0, "mknod needs root")
    def test_device_written_in_place(self):
        null = self.path("null")
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        data.write_tokens(null, [1, 2, 3])
        with self.assertRaises(RuntimeError):
            with files.atomic_open(null) as f:
                raise RuntimeError("the writer failed")
        self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode))
        self.assertEqual(os.listdir(self.dir), ["null"])

    def test_directory_refused(self):
        with self.assertRaises(IsADirectoryError):
            with files.atomic_open(self.dir):
                pass


if __name__ == "__main__":
    unittest.main(verbosity=1)
