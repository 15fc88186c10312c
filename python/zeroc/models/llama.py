"""Llama-class models (Hugging Face's LlamaForCausalLM) as `train` dialect IR.

Writes one training step of a Llama (Llama 3, and the shape of Mistral,
Qwen and llama2.c's models): RMSNorm before attention and MLP, rotary
position embeddings (rotate-half, as Hugging Face), grouped-query attention
(fewer key/value heads than query heads), a SwiGLU MLP, a final RMSNorm and
an output layer tied to the embedding or not; and the family's variants
(Llama 3.1/3.2's llama3 rope scaling and linear scaling, Qwen2's q/k/v
biases, Llama's attention_bias and mlp_bias, Qwen3's per-head q/k RMSNorm
and explicit head_dim, Mistral's sliding window when it covers the block),
from a preset or a Hugging Face config.json (zeroc.hf):

    PYTHONPATH=python python3 -m zeroc.models.llama --preset llama3-8b --dtype bf16 -o llama3-8b.mlir
    PYTHONPATH=python python3 -m zeroc.models.llama --config path/to/Qwen2.5-0.5B -o qwen.mlir

Parameters carry the names and layouts of Hugging Face's LlamaForCausalLM
state dict (``model.embed_tokens.weight``,
``model.layers.0.self_attn.q_proj.weight`` with nn.Linear's [out, in]
layout, ``model.layers.0.mlp.gate_proj.weight``, ``model.norm.weight``,
``lm_head.weight``), so weights move between zeroc and the Hugging Face
ecosystem; the initialization is Hugging Face's (normal with std 0.02,
RMSNorm weights ones). Weight decay applies to parameters of rank 2 and
more. From Python:

    from zeroc.models import llama
    text = llama.build(llama.LlamaConfig.preset("llama3.2-1b", block_size=2048))
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
from dataclasses import dataclass
from typing import TextIO

from zeroc import cli
from zeroc.files import atomic_open
from zeroc.ir import ELEMENT_TYPES, ModuleWriter, check_micro_batches, OptimizerConfig, Param, TensorType, Value

SIZE_FIELDS = ("n_layer", "dim", "n_head", "n_kv_head", "ffn_dim", "vocab_size",
               "block_size", "batch_size")
"""The `LlamaConfig` integer fields a preset sets."""

LLAMA3_2_ROPE = ("llama3", 32.0, 1.0, 4.0, 8192)
"""Llama 3.2's published rope_scaling: type, factor, low_freq_factor,
high_freq_factor, original_max_position_embeddings."""

PRESETS: dict[str, dict] = {
    # Published shapes (the models' config.json on the Hugging Face hub);
    # block and batch are this builder's choice for a training step.
    "tiny": dict(n_layer=2, dim=48, n_head=4, n_kv_head=2, ffn_dim=112, vocab_size=256,
                 block_size=16, batch_size=8, rope_theta=10000.0, norm_eps=1e-5,
                 tie_embeddings=False),
    "smollm2-135m": dict(n_layer=30, dim=576, n_head=9, n_kv_head=3, ffn_dim=1536,
                         vocab_size=49152, block_size=2048, batch_size=8,
                         rope_theta=100000.0, norm_eps=1e-5, tie_embeddings=True,
                         init_std=0.041666666666666664),
    "smollm2-360m": dict(n_layer=32, dim=960, n_head=15, n_kv_head=5, ffn_dim=2560,
                         vocab_size=49152, block_size=2048, batch_size=8,
                         rope_theta=100000.0, norm_eps=1e-5, tie_embeddings=True),
    "qwen2.5-0.5b": dict(n_layer=24, dim=896, n_head=14, n_kv_head=2, ffn_dim=4864,
                         vocab_size=151936, block_size=2048, batch_size=8,
                         rope_theta=1000000.0, norm_eps=1e-6, tie_embeddings=True,
                         qkv_bias=True),
    "qwen3-0.6b": dict(n_layer=28, dim=1024, n_head=16, n_kv_head=8, ffn_dim=3072,
                       vocab_size=151936, block_size=2048, batch_size=8,
                       rope_theta=1000000.0, norm_eps=1e-6, tie_embeddings=True,
                       head_dim=128, qk_norm=True),
    "tinyllama-1.1b": dict(n_layer=22, dim=2048, n_head=32, n_kv_head=4, ffn_dim=5632,
                           vocab_size=32000, block_size=2048, batch_size=8,
                           rope_theta=10000.0, norm_eps=1e-5, tie_embeddings=False),
    "llama3.2-1b": dict(n_layer=16, dim=2048, n_head=32, n_kv_head=8, ffn_dim=8192,
                        vocab_size=128256, block_size=2048, batch_size=8,
                        rope_theta=500000.0, norm_eps=1e-5, tie_embeddings=True,
                        rope_scaling=LLAMA3_2_ROPE),
    "llama3.2-3b": dict(n_layer=28, dim=3072, n_head=24, n_kv_head=8, ffn_dim=8192,
                        vocab_size=128256, block_size=2048, batch_size=8,
                        rope_theta=500000.0, norm_eps=1e-5, tie_embeddings=True,
                        rope_scaling=LLAMA3_2_ROPE),
    "mistral-7b": dict(n_layer=32, dim=4096, n_head=32, n_kv_head=8, ffn_dim=14336,
                       vocab_size=32000, block_size=4096, batch_size=8,
                       rope_theta=10000.0, norm_eps=1e-5, tie_embeddings=False,
                       sliding_window=4096),
    "llama3-8b": dict(n_layer=32, dim=4096, n_head=32, n_kv_head=8, ffn_dim=14336,
                      vocab_size=128256, block_size=8192, batch_size=8,
                      rope_theta=500000.0, norm_eps=1e-5, tie_embeddings=False),
    "llama3-70b": dict(n_layer=80, dim=8192, n_head=64, n_kv_head=8, ffn_dim=28672,
                       vocab_size=128256, block_size=8192, batch_size=8,
                       rope_theta=500000.0, norm_eps=1e-5, tie_embeddings=False),
}
"""Model sizes by preset name."""

INIT_STD = 0.02


def check_rope_scaling(scaling) -> None:
    """Raises ValueError unless `scaling` is None, ``("linear", factor)``
    or ``("llama3", factor, low_freq_factor, high_freq_factor,
    original_max_position_embeddings)`` with the published constraints."""
    if scaling is None:
        return
    if not isinstance(scaling, tuple) or not scaling or scaling[0] not in ("linear", "llama3"):
        raise ValueError(f"rope_scaling must be None, ('linear', factor) or ('llama3', factor, "
                         f"low_freq_factor, high_freq_factor, original), got {scaling!r}")
    numbers = scaling[1:]
    if len(numbers) != (1 if scaling[0] == "linear" else 4) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
            or v <= 0 for v in numbers):
        raise ValueError(f"rope_scaling {scaling!r}: positive numbers expected")
    if scaling[0] == "llama3" and not numbers[1] < numbers[2]:
        raise ValueError(f"rope_scaling {scaling!r}: low_freq_factor must be smaller than "
                         "high_freq_factor")


@dataclass(frozen=True)
class LlamaConfig:
    """A Llama's sizes and numerics; the defaults are the ``tiny`` preset.

    `dim` is Hugging Face's hidden_size, `ffn_dim` its intermediate_size,
    `n_kv_head` its num_key_value_heads (a divisor of `n_head`); the head
    dimension is dim / n_head. `batch_size` is the global number of
    sequences per step, each of `block_size` tokens. `dropout` (0 by
    default) drops the output of every attention and MLP before it is
    added to the residual stream (nanoGPT's placement; Hugging Face's
    attention_dropout on the attention probabilities is not modelled), each
    site with its own mask stream derived from `dropout_seed`.
    `micro_batches` (1 by default) asks for gradient accumulation: the
    module records it as `train.micro_batches`, which zeroc's
    `--grad-accum` defaults to (and overrides).

    The Llama family's variants (zeroc.hf reads them from a config.json):
    `head_dim` (None: dim / n_head; Qwen3 sets it apart), `qkv_bias`
    (biases on q_proj, k_proj and v_proj: Qwen2, and Llama's
    attention_bias with `o_bias`), `mlp_bias` (gate, up and down
    projections), `qk_norm` (Qwen3's per-head RMSNorm of queries and keys
    before the rotary embedding, `self_attn.q_norm.weight` and
    `k_norm.weight` of shape [head_dim]), `rope_scaling` (None, ``("linear",
    factor)`` or ``("llama3", factor, low_freq_factor, high_freq_factor,
    original_max_position_embeddings)``), `sliding_window` (None, or
    Mistral's window, which must be at least `block_size`: then it is full
    causal attention) and `init_std` (Hugging Face's initializer_range).
    """

    n_layer: int = 2
    dim: int = 48
    n_head: int = 4
    n_kv_head: int = 2
    ffn_dim: int = 112
    vocab_size: int = 256
    block_size: int = 16
    batch_size: int = 8
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    tie_embeddings: bool = False
    dropout: float = 0.0
    dropout_seed: int = 0
    dtype: str = "fp32"
    micro_batches: int = 1
    head_dim: int | None = None
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    rope_scaling: tuple | None = None
    sliding_window: int | None = None
    init_std: float = INIT_STD

    def __post_init__(self) -> None:
        for field in SIZE_FIELDS:
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.head_dim is None:
            if self.dim % self.n_head:
                raise ValueError(f"dim ({self.dim}) must be divisible by n_head "
                                 f"({self.n_head}), or head_dim given")
            object.__setattr__(self, "head_dim", self.dim // self.n_head)
        if isinstance(self.head_dim, bool) or not isinstance(self.head_dim, int) or \
                self.head_dim <= 0:
            raise ValueError(f"head_dim must be a positive integer, got {self.head_dim!r}")
        for field in ("qkv_bias", "o_bias", "mlp_bias", "qk_norm"):
            if not isinstance(getattr(self, field), bool):
                raise ValueError(f"{field} must be true or false, got {getattr(self, field)!r}")
        check_rope_scaling(self.rope_scaling)
        if self.sliding_window is not None:
            if isinstance(self.sliding_window, bool) or \
                    not isinstance(self.sliding_window, int) or self.sliding_window <= 0:
                raise ValueError(f"sliding_window must be a positive integer, "
                                 f"got {self.sliding_window!r}")
            if self.sliding_window < self.block_size:
                raise ValueError(
                    f"sliding_window {self.sliding_window} is smaller than the block size "
                    f"{self.block_size}: banded attention is not implemented (a window at "
                    "least the block size is full causal attention; use --block-size "
                    f"{self.sliding_window} or less)")
        if not isinstance(self.init_std, (int, float)) or not math.isfinite(self.init_std) \
                or self.init_std <= 0:
            raise ValueError(f"init_std must be a positive number, got {self.init_std!r}")
        if self.n_head % self.n_kv_head:
            raise ValueError(f"n_head ({self.n_head}) must be a multiple of n_kv_head "
                             f"({self.n_kv_head})")
        if self.head_dim % 2:
            raise ValueError(f"the head dimension {self.head_dim} must be even "
                             "(rotary embeddings rotate pairs)")
        for field in ("rope_theta", "norm_eps"):
            value = getattr(self, field)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{field} must be a positive number, got {value!r}")
        if not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if isinstance(self.dropout_seed, bool) or not isinstance(self.dropout_seed, int) or \
                not 0 <= self.dropout_seed < 2 ** 40:
            raise ValueError(f"dropout_seed must be an integer in [0, 2^40), "
                             f"got {self.dropout_seed!r}")
        if self.dtype not in ELEMENT_TYPES:
            raise ValueError(f"dtype must be one of {', '.join(ELEMENT_TYPES)}, got {self.dtype!r}")
        check_micro_batches(self.micro_batches, self.batch_size)

    @classmethod
    def preset(cls, name: str, **overrides) -> LlamaConfig:
        """The preset `name` (see `PRESETS`) with some fields replaced."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r} ({', '.join(PRESETS)})")
        return cls(**{**PRESETS[name], **overrides})

    @property
    def element_type(self) -> str:
        """The MLIR element type of float tensors (f32 or bf16)."""
        return ELEMENT_TYPES[self.dtype]


