# RUN: %python %s
"""Unit tests of zeroc.models.gpt2 and zeroc.ir (standard library only).

Runs under lit (`%python`, PYTHONPATH set by lit.cfg.py) or directly:
``python3 test/python/gpt2_builder_unit.py``.
"""

import math
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")
sys.path.insert(0, PYTHON_DIR)

from zeroc import ir  # noqa: E402
from zeroc.models import gpt2  # noqa: E402

PARAM_LINE = re.compile(
    r"^  train\.param @(\S+) : tensor<([0-9x]+)x(f32|bf16)> init = (\w+)"
    r"(?: std = (\S+))?( decay)?$", re.MULTILINE)


def run_cli(*args):
    """Runs ``python3 -m zeroc.models.gpt2 args``; returns the CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "zeroc.models.gpt2", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def expected_tiny_params():
    """nanoGPT's state dict for tiny (C = 48, vocab 256, block 17), by hand."""
    params = [("transformer.wte.weight", (256, 48)), ("transformer.wpe.weight", (17, 48))]
    for i in range(2):
        h = f"transformer.h.{i}"
        params += [(f"{h}.ln_1.weight", (48,)), (f"{h}.ln_1.bias", (48,)),
                   (f"{h}.attn.c_attn.weight", (144, 48)), (f"{h}.attn.c_attn.bias", (144,)),
                   (f"{h}.attn.c_proj.weight", (48, 48)), (f"{h}.attn.c_proj.bias", (48,)),
                   (f"{h}.ln_2.weight", (48,)), (f"{h}.ln_2.bias", (48,)),
                   (f"{h}.mlp.c_fc.weight", (192, 48)), (f"{h}.mlp.c_fc.bias", (192,)),
                   (f"{h}.mlp.c_proj.weight", (48, 192)), (f"{h}.mlp.c_proj.bias", (48,))]
    params += [("transformer.ln_f.weight", (48,)), ("transformer.ln_f.bias", (48,))]
    return params


def optimizer_line(text):
    """The ``train.optimizer`` line of a module's text."""
    return re.search(r"^  (train\.optimizer .*)$", text, re.MULTILINE).group(1)


class ParameterTest(unittest.TestCase):
    def test_tiny_names_and_shapes(self):
        params = gpt2.parameters(gpt2.GPT2Config())
        self.assertEqual([(p.name, p.type.shape) for p in params], expected_tiny_params())
        self.assertTrue(all(p.type.element == "f32" for p in params))

    def test_text_declares_the_parameters(self):
        config = gpt2.GPT2Config()
        declared = [(name, tuple(map(int, dims.split("x"))))
                    for name, dims, *_ in PARAM_LINE.findall(gpt2.build(config))]
        self.assertEqual(declared, expected_tiny_params())
        self.assertNotIn("@lm_head", gpt2.build(config))

    def test_counts(self):
        # tiny: wte 256*48 + wpe 17*48 + 2 blocks of 12 C^2 + 13 C + ln_f 2 C.
        self.assertEqual(gpt2.parameter_count(gpt2.GPT2Config()), 12288 + 816 + 2 * 28272 + 96)
        self.assertEqual(gpt2.parameter_count(gpt2.GPT2Config.preset("124M")), 124_439_808)
        for name in gpt2.PRESETS:
            config = gpt2.GPT2Config.preset(name)
            self.assertEqual(sum(p.type.numel for p in gpt2.parameters(config)),
                             gpt2.parameter_count(config), name)
        self.assertIn("// 124,439,808 parameters", gpt2.build(gpt2.GPT2Config.preset("124M")))

    def test_presets(self):
        sizes = {name: tuple(getattr(gpt2.GPT2Config.preset(name), f) for f in gpt2.SIZE_FIELDS)
                 for name in gpt2.PRESETS}
        self.assertEqual(sizes, {"tiny": (2, 3, 48, 256, 17, 12),
                                 "124M": (12, 12, 768, 50257, 1024, 8),
                                 "350M": (24, 16, 1024, 50257, 1024, 8),
                                 "774M": (36, 20, 1280, 50257, 1024, 8),
                                 "1558M": (48, 25, 1600, 50257, 1024, 8)})
        self.assertEqual(gpt2.GPT2Config(), gpt2.GPT2Config.preset("tiny"))

    def test_init(self):
        for n_layer in (2, 12):
            config = gpt2.GPT2Config(n_layer=n_layer)
            proj_std = 0.02 / math.sqrt(2 * n_layer)
            for p in gpt2.parameters(config):
                if p.name.endswith("c_proj.weight"):
                    self.assertEqual((p.init, p.std), ("normal", proj_std), p.name)
                elif p.name.endswith(".bias"):
                    self.assertEqual((p.init, p.std), ("zeros", None), p.name)
                elif ".ln_" in p.name:
                    self.assertEqual((p.init, p.std), ("ones", None), p.name)
                else:
                    self.assertEqual((p.init, p.std), ("normal", 0.02), p.name)
        text = gpt2.build(gpt2.GPT2Config.preset("124M"))
        self.assertIn("@transformer.h.11.mlp.c_proj.weight : tensor<768x3072xf32> init = normal "
                      f"std = {0.02 / math.sqrt(24)!r} decay\n", text)
        self.assertIn("@transformer.h.0.attn.c_attn.weight : tensor<2304x768xf32> init = normal "
                      "std = 0.02 decay\n", text)

    def test_decay_only_on_rank_2(self):
        for p in gpt2.parameters(gpt2.GPT2Config()):
            self.assertEqual(p.decay, p.type.rank >= 2, p.name)
        for name, dims, _, _, _, decay in PARAM_LINE.findall(gpt2.build(gpt2.GPT2Config())):
            self.assertEqual(bool(decay), "x" in dims, name)


