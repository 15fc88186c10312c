# RUN: %python %s
"""Unit tests of zeroc.models.llama and of zeroc.ir's Llama ops (standard
library only).

Runs under lit (`%python`, PYTHONPATH set by lit.cfg.py) or directly:
``python3 test/python/llama_builder_unit.py``.
"""

import io
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")
sys.path.insert(0, PYTHON_DIR)

from zeroc import ir  # noqa: E402
from zeroc.models import llama  # noqa: E402

PARAM_LINE = re.compile(
    r"^  train\.param @(\S+) : tensor<([0-9x]+)x(f32|bf16)> init = (\w+)"
    r"(?: std = (\S+))?( decay)?$", re.MULTILINE)


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "zeroc.models.llama", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def declared(text):
    return [(m.group(1), tuple(int(d) for d in m.group(2).split("x")), m.group(4),
             m.group(6) is not None) for m in PARAM_LINE.finditer(text)]


class LlamaBuilderTest(unittest.TestCase):
    def test_hugging_face_names_and_shapes(self):
        config = llama.LlamaConfig(n_layer=1, dim=48, n_head=4, n_kv_head=2, ffn_dim=112)
        params = declared(llama.build(config))
        expected = [("model.embed_tokens.weight", (256, 48)),
                    ("model.layers.0.self_attn.q_proj.weight", (48, 48)),
                    ("model.layers.0.self_attn.k_proj.weight", (24, 48)),
                    ("model.layers.0.self_attn.v_proj.weight", (24, 48)),
                    ("model.layers.0.self_attn.o_proj.weight", (48, 48)),
                    ("model.layers.0.mlp.gate_proj.weight", (112, 48)),
                    ("model.layers.0.mlp.up_proj.weight", (112, 48)),
                    ("model.layers.0.mlp.down_proj.weight", (48, 112)),
                    ("model.layers.0.input_layernorm.weight", (48,)),
                    ("model.layers.0.post_attention_layernorm.weight", (48,)),
                    ("model.norm.weight", (48,)),
                    ("lm_head.weight", (256, 48))]
        self.assertEqual([(n, s) for n, s, _, _ in params], expected)
        for name, shape, init, decay in params:
            self.assertEqual(init, "ones" if len(shape) == 1 else "normal", name)
            self.assertEqual(decay, len(shape) == 2, name)

    def test_published_parameter_counts(self):
        counts = {"llama3.2-1b": 1_235_814_400, "llama3-8b": 8_030_261_248,
                  "llama3-70b": 70_553_706_496}
        for preset, count in counts.items():
            config = llama.LlamaConfig.preset(preset)
            self.assertEqual(llama.parameter_count(config), count, preset)
            self.assertEqual(sum(p.type.numel for p in llama.parameters(config)), count)

    def test_presets(self):
        eight = llama.LlamaConfig.preset("llama3-8b")
        self.assertEqual((eight.n_layer, eight.dim, eight.n_head, eight.n_kv_head,
                          eight.ffn_dim, eight.vocab_size, eight.rope_theta,
                          eight.tie_embeddings),
                         (32, 4096, 32, 8, 14336, 128256, 500000.0, False))
        one = llama.LlamaConfig.preset("llama3.2-1b")
        self.assertTrue(one.tie_embeddings)
        self.assertNotIn("lm_head.weight", [p.name for p in llama.parameters(one)])
        self.assertEqual(llama.LlamaConfig.preset("llama3-70b", n_layer=2).n_layer, 2)

    def test_forward(self):
        text = llama.build(llama.LlamaConfig())
        self.assertEqual(text.count("train.rmsnorm "), 5)
        self.assertEqual(text.count("train.rope "), 4)
        self.assertEqual(text.count("train.silu "), 2)
        self.assertIn("train.attention %qh_0, %kh_0, %vh_0 causal scale = "
                      "0.2886751345948129 : (tensor<8x4x16x12xf32>, tensor<8x2x16x12xf32>, "
                      "tensor<8x2x16x12xf32>) -> tensor<8x4x16x12xf32>", text)
        self.assertIn("theta = 10000.0 seq_dim = 1 rotate_half", text)
        self.assertNotIn("train.dropout", text)
        self.assertIn("%logits = train.matmul %hf, %head transpose_rhs", text)
        self.assertNotIn("train.tied", text)
        tied = llama.build(llama.LlamaConfig(tie_embeddings=True))
        self.assertIn("%logits = train.matmul %hf, %embed transpose_rhs", tied)
        # The tying is declared, so that checkpoints export lm_head.weight.
        self.assertIn('train.tied = {"lm_head.weight" = @model.embed_tokens.weight}', tied)

    def test_dropout(self):
        text = llama.build(llama.LlamaConfig(dropout=0.1, dropout_seed=3))
        seeds = re.findall(r"train\.dropout %\S+ p = 0\.1 seed = (\d+)", text)
        self.assertEqual(len(seeds), 4)  # attention and MLP of 2 layers
        self.assertEqual(len(set(seeds)), 4)  # one mask stream per site
        self.assertTrue(all(int(s) >> 20 == 3 for s in seeds))

    def test_invalid(self):
        for kwargs, message in [({"n_kv_head": 3}, "multiple of n_kv_head"),
                                ({"dim": 44, "n_head": 4}, "must be even"),
                                ({"dim": 50}, "divisible by n_head"),
                                ({"rope_theta": 0.0}, "rope_theta"),
                                ({"dropout": 1.0}, "dropout"),
                                ({"batch_size": 0}, "batch_size")]:
            with self.assertRaisesRegex(ValueError, message):
                llama.LlamaConfig(**kwargs)
        with self.assertRaisesRegex(ValueError, "unknown preset"):
            llama.LlamaConfig.preset("llama9")

    def test_cli(self):
        result = run_cli("--preset", "tiny", "--n-layer", "1", "--n-kv-head", "1",
                         "--dtype", "bf16", "--tie-embeddings", "--lr", "3e-4",
                         "--grad-clip", "1", "--rope-theta", "500000")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("train.param @model.layers.0.self_attn.k_proj.weight : "
                      "tensor<12x48xbf16>", result.stdout)
        self.assertNotIn("train.param @lm_head.weight", result.stdout)
        self.assertIn('train.tied = {"lm_head.weight" = @model.embed_tokens.weight}',
                      result.stdout)
        self.assertIn("theta = 500000.0", result.stdout)
        self.assertIn("train.optimizer adamw lr = 0.0003", result.stdout)
        bad = run_cli("--n-kv-head", "3")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("n_head (4) must be a multiple of n_kv_head (3)", bad.stderr)
        self.assertIn("llama3-70b", run_cli("--help").stdout)

    def test_ir_ops(self):
        out = io.StringIO()
        f = ir.FunctionWriter(out, {})
        x = f.argument("x", ir.TensorType((2, 5, 3, 6), "f32"))
        f.rope("r", x, theta=1e4, seq_dim=1, style="interleaved", inverse=True)
        f.slice("s", x, [0, 1, 0, 0], [2, 3, 3, 6])
        f.dropout("d", x, 0.25, 7)
        self.assertIn("%r = train.rope %x theta = 10000.0 seq_dim = 1 interleaved inverse : "
                      "tensor<2x5x3x6xf32>", out.getvalue())
        self.assertIn("%s = train.slice %x offsets = [0, 1, 0, 0] strides = [1, 1, 1, 1] : "
                      "tensor<2x5x3x6xf32> -> tensor<2x3x3x6xf32>", out.getvalue())
        with self.assertRaises(ValueError):
            f.rope("bad", x, theta=1e4, seq_dim=3, style="interleaved")
        with self.assertRaises(ValueError):
            f.slice("bad", x, [0, 3, 0, 0], [2, 3, 3, 6])
        with self.assertRaises(ValueError):
            f.dropout("bad", x, 1.0, 0)


if __name__ == "__main__":
    unittest.main()
