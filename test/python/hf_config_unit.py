# RUN: %python %s
"""Unit tests of zeroc.hf's config.json reader and of the Llama presets of
the published small models (standard library only).

* The published config.json of SmolLM2-135M, Qwen2.5-0.5B, Qwen3-0.6B,
  TinyLlama-1.1B, Llama-3.2-1B and Mistral-7B-v0.1 (as on the Hugging Face
  hub) read into the preset of that name; every preset's parameter count
  is the published one.
* Every field zeroc does not honour is an error naming the file, the field
  and its value, from Python and from the command line (exit 1, no output
  file); fields without effect are listed on one line.
* `config_dict` of every preset reads back into the same model.

Runs under lit or directly: ``python3 test/python/hf_config_unit.py``.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")
sys.path.insert(0, PYTHON_DIR)

from zeroc import hf  # noqa: E402
from zeroc.models import llama  # noqa: E402

# The models' published parameter counts (the safetensors' tensors, a tied
# lm_head counted once).
PUBLISHED = {
    "smollm2-135m": 134_515_008,
    "smollm2-360m": 361_821_120,
    "qwen2.5-0.5b": 494_032_768,
    "qwen3-0.6b": 596_049_920,
    "tinyllama-1.1b": 1_100_048_384,
    "llama3.2-1b": 1_235_814_400,
    "llama3.2-3b": 3_212_749_824,
    "mistral-7b": 7_241_732_096,
}

# The config.json files as published on the hub.
CONFIGS = {
    "smollm2-135m": {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu",
        "hidden_size": 576, "initializer_range": 0.041666666666666664,
        "intermediate_size": 1536, "is_llama_config": True, "max_position_embeddings": 8192,
        "mlp_bias": False, "model_type": "llama", "num_attention_heads": 9,
        "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1,
        "rms_norm_eps": 1e-05, "rope_interleaved": False, "rope_scaling": None,
        "rope_theta": 100000, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "transformers_version": "4.40.1", "use_cache": True, "vocab_size": 49152},
    "qwen2.5-0.5b": {
        "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
        "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu",
        "hidden_size": 896, "initializer_range": 0.02, "intermediate_size": 4864,
        "max_position_embeddings": 32768, "max_window_layers": 24, "model_type": "qwen2",
        "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
        "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "transformers_version": "4.40.1", "use_cache": True, "use_sliding_window": False,
        "vocab_size": 151936},
    "qwen3-0.6b": {
        "architectures": ["Qwen3ForCausalLM"], "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151645,
        "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024, "initializer_range": 0.02,
        "intermediate_size": 3072, "max_position_embeddings": 40960, "max_window_layers": 28,
        "model_type": "qwen3", "num_attention_heads": 16, "num_hidden_layers": 28,
        "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_scaling": None,
        "rope_theta": 1000000, "sliding_window": None, "tie_word_embeddings": True,
        "torch_dtype": "bfloat16", "transformers_version": "4.51.0", "use_cache": True,
        "use_sliding_window": False, "vocab_size": 151936},
    "tinyllama-1.1b": {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 1,
        "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 2048,
        "initializer_range": 0.02, "intermediate_size": 5632, "max_position_embeddings": 2048,
        "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 22,
        "num_key_value_heads": 4, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
        "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "transformers_version": "4.35.0", "use_cache": True,
        "vocab_size": 32000},
    "llama3.2-1b": {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": 128001,
        "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
        "intermediate_size": 8192, "max_position_embeddings": 131072, "mlp_bias": False,
        "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 16,
        "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "transformers_version": "4.45.0.dev0", "use_cache": True, "vocab_size": 128256},
    "mistral-7b": {
        "architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
        "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
        "intermediate_size": 14336, "max_position_embeddings": 32768,
        "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32,
        "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
        "sliding_window": 4096, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": "4.34.0.dev0", "use_cache": True, "vocab_size": 32000},
}

MODEL_FIELDS = ("n_layer", "dim", "n_head", "n_kv_head", "ffn_dim", "vocab_size", "head_dim",
                "rope_theta", "norm_eps", "tie_embeddings", "qkv_bias", "o_bias", "mlp_bias",
                "qk_norm", "rope_scaling", "sliding_window", "init_std")
"""The fields that define the model (not the training step's block and
batch)."""


def model_of(config):
    return {f: getattr(config, f) for f in MODEL_FIELDS}


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "zeroc.models.llama", *args],
                          capture_output=True, text=True, env=env, timeout=120)


class HfConfigTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, data, name="config.json"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            json.dump(data, f)
        return path

    def test_published_parameter_counts(self):
        for name, count in PUBLISHED.items():
            self.assertEqual(llama.parameter_count(llama.LlamaConfig.preset(name)), count, name)

    def test_published_configs_are_the_presets(self):
        for name, data in CONFIGS.items():
            folder = os.path.join(self.dir, name)
            os.mkdir(folder)
            self.write(data, os.path.join(name, "config.json"))
            fields, ignored, _ = hf.read_config(folder)  # the model folder
            config = llama.LlamaConfig(**fields)
            self.assertEqual(model_of(config), model_of(llama.LlamaConfig.preset(name)), name)
            self.assertEqual(llama.parameter_count(config), PUBLISHED[name], name)
            self.assertIn("torch_dtype", ignored)
            self.assertIn("eos_token_id", ignored)

    def test_config_dict_round_trip(self):
        for name in llama.PRESETS:
            config = llama.LlamaConfig.preset(name)
            path = self.write(hf.config_dict(config))
            fields, _, data = hf.read_config(path)
            self.assertEqual(model_of(llama.LlamaConfig(**{"block_size": 16, **fields})),
                             model_of(config), name)
            self.assertEqual(data["model_type"], hf.model_type_of(config))
        # From a published config: the fields it had are kept.
        base = CONFIGS["llama3.2-1b"]
        out = hf.config_dict(llama.LlamaConfig.preset("llama3.2-1b"), base, "bfloat16")
        self.assertEqual(out["bos_token_id"], 128000)
        self.assertEqual(out["rope_scaling"], base["rope_scaling"])
        self.assertEqual(out["max_position_embeddings"], 131072)

    def test_families(self):
        tiny = dict(hidden_size=40, intermediate_size=76, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                    rms_norm_eps=1e-5, max_position_embeddings=64)
        fields, _, _ = hf.read_config(self.write(dict(tiny, model_type="qwen2")))
        self.assertEqual((fields["qkv_bias"], fields.get("o_bias", False)), (True, False))
        fields, _, _ = hf.read_config(self.write(dict(tiny, model_type="llama",
                                                      attention_bias=True, mlp_bias=True)))
        self.assertEqual((fields["qkv_bias"], fields["o_bias"], fields["mlp_bias"]),
                         (True, True, True))
        fields, _, _ = hf.read_config(self.write(dict(tiny, model_type="qwen3", head_dim=16)))
        self.assertEqual((fields["qk_norm"], fields["head_dim"]), (True, 16))
        fields, _, _ = hf.read_config(self.write(dict(
            tiny, model_type="llama", rope_scaling={"type": "linear", "factor": 2})))
        self.assertEqual(fields["rope_scaling"], ("linear", 2.0))
        fields, _, _ = hf.read_config(self.write(dict(
            tiny, model_type="llama", rope_parameters={
                "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192})))
        self.assertEqual(fields["rope_theta"], 500000.0)
        self.assertEqual(fields["rope_scaling"], ("llama3", 8.0, 1.0, 4.0, 8192.0))
        fields, _, _ = hf.read_config(self.write(dict(tiny, model_type="mistral",
                                                      sliding_window=None)))
        self.assertNotIn("sliding_window", fields)
        self.assertEqual(fields["block_size"], 64)

    def test_refusals_name_the_file_field_and_value(self):
        tiny = dict(hidden_size=40, intermediate_size=76, num_hidden_layers=2,
                    num_attention_heads=4, vocab_size=256, model_type="llama")
        cases = [
            (dict(tiny, hidden_act="gelu"), 'hidden_act = "gelu"'),
            (dict(tiny, model_type="gpt2"), 'model_type = "gpt2"'),
            (dict(tiny, rope_scaling={"rope_type": "yarn", "factor": 4.0}),
             'rope_scaling = {"rope_type": "yarn", "factor": 4.0}: rope type \'yarn\''),
            (dict(tiny, rope_scaling={"rope_type": "dynamic", "factor": 2.0}),
             "rope type 'dynamic' is not implemented"),
            (dict(tiny, rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                      "low_freq_factor": 4.0, "high_freq_factor": 1.0,
                                      "original_max_position_embeddings": 8192}),
             "low_freq_factor must be smaller than high_freq_factor"),
            (dict(tiny, attention_dropout=0.1), "attention_dropout = 0.1"),
            (dict(tiny, rope_interleaved=True), "rope_interleaved = true"),
            (dict(tiny, num_experts=8), "num_experts = 8: a field zeroc does not know"),
            (dict(tiny, model_type="qwen2", attention_bias=True), "attention_bias = true"),
            (dict(tiny, model_type="mistral", sliding_window=0), "sliding_window = 0"),
            (dict(tiny, model_type="qwen2", use_sliding_window=True),
             "sliding_window = null: use_sliding_window needs a window"),
            (dict(tiny, hidden_size=-4), "hidden_size = -4"),
        ]
        for data, message in cases:
            path = self.write(data)
            with self.assertRaises(hf.HfConfigError, msg=message) as caught:
                hf.read_config(path)
            self.assertIn(path, str(caught.exception))
            self.assertIn(message, str(caught.exception))
        with self.assertRaisesRegex(hf.HfConfigError, "nowhere: cannot read"):
            hf.read_config(os.path.join(self.dir, "nowhere"))

    def test_cli(self):
        tiny = dict(hidden_size=40, intermediate_size=76, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                    model_type="qwen3", head_dim=16, max_position_embeddings=32,
                    bos_token_id=1, torch_dtype="bfloat16", rms_norm_eps=1e-6)
        path = self.write(tiny)
        out = os.path.join(self.dir, "m.mlir")
        run = run_cli("--config", self.dir, "--batch-size", "4", "-o", out)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn(f"{path}: ignored (no effect on the computation): bos_token_id, "
                      "torch_dtype", run.stderr)
        text = Path(out).read_text()
        self.assertIn("train.param @model.layers.1.self_attn.k_norm.weight : tensor<16xf32> "
                      "init = ones", text)
        self.assertIn("tensor<4x32x4x16xf32>", text)  # q heads [B, T, H, head_dim]
        self.assertIn("eps = 1.0e-06", text)
        # Flags override the config.
        run = run_cli("--config", path, "--n-layer", "1", "--block-size", "8", "-o", out)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("model.layers.1.", Path(out).read_text())
        # Refusals: exit 1, the file, field and value, no output.
        os.remove(out)
        tiny["model_type"] = "mistral"
        del tiny["head_dim"]
        tiny["sliding_window"] = 16
        self.write(tiny)
        run = run_cli("--config", path, "-o", out)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("sliding_window 16 is smaller than the block size 32", run.stderr)
        self.assertFalse(os.path.exists(out))
        run = run_cli("--config", path, "--block-size", "16", "-o", out)
        self.assertEqual(run.returncode, 0, run.stderr)
        tiny["hidden_act"] = "relu"
        self.write(tiny)
        os.remove(out)
        run = run_cli("--config", path, "--block-size", "16", "-o", out)
        self.assertEqual(run.returncode, 1)
        self.assertIn(f'{path}: hidden_act = "relu"', run.stderr)
        self.assertFalse(os.path.exists(out))
        run = run_cli("--config", path, "--preset", "tiny")
        self.assertEqual(run.returncode, 2)
        self.assertIn("not allowed with argument", run.stderr)

    def test_rope_scaling_in_the_ir(self):
        text = llama.build(llama.LlamaConfig.preset("llama3.2-1b", n_layer=1, block_size=16))
        self.assertIn("rotate_half scaling = [32.0, 1.0, 4.0, 8192.0] :", text)
        text = llama.build(llama.LlamaConfig(rope_scaling=("linear", 2.0)))
        self.assertIn("rotate_half scaling = [2.0] :", text)
        text = llama.build(llama.LlamaConfig.preset("qwen2.5-0.5b", n_layer=1, block_size=16))
        self.assertIn("train.read @model.layers.0.self_attn.q_proj.bias", text)
        self.assertNotIn("o_proj.bias", text)

    def test_export_cli_errors(self):
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)

        def export(*args):
            return subprocess.run([sys.executable, "-m", "zeroc", "checkpoint", "export",
                                   *args], capture_output=True, text=True, env=env,
                                  timeout=120)

        out = os.path.join(self.dir, "out")
        run = export(self.dir, "--hf", out)
        self.assertEqual(run.returncode, 1)
        self.assertIn("--hf needs --config", run.stderr)
        run = export(self.dir, "--hf", out, "--config", "tiny", "--max-shard-size", "5 parsecs")
        self.assertEqual(run.returncode, 1)
        self.assertIn("max shard size '5 parsecs'", run.stderr)
        run = export(self.dir, "--hf", out, "--config", "tiny")  # not a checkpoint
        self.assertEqual(run.returncode, 1)
        self.assertIn("not a checkpoint", run.stderr)
        run = export(self.dir, "-o", out, "--dtype", "bf16")
        self.assertEqual(run.returncode, 1)
        self.assertIn("--dtype bf16 and --config go with --hf", run.stderr)
        self.assertFalse(os.path.exists(out))

    def test_parse_size(self):
        self.assertEqual(hf.parse_size("5GB"), 5 * 10 ** 9)
        self.assertEqual(hf.parse_size("200MiB"), 200 * 2 ** 20)
        self.assertEqual(hf.parse_size("1000"), 1000)
        with self.assertRaises(ValueError):
            hf.parse_size("5 parsecs")


if __name__ == "__main__":
    unittest.main()