class OptimizerTest(unittest.TestCase):
    def test_adamw_default(self):
        self.assertEqual(optimizer_line(gpt2.build(gpt2.GPT2Config())),
                         "train.optimizer adamw lr = 0.0006 beta1 = 0.9 beta2 = 0.95 "
                         "eps = 1.0e-08 weight_decay = 0.1")

    def test_sgd(self):
        line = optimizer_line(gpt2.build(gpt2.GPT2Config(), ir.OptimizerConfig(
            kind="sgd", lr=0.1, momentum=0.8, weight_decay=0.0, grad_clip=1.0)))
        self.assertEqual(line, "train.optimizer sgd lr = 0.1 momentum = 0.8 weight_decay = 0.0 "
                               "grad_clip = 1.0")

    def test_cosine(self):
        line = optimizer_line(gpt2.build(gpt2.GPT2Config(), ir.OptimizerConfig(
            schedule="cosine", warmup=10, min_lr=6e-5, max_steps=1000)))
        self.assertEqual(line, "train.optimizer adamw lr = 0.0006 beta1 = 0.9 beta2 = 0.95 "
                               "eps = 1.0e-08 weight_decay = 0.1 schedule = cosine warmup = 10 "
                               "min_lr = 6.0e-05 max_steps = 1000")

    def test_cli_options(self):
        result = run_cli("--optimizer", "sgd", "--lr", "3e-4", "--lr-schedule", "cosine",
                         "--max-steps", "500", "--warmup", "5", "--grad-clip", "1")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(optimizer_line(result.stdout),
                         "train.optimizer sgd lr = 0.0003 momentum = 0.9 weight_decay = 0.1 "
                         "grad_clip = 1.0 schedule = cosine warmup = 5 min_lr = 0.0 "
                         "max_steps = 500")

    def test_cosine_needs_max_steps(self):
        result = run_cli("--lr-schedule", "cosine")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--lr-schedule cosine requires --max-steps", result.stderr)
        with self.assertRaisesRegex(ValueError, "max_steps"):
            ir.OptimizerConfig(schedule="cosine")

    def test_invalid(self):
        for fields in (dict(lr=0.0), dict(beta2=1.0), dict(eps=0.0), dict(lr=math.nan),
                       dict(kind="sgd", momentum=1.0), dict(weight_decay=-1.0),
                       dict(warmup=10), dict(schedule="cosine", warmup=10, max_steps=10)):
            with self.assertRaises(ValueError, msg=str(fields)):
                ir.OptimizerConfig(**fields)


