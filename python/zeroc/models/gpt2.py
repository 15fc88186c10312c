"""nanoGPT's GPT-2 as `train` dialect IR.

Writes one training step of a GPT-2 (Karpathy's nanoGPT: learned position
embeddings, pre-LayerNorm blocks, GELU MLP, lm_head tied to the token
embedding, no dropout) as `train` IR text:

    PYTHONPATH=python python3 -m zeroc.models.gpt2 --preset 124M -o gpt2.mlir

Parameters carry PyTorch's state-dict names and shapes (nn.Linear weights are
[out_features, in_features]) and nanoGPT's initialization: normal with std
0.02, the residual projections (c_proj) with 0.02/sqrt(2 n_layer), biases
zeros, LayerNorm weights ones. Weight decay applies to parameters of rank 2
and more. From Python:

    from zeroc.models import gpt2
    text = gpt2.build(gpt2.GPT2Config.preset("124M", batch_size=16))
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

SIZE_FIELDS = ("n_layer", "n_head", "n_embd", "vocab_size", "block_size", "batch_size")
"""The `GPT2Config` fields a preset sets."""

PRESETS: dict[str, dict[str, int]] = {
    name: dict(zip(SIZE_FIELDS, sizes)) for name, sizes in [
        ("tiny", (2, 3, 48, 256, 17, 12)),
        ("124M", (12, 12, 768, 50257, 1024, 8)),
        ("350M", (24, 16, 1024, 50257, 1024, 8)),
        ("774M", (36, 20, 1280, 50257, 1024, 8)),
        ("1558M", (48, 25, 1600, 50257, 1024, 8)),
    ]
}
"""Model sizes by preset name; the GPT-2 ones are OpenAI's four."""

LAYERNORM_EPS = 1e-5
INIT_STD = 0.02


@dataclass(frozen=True)
class GPT2Config:
    """A GPT-2's sizes and numerics; the defaults are the ``tiny`` preset.

    `batch_size` is the global number of sequences per step, each of
    `block_size` tokens. `gelu` is ``tanh`` (GPT-2's approximation) or
    ``erf``; `dtype` (``fp32`` or ``bf16``) is the element type of every
    float tensor.
    `micro_batches` (1 by default) asks for gradient accumulation: the
    module records it as `train.micro_batches`, which zeroc's
    `--grad-accum` defaults to (and overrides).
    """

    n_layer: int = 2
    n_head: int = 3
    n_embd: int = 48
    vocab_size: int = 256
    block_size: int = 17
    batch_size: int = 12
    gelu: str = "tanh"
    dtype: str = "fp32"
    micro_batches: int = 1

    def __post_init__(self) -> None:
        for field in SIZE_FIELDS:
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.gelu not in ("tanh", "erf"):
            raise ValueError(f"gelu must be tanh or erf, got {self.gelu!r}")
        if self.dtype not in ELEMENT_TYPES:
            raise ValueError(f"dtype must be one of {', '.join(ELEMENT_TYPES)}, got {self.dtype!r}")
        check_micro_batches(self.micro_batches, self.batch_size)

    @classmethod
    def preset(cls, name: str, **overrides) -> GPT2Config:
        """The preset `name` (see `PRESETS`) with some fields replaced."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r} ({', '.join(PRESETS)})")
        return cls(**{**PRESETS[name], **overrides})

    @property
    def head_dim(self) -> int:
        """The width of one attention head."""
        return self.n_embd // self.n_head

    @property
    def element_type(self) -> str:
        """The MLIR element type of float tensors (f32 or bf16)."""
        return ELEMENT_TYPES[self.dtype]


def parameters(config: GPT2Config) -> list[Param]:
    """The parameters in nanoGPT's state-dict order (without the tied lm_head)."""
    C, dtype = config.n_embd, config.element_type
    proj_std = INIT_STD / math.sqrt(2 * config.n_layer)

    def weight(name: str, *shape: int, std: float = INIT_STD) -> Param:
        return Param(name, TensorType(shape, dtype), "normal", std=std, decay=True)

    def bias(name: str, size: int) -> Param:
        return Param(name, TensorType((size,), dtype), "zeros")

    def layernorm(prefix: str) -> list[Param]:
        return [Param(f"{prefix}.weight", TensorType((C,), dtype), "ones"),
                bias(f"{prefix}.bias", C)]

    params = [weight("transformer.wte.weight", config.vocab_size, C),
              weight("transformer.wpe.weight", config.block_size, C)]
    for i in range(config.n_layer):
        h = f"transformer.h.{i}"
        params += layernorm(f"{h}.ln_1")
        params += [weight(f"{h}.attn.c_attn.weight", 3 * C, C),
                   bias(f"{h}.attn.c_attn.bias", 3 * C),
                   weight(f"{h}.attn.c_proj.weight", C, C, std=proj_std),
                   bias(f"{h}.attn.c_proj.bias", C)]
        params += layernorm(f"{h}.ln_2")
        params += [weight(f"{h}.mlp.c_fc.weight", 4 * C, C),
                   bias(f"{h}.mlp.c_fc.bias", 4 * C),
                   weight(f"{h}.mlp.c_proj.weight", C, 4 * C, std=proj_std),
                   bias(f"{h}.mlp.c_proj.bias", C)]
    params += layernorm("transformer.ln_f")
    return params