def parameters(config: LlamaConfig) -> list[Param]:
    """The parameters in LlamaForCausalLM's state-dict order (without
    lm_head.weight when it is tied to the embedding): biases after their
    weight, Qwen3's q_norm and k_norm after o_proj."""
    C, D, dtype = config.dim, config.head_dim, config.element_type
    q_dim, kv_dim = config.n_head * D, config.n_kv_head * D

    def weight(name: str, *shape: int) -> Param:
        return Param(name, TensorType(shape, dtype), "normal", std=config.init_std, decay=True)

    def norm(name: str, size: int = C) -> Param:
        return Param(name, TensorType((size,), dtype), "ones")

    def linear(name: str, out: int, inp: int, bias: bool) -> list[Param]:
        return [weight(f"{name}.weight", out, inp)] + (
            [Param(f"{name}.bias", TensorType((out,), dtype), "zeros")] if bias else [])

    params = [weight("model.embed_tokens.weight", config.vocab_size, C)]
    for i in range(config.n_layer):
        attn, mlp = f"model.layers.{i}.self_attn", f"model.layers.{i}.mlp"
        params += (linear(f"{attn}.q_proj", q_dim, C, config.qkv_bias)
                   + linear(f"{attn}.k_proj", kv_dim, C, config.qkv_bias)
                   + linear(f"{attn}.v_proj", kv_dim, C, config.qkv_bias)
                   + linear(f"{attn}.o_proj", C, q_dim, config.o_bias))
        if config.qk_norm:
            params += [norm(f"{attn}.q_norm.weight", D), norm(f"{attn}.k_norm.weight", D)]
        params += (linear(f"{mlp}.gate_proj", config.ffn_dim, C, config.mlp_bias)
                   + linear(f"{mlp}.up_proj", config.ffn_dim, C, config.mlp_bias)
                   + linear(f"{mlp}.down_proj", C, config.ffn_dim, config.mlp_bias))
        params += [norm(f"model.layers.{i}.input_layernorm.weight"),
                   norm(f"model.layers.{i}.post_attention_layernorm.weight")]
    params.append(norm("model.norm.weight"))
    if not config.tie_embeddings:
        params.append(weight("lm_head.weight", config.vocab_size, C))
    return params