class ModelTest(unittest.TestCase):
    def test_bf16(self):
        text = gpt2.build(gpt2.GPT2Config(dtype="bf16"))
        types = set(re.findall(r"tensor<[^>]*>", text))
        self.assertFalse({t for t in types if "f32" in t} - {"tensor<f32>"})
        self.assertIn("tensor<12x17xi32>", types)
        self.assertIn("tensor<12x17x48xbf16>", types)
        self.assertIn("train.cross_entropy %logits, %targets : "
                      "(tensor<12x17x256xbf16>, tensor<12x17xi32>) -> tensor<f32>", text)

    def test_gelu(self):
        self.assertEqual(gpt2.build(gpt2.GPT2Config()).count(" tanh : "), 2)
        text = gpt2.build(gpt2.GPT2Config(gelu="erf"))
        self.assertEqual(text.count("train.gelu"), 2)
        self.assertIn("%g_1 = train.gelu %fc_1 erf : tensor<12x17x192xf32>\n", text)

    def test_forward(self):
        text = gpt2.build(gpt2.GPT2Config.preset("124M"))
        self.assertIn('module attributes {train.model = "gpt2", train.tied = '
                      '{"lm_head.weight" = @transformer.wte.weight}} {\n', text)
        self.assertIn("func.func @forward(%tokens: tensor<8x1024xi32>, %targets: "
                      "tensor<8x1024xi32>) -> tensor<f32> attributes {train.forward} {\n", text)
        self.assertEqual(text.count("causal scale = 0.125 : (tensor<8x12x1024x64xf32>"), 12)
        self.assertEqual(text.count("eps = 1.0e-05"), 25)
        self.assertIn("%logits = train.matmul %hf, %wte transpose_rhs", text)
        self.assertNotIn("dropout", text)

    def test_head_divisibility(self):
        with self.assertRaisesRegex(ValueError, r"n_embd \(50\).*n_head \(3\)"):
            gpt2.GPT2Config(n_embd=50)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp, "model.mlir")
            result = run_cli("--n-embd", "50", "-o", str(out))
            self.assertEqual(result.returncode, 2)
            self.assertIn("n_embd (50) must be divisible by n_head (3)", result.stderr)
            self.assertEqual(os.listdir(tmp), [])
            out.write_text("old")
            self.assertEqual(run_cli("--n-layer", "0", "-o", str(out)).returncode, 2)
            self.assertEqual(out.read_text(), "old")

    def test_output_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp, "model.mlir")
            result = run_cli("--batch-size", "4", "-o", str(out))
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(result.stdout, "")
            self.assertEqual(os.listdir(tmp), ["model.mlir"])
            self.assertEqual(out.read_text(), gpt2.build(gpt2.GPT2Config(batch_size=4)))
            self.assertEqual(run_cli("--batch-size", "4", "-o", "-").stdout, out.read_text())

    def test_175b_is_fast(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp, "175b.mlir")
            start = time.monotonic()
            result = run_cli("--preset", "124M", "--n-layer", "96", "--n-head", "96",
                             "--n-embd", "12288", "--block-size", "2048", "-o", str(out))
            elapsed = time.monotonic() - start
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertLess(elapsed, 20)
            text = out.read_text()
            self.assertIn("transformer.h.95.mlp.c_proj.bias : tensor<12288xf32>", text)
            self.assertIn("tensor<8x96x2048x128xf32>", text)

    def test_import_does_not_load_torch(self):
        code = ("import sys, zeroc, zeroc.ir, zeroc.models.gpt2\n"
                "assert 'torch' not in sys.modules, 'zeroc imported torch'\n")
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env=env, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)


class EmitterTest(unittest.TestCase):
    def test_format_float(self):
        cases = {6e-4: "0.0006", 1e-8: "1.0e-08", 1.0: "1.0", 0.1: "0.1", 1e20: "1.0e+20",
                 1.5e20: "1.5e+20", 0.95: "0.95", 3: "3.0"}
        for value, text in cases.items():
            self.assertEqual(ir.format_float(value), text)
            self.assertEqual(float(text), value)
        with self.assertRaises(ValueError):
            ir.format_float(math.inf)

    def test_tensor_type(self):
        self.assertEqual(str(ir.TensorType((12, 17, 48), "bf16")), "tensor<12x17x48xbf16>")
        self.assertEqual(str(ir.TensorType((), "f32")), "tensor<f32>")


if __name__ == "__main__":
    unittest.main()