def parameter_count(config: GPT2Config) -> int:
    """The number of trainable scalars (124,439,808 for the 124M preset)."""
    C, L = config.n_embd, config.n_layer
    return (config.vocab_size + config.block_size) * C + L * (12 * C * C + 13 * C) + 2 * C


def write(config: GPT2Config, out: TextIO, optimizer: OptimizerConfig | None = None) -> None:
    """Writes the model as `train` IR to the text file `out`.

    `optimizer` defaults to AdamW with nanoGPT's hyper-parameters
    (`OptimizerConfig()`).
    """
    optimizer = optimizer if optimizer is not None else OptimizerConfig()
    B, T, C = config.batch_size, config.block_size, config.n_embd
    H, D = config.n_head, config.head_dim

    module = ModuleWriter(out)
    module.comment([
        "GPT-2 (nanoGPT), written by zeroc.models.gpt2:",
        f"n_layer {config.n_layer}, n_head {H}, n_embd {C}, vocab {config.vocab_size}, "
        f"block {T}, batch {B}, {config.element_type}, gelu {config.gelu};",
        f"{parameter_count(config):,} parameters (lm_head tied to transformer.wte.weight).",
    ])
    module.open({"train.model": "gpt2",
                 **({"train.micro_batches": config.micro_batches}
                    if config.micro_batches > 1 else {})},
                tied={"lm_head.weight": "transformer.wte.weight"})
    module.optimizer(optimizer)
    for param in parameters(config):
        module.param(param)

    ids = TensorType((B, T), "i32")
    f, (tokens, targets) = module.function(
        "forward", [("tokens", ids), ("targets", ids)], TensorType((), "f32"), ["train.forward"])

    # Value names follow examples/gpt2-tiny.mlir; `s` is a block's suffix.
    def linear(x: Value, prefix: str, name: str, s: str) -> Value:
        w = f.read(f"w{name}{s}", f"{prefix}.weight")
        b = f.read(f"b{name}{s}", f"{prefix}.bias")
        return f.add(f"{name}{s}", f.matmul(f"{name}0{s}", x, w, transpose_rhs=True), b)

    def layernorm(x: Value, prefix: str, tag: str, name: str, s: str = "") -> Value:
        w = f.read(f"{tag}w{s}", f"{prefix}.weight")
        b = f.read(f"{tag}b{s}", f"{prefix}.bias")
        return f.layernorm(f"{name}{s}", x, w, b, LAYERNORM_EPS)

    f.comment("Token and position embeddings.")
    wte = f.read("wte", "transformer.wte.weight")
    wpe = f.read("wpe", "transformer.wpe.weight")
    x = f.add("x0", f.embedding("tok", wte, tokens), wpe)

    for i in range(config.n_layer):
        h, s = f"transformer.h.{i}", f"_{i}"
        f.comment(f"Block {i}: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)).")
        h1 = layernorm(x, f"{h}.ln_1", "ln1", "h1", s)
        qkv = linear(h1, f"{h}.attn.c_attn", "qkv", s)
        parts = f.split([f"{n}{s}" for n in "qkv"], qkv, dim=2)
        parts = [f.reshape(f"{n}4{s}", p, (B, T, H, D)) for n, p in zip("qkv", parts)]
        heads = [f.transpose(f"{n}h{s}", p, (0, 2, 1, 3)) for n, p in zip("qkv", parts)]
        att = f.attention(f"att{s}", *heads, scale=1 / math.sqrt(D), causal=True)
        atb = f.transpose(f"atb{s}", att, (0, 2, 1, 3))
        y = f.reshape(f"y{s}", atb, (B, T, C))
        x = f.add(f"x{2 * i + 1}", x, linear(y, f"{h}.attn.c_proj", "ap", s))
        h2 = layernorm(x, f"{h}.ln_2", "ln2", "h2", s)
        g = f.gelu(f"g{s}", linear(h2, f"{h}.mlp.c_fc", "fc", s), config.gelu)
        x = f.add(f"x{2 * i + 2}", x, linear(g, f"{h}.mlp.c_proj", "mp", s))

    f.comment("Final LayerNorm, the lm_head tied to the token embedding, and the loss.")
    hf = layernorm(x, "transformer.ln_f", "lnf", "hf")
    logits = f.matmul("logits", hf, wte, transpose_rhs=True)
    f.ret(f.cross_entropy("loss", logits, targets))
    module.close()