def parameter_count(config: LlamaConfig) -> int:
    """The number of trainable scalars (8,030,261,248 for llama3-8b)."""
    return sum(math.prod(p.type.shape) for p in parameters(config))


def variants(config: LlamaConfig) -> list[str]:
    """One comment line naming the family variants `config` uses, or none."""
    words = []
    if config.head_dim * config.n_head != config.dim:
        words.append(f"head_dim {config.head_dim}")
    if config.qkv_bias:
        words.append("q/k/v biases")
    if config.o_bias:
        words.append("o_proj bias")
    if config.mlp_bias:
        words.append("MLP biases")
    if config.qk_norm:
        words.append("q/k RMSNorm per head")
    if config.rope_scaling is not None:
        kind, *numbers = config.rope_scaling
        words.append(f"rope scaling {kind} " + ", ".join(f"{v:g}" for v in numbers))
    if config.sliding_window is not None:
        words.append(f"sliding window {config.sliding_window} (>= block: full causal)")
    return [", ".join(words) + ";"] if words else []


def write(config: LlamaConfig, out: TextIO, optimizer: OptimizerConfig | None = None) -> None:
    """Writes the model as `train` IR to the text file `out`.

    `optimizer` defaults to AdamW (`OptimizerConfig()`).
    """
    optimizer = optimizer if optimizer is not None else OptimizerConfig()
    B, T, C = config.batch_size, config.block_size, config.dim
    H, KV, D = config.n_head, config.n_kv_head, config.head_dim

    module = ModuleWriter(out)
    tied = "tied to" if config.tie_embeddings else "separate from"
    dropout = f", dropout {config.dropout}" if config.dropout else ""
    module.comment([
        "Llama (Hugging Face LlamaForCausalLM), written by zeroc.models.llama:",
        f"n_layer {config.n_layer}, dim {C}, n_head {H}, n_kv_head {KV}, ffn {config.ffn_dim}, "
        f"vocab {config.vocab_size}, block {T}, batch {B}, {config.element_type}, "
        f"rope theta {config.rope_theta:g}, rms eps {config.norm_eps:g}{dropout};",
        *variants(config),
        f"{parameter_count(config):,} parameters (lm_head {tied} the embedding).",
    ])
    module.open({"train.model": "llama",
                 **({"train.micro_batches": config.micro_batches}
                    if config.micro_batches > 1 else {})},
                tied=({"lm_head.weight": "model.embed_tokens.weight"}
                      if config.tie_embeddings else None))
    module.optimizer(optimizer)
    for param in parameters(config):
        module.param(param)

    ids = TensorType((B, T), "i32")
    f, (tokens, targets) = module.function(
        "forward", [("tokens", ids), ("targets", ids)], TensorType((), "f32"), ["train.forward"])
    sites = iter(range(1 << 20))
    scaling = None if config.rope_scaling is None else tuple(
        float(v) for v in config.rope_scaling[1:])

    def linear(x: Value, prefix: str, name: str, bias: bool) -> Value:
        w = f.read(f"w{name}", f"{prefix}.weight")
        if not bias:
            return f.matmul(name, x, w, transpose_rhs=True)
        b = f.read(f"b{name}", f"{prefix}.bias")
        return f.add(name, f.matmul(f"{name}m", x, w, transpose_rhs=True), b)

    def rmsnorm(x: Value, param: str, name: str) -> Value:
        return f.rmsnorm(name, x, f.read(f"w{name}", param), config.norm_eps)

    def dropped(x: Value, name: str) -> Value:
        if not config.dropout:
            return x
        return f.dropout(name, x, config.dropout, (config.dropout_seed << 20) | next(sites))

    def heads(x: Value, n: int, name: str, s: str, rotate: bool, norm: str | None) -> Value:
        """[B, T, n*D] -> [B, n, T, D], RMSNorm'd per head by the parameter
        `norm` (Qwen3) and rotated by position when `rotate`."""
        x = f.reshape(f"{name}4{s}", x, (B, T, n, D))
        if norm is not None:
            x = rmsnorm(x, norm, f"{name}n{s}")
        if rotate:
            x = f.rope(f"{name}r{s}", x, theta=config.rope_theta, seq_dim=1,
                       style="rotate_half", scaling=scaling)
        return f.transpose(f"{name}h{s}", x, (0, 2, 1, 3))

    f.comment("Token embeddings.")
    embed = f.read("embed", "model.embed_tokens.weight")
    x = f.embedding("x0", embed, tokens)

    for i in range(config.n_layer):
        layer, s = f"model.layers.{i}", f"_{i}"
        attn, mlp = f"{layer}.self_attn", f"{layer}.mlp"
        qkv_bias, mlp_bias = config.qkv_bias, config.mlp_bias
        f.comment(f"Layer {i}: x = x + attn(norm(x)); x = x + mlp(norm(x)).")
        h = rmsnorm(x, f"{layer}.input_layernorm.weight", f"h{s}")
        q = heads(linear(h, f"{attn}.q_proj", f"q{s}", qkv_bias), H, "q", s, True,
                  f"{attn}.q_norm.weight" if config.qk_norm else None)
        k = heads(linear(h, f"{attn}.k_proj", f"k{s}", qkv_bias), KV, "k", s, True,
                  f"{attn}.k_norm.weight" if config.qk_norm else None)
        v = heads(linear(h, f"{attn}.v_proj", f"v{s}", qkv_bias), KV, "v", s, False, None)
        att = f.attention(f"att{s}", q, k, v, scale=1 / math.sqrt(D), causal=True)
        y = f.reshape(f"y{s}", f.transpose(f"atb{s}", att, (0, 2, 1, 3)), (B, T, H * D))
        o = dropped(linear(y, f"{attn}.o_proj", f"o{s}", config.o_bias), f"od{s}")
        x = f.add(f"x{2 * i + 1}", x, o)
        h2 = rmsnorm(x, f"{layer}.post_attention_layernorm.weight", f"h2{s}")
        gate = linear(h2, f"{mlp}.gate_proj", f"gate{s}", mlp_bias)
        up = linear(h2, f"{mlp}.up_proj", f"up{s}", mlp_bias)
        m = f.mul(f"m{s}", f.silu(f"act{s}", gate), up)
        d = dropped(linear(m, f"{mlp}.down_proj", f"down{s}", mlp_bias), f"dd{s}")
        x = f.add(f"x{2 * i + 2}", x, d)

    f.comment("Final RMSNorm, the output layer and the loss.")
    hf = rmsnorm(x, "model.norm.weight", "hf")
    head = embed if config.tie_embeddings else f.read("head", "lm_head.weight")
    logits = f.matmul("logits", hf, head, transpose_rhs=True)
    f.ret(f.cross_entropy("loss", logits, targets))
    module.close()


