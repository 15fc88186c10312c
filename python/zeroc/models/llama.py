"""Llama-class models (Hugging Face's LlamaForCausalLM) as `train` dialect IR.

Writes one training step of a Llama (Llama 3, and the shape of Mistral,
Qwen and llama2.c's models): RMSNorm before attention and MLP, rotary
position embeddings (rotate-half, as Hugging Face), grouped-query attention
(fewer key/value heads than query heads), a SwiGLU MLP, no biases, a final
RMSNorm and an output layer tied to the embedding or not:

    PYTHONPATH=python python3 -m zeroc.models.llama --preset llama3-8b --dtype bf16 -o llama3-8b.mlir

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

PRESETS: dict[str, dict] = {
    # Published shapes (the models' config.json on the Hugging Face hub);
    # block and batch are this builder's choice for a training step.
    "tiny": dict(n_layer=2, dim=48, n_head=4, n_kv_head=2, ffn_dim=112, vocab_size=256,
                 block_size=16, batch_size=8, rope_theta=10000.0, norm_eps=1e-5,
                 tie_embeddings=False),
    "llama3.2-1b": dict(n_layer=16, dim=2048, n_head=32, n_kv_head=8, ffn_dim=8192,
                        vocab_size=128256, block_size=2048, batch_size=8,
                        rope_theta=500000.0, norm_eps=1e-5, tie_embeddings=True),
    "llama3-8b": dict(n_layer=32, dim=4096, n_head=32, n_kv_head=8, ffn_dim=14336,
                      vocab_size=128256, block_size=8192, batch_size=8,
                      rope_theta=500000.0, norm_eps=1e-5, tie_embeddings=False),
    "llama3-70b": dict(n_layer=80, dim=8192, n_head=64, n_kv_head=8, ffn_dim=28672,
                       vocab_size=128256, block_size=8192, batch_size=8,
                       rope_theta=500000.0, norm_eps=1e-5, tie_embeddings=False),
}
"""Model sizes by preset name."""

INIT_STD = 0.02


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

    def __post_init__(self) -> None:
        for field in SIZE_FIELDS:
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.dim % self.n_head:
            raise ValueError(f"dim ({self.dim}) must be divisible by n_head ({self.n_head})")
        if self.n_head % self.n_kv_head:
            raise ValueError(f"n_head ({self.n_head}) must be a multiple of n_kv_head "
                             f"({self.n_kv_head})")
        if self.head_dim % 2:
            raise ValueError(f"the head dimension dim / n_head = {self.head_dim} must be even "
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
    def head_dim(self) -> int:
        """The width of one attention head."""
        return self.dim // self.n_head

    @property
    def element_type(self) -> str:
        """The MLIR element type of float tensors (f32 or bf16)."""
        return ELEMENT_TYPES[self.dtype]


def parameters(config: LlamaConfig) -> list[Param]:
    """The parameters in LlamaForCausalLM's state-dict order (without
    lm_head.weight when it is tied to the embedding)."""
    C, D, dtype = config.dim, config.head_dim, config.element_type
    q_dim, kv_dim = config.n_head * D, config.n_kv_head * D

    def weight(name: str, *shape: int) -> Param:
        return Param(name, TensorType(shape, dtype), "normal", std=INIT_STD, decay=True)

    def norm(name: str) -> Param:
        return Param(name, TensorType((C,), dtype), "ones")

    params = [weight("model.embed_tokens.weight", config.vocab_size, C)]
    for i in range(config.n_layer):
        layer = f"model.layers.{i}"
        params += [weight(f"{layer}.self_attn.q_proj.weight", q_dim, C),
                   weight(f"{layer}.self_attn.k_proj.weight", kv_dim, C),
                   weight(f"{layer}.self_attn.v_proj.weight", kv_dim, C),
                   weight(f"{layer}.self_attn.o_proj.weight", C, q_dim),
                   weight(f"{layer}.mlp.gate_proj.weight", config.ffn_dim, C),
                   weight(f"{layer}.mlp.up_proj.weight", config.ffn_dim, C),
                   weight(f"{layer}.mlp.down_proj.weight", C, config.ffn_dim),
                   norm(f"{layer}.input_layernorm.weight"),
                   norm(f"{layer}.post_attention_layernorm.weight")]
    params.append(norm("model.norm.weight"))
    if not config.tie_embeddings:
        params.append(weight("lm_head.weight", config.vocab_size, C))
    return params


def parameter_count(config: LlamaConfig) -> int:
    """The number of trainable scalars (8,030,261,248 for llama3-8b)."""
    C, D, L = config.dim, config.head_dim, config.n_layer
    attention = 2 * C * config.n_head * D + 2 * C * config.n_kv_head * D
    per_layer = attention + 3 * C * config.ffn_dim + 2 * C
    embeddings = config.vocab_size * C * (1 if config.tie_embeddings else 2)
    return embeddings + L * per_layer + C


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

    def linear(x: Value, param: str, name: str) -> Value:
        w = f.read(f"w{name}", param)
        return f.matmul(name, x, w, transpose_rhs=True)

    def rmsnorm(x: Value, param: str, name: str) -> Value:
        return f.rmsnorm(name, x, f.read(f"w{name}", param), config.norm_eps)

    def dropped(x: Value, name: str) -> Value:
        if not config.dropout:
            return x
        return f.dropout(name, x, config.dropout, (config.dropout_seed << 20) | next(sites))

    def heads(x: Value, n: int, name: str, s: str, rotate: bool) -> Value:
        """[B, T, n*D] -> [B, n, T, D], rotated by position when `rotate`."""
        x = f.reshape(f"{name}4{s}", x, (B, T, n, D))
        if rotate:
            x = f.rope(f"{name}r{s}", x, theta=config.rope_theta, seq_dim=1,
                       style="rotate_half")
        return f.transpose(f"{name}h{s}", x, (0, 2, 1, 3))

    f.comment("Token embeddings.")
    embed = f.read("embed", "model.embed_tokens.weight")
    x = f.embedding("x0", embed, tokens)

    for i in range(config.n_layer):
        layer, s = f"model.layers.{i}", f"_{i}"
        f.comment(f"Layer {i}: x = x + attn(norm(x)); x = x + mlp(norm(x)).")
        h = rmsnorm(x, f"{layer}.input_layernorm.weight", f"h{s}")
        q = heads(linear(h, f"{layer}.self_attn.q_proj.weight", f"q{s}"), H, "q", s, True)
        k = heads(linear(h, f"{layer}.self_attn.k_proj.weight", f"k{s}"), KV, "k", s, True)
        v = heads(linear(h, f"{layer}.self_attn.v_proj.weight", f"v{s}"), KV, "v", s, False)
        att = f.attention(f"att{s}", q, k, v, scale=1 / math.sqrt(D), causal=True)
        y = f.reshape(f"y{s}", f.transpose(f"atb{s}", att, (0, 2, 1, 3)), (B, T, H * D))
        o = dropped(linear(y, f"{layer}.self_attn.o_proj.weight", f"o{s}"), f"od{s}")
        x = f.add(f"x{2 * i + 1}", x, o)
        h2 = rmsnorm(x, f"{layer}.post_attention_layernorm.weight", f"h2{s}")
        gate = linear(h2, f"{layer}.mlp.gate_proj.weight", f"gate{s}")
        up = linear(h2, f"{layer}.mlp.up_proj.weight", f"up{s}")
        m = f.mul(f"m{s}", f.silu(f"act{s}", gate), up)
        d = dropped(linear(m, f"{layer}.mlp.down_proj.weight", f"down{s}"), f"dd{s}")
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
        f"  {name:>11}: {p['n_layer']} layers, dim {p['dim']}, {p['n_head']} heads, "
        f"{p['n_kv_head']} kv heads, ffn {p['ffn_dim']}, vocab {p['vocab_size']}, "
        f"theta {p['rope_theta']:g}, {'tied' if p['tie_embeddings'] else 'untied'}, "
        f"block {p['block_size']}, batch {p['batch_size']}"
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
    model.add_argument("--preset", choices=PRESETS, default="tiny",
                       help="model sizes to start from (default: tiny)")
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
    try:
        config = LlamaConfig.preset(args.preset, dtype=args.dtype, dropout=args.dropout,
                                    dropout_seed=args.dropout_seed,
                                    micro_batches=args.micro_batches, **fields)
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
