# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --zeroc-opt %zeroc_build/bin/zeroc-opt --zeroc-run %zeroc_build/bin/zeroc-run --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
#
# CHECK: llama3.2: executable stage 0, 1 rank(s): worst relative loss difference
# CHECK: llama3.2: executable stage 3, 2 rank(s): worst relative loss difference
# CHECK: llama3.2: evaluator stage 3, 1 rank(s): worst relative loss difference
# CHECK: llama3.2: evaluator stage 0, 2 rank(s): worst relative loss difference
# CHECK: llama3.2: exported folder {{.*}} shards, {{.*}} tensors load strictly
# CHECK: llama3.2: the folder as --init
# CHECK: llama-biases: exported folder
# CHECK: qwen2: exported folder
# CHECK: qwen3: exported folder
# CHECK: mistral: exported folder
# CHECK: every family matches PyTorch
"""The Llama family's variants, built by zeroc from a config.json, against
the same models written in PyTorch with Hugging Face's module structure
and names.

For each family the test writes a tiny model's config.json (as the hub's,
with fields that do not change the computation), builds it with
``python3 -m zeroc.models.llama --config FOLDER`` and starts it from the
folder itself (``--init FOLDER``: config.json beside model.safetensors):

* llama3.2: rope_scaling of type llama3 (factor 4, low_freq_factor 0.5,
  high_freq_factor 1.2, original context 8 < the block 13, theta 100: the
  head's 5 pairs have wavelengths 6.3 (kept), 15.8 (blended) and 40 to 250
  (divided by the factor)), an explicit head_dim, tied embeddings;
* llama-biases: attention_bias (q, k, v and o_proj biases) and mlp_bias,
  rope_scaling linear, untied;
* qwen2: q, k and v biases, tied, use_sliding_window false;
* qwen3: q_norm and k_norm per head before the rotary embedding, head_dim
  16 with hidden_size 40, untied;
* mistral: a sliding_window equal to the block (full causal attention).

The PyTorch side reads the same config.json itself; its rotary inverse
frequencies transcribe transformers' _compute_llama3_parameters and linear
scaling. Biases and q/k norm weights start random (std 0.1 around 0, 0.3
around 1) so that they matter; q_proj and k_proj have std 0.4 (larger
attention scores, which make the angles matter). 10 AdamW steps with
clipping:

* executables at stage 0 on 1 rank and stage 3 on 2 ranks on the
  executable's batches, the reference evaluator at stage 3 on 1 rank and
  stage 0 on 2 ranks on one fixed batch: per-step losses within 1e-5
  relative of PyTorch's (TOLERANCE);
* the stage-3 run's checkpoint exported with ``python3 -m zeroc checkpoint
  export SAVE --hf OUT`` (fp32, shards of at most 24 KB): the folder holds
  config.json, the shards and model.safetensors.index.json; the weights
  load into the PyTorch model (built from the exported config.json) with
  strict load_state_dict, and its logits equal those of the PyTorch model
  trained alongside within 1e-5 (the 10 steps' rounding), and the same
  folder read back into zeroc (--init OUT, one step) gives the loaded
  model's loss within 1e-5 relative; the bf16 export is the fp32 one
  rounded to bf16, tensor for tensor.
"""
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "Inputs"))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
import harness  # noqa: E402
import torch_models  # noqa: E402
from harness import mpirun, worst  # noqa: E402
from zeroc import data, weights  # noqa: E402

B, T = 12, 13
LR, BETAS, EPS, WD, CLIP, STEPS = 1e-3, (0.9, 0.95), 1e-8, 0.1, 1.0, 10
TOLERANCE = 1e-5
"""Per-step losses agree within 1e-5 relative (the issue asks 1e-4; they
agree within 3e-7): leaving out any variant moves the losses further,
by 1.6e-4 (linear rope scaling) to 1.0e-2 (attention and MLP biases) over
10 steps, and a window one shorter than the block by 2.4e-4."""
OPTIMIZER = ["--lr", str(LR), "--beta1", str(BETAS[0]), "--beta2", str(BETAS[1]),
             "--eps", str(EPS), "--weight-decay", str(WD), "--grad-clip", str(CLIP)]

TINY = dict(hidden_size=40, intermediate_size=76, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
            max_position_embeddings=64, hidden_act="silu", initializer_range=0.02,
            bos_token_id=1, eos_token_id=2, torch_dtype="bfloat16", use_cache=True,
            transformers_version="4.45.0")

