"""The checks shared by the importer's unit tests (importer_unit.py,
importer_aten_unit.py and importer_everyday_unit.py): a mixin of unittest.TestCase.

The test class sets `BIN` (zeroc's bin folder), `SOURCE_FILE` (its own
file, whose lines the importer's errors must quote), `BATCH` and `BLOCK`
(the import sizes), gets `self.dir` (a scratch folder, made once per class
here), and defines `inputs()` (the (tokens, targets) of the comparison) and
`evaluate(result, mlir, init, tokens, targets)` (the IR's float64 loss, by
zeroc-run or by the Python evaluator).
"""

import copy
import os
import subprocess
import tempfile
from pathlib import Path

import torch

from zeroc import importer
from zeroc.importer import ImporterError


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=120, **kwargs)


def loss_of(output):
    return output[1] if isinstance(output, tuple) else output


def line_of(source_file, marker):
    """The number of the first line of `source_file` that contains `marker`
    (and is not itself a call of line_of)."""
    lines = Path(source_file).read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line and "line_of" not in line)


class ImporterChecks:
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, make, *expected, name=None, tol=1e-9, eval_mode=False, **kwargs):
        """Imports make() (a module class or factory), checks that the IR
        has the `expected` texts, verifies it with zeroc-opt and compares
        its float64 loss (self.evaluate) with the module's own in float64
        to `tol` relative. Returns the import result."""
        torch.manual_seed(0)
        module = make()
        result = importer.import_module(module, batch_size=self.BATCH, block_size=self.BLOCK,
                                        **kwargs)
        for text in expected:
            self.assertIn(text, result.mlir, f"{text!r} missing from\n{result.mlir}")
        name = name or type(module).__name__
        mlir, init = self.dir / f"{name}.mlir", self.dir / f"{name}.safetensors"
        result.write(str(mlir), str(init))
        verified = run([str(self.BIN / "zeroc-opt"), str(mlir), "-o", os.devnull])
        self.assertEqual(verified.returncode, 0, verified.stderr + result.mlir)
        x, y = self.inputs()
        ours = self.evaluate(result, mlir, init, x, y)
        reference = copy.deepcopy(module).double()
        if eval_mode:
            reference.eval()
        with torch.no_grad():
            theirs = loss_of(reference(x, y)).item()
        self.assertLess(abs(ours - theirs), tol * abs(theirs), f"IR {ours}, torch {theirs}")
        return result

    def raised(self, result, name):
        """The IR after the compiler's train-raise pass."""
        mlir = self.dir / f"{name}.raise.mlir"
        result.write(str(mlir))
        out = run([str(self.BIN / "zeroc-opt"), str(mlir), "--train-raise"])
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def error(self, cls, marker=None, *expected):
        """Imports cls(), which must fail with an ImporterError whose message
        has the `expected` texts and, given a `marker`, names the line of
        SOURCE_FILE that contains it and quotes that line. Returns the
        message."""
        torch.manual_seed(0)
        with self.assertRaises(ImporterError) as caught:
            importer.import_module(cls(), batch_size=self.BATCH, block_size=self.BLOCK)
        message = str(caught.exception)
        for text in expected:
            self.assertIn(text, message)
        if marker:
            source = Path(self.SOURCE_FILE).read_text().splitlines()
            self.assertIn(f"{self.SOURCE_FILE}:{line_of(self.SOURCE_FILE, marker)}: error: ",
                          message)
            self.assertIn(next(line for line in source if marker in line).strip(), message)
        return message