def build(config: LlamaConfig, optimizer: OptimizerConfig | None = None) -> str:
    """The model as `train` IR text (see `write`)."""
    out = io.StringIO()
    write(config, out, optimizer)
    return out.getvalue()


def _parser() -> argparse.ArgumentParser:
    presets = "\n".join(
        f"  {name:>14}: {p['n_layer']} layers, dim {p['dim']}, {p['n_head']} heads, "
        f"{p['n_kv_head']} kv heads, ffn {p['ffn_dim']}, vocab {p['vocab_size']}, "
        f"theta {p['rope_theta']:g}, {'tied' if p['tie_embeddings'] else 'untied'}, "
        f"block {p['block_size']}, batch {p['batch_size']}"
        + "".join(f", {v.rstrip(';')}" for v in variants(LlamaConfig(**p)))
        for name, p in PRESETS.items())
    parser = argparse.ArgumentParser(
        prog="python3 -m zeroc.models.llama",
        description="Write a Llama (Hugging Face LlamaForCausalLM) training step as `train` "
                    "dialect IR.",
        epilog=f"presets:\n{presets}", formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False)
    parser.add_argument("-o", "--output", default="-", metavar="FILE",
                        help="output file; '-' (the default) is stdout")

    model = parser.add_argument_group("model")
    source = model.add_mutually_exclusive_group()
    source.add_argument("--preset", choices=PRESETS,
                        help="model sizes to start from (default: tiny)")
    source.add_argument("--config", metavar="PATH",
                        help="a Hugging Face config.json (model_type llama, qwen2, qwen3 or "
                             "mistral), or the model folder holding one, to start from: every "
                             "field that changes the computation is honoured or refused by "
                             "name (docs/models.md); the block size defaults to "
                             "max_position_embeddings up to 2048")
    for flag, field, what in [("--n-layer", "n_layer", "decoder layers"),
                              ("--dim", "dim", "hidden size"),
                              ("--n-head", "n_head", "query heads"),
                              ("--n-kv-head", "n_kv_head",
                               "key/value heads (a divisor of --n-head)"),
                              ("--ffn-dim", "ffn_dim", "MLP intermediate size"),
                              ("--vocab-size", "vocab_size", "vocabulary size"),
                              ("--block-size", "block_size", "sequence length"),
                              ("--batch-size", "batch_size",
                               "global number of sequences per step, a default: "
                               "zeroc's --micro-batch-size or --global-batch-size "
                               "sets another")]:
        model.add_argument(flag, dest=field, type=int, metavar="N",
                           help=f"{what} (overrides the preset)")
    model.add_argument("--rope-theta", type=float, metavar="X",
                       help="rotary embedding base (overrides the preset)")
    model.add_argument("--norm-eps", type=float, metavar="X",
                       help="RMSNorm epsilon (overrides the preset)")
    tie = model.add_mutually_exclusive_group()
    tie.add_argument("--tie-embeddings", dest="tie_embeddings", action="store_const",
                     const=True, help="output layer tied to the embedding (overrides the preset)")
    tie.add_argument("--no-tie-embeddings", dest="tie_embeddings", action="store_const",
                     const=False, help="a separate lm_head.weight (overrides the preset)")
    model.add_argument("--dropout", type=float, default=0.0, metavar="P",
                       help="dropout of each attention and MLP output (default: 0, none)")
    model.add_argument("--dropout-seed", type=int, default=0, metavar="S",
                       help="seed of the dropout masks (default: 0)")
    model.add_argument("--micro-batches", dest="micro_batches", type=int, default=1,
                       metavar="K",
                       help="gradient accumulation: micro-batches per step, recorded in "
                            "the module as train.micro_batches; zeroc's --grad-accum "
                            "defaults to it and wins over it (default: 1)")
    model.add_argument("--dtype", choices=tuple(ELEMENT_TYPES), default="fp32",
                       help="element type of float tensors (default: fp32); "
                            "the loss is always f32")

    cli.add_optimizer_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (argparse exits with 2)."""
    parser = _parser()
    args = parser.parse_args(argv)
    cli.check_schedule_arguments(parser, args)
    fields = {k: getattr(args, k) for k in SIZE_FIELDS + ("rope_theta", "norm_eps",
                                                          "tie_embeddings")
              if getattr(args, k) is not None}
    common = dict(dtype=args.dtype, dropout=args.dropout, dropout_seed=args.dropout_seed,
                  micro_batches=args.micro_batches)
    try:
        if args.config is not None:
            from zeroc import hf
            try:
                read, ignored, _ = hf.read_config(args.config)
            except hf.HfConfigError as error:
                print(f"{parser.prog}: error: {error}", file=sys.stderr)
                return 1
            if ignored:
                print(f"{parser.prog}: {hf.config_path(args.config)}: ignored (no effect on "
                      f"the computation): {', '.join(ignored)}", file=sys.stderr)
            config = LlamaConfig(**{"block_size": hf.DEFAULT_BLOCK, "batch_size": 8,
                                    **read, **fields, **common})
        else:
            config = LlamaConfig.preset(args.preset or "tiny", **fields, **common)
        optimizer = cli.optimizer_from_args(args)
    except ValueError as error:
        parser.error(str(error))
    if args.output == "-":
        try:
            write(config, sys.stdout, optimizer)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader stopped early (`| head`)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        return 0
    try:
        with atomic_open(args.output, "w", encoding="utf-8") as out:
            write(config, out, optimizer)
    except OSError as error:
        print(f"{parser.prog}: error: cannot write {args.output}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