FAMILIES = {
    "llama3.2": dict(TINY, architectures=["LlamaForCausalLM"], model_type="llama",
                     head_dim=10, rms_norm_eps=1e-5, rope_theta=100.0,
                     rope_scaling={"rope_type": "llama3", "factor": 4.0,
                                   "low_freq_factor": 0.5, "high_freq_factor": 1.2,
                                   "original_max_position_embeddings": 8},
                     tie_word_embeddings=True, attention_bias=False, mlp_bias=False,
                     pretraining_tp=1),
    "llama-biases": dict(TINY, architectures=["LlamaForCausalLM"], model_type="llama",
                         rms_norm_eps=1e-5, rope_theta=100.0,
                         rope_scaling={"type": "linear", "factor": 4.0},
                         tie_word_embeddings=False, attention_bias=True, mlp_bias=True),
    "qwen2": dict(TINY, architectures=["Qwen2ForCausalLM"], model_type="qwen2",
                  rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
                  use_sliding_window=False, sliding_window=4, max_window_layers=2,
                  attention_dropout=0.0),
    "qwen3": dict(TINY, architectures=["Qwen3ForCausalLM"], model_type="qwen3",
                  head_dim=16, rms_norm_eps=1e-6, rope_theta=1000000.0,
                  tie_word_embeddings=False, attention_bias=False, rope_scaling=None,
                  use_sliding_window=False, sliding_window=None, max_window_layers=2),
    "mistral": dict(TINY, architectures=["MistralForCausalLM"], model_type="mistral",
                    rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=T,
                    tie_word_embeddings=False),
}


# --- The models, as Hugging Face writes them ----------------------------------

class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def compute_llama3_parameters(inv_freq, rope_scaling):
    """transformers' _compute_llama3_parameters, transcribed."""
    factor = rope_scaling["factor"]
    low_freq_factor = rope_scaling["low_freq_factor"]
    high_freq_factor = rope_scaling["high_freq_factor"]
    old_context_len = rope_scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (
        high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + \
        smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


class RotaryEmbedding(nn.Module):
    def __init__(self, config, head_dim):
        super().__init__()
        base = config.get("rope_theta", 10000.0)
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float()
                                   / head_dim))
        scaling = config.get("rope_scaling")
        if scaling is not None:
            kind = scaling.get("rope_type", scaling.get("type"))
            if kind == "llama3":
                inv_freq = compute_llama3_parameters(inv_freq, scaling)
            elif kind == "linear":
                inv_freq = inv_freq / scaling["factor"]
            else:
                raise ValueError(kind)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep,
                                                           slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        kind = config["model_type"]
        hidden = config["hidden_size"]
        self.num_heads = config["num_attention_heads"]
        self.num_kv = config.get("num_key_value_heads") or self.num_heads
        self.head_dim = config.get("head_dim") or hidden // self.num_heads
        qkv_bias = True if kind == "qwen2" else config.get("attention_bias", False)
        o_bias = False if kind == "qwen2" else config.get("attention_bias", False)
        self.q_proj = nn.Linear(hidden, self.num_heads * self.head_dim, bias=qkv_bias)
        self.k_proj = nn.Linear(hidden, self.num_kv * self.head_dim, bias=qkv_bias)
        self.v_proj = nn.Linear(hidden, self.num_kv * self.head_dim, bias=qkv_bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, hidden, bias=o_bias)
        if kind == "qwen3":
            self.q_norm = RMSNorm(self.head_dim, eps=config["rms_norm_eps"])
            self.k_norm = RMSNorm(self.head_dim, eps=config["rms_norm_eps"])
        self.qk_norm = kind == "qwen3"

    def forward(self, hidden_states, position_embeddings, attention_mask):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(bsz, q_len, -1, self.head_dim)
        k = self.k_proj(hidden_states).view(bsz, q_len, -1, self.head_dim)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        k = repeat_kv(k, self.num_heads // self.num_kv)
        v = repeat_kv(v, self.num_heads // self.num_kv)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + attention_mask
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(bsz, q_len, -1)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden, inter = config["hidden_size"], config["intermediate_size"]
        bias = config.get("mlp_bias", False)
        self.gate_proj = nn.Linear(hidden, inter, bias=bias)
        self.up_proj = nn.Linear(hidden, inter, bias=bias)
        self.down_proj = nn.Linear(inter, hidden, bias=bias)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = Attention(config)
        self.mlp = MLP(config)
        self.input_layernorm = RMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(config["hidden_size"],
                                                eps=config["rms_norm_eps"])

    def forward(self, hidden_states, position_embeddings, attention_mask):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states),
                                       position_embeddings, attention_mask)
        hidden_states = residual + hidden_states
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config["vocab_size"], config["hidden_size"])
        self.layers = nn.ModuleList([DecoderLayer(config)
                                     for _ in range(config["num_hidden_layers"])])
        self.norm = RMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])
        head_dim = config.get("head_dim") or \
            config["hidden_size"] // config["num_attention_heads"]
        self.rotary_emb = RotaryEmbedding(config, head_dim)

    def mask(self, seq_len):
        """Causal, and within Mistral's sliding window (0 <= q - k < window)
        where the model slides."""
        q = torch.arange(seq_len)[:, None]
        k = torch.arange(seq_len)[None, :]
        allowed = k <= q
        window = self.config.get("sliding_window")
        slides = self.config["model_type"] == "mistral" or \
            self.config.get("use_sliding_window", False)
        if slides and window is not None:
            allowed = allowed & (q - k < window)
        return torch.zeros(seq_len, seq_len).masked_fill(~allowed, float("-inf"))[None, None]

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        position_ids = torch.arange(input_ids.shape[1]).unsqueeze(0)
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        mask = self.mask(input_ids.shape[1])
        for layer in self.layers:
            hidden_states = layer(hidden_states, position_embeddings, mask)
        return self.norm(hidden_states)


class ForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.model = Model(config)
        self.lm_head = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False)
        if config.get("tie_word_embeddings", False):
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids, targets=None):
        logits = self.lm_head(self.model(input_ids))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def initial_model(config):
    torch.manual_seed(0)
    model = ForCausalLM(config)
    std = config["initializer_range"]
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.3 * torch.randn_like(p)) if "q_norm" in name or \
                    "k_norm" in name else p.fill_(1.0)
            elif name.endswith(".bias"):
                p.normal_(0.0, 0.1)
            elif "q_proj" in name or "k_proj" in name:
                p.normal_(0.0, 0.4)
            else:
                p.normal_(0.0, std)
    return model


def fixed_batch_losses(model, x, y):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=EPS)
    losses = []
    for _ in range(STEPS):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        opt.step()
        losses.append(loss.item())
    return losses


def load_folder(folder):
    """The state dict of a Hugging Face folder: its shards by the index (or
    model.safetensors), as from_pretrained reads them."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return weights.load_state_dict(os.path.join(folder, "model.safetensors")), 1
    weight_map = json.load(open(index))["weight_map"]
    state = {}
    for shard in sorted(set(weight_map.values())):
        part = weights.load_state_dict(os.path.join(folder, shard))
        assert all(weight_map[name] == shard for name in part), shard
        state.update(part)
    assert set(state) == set(weight_map)
    return state, len(set(weight_map.values()))


def main():
    args = harness.parse_args()
    torch.set_num_threads(1)
    text = harness.text_data(args)
    tokens = data.read_tokens(text, "text")
    x, y = data.sample_batch(tokens, 0, B, T)
    x, y = torch.tensor(x), torch.tensor(y)
    inputs = os.path.join(args.work, "batch.safetensors")
    weights.save_state_dict(inputs, {"arg0": x.to(torch.int32), "arg1": y.to(torch.int32),
                                     "arg2": torch.tensor(0, dtype=torch.int64)})
    failures = []

    for family, config in FAMILIES.items():
        folder = os.path.join(args.work, family)
        os.makedirs(folder)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
        model = initial_model(config)
        weights.save_state_dict(os.path.join(folder, "model.safetensors"), model.state_dict(),
                                dtype=torch.float32)
        fixed = fixed_batch_losses(initial_model(config), x.long(), y.long())
        reference = torch_models.adamw_losses(model, tokens, STEPS, B, T, lr=LR, betas=BETAS,
                                              eps=EPS, weight_decay=WD, clip=CLIP)
        mlir = os.path.join(args.work, f"{family}.mlir")
        subprocess.run([sys.executable, "-m", "zeroc.models.llama", "--config", folder,
                        "--block-size", str(T), "--batch-size", str(B), *OPTIMIZER, "-o", mlir],
                       check=True, stderr=subprocess.DEVNULL)

        exes = {}
        for stage, ranks in ((0, 1), (3, 2)):
            exe = os.path.join(args.work, f"{family}-s{stage}-n{ranks}")
            subprocess.run([args.zeroc, mlir, f"--zero-stage={stage}", f"--world-size={ranks}",
                            "-o", exe], check=True)
            exes[stage, ranks] = exe
            log = exe + ".jsonl"
            subprocess.run(mpirun(args) + ["-np", str(ranks), exe, "--data", text,
                                           "--data-format=text", "--init", folder,
                                           "--steps", str(STEPS), "--log-json", log,
                                           "--save", exe + ".saved", "--quiet"],
                           check=True, stdout=subprocess.DEVNULL)
            losses = [json.loads(line)["loss"] for line in open(log) if '"loss"' in line]
            w = worst(losses, reference)
            print(f"{family}: executable stage {stage}, {ranks} rank(s): worst relative loss "
                  f"difference {w:.2e}")
            if len(losses) != STEPS or w > TOLERANCE:
                failures.append(f"{family} executable stage {stage} N={ranks}: {w:.2e}")

        for stage, ranks in ((3, 1), (0, 2)):
            step = os.path.join(args.work, f"{family}-step-s{stage}-n{ranks}.mlir")
            subprocess.run([args.zeroc_opt, mlir,
                            f"--train-pipeline=stage={stage} world-size={ranks}",
                            "-o", step], check=True)
            run = subprocess.run([args.zeroc_run, step, "--ranks", str(ranks), "--steps",
                                  str(STEPS), "--init", os.path.join(folder,
                                                                     "model.safetensors"),
                                  "--inputs", inputs],
                                 check=True, capture_output=True, text=True)
            losses = [s["results"][0][0] for s in json.loads(run.stdout)["steps"]]
            w = worst(losses, fixed)
            print(f"{family}: evaluator stage {stage}, {ranks} rank(s): worst relative loss "
                  f"difference {w:.2e}")
            if len(losses) != STEPS or w > TOLERANCE:
                failures.append(f"{family} evaluator stage {stage} N={ranks}: {w:.2e}")

        # The stage-3 run's checkpoint as a Hugging Face folder.
        out = os.path.join(args.work, f"{family}-hf")
        subprocess.run([sys.executable, "-m", "zeroc", "checkpoint", "export",
                        exes[3, 2] + ".saved", "--hf", out, "--config", folder,
                        "--max-shard-size", "24KB"], check=True, stdout=subprocess.DEVNULL)
        exported_config = json.load(open(os.path.join(out, "config.json")))
        for field, value in config.items():
            if field not in ("torch_dtype", "rope_scaling") and exported_config.get(field) != \
                    value and not (field == "sliding_window" and family == "qwen2"):
                failures.append(f"{family}: exported config.json has {field} = "
                                f"{exported_config.get(field)!r}, not {value!r}")
        state, shards = load_folder(out)
        check = ForCausalLM(exported_config)
        if config.get("tie_word_embeddings") and "lm_head.weight" not in state:
            state["lm_head.weight"] = state["model.embed_tokens.weight"]
        check.load_state_dict(state, strict=True)
        with torch.no_grad():
            logits, loss = check(x.long(), y.long())
            expected, _ = model(x.long(), y.long())
        drift = (logits - expected).abs().max().item()
        print(f"{family}: exported folder {sorted(os.listdir(out))}, {shards} shards, "
              f"{len(state)} tensors load strictly; max |logits - pytorch's| {drift:.2e}")
        if shards < 2 or drift > 1e-5:
            failures.append(f"{family}: export: {shards} shards, logits differ by {drift:.2e}")

        # bf16: the fp32 export rounded, tensor for tensor.
        out16 = out + "-bf16"
        subprocess.run([sys.executable, "-m", "zeroc", "checkpoint", "export",
                        exes[3, 2] + ".saved", "--hf", out16, "--config", folder,
                        "--dtype", "bf16"], check=True, stdout=subprocess.DEVNULL)
        state16, _ = load_folder(out16)
        bad = [n for n, t in state16.items()
               if t.dtype != torch.bfloat16 or not torch.equal(t, state[n].to(torch.bfloat16))]
        if bad:
            failures.append(f"{family}: bf16 export differs from fp32 rounded: {bad[:3]}")

        if family == "llama3.2":
            # The folder as --init: one step's loss is the loaded model's.
            log = exes[0, 1] + "-reinit.jsonl"
            subprocess.run(mpirun(args) + ["-np", "1", exes[0, 1], "--data", text,
                                           "--data-format=text", "--init", out,
                                           "--steps", "1", "--log-json", log, "--quiet"],
                           check=True, stdout=subprocess.DEVNULL)
            first = [json.loads(line)["loss"] for line in open(log) if '"loss"' in line][0]
            w = abs(first - loss.item()) / loss.item()
            print(f"{family}: the folder as --init: loss {first:.6f}, pytorch's {loss.item():.6f}"
                  f" ({w:.2e})")
            if w > 1e-5:
                failures.append(f"{family}: --init of the exported folder: {w:.2e}")

    harness.finish(failures, "every family matches PyTorch")


if __name__ == "__main__":
    main()