def build(config: GPT2Config, optimizer: OptimizerConfig | None = None) -> str:
    """The model as `train` IR text (see `write`)."""
    out = io.StringIO()
    write(config, out, optimizer)
    return out.getvalue()


def _parser() -> argparse.ArgumentParser:
    presets = "\n".join(
        f"  {name:>5}: {p['n_layer']} layers, {p['n_head']} heads, n_embd {p['n_embd']}, "
        f"vocab {p['vocab_size']}, block {p['block_size']}, batch {p['batch_size']}"
        for name, p in PRESETS.items())
    parser = argparse.ArgumentParser(
        prog="python3 -m zeroc.models.gpt2",
        description="Write a nanoGPT-style GPT-2 training step as `train` dialect IR.",
        epilog=f"presets:\n{presets}", formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False)
    parser.add_argument("-o", "--output", default="-", metavar="FILE",
                        help="output file; '-' (the default) is stdout")

    model = parser.add_argument_group("model")
    model.add_argument("--preset", choices=PRESETS, default="tiny",
                       help="model sizes to start from (default: tiny)")
    for flag, field, what in [("--n-layer", "n_layer", "transformer blocks"),
                              ("--n-head", "n_head", "attention heads"),
                              ("--n-embd", "n_embd", "embedding width"),
                              ("--vocab-size", "vocab_size", "vocabulary size"),
                              ("--block-size", "block_size", "sequence length"),
                              ("--batch-size", "batch_size",
                               "global number of sequences per step, a default: "
                               "zeroc's --micro-batch-size or --global-batch-size "
                               "sets another")]:
        model.add_argument(flag, dest=field, type=int, metavar="N",
                           help=f"{what} (overrides the preset)")
    model.add_argument("--gelu", choices=("tanh", "erf"), default="tanh",
                       help="GELU formula (default: tanh, GPT-2's approximation)")
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


def _write_file(path: str, config: GPT2Config, optimizer: OptimizerConfig) -> None:
    """Writes to a temporary file next to `path`, then renames it to `path`."""
    with atomic_open(path, "w", encoding="utf-8") as out:
        write(config, out, optimizer)


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (argparse exits with 2)."""
    parser = _parser()
    args = parser.parse_args(argv)
    cli.check_schedule_arguments(parser, args)
    sizes = {k: getattr(args, k) for k in SIZE_FIELDS if getattr(args, k) is not None}
    try:
        config = GPT2Config.preset(args.preset, gelu=args.gelu, dtype=args.dtype,
                                    micro_batches=args.micro_batches, **sizes)
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
        _write_file(args.output, config, optimizer)
    except OSError as error:
        print(f"{parser.prog}: error: cannot write {args.output}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
