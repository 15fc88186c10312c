"""Writing `train` dialect IR as text.

The model builders describe a model with this module's pieces and stream the
result to a text file object, one line at a time:

* `TensorType`: a ranked tensor type such as ``tensor<12x17x48xf32>``;
* `Param`: a ``train.param`` declaration (name, type, initializer, decay);
* `OptimizerConfig`: the ``train.optimizer`` op, validated as its verifier
  does;
* `ModuleWriter` and `FunctionWriter`: the module around them and the body
  of the forward function, op by op. `FunctionWriter` infers every result
  type from its operands, so a builder only names values and picks ops.

Only the standard library is used.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence, TextIO

ELEMENT_TYPES = {"fp32": "f32", "bf16": "bf16"}
"""Element type of float tensors for each ``--dtype`` choice."""


def check_micro_batches(micro_batches, batch_size):
    """Raises ValueError unless micro_batches is a positive integer that
    divides batch_size (a builder's --micro-batches, train.micro_batches)."""
    if isinstance(micro_batches, bool) or not isinstance(micro_batches, int) or micro_batches < 1:
        raise ValueError(f"micro_batches must be a positive integer, got {micro_batches!r}")
    if batch_size % micro_batches:
        raise ValueError(f"micro_batches ({micro_batches}) must divide batch_size "
                         f"({batch_size})")


_FLOAT_ELEMENTS = frozenset(ELEMENT_TYPES.values())
_INDEX_ELEMENTS = frozenset({"i32", "i64"})
_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")  # symbol and attribute names
_SUFFIX_ID = re.compile(r"[0-9]+|[A-Za-z_$.-][A-Za-z0-9_$.-]*")  # SSA value names


def format_float(value: float) -> str:
    """Returns ``repr(value)`` as an MLIR float literal.

    repr() round-trips exactly; MLIR only needs a decimal point before any
    exponent (``1e-08`` becomes ``1.0e-08``).
    """
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    mantissa, e, exponent = repr(value).partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _check_identifier(kind: str, name: str, pattern: re.Pattern = _BARE_ID) -> str:
    if not pattern.fullmatch(name):
        raise ValueError(f"{kind} {name!r} is not a valid MLIR identifier")
    return name


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor type: a shape and an element type (f32, bf16, i32...)."""

    shape: tuple[int, ...]
    element: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(self.shape))
        if any(not isinstance(d, int) or d <= 0 for d in self.shape):
            raise ValueError(f"dimensions must be positive integers, got {self.shape}")

    @property
    def rank(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def numel(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    def with_shape(self, shape: Iterable[int]) -> TensorType:
        """This element type with another shape."""
        return TensorType(tuple(shape), self.element)

    def __str__(self) -> str:
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.element + ">"


@dataclass(frozen=True)
class Param:
    """A trainable parameter: one ``train.param`` declaration.

    `init` is ``zeros``, ``ones`` or ``normal`` (mean 0, standard deviation
    `std`); `decay` marks the parameter for weight decay.
    """

    name: str
    type: TensorType
    init: str
    std: float | None = None
    decay: bool = False

    def __post_init__(self) -> None:
        _check_identifier("parameter name", self.name)
        if self.type.element not in _FLOAT_ELEMENTS:
            raise ValueError(f"parameter {self.name} must be a float tensor, got {self.type}")
        if self.init not in ("zeros", "ones", "normal"):
            raise ValueError(f"unknown initializer {self.init!r} of {self.name}")
        if (self.init == "normal") != (self.std is not None):
            raise ValueError(f"{self.name}: std goes with init = normal, and only with it")
        if self.std is not None and not self.std > 0:
            raise ValueError(f"{self.name}: std must be positive, got {self.std}")

    def declaration(self) -> str:
        """The ``train.param`` op, as one line of text."""
        text = f"train.param @{self.name} : {self.type} init = {self.init}"
        if self.std is not None:
            text += f" std = {format_float(self.std)}"
        if self.decay:
            text += " decay"
        return text


@dataclass(frozen=True)
class OptimizerConfig:
    """The ``train.optimizer`` op: SGD or AdamW, clipping and LR schedule.

    `beta1`, `beta2` and `eps` are AdamW's and `momentum` is SGD's; the other
    optimizer's fields are ignored. `grad_clip` 0 disables clipping.
    `warmup`, `min_lr` and `max_steps` describe the cosine schedule and must
    keep their defaults with the constant one; cosine needs `max_steps`.
    """

    kind: str = "adamw"
    lr: float = 6e-4
    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1e-8
    momentum: float = 0.9
    weight_decay: float = 0.1
    grad_clip: float = 0.0
    schedule: str = "constant"
    warmup: int = 0
    min_lr: float = 0.0
    max_steps: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("adamw", "sgd"):
            raise ValueError(f"unknown optimizer {self.kind!r} (adamw or sgd)")
        if self.schedule not in ("constant", "cosine"):
            raise ValueError(f"unknown lr schedule {self.schedule!r} (constant or cosine)")
        for name in ("lr", "beta1", "beta2", "eps", "momentum", "weight_decay",
                     "grad_clip", "min_lr"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr}")
        hypers = ("beta1", "beta2") if self.kind == "adamw" else ("momentum",)
        for name in hypers:
            if not 0 <= getattr(self, name) < 1:
                raise ValueError(f"{name} must be in [0, 1), got {getattr(self, name)}")
        if self.kind == "adamw" and not self.eps > 0:
            raise ValueError(f"eps must be positive, got {self.eps}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be non-negative, got {self.weight_decay}")
        if self.grad_clip < 0:
            raise ValueError(
                f"grad_clip must be non-negative (0 disables it), got {self.grad_clip}")
        if self.schedule == "constant":
            if self.warmup != 0 or self.min_lr != 0 or self.max_steps is not None:
                raise ValueError("warmup, min_lr and max_steps only apply to the cosine schedule")
            return
        if self.max_steps is None:
            raise ValueError("the cosine schedule needs max_steps")
        for name in ("warmup", "max_steps"):
            if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), int):
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")
        if self.warmup < 0:
            raise ValueError(f"warmup must be non-negative, got {self.warmup}")
        if self.max_steps <= self.warmup:
            raise ValueError(f"max_steps ({self.max_steps}) must exceed warmup ({self.warmup})")
        if not 0 <= self.min_lr <= self.lr:
            raise ValueError(f"min_lr must be in [0, lr], got {self.min_lr}")

    def declaration(self) -> str:
        """The ``train.optimizer`` op, as one line of text."""
        names = ["lr"]
        names += ["beta1", "beta2", "eps"] if self.kind == "adamw" else ["momentum"]
        names.append("weight_decay")
        if self.grad_clip > 0:
            names.append("grad_clip")
        text = " ".join(f"{name} = {format_float(getattr(self, name))}" for name in names)
        if self.schedule == "cosine":
            text += (f" schedule = cosine warmup = {self.warmup}"
                     f" min_lr = {format_float(self.min_lr)} max_steps = {self.max_steps}")
        return f"train.optimizer {self.kind} {text}"


@dataclass(frozen=True)
class Value:
    """An SSA value of the function being written."""

    name: str
    type: TensorType

    def __str__(self) -> str:
        return "%" + self.name


def _broadcast(lhs: Sequence[int], rhs: Sequence[int]) -> tuple[int, ...]:
    """NumPy broadcasting of two shapes, as the dialect's binary ops do."""
    rank = max(len(lhs), len(rhs))
    lhs = (1,) * (rank - len(lhs)) + tuple(lhs)
    rhs = (1,) * (rank - len(rhs)) + tuple(rhs)
    if any(a != b and 1 not in (a, b) for a, b in zip(lhs, rhs)):
        raise ValueError(f"shapes {lhs} and {rhs} do not broadcast")
    return tuple(max(a, b) for a, b in zip(lhs, rhs))


def _mlir_string(text: str) -> str:
    """`text` as an MLIR string literal (quotes, backslashes, control and
    non-ASCII bytes written as \\XX)."""
    return '"' + "".join(chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else f"\\{b:02X}"
                         for b in text.encode()) + '"'


def file_location(filename: str, line: int, column: int = 1, name: str | None = None) -> str:
    """An MLIR location: ``loc("file":line:column)``, inside a name location
    ``loc("name"("file":line:column))`` when `name` is given (the compiler's
    diagnostics print ``file:line:column``)."""
    inner = f"{_mlir_string(filename)}:{int(line)}:{max(int(column), 1)}"
    return f"loc({_mlir_string(name)}({inner}))" if name else f"loc({inner})"


class FunctionWriter:
    """Writes the body of a ``func.func``, one op a line.

    Each op method takes the name of its result (without ``%``), writes the
    op with its inferred types and returns the result as a `Value`. Names
    must be unique in the function.

    `location`, when set (an MLIR location such as ``loc("model.py":12:9)``,
    see `file_location`), is written after each op until it is changed: the
    importer sets it to the PyTorch source line of the node it translates,
    so that the compiler's diagnostics name that line.
    """

    def __init__(self, out: TextIO, params: Mapping[str, Param]):
        self._out = out
        self._params = params
        self._names: set[str] = set()
        self._empty = True
        self.location: str | None = None

    def _line(self, text: str) -> None:
        if self.location:
            text = f"{text} {self.location}"
        self._out.write(f"    {text}\n")
        self._empty = False

    def _define(self, name: str, type_: TensorType) -> Value:
        _check_identifier("value name", name, _SUFFIX_ID)
        if name in self._names:
            raise ValueError(f"%{name} is defined twice")
        self._names.add(name)
        return Value(name, type_)

    def _emit(self, name: str, type_: TensorType, op: str, operands: Sequence[Value],
              text: str) -> Value:
        """Writes ``%name = op text : (operand types) -> type``."""
        result = self._define(name, type_)
        signature = ", ".join(str(v.type) for v in operands)
        self._line(f"{result} = {op} {text} : ({signature}) -> {type_}")
        return result

    def argument(self, name: str, type_: TensorType) -> Value:
        """Declares a function argument (`ModuleWriter.function` writes it)."""
        return self._define(name, type_)

    def comment(self, text: str) -> None:
        """Writes ``// text``, after a blank line unless it opens the body."""
        if not self._empty:
            self._out.write("\n")
        self._out.write(f"    // {text}\n")

    def read(self, name: str, param: str) -> Value:
        """``train.read`` of the parameter named `param`."""
        type_ = self._params[param].type
        result = self._define(name, type_)
        self._line(f"{result} = train.read @{param} : {type_}")
        return result

    def embedding(self, name: str, table: Value, ids: Value) -> Value:
        """Rows of `table` [V, C] gathered by `ids` [d...]: [d..., C]."""
        if table.type.rank != 2 or ids.type.element not in _INDEX_ELEMENTS:
            raise ValueError(f"embedding of {table.type} by {ids.type}")
        type_ = table.type.with_shape(ids.type.shape + table.type.shape[1:])
        result = self._define(name, type_)
        self._line(f"{result} = train.embedding {table}[{ids}] : "
                   f"({table.type}, {ids.type}) -> {type_}")
        return result

    def binary(self, op: str, name: str, lhs: Value, rhs: Value) -> Value:
        """Elementwise ``train.<op>`` (add, sub, mul, div) with NumPy
        broadcasting."""
        if op not in ("add", "sub", "mul", "div"):
            raise ValueError(f"unknown binary op {op!r}")
        if lhs.type.element != rhs.type.element or lhs.type.element not in _FLOAT_ELEMENTS:
            raise ValueError(f"train.{op} of {lhs.type} and {rhs.type}")
        type_ = lhs.type.with_shape(_broadcast(lhs.type.shape, rhs.type.shape))
        return self._emit(name, type_, f"train.{op}", (lhs, rhs), f"{lhs}, {rhs}")

    def add(self, name: str, lhs: Value, rhs: Value) -> Value:
        """Elementwise ``lhs + rhs`` with NumPy broadcasting."""
        return self.binary("add", name, lhs, rhs)

    def sub(self, name: str, lhs: Value, rhs: Value) -> Value:
        """Elementwise ``lhs - rhs`` with NumPy broadcasting."""
        return self.binary("sub", name, lhs, rhs)

    def mul(self, name: str, lhs: Value, rhs: Value) -> Value:
        """Elementwise ``lhs * rhs`` with NumPy broadcasting."""
        return self.binary("mul", name, lhs, rhs)

    def div(self, name: str, lhs: Value, rhs: Value) -> Value:
        """Elementwise ``lhs / rhs`` with NumPy broadcasting."""
        return self.binary("div", name, lhs, rhs)

    def _unary(self, op: str, name: str, x: Value, suffix: str = "") -> Value:
        """``%name = train.<op> %x<suffix> : type`` (same type in and out)."""
        result = self._define(name, x.type)
        self._line(f"{result} = train.{op} {x}{suffix} : {x.type}")
        return result

    def scale(self, name: str, x: Value, factor: float) -> Value:
        """Every element of `x` times the constant `factor`."""
        return self._unary("scale", name, x, f" by {format_float(factor)}")

    def fill(self, name: str, type_: TensorType, value: float) -> Value:
        """A tensor of `type_` with every element `value`."""
        if type_.element not in _FLOAT_ELEMENTS:
            raise ValueError(f"train.fill of {type_}")
        result = self._define(name, type_)
        self._line(f"{result} = train.fill {format_float(value)} : {type_}")
        return result

    def relu(self, name: str, x: Value) -> Value:
        """``max(x, 0)``."""
        return self._unary("relu", name, x)

    def sqrt(self, name: str, x: Value) -> Value:
        """Elementwise square root."""
        return self._unary("sqrt", name, x)

    def softmax(self, name: str, x: Value) -> Value:
        """Softmax over the last dimension."""
        return self._unary("softmax", name, x)

    def causal_mask(self, name: str, x: Value) -> Value:
        """Entries above the diagonal of the last two dimensions set to -inf."""
        if x.type.rank < 2:
            raise ValueError(f"causal_mask of {x.type}")
        return self._unary("causal_mask", name, x)

    def _reduction(self, op: str, name: str, x: Value, dims: Sequence[int]) -> Value:
        dims = sorted(set(dims))
        if any(not 0 <= d < x.type.rank for d in dims):
            raise ValueError(f"train.{op} of {x.type} over dims {dims}")
        type_ = x.type.with_shape(s for i, s in enumerate(x.type.shape) if i not in dims)
        result = self._define(name, type_)
        listed = ", ".join(map(str, dims))
        self._line(f"{result} = train.{op} {x} dims = [{listed}] : {x.type} -> {type_}")
        return result

    def sum(self, name: str, x: Value, dims: Sequence[int]) -> Value:
        """Sum over `dims`, which are removed."""
        return self._reduction("sum", name, x, dims)

    def mean(self, name: str, x: Value, dims: Sequence[int]) -> Value:
        """Arithmetic mean over `dims`, which are removed."""
        return self._reduction("mean", name, x, dims)

    def broadcast(self, name: str, x: Value, shape: Sequence[int]) -> Value:
        """`x` repeated to `shape` by the dialect's broadcasting rule."""
        shape = tuple(shape)
        if _broadcast(x.type.shape, shape) != shape:
            raise ValueError(f"cannot broadcast {x.type} to {shape}")
        type_ = x.type.with_shape(shape)
        result = self._define(name, type_)
        self._line(f"{result} = train.broadcast {x} : {x.type} -> {type_}")
        return result

    def concat(self, name: str, inputs: Sequence[Value], dim: int) -> Value:
        """`inputs` joined along `dim`."""
        first = inputs[0].type
        if not 0 <= dim < first.rank or any(
                v.type.element != first.element or v.type.rank != first.rank
                or any(a != b for i, (a, b) in enumerate(zip(v.type.shape, first.shape))
                       if i != dim) for v in inputs):
            raise ValueError("concat of " + ", ".join(str(v.type) for v in inputs)
                             + f" along {dim}")
        shape = list(first.shape)
        shape[dim] = sum(v.type.shape[dim] for v in inputs)
        type_ = first.with_shape(shape)
        result = self._define(name, type_)
        self._line(f"{result} = train.concat " + ", ".join(map(str, inputs))
                   + f" dim = {dim} : " + ", ".join(str(v.type) for v in inputs)
                   + f" -> {type_}")
        return result

    def cast(self, name: str, x: Value, element: str) -> Value:
        """`x` converted to the float element type `element` (f32, bf16)."""
        if x.type.element not in _FLOAT_ELEMENTS or element not in _FLOAT_ELEMENTS:
            raise ValueError(f"cast of {x.type} to {element}")
        type_ = TensorType(x.type.shape, element)
        result = self._define(name, type_)
        self._line(f"{result} = train.cast {x} : {x.type} to {type_}")
        return result

    def layernorm(self, name: str, x: Value, weight: Value, bias: Value, eps: float) -> Value:
        """LayerNorm of `x` over its last dimension."""
        return self._emit(name, x.type, "train.layernorm", (x, weight, bias),
                          f"{x}, {weight}, {bias} eps = {format_float(eps)}")

    def matmul(self, name: str, lhs: Value, rhs: Value, *, transpose_rhs: bool = False) -> Value:
        """Batched matrix product; a rank-2 `rhs` is shared by every batch."""
        *batch, m, k = lhs.type.shape
        *rhs_batch, k2, n = rhs.type.shape
        if transpose_rhs:
            k2, n = n, k2
        if k != k2 or rhs_batch not in ([], batch) or lhs.type.element != rhs.type.element:
            raise ValueError(f"matmul of {lhs.type} and {rhs.type}"
                             + (" transpose_rhs" if transpose_rhs else ""))
        type_ = lhs.type.with_shape((*batch, m, n))
        flags = " transpose_rhs" if transpose_rhs else ""
        return self._emit(name, type_, "train.matmul", (lhs, rhs), f"{lhs}, {rhs}{flags}")

    def split(self, names: Sequence[str], x: Value, dim: int) -> list[Value]:
        """Splits `x` into ``len(names)`` equal parts along `dim`."""
        size, remainder = divmod(x.type.shape[dim], len(names))
        if remainder:
            raise ValueError(f"cannot split {x.type} into {len(names)} along {dim}")
        shape = list(x.type.shape)
        shape[dim] = size
        results = [self._define(n, x.type.with_shape(shape)) for n in names]
        self._line(", ".join(map(str, results)) + f" = train.split {x} dim = {dim} : "
                   f"{x.type} -> " + ", ".join(str(r.type) for r in results))
        return results

    def reshape(self, name: str, x: Value, shape: Sequence[int]) -> Value:
        """`x` reinterpreted with `shape`, row-major."""
        type_ = x.type.with_shape(shape)
        if type_.numel != x.type.numel:
            raise ValueError(f"cannot reshape {x.type} to {type_}")
        result = self._define(name, type_)
        self._line(f"{result} = train.reshape {x} : {x.type} -> {type_}")
        return result

    def transpose(self, name: str, x: Value, permutation: Sequence[int]) -> Value:
        """Result dimension i is `x` dimension ``permutation[i]``."""
        if sorted(permutation) != list(range(x.type.rank)):
            raise ValueError(f"{list(permutation)} is not a permutation of {x.type}")
        type_ = x.type.with_shape(x.type.shape[p] for p in permutation)
        result = self._define(name, type_)
        perm = ", ".join(map(str, permutation))
        self._line(f"{result} = train.transpose {x} [{perm}] : {x.type} -> {type_}")
        return result

    def attention(self, name: str, q: Value, k: Value, v: Value, *, scale: float,
                  causal: bool) -> Value:
        """Scaled dot-product attention of [B, H, T, D] query heads and
        [B, Hkv, S, D] key/value heads, H a multiple of Hkv (grouped-query
        attention when Hkv < H)."""
        if q.type.rank != 4 or k.type != v.type or k.type.rank != 4 or \
                q.type.shape[0] != k.type.shape[0] or q.type.shape[3] != k.type.shape[3] or \
                q.type.shape[1] % k.type.shape[1] or \
                (causal and q.type.shape[2] != k.type.shape[2]):
            raise ValueError(f"attention of {q.type}, {k.type}, {v.type}")
        flags = " causal" if causal else ""
        return self._emit(name, q.type, "train.attention", (q, k, v),
                          f"{q}, {k}, {v}{flags} scale = {format_float(scale)}")

    def rmsnorm(self, name: str, x: Value, weight: Value, eps: float) -> Value:
        """RMSNorm of `x` over its last dimension, times `weight`."""
        if x.type.rank < 1 or weight.type.shape != x.type.shape[-1:] or \
                weight.type.element != x.type.element:
            raise ValueError(f"rmsnorm of {x.type} by {weight.type}")
        return self._emit(name, x.type, "train.rmsnorm", (x, weight),
                          f"{x}, {weight} eps = {format_float(eps)}")

    def silu(self, name: str, x: Value) -> Value:
        """``x * sigmoid(x)``."""
        return self._unary("silu", name, x)

    def rope(self, name: str, x: Value, *, theta: float, seq_dim: int, style: str,
             inverse: bool = False, scaling: Sequence[float] | None = None) -> Value:
        """Rotary embeddings of the last dimension (even), positions along
        `seq_dim`; `style` is ``interleaved`` or ``rotate_half``. `scaling`
        is ``[factor]`` (linear) or ``[factor, low_freq_factor,
        high_freq_factor, original_max_position_embeddings]`` (llama3)."""
        if style not in ("interleaved", "rotate_half") or x.type.rank < 2 or \
                not 0 <= seq_dim < x.type.rank - 1 or x.type.shape[-1] % 2 or \
                not theta > 0 or (scaling is not None and len(scaling) not in (1, 4)):
            raise ValueError(f"rope of {x.type} (seq_dim {seq_dim}, {style}, theta {theta}, "
                             f"scaling {scaling})")
        flags = " inverse" if inverse else ""
        if scaling is not None:
            flags += " scaling = [" + ", ".join(format_float(v) for v in scaling) + "]"
        return self._unary("rope", name, x, f" theta = {format_float(theta)} "
                           f"seq_dim = {seq_dim} {style}{flags}")

    def slice(self, name: str, x: Value, offsets: Sequence[int], sizes: Sequence[int],
              strides: Sequence[int] | None = None) -> Value:
        """Static strided slice: `sizes` elements from `offsets`, `strides`
        apart (1 by default), along every dimension."""
        strides = list(strides) if strides is not None else [1] * x.type.rank
        offsets, sizes = list(offsets), list(sizes)
        if not len(offsets) == len(sizes) == len(strides) == x.type.rank or any(
                o < 0 or st < 1 or n < 1 or o + (n - 1) * st >= d
                for o, n, st, d in zip(offsets, sizes, strides, x.type.shape)):
            raise ValueError(f"slice of {x.type} at {offsets}, sizes {sizes}, "
                             f"strides {strides}")
        type_ = x.type.with_shape(sizes)
        result = self._define(name, type_)
        self._line(f"{result} = train.slice {x} offsets = [{', '.join(map(str, offsets))}]"
                   f" strides = [{', '.join(map(str, strides))}] : {x.type} -> {type_}")
        return result

    def dropout(self, name: str, x: Value, p: float, seed: int) -> Value:
        """Dropout with probability `p` (the identity outside the training
        step); `seed` names the mask's stream (one per dropout site)."""
        if not 0 <= p < 1 or not isinstance(seed, int) or not 0 <= seed < 2 ** 63:
            raise ValueError(f"dropout p = {p}, seed = {seed}")
        return self._unary("dropout", name, x, f" p = {format_float(p)} seed = {seed}")

    def gelu(self, name: str, x: Value, approximation: str) -> Value:
        """GELU, `approximation` ``tanh`` or ``erf``."""
        result = self._define(name, x.type)
        self._line(f"{result} = train.gelu {x} {approximation} : {x.type}")
        return result

    def cross_entropy(self, name: str, logits: Value, targets: Value) -> Value:
        """Mean cross-entropy of `logits` [d..., V] against `targets` [d...]."""
        if logits.type.shape[:-1] != targets.type.shape:
            raise ValueError(f"cross_entropy of {logits.type} against {targets.type}")
        return self._emit(name, TensorType((), "f32"), "train.cross_entropy",
                          (logits, targets), f"{logits}, {targets}")

    def ret(self, value: Value) -> None:
        """Writes ``return`` and closes the function."""
        self._line(f"return {value} : {value.type}")
        self._out.write("  }\n")


class ModuleWriter:
    """Writes a ``train`` module: header comment, attributes, optimizer,
    parameters and functions, in that order.

    Call `open`, `optimizer`, `param`, `function` (then write the body with
    the returned `FunctionWriter`) and `close`.
    """

    def __init__(self, out: TextIO):
        self._out = out
        self._params: dict[str, Param] = {}

    def comment(self, lines: Iterable[str]) -> None:
        """Writes ``// line`` for each line, then a blank line."""
        for line in lines:
            self._out.write(f"// {line}".rstrip() + "\n")
        self._out.write("\n")

    def open(self, attributes: Mapping[str, str | int],
             tied: Mapping[str, str] | None = None) -> None:
        """Opens the module, with string- or integer-valued (i64) `attributes`
        and the parameters `tied` under a second name ({alias: parameter},
        the ``train.tied`` attribute: checkpoints export the alias too)."""
        attributes = dict(attributes)
        for key, value in attributes.items():
            _check_identifier("attribute name", key)
            if isinstance(value, int):
                continue
            if '"' in value or "\\" in value or not value.isprintable():
                raise ValueError(f"attribute value {value!r} needs escaping")
        attrs = ", ".join(f"{key} = {value} : i64" if isinstance(value, int)
                          else f'{key} = "{value}"' for key, value in attributes.items())
        if tied:
            entries = []
            for alias, target in tied.items():
                _check_identifier("tied name", alias)
                _check_identifier("tied parameter", target)
                entries.append(f'"{alias}" = @{target}')
            attrs += (", " if attrs else "") + "train.tied = {" + ", ".join(entries) + "}"
        self._out.write(f"module attributes {{{attrs}}} {{\n" if attrs else "module {\n")

    def optimizer(self, config: OptimizerConfig) -> None:
        """Writes the ``train.optimizer`` op."""
        self._out.write(f"  {config.declaration()}\n\n")

    def param(self, param: Param) -> None:
        """Declares a parameter."""
        if param.name in self._params:
            raise ValueError(f"parameter {param.name} is declared twice")
        self._params[param.name] = param
        self._out.write(f"  {param.declaration()}\n")

    def function(self, name: str, arguments: Sequence[tuple[str, TensorType]],
                 result: TensorType, attributes: Sequence[str] = (),
                 ) -> tuple[FunctionWriter, list[Value]]:
        """Opens ``func.func @name`` with unit `attributes`; returns its
        writer and its arguments."""
        body = FunctionWriter(self._out, self._params)
        args = [body.argument(n, t) for n, t in arguments]
        signature = ", ".join(f"{a}: {a.type}" for a in args)
        attrs = f" attributes {{{', '.join(attributes)}}}" if attributes else ""
        self._out.write(f"\n  func.func @{_check_identifier('function name', name)}"
                        f"({signature}) -> {result}{attrs} {{\n")
        return body, args

    def close(self) -> None:
        """Closes the module."""
        self._out.write("}\n")
