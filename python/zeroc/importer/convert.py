"""From a traced torch.fx graph to the body of a `train` forward function.

`Converter` walks the graph in order and gives each node a value:

* an IR tensor (`zeroc.ir.Value`), written to the function as it is made;
* a `ParamRef`: a parameter, read (``train.read``) when an op first uses it
  as a tensor, so that a parameter only looked at for its shape is not
  declared;
* an `IndexView`: the token ids or targets, possibly viewed with another
  shape (``targets.view(-1)``); ids stay in their [B, T] layout and views
  are resolved where they are used (embedding, cross-entropy);
* anything else is a constant: shapes, Python numbers, tensors built from
  constants (``torch.arange(T)``, a causal mask, a buffer). An op whose
  inputs are all constant is evaluated with PyTorch on the spot.

Some ops look back at how their operands were made (`Converter.defs`): a
matmul by a transposed tensor becomes ``matmul ... transpose_rhs``, a
reshape of a reshape one reshape, and ``softmax(mask(scale * q @ k^T)) @ v``
one ``train.attention``. What such rewrites leave unused is removed at the
end (`dead_code_elimination`).
"""

from __future__ import annotations

import io
import math
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from zeroc import ir
from zeroc.importer import linear
from zeroc.importer.linear import CLin, Lin
from zeroc.importer.tracer import user_location


class ImporterError(Exception):
    """A model the importer cannot translate. `location` is ``(file, line,
    source text)`` of the user code at fault when known, `target` the
    PyTorch operation's name."""

    def __init__(self, message: str, *, location: tuple[str, int, str] | None = None,
                 target: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.target = target

    def __str__(self) -> str:
        if not self.location:
            return f"error: {self.message}"
        filename, line, code = self.location
        text = f"{filename}:{line}: error: {self.message}"
        if code:
            text += f"\n    {code}"
        return text


@dataclass(frozen=True)
class ParamRef:
    """A parameter of the module: its canonical state-dict name and tensor."""

    name: str
    tensor: torch.Tensor


@dataclass(frozen=True)
class IndexView:
    """Integer ids: a function argument `base`, seen with `shape`."""

    base: ir.Value
    shape: tuple[int, ...]


_TENSOR_KINDS = (ir.Value, ParamRef, IndexView, Lin, CLin)


def _has_tensor(obj: Any) -> bool:
    """Whether `obj` (possibly nested in tuples, lists, dicts, slices)
    holds an IR tensor, parameter or ids."""
    if isinstance(obj, _TENSOR_KINDS):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_has_tensor(x) for x in obj)
    if isinstance(obj, dict):
        return any(_has_tensor(x) for x in obj.values())
    if isinstance(obj, slice):
        return any(_has_tensor(x) for x in (obj.start, obj.stop, obj.step))
    return False


def _name_of(target: Any) -> str:
    """A readable name for an fx call_function target."""
    for prefix, namespace in (("torch.nn.functional.", F), ("torch.", torch),
                              ("operator.", operator)):
        name = getattr(target, "__name__", None)
        if name and getattr(namespace, name, None) is target:
            return prefix + name
    if target is getattr:
        return "getattr"
    return torch.fx.node._get_qualified_name(target)


def describe(node: torch.fx.Node, root: nn.Module | None = None) -> str:
    """What `node` does, for messages: ``torch.sin``, ``Tensor.unfold``,
    ``nn.Conv1d (conv)``."""
    if node.op == "call_function":
        return _name_of(node.target)
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module" and root is not None:
        module = root.get_submodule(node.target)
        kind = type(module)
        prefix = "nn." if kind.__module__.startswith("torch.nn") else kind.__module__ + "."
        return f"{prefix}{kind.__name__} ({node.target})"
    return f"{node.op} {node.target}"


# Canonical names of the ops, by fx target.
_FUNCTIONS: dict[Callable, str] = {
    operator.add: "add", torch.add: "add", operator.sub: "sub", torch.sub: "sub",
    torch.subtract: "sub", operator.mul: "mul", torch.mul: "mul", torch.multiply: "mul",
    operator.truediv: "div", torch.div: "div", torch.divide: "div",
    torch.true_divide: "div", operator.neg: "neg", torch.neg: "neg",
    operator.pow: "pow", torch.pow: "pow",
    operator.matmul: "matmul", torch.matmul: "matmul", torch.bmm: "matmul", torch.mm: "matmul",
    F.linear: "linear", F.embedding: "embedding", F.layer_norm: "layer_norm",
    F.gelu: "gelu", F.relu: "relu", torch.relu: "relu", F.softmax: "softmax",
    torch.softmax: "softmax", F.cross_entropy: "cross_entropy", F.dropout: "dropout",
    torch.transpose: "transpose", torch.swapaxes: "transpose", torch.swapdims: "transpose",
    torch.permute: "permute", torch.t: "t", torch.reshape: "reshape",
    torch.flatten: "flatten", torch.unsqueeze: "unsqueeze", torch.squeeze: "squeeze",
    torch.split: "split", torch.chunk: "chunk", torch.cat: "cat", torch.concat: "cat",
    torch.masked_fill: "masked_fill", torch.sqrt: "sqrt", torch.rsqrt: "rsqrt",
    torch.sum: "sum", torch.mean: "mean", torch.broadcast_to: "expand",
    torch.ones_like: "ones_like", torch.zeros_like: "zeros_like",
    torch.full_like: "full_like", torch.clone: "identity",
    getattr: "getattr", operator.getitem: "getitem",
    F.silu: "silu", torch.stack: "stack", torch.unbind: "unbind",
    torch.view_as_complex: "view_as_complex", torch.view_as_real: "view_as_real",
}

_METHODS: dict[str, str] = {
    "add": "add", "sub": "sub", "subtract": "sub", "mul": "mul", "multiply": "mul",
    "div": "div", "divide": "div", "true_divide": "div", "neg": "neg", "pow": "pow",
    "matmul": "matmul", "bmm": "matmul", "mm": "matmul", "relu": "relu",
    "softmax": "softmax", "transpose": "transpose", "swapaxes": "transpose",
    "swapdims": "transpose", "permute": "permute", "t": "t", "view": "reshape",
    "reshape": "reshape", "view_as": "view_as", "reshape_as": "view_as",
    "flatten": "flatten", "unsqueeze": "unsqueeze", "squeeze": "squeeze",
    "split": "split", "chunk": "chunk", "masked_fill": "masked_fill", "sqrt": "sqrt",
    "rsqrt": "rsqrt", "sum": "sum", "mean": "mean", "expand": "expand",
    "expand_as": "expand_as", "contiguous": "identity", "clone": "identity",
    "to": "to", "type": "to", "float": "float", "bfloat16": "bfloat16",
    "type_as": "type_as", "long": "long", "int": "int", "size": "size", "dim": "dim",
    "numel": "numel", "unbind": "unbind",
}

# Float element types of the IR, by torch dtype.
_ELEMENTS = {torch.float32: "f32", torch.bfloat16: "bf16"}
_TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "i32": torch.int32,
                 "i64": torch.int64}


class _Args:
    """A call's arguments bound to parameter names: positional ones in the
    order of `names` then `defaults`, then keywords; unknown keywords are
    errors."""

    def __init__(self, converter: Converter, what: str, args: Sequence, kwargs: dict,
                 names: Sequence[str], defaults: dict | None = None):
        defaults = defaults or {}
        self.values: dict[str, Any] = {}
        positional = list(args)
        order = list(names) + [n for n in defaults if n not in names]
        if len(positional) > len(order):
            converter.fail(f"{what} takes at most {len(order)} positional arguments")
        for name, value in zip(order, positional):
            self.values[name] = value
        for key, value in kwargs.items():
            if key not in names and key not in defaults:
                converter.fail(f"{what}: unsupported argument '{key}'")
            if key in self.values:
                converter.fail(f"{what}: argument '{key}' given twice")
            self.values[key] = value
        for name, value in defaults.items():
            self.values.setdefault(name, value)
        missing = [n for n in names if n not in self.values]
        if missing:
            converter.fail(f"{what}: missing argument '{missing[0]}'")

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


def _dims_tuple(values: Sequence) -> tuple:
    """``view(2, 3)`` and ``view((2, 3))`` alike."""
    if len(values) == 1 and isinstance(values[0], (tuple, list, torch.Size)):
        return tuple(values[0])
    return tuple(values)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class Converter:
    """Translates one traced forward into `train` IR (see the module doc).

    `canonical` maps ``id(parameter)`` to its canonical state-dict name;
    `input_types` are the IR types of the token ids and the targets; `decay`
    says which parameters get weight decay.
    """

    def __init__(self, graph_module: torch.fx.GraphModule, root: nn.Module,
                 canonical: dict[int, str], element: str, input_types: Sequence[ir.TensorType],
                 decay: Callable[[str, torch.Tensor], bool]):
        self.gm = graph_module
        self.decay = decay
        self.root = root
        self.canonical = canonical
        self.element = element
        self.input_types = list(input_types)
        self.params: dict[str, ir.Param] = {}
        self.param_tensors: dict[str, torch.Tensor] = {}
        self.out = io.StringIO()
        self.f = ir.FunctionWriter(self.out, self.params)
        define = self.f._define

        def tracked(name: str, type_: ir.TensorType) -> ir.Value:
            value = define(name, type_)
            self.values[name] = value
            return value
        self.f._define = tracked
        self.defs: dict[str, tuple] = {}
        self.memo: dict[tuple, ir.Value] = {}
        self.views: dict[str, tuple] = {}  # decompose()'s results
        self.values: dict[str, ir.Value] = {}  # every IR value by name
        self.reads: dict[str, ir.Value] = {}
        self.names: set[str] = set()
        self.node: torch.fx.Node | None = None
        self.arguments: list[ir.Value] = []
        self.loss: ir.Value | None = None
        self.vocab: int | None = None
        self.dropout_sites = 0

    # Errors and names.

    def fail(self, message: str, node: torch.fx.Node | None = None) -> None:
        node = node or self.node
        location = user_location(node.stack_trace) if node is not None else None
        target = describe(node, self.root) if node is not None else None
        raise ImporterError(message, location=location, target=target)

    def unsupported(self, why: str = "") -> None:
        node = self.node
        kind = {"call_function": "function", "call_method": "tensor method",
                "call_module": "module"}.get(node.op, node.op)
        message = f"unsupported {kind} {describe(node, self.root)}"
        if why:
            message += f": {why}"
        else:
            message += ": the train dialect has no equivalent (see docs/importer.md)"
        self.fail(message)

    def fresh(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_$.-]", "_", base) or "v"
        if base[0].isdigit() and not base.isdigit():
            base = "v" + base
        name, i = base, 1
        while name in self.names:
            name = f"{base}_{i}"
            i += 1
        self.names.add(name)
        return name

    def _base(self) -> str:
        return self.node.name if self.node is not None else "v"

    # Values.

    def tensor(self, x: Any, what: str = "operand") -> ir.Value:
        """`x` as an IR float tensor: a parameter is read, ids are errors."""
        if isinstance(x, ir.Value):
            return x
        if isinstance(x, ParamRef):
            return self.read(x)
        if isinstance(x, IndexView):
            self.fail(f"{describe(self.node, self.root)}: integer ids (the token or target "
                      f"tensor) used as a float {what}; only embeddings and "
                      f"cross-entropy take them")
        if isinstance(x, Lin):
            return self.realize(x)
        if isinstance(x, CLin):
            self.fail(f"{describe(self.node, self.root)}: a complex tensor used as a "
                      f"{what}; zeroc follows complex numbers only through a rotary "
                      "embedding (view_as_complex, a product with the table, view_as_real)")
        if isinstance(x, torch.Tensor):
            return self.constant_tensor(x)
        self.fail(f"{describe(self.node, self.root)}: expected a tensor {what}, "
                  f"got {type(x).__name__} {x!r}")

    def read(self, ref: ParamRef) -> ir.Value:
        if ref.name in self.reads:
            return self.reads[ref.name]
        tensor = ref.tensor
        if tensor.dtype not in _ELEMENTS or _ELEMENTS[tensor.dtype] != self.element:
            self.fail(f"parameter {ref.name} is {tensor.dtype}; every parameter must be "
                      f"{_TORCH_DTYPES[self.element]}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", ref.name):
            self.fail(f"parameter name '{ref.name}' is not a valid MLIR symbol (it must start "
                      "with a letter or '_'); give the submodule a name (an attribute, not "
                      "an index of nn.Sequential at the top level)")
        if tensor.dim() == 0:
            self.fail(f"parameter {ref.name} is a scalar; train.param needs at least one "
                      "dimension")
        if ref.name not in self.params:
            self.params[ref.name] = ir.Param(
                ref.name, ir.TensorType(tuple(tensor.shape), self.element),
                **_init_of(tensor), decay=bool(self.decay(ref.name, tensor)))
            self.param_tensors[ref.name] = tensor
        value = self.f.read(self.fresh(ref.name), ref.name)
        self.reads[ref.name] = value
        return value

    def param_ref(self, tensor: Any, what: str) -> ParamRef | None:
        if tensor is None:
            return None
        if isinstance(tensor, nn.Parameter):
            if id(tensor) not in self.canonical:
                self.fail(f"{what} is a Parameter that is not registered in the module")
            return ParamRef(self.canonical[id(tensor)], tensor)
        self.fail(f"{what} is not a Parameter")

    def constant_tensor(self, t: torch.Tensor) -> ir.Value:
        """A constant tensor as ``train.fill`` (it must hold one value)."""
        flat = t.detach().reshape(-1)
        if flat.numel() == 0 or not bool((flat == flat[0]).all()):
            self.fail(f"{describe(self.node, self.root)}: a constant tensor of shape "
                      f"{list(t.shape)} that does not hold a single value; the train "
                      "dialect's only constants are train.fill (one value), so compute it "
                      "from the inputs or make it a Parameter")
        value = float(flat[0])
        return self.fill(value, tuple(t.shape))

    def fill(self, value: float, shape: Sequence[int] = (),
             element: str | None = None) -> ir.Value:
        """train.fill in `element` (default: the model's float type; an
        operand's for arithmetic, f32 inside an RMSNorm of a bf16 model)."""
        if not math.isfinite(value):
            self.fail(f"the constant {value} is not finite")
        result = self.f.fill(self.fresh(self._base() + "_c"),
                             ir.TensorType(tuple(shape), element or self.element), value)
        self.defs[result.name] = ("fill", float(value))
        return result

    def dim(self, d: Any, rank: int, what: str = "dim") -> int:
        if not isinstance(d, int) or isinstance(d, bool) or not -rank <= d < max(rank, 1):
            self.fail(f"{describe(self.node, self.root)}: {what} {d!r} is out of range "
                      f"for a tensor of rank {rank}")
        return d % rank if rank else 0

    # Emitting, with the look-back rewrites.

    def reshape(self, x: ir.Value, shape: Sequence[int]) -> ir.Value:
        shape = tuple(shape)
        if shape == x.type.shape:
            return x
        d = self.defs.get(x.name)
        if d and d[0] == "reshape":
            x = d[1]
            if shape == x.type.shape:
                return x
        key = ("reshape", x.name, shape)
        if key not in self.memo:
            result = self.f.reshape(self.fresh(self._base()), x, shape)
            self.defs[result.name] = ("reshape", x)
            self.memo[key] = result
        return self.memo[key]

    def transpose(self, x: ir.Value, perm: Sequence[int]) -> ir.Value:
        perm = list(perm)
        if perm == list(range(len(perm))):
            return x
        d = self.defs.get(x.name)
        if d and d[0] == "transpose":
            src, first = d[1], d[2]
            perm = [first[p] for p in perm]
            if perm == list(range(len(perm))):
                return src
            x = src
        key = ("transpose", x.name, tuple(perm))
        if key not in self.memo:
            result = self.f.transpose(self.fresh(self._base()), x, perm)
            self.defs[result.name] = ("transpose", x, tuple(perm))
            self.memo[key] = result
        return self.memo[key]

    def slice(self, x: ir.Value, offsets: Sequence[int], sizes: Sequence[int],
              strides: Sequence[int]) -> ir.Value:
        """train.slice, or `x` when it takes all of it."""
        if tuple(sizes) == x.type.shape:
            return x
        key = ("slice", x.name, tuple(offsets), tuple(sizes), tuple(strides))
        if key not in self.memo:
            result = self.f.slice(self.fresh(self._base()), x, offsets, sizes, strides)
            self.defs[result.name] = ("slice", x, tuple(offsets), tuple(strides))
            self.memo[key] = result
        return self.memo[key]

    def scale(self, x: ir.Value, factor: float) -> ir.Value:
        if factor == 1:
            return x
        if not math.isfinite(factor):
            self.fail(f"scaling by {factor}")
        result = self.f.scale(self.fresh(self._base()), x, factor)
        self.defs[result.name] = ("scale", x, float(factor))
        return result

    def _swaps_last_two(self, value: ir.Value) -> ir.Value | None:
        """K such that `value` is K with its last two dimensions swapped, when
        `value` was made by a transpose (K may be a new transpose)."""
        d = self.defs.get(value.name)
        if not d or d[0] != "transpose":
            return None
        perm = list(d[2])
        perm[-2], perm[-1] = perm[-1], perm[-2]
        return self.transpose(d[1], perm)

    def matmul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        if a.type.rank < 2 or b.type.rank < 2:
            self.fail(f"matmul of {a.type} and {b.type}: both operands need two or more "
                      "dimensions (no matrix-vector products)")
        attention = self.match_attention(a, b)
        if attention is not None:
            return attention
        transpose_rhs = False
        source = self._swaps_last_two(b)
        if source is not None:
            b, transpose_rhs = source, True
        a_batch, b_batch = a.type.shape[:-2], b.type.shape[:-2]
        if b_batch and a_batch != b_batch:
            try:
                batch = ir._broadcast(a_batch, b_batch)
            except ValueError:
                self.fail(f"matmul of {a.type} and {b.type}: batch dimensions do not broadcast")
            if a_batch != batch:
                a = self.f.broadcast(self.fresh(self._base()), a, batch + a.type.shape[-2:])
            if b_batch != batch:
                b = self.f.broadcast(self.fresh(self._base()), b, batch + b.type.shape[-2:])
        k_b = b.type.shape[-1] if transpose_rhs else b.type.shape[-2]
        if a.type.shape[-1] != k_b:
            self.fail(f"matmul of {a.type} and {b.type}"
                      f"{' (transposed)' if transpose_rhs else ''}: inner dimensions differ")
        result = self.f.matmul(self.fresh(self._base()), a, b, transpose_rhs=transpose_rhs)
        self.defs[result.name] = ("matmul", a, b, transpose_rhs)
        return result

    def _uncast(self, value: ir.Value) -> ir.Value:
        """`value` before the f32/bf16 casts that made it (softmax over
        ``.float()`` scores, ``.type_as(q)`` after it)."""
        d = self.defs.get(value.name)
        while d and d[0] == "cast":
            value = d[1]
            d = self.defs.get(value.name)
        return value

    def _unrepeat_heads(self, x: ir.Value, head_dim: int) -> ir.Value:
        """The key/value heads that `x` repeats along `head_dim` (Hugging
        Face's and Meta's ``repeat_kv``: ``x[:, :, None]`` (or ``[:, :, :,
        None]``), ``expand`` and ``reshape``), seen through transposes; `x`
        itself when it is no such repeat."""
        d = self.defs.get(x.name)
        if d and d[0] == "transpose":
            perm = d[2]
            inner = self._unrepeat_heads(d[1], perm[head_dim])
            return x if inner is d[1] else self.transpose(inner, perm)
        if not d or d[0] != "reshape":
            return x
        b = d[1]
        db = self.defs.get(b.name)
        if not db or db[0] != "broadcast":
            return x
        u = db[1]
        du = self.defs.get(u.name)
        if not du or du[0] != "reshape":
            return x
        us, bs, xs = u.type.shape, b.type.shape, x.type.shape
        h = head_dim
        ws = us[:h + 1] + us[h + 2:]
        if len(us) != len(xs) + 1 or h + 1 >= len(us) or us[h + 1] != 1 or \
                bs[:h + 1] + bs[h + 2:] != ws or \
                xs != ws[:h] + (ws[h] * bs[h + 1],) + ws[h + 1:]:
            return x
        # (A reshape of a reshape is one: u may come straight from an earlier
        # shape of the heads.)
        return self.reshape(du[1], ws)

    def match_attention(self, p: ir.Value, v: ir.Value) -> ir.Value | None:
        """``softmax(causal_mask(scale * q @ k^T)) @ v`` as train.attention,
        with k and v repeated over query heads recognized as grouped-query
        attention."""
        d = self.defs.get(self._uncast(p).name)
        if not d or d[0] != "softmax":
            return None
        s = self._uncast(d[1])
        d = self.defs.get(s.name)
        causal = bool(d and d[0] == "causal_mask")
        if causal:
            s = self._uncast(d[1])
            d = self.defs.get(s.name)
        scale = 1.0
        if d and d[0] == "scale":
            scale, s = d[2], self._uncast(d[1])
            d = self.defs.get(s.name)
        if not d or d[0] != "matmul":
            return None
        q, k, transposed = d[1], d[2], d[3]
        if not transposed:
            k = self._swaps_last_two(k)
            if k is None:
                return None
        for which in ("q", "k"):
            operand = q if which == "q" else k
            dd = self.defs.get(operand.name)
            if dd and dd[0] == "scale":
                scale *= dd[2]
                if which == "q":
                    q = dd[1]
                else:
                    k = dd[1]
        if k.type.rank == 4 and v.type.rank == 4:
            k, v = self._unrepeat_heads(k, 1), self._unrepeat_heads(v, 1)
        if q.type.rank != 4 or k.type != v.type or k.type.rank != 4 or \
                q.type.shape[0] != k.type.shape[0] or q.type.shape[3] != k.type.shape[3] or \
                q.type.shape[1] % k.type.shape[1] or \
                (causal and q.type.shape[2] != k.type.shape[2]) or \
                len({q.type.element, k.type.element, v.type.element}) != 1:
            return None
        result = self.f.attention(self.fresh(self._base()), q, k, v, scale=scale,
                                  causal=causal)
        self.defs[result.name] = ("attention", q, k, v)
        return result

    # Rotary embeddings written out (zeroc.importer.linear).

    def decompose(self, value: ir.Value):
        """(root, index map, coefficients) of `value` as a view of the IR
        value it was cut, reshaped, transposed, scaled or cast from; every
        value on the way is remembered as a candidate for realize()."""
        memo = self.views
        if value.name in memo:
            return memo[value.name]
        d = self.defs.get(value.name)
        shape = value.type.shape
        result = None
        if d:
            kind = d[0]
            if kind in ("reshape", "cast"):
                r, i, c = self.decompose(d[1])
                result = r, i.reshape(shape), c.reshape(shape)
            elif kind == "transpose":
                r, i, c = self.decompose(d[1])
                result = r, i.permute(d[2]), c.permute(d[2])
            elif kind == "scale":
                r, i, c = self.decompose(d[1])
                result = r, i, c * d[2]
            elif kind == "slice":
                r, i, c = self.decompose(d[1])
                index = tuple(slice(o, o + n * st, st)
                              for o, n, st in zip(d[2], shape, d[3]))
                result = r, i[index], c[index]
            elif kind == "split":
                r, i, c = self.decompose(d[1])
                dim, k, size = d[2], d[3], shape[d[2]]
                result = r, i.narrow(dim, k * size, size), c.narrow(dim, k * size, size)
            elif kind == "concat":
                parts = [self.decompose(x) for x in d[1]]
                if all(part[0].name == parts[0][0].name for part in parts):
                    result = (parts[0][0], torch.cat([part[1] for part in parts], d[2]),
                              torch.cat([part[2] for part in parts], d[2]))
            elif kind == "broadcast":
                r, i, c = self.decompose(d[1])
                lead = len(shape) - i.dim()
                i = i.reshape((1,) * lead + tuple(i.shape))
                c = c.reshape((1,) * lead + tuple(c.shape))
                result = r, i.expand(shape), c.expand(shape)
        if result is None:
            numel = value.type.numel
            result = (value, torch.arange(numel, dtype=torch.int64).reshape(shape),
                      torch.ones(shape, dtype=torch.float64))
        memo[value.name] = result
        return result

    def lin_of(self, x: Any) -> Lin:
        """`x` (an IR value, parameter or Lin) as a Lin."""
        if isinstance(x, Lin):
            return x
        value = self.tensor(x)
        root, index, coeff = self.decompose(value)
        candidates = {}
        for name, (r, i, c) in self.views.items():
            if r.name == root.name and bool((c == 1).all()) and name in self.values:
                candidates[name] = (self.values[name], i)
        return Lin(root, index.unsqueeze(0).clone(), coeff.unsqueeze(0).clone(),
                   value.type.element, self.node, candidates)

    def realize(self, lin: Lin) -> ir.Value:
        """The IR of a Lin: train.rope (or the identity) of a view of its
        root; an error naming where the constant came from otherwise."""
        lin = lin.compact()
        shape = lin.shape
        candidates = [(value, index) for value, index in lin.candidates.values()
                      if value.type.shape == shape]
        root = lin.root
        if root.type.numel == math.prod(shape):
            identity = torch.arange(root.type.numel, dtype=torch.int64).reshape(shape)
            candidates.append((None, identity))
        for value, index in candidates:
            found = linear.match_rope(lin, index)
            if found is None:
                continue
            y = value if value is not None else self.reshape(root, shape)
            if found != "identity":
                style, seq_dim, theta = found
                y = self.f.rope(self.fresh(self._base()), y, theta=theta, seq_dim=seq_dim,
                                style=style)
            if y.type.element != lin.element:
                y = self.f.cast(self.fresh(self._base()), y, lin.element)
            return y
        self.fail("a tensor multiplied by a constant tensor (here of shape "
                  f"{list(shape)}) must be a rotary position embedding: a rotation of "
                  "pairs of features (interleaved or rotate-half) by position * "
                  "theta^(-2i/d), positions 0..T-1; the train dialect has no other "
                  "constant tensors (compute it from the inputs or make it a Parameter)",
                  node=lin.origin)

    # The walk.    # The walk.

    def run(self) -> None:
        placeholders = 0
        env: dict[torch.fx.Node, Any] = {}
        for node in self.gm.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                if placeholders < 2:
                    type_ = self.input_types[placeholders]
                    value = self.f.argument(self.fresh(node.name), type_)
                    self.arguments.append(value)
                    env[node] = IndexView(value, type_.shape)
                elif node.args:
                    env[node] = node.args[0]
                else:
                    self.fail(f"forward's argument '{node.target}' has no default; the "
                              "forward takes the token ids and the targets, then only "
                              "arguments with defaults")
                placeholders += 1
                continue
            if node.op == "output":
                self.finish(torch.fx.node.map_arg(node.args[0], lambda n: env[n]))
                continue
            args = torch.fx.node.map_arg(node.args, lambda n: env[n])
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
            try:
                env[node] = self.convert(node, args, kwargs)
            except ImporterError:
                raise
            except ValueError as error:  # zeroc.ir's checks: types that do not fit
                self.fail(f"{describe(node, self.root)}: {error}")
            except Exception as error:  # noqa: BLE001 - reported with the node
                self.fail(f"internal error translating {describe(node, self.root)}: "
                          f"{type(error).__name__}: {error}")
            self.check_shape(node, env[node])
        if placeholders < 2:
            self.node = None
            self.fail("forward must take two tensors, the token ids and the targets "
                      f"(it takes {placeholders})")

    def check_shape(self, node: torch.fx.Node, value: Any) -> None:
        meta = node.meta.get("zeroc_meta")
        if meta is None:
            return
        pairs = [(value, meta)]
        if isinstance(value, (tuple, list)) and isinstance(meta, (tuple, list)) and \
                len(value) == len(meta):
            pairs = list(zip(value, meta))
        for v, m in pairs:
            if not isinstance(m, torch.Tensor):
                continue
            shape = v.type.shape if isinstance(v, ir.Value) else \
                v.shape if isinstance(v, (IndexView, Lin, CLin)) else None
            if shape is not None and tuple(m.shape) != tuple(shape):
                self.fail(f"internal error: the importer made {list(shape)} of "
                          f"{describe(node, self.root)} where PyTorch has {list(m.shape)}")

    def finish(self, output: Any) -> None:
        candidates = []

        def visit(x):
            if isinstance(x, ir.Value) and x.type.rank == 0 and x.type.element == "f32":
                candidates.append(x)
            elif isinstance(x, (tuple, list)):
                for y in x:
                    visit(y)
            elif isinstance(x, dict):
                for y in x.values():
                    visit(y)
        visit(output)
        if len(candidates) != 1:
            what = "no scalar f32 loss" if not candidates else \
                f"{len(candidates)} scalar f32 values"
            self.fail(f"forward returns {what}; it must return the loss (one scalar, "
                      "e.g. F.cross_entropy), alone or among other outputs")
        self.loss = candidates[0]
        self.f.ret(self.loss)

    def convert(self, node: torch.fx.Node, args: tuple, kwargs: dict) -> Any:
        if node.op == "get_attr":
            value = self.gm
            for atom in node.target.split("."):
                value = getattr(value, atom)
            if isinstance(value, nn.Parameter):
                return self.param_ref(value, node.target)
            if isinstance(value, torch.Tensor):
                return value.detach()
            return value
        if node.op == "call_module":
            module = self.gm.get_submodule(node.target)  # the user's module object
            if not _has_tensor((args, kwargs)) and not any(True for _ in module.parameters()):
                return self.evaluate(lambda: module(*args, **kwargs))
            return self.convert_module(module, args, kwargs)
        if node.op == "call_function":
            op = _FUNCTIONS.get(node.target)
            if not _has_tensor((args, kwargs)):
                return self.evaluate(lambda: node.target(*args, **kwargs))
        elif node.op == "call_method":
            op = _METHODS.get(node.target)
            if not _has_tensor((args, kwargs)):
                return self.evaluate(lambda: getattr(args[0], node.target)(*args[1:],
                                                                           **kwargs))
            if isinstance(node.target, str) and node.target.endswith("_") and \
                    not node.target.startswith("__"):
                self.unsupported("in-place operations are not supported; use the "
                                 "out-of-place form")
        else:
            self.unsupported()
        if op is None:
            self.unsupported()
        handler = getattr(self, "op_" + op)
        return handler(args, kwargs)

    def evaluate(self, thunk: Callable[[], Any]) -> Any:
        """A constant: the op run by PyTorch on constant inputs."""
        try:
            with torch.no_grad():
                return thunk()
        except Exception as error:  # noqa: BLE001 - reported with the node
            self.fail(f"evaluating {describe(self.node, self.root)} on constants failed: "
                      f"{error}")

    # Modules.

    def convert_module(self, module: nn.Module, args: tuple, kwargs: dict) -> Any:
        what = describe(self.node, self.root)
        if isinstance(module, nn.Linear):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.linear(a["input"], self.param_ref(module.weight, f"{what}.weight"),
                               self.param_ref(module.bias, f"{what}.bias"))
        if isinstance(module, nn.Embedding):
            if module.padding_idx is not None or module.max_norm is not None or \
                    module.scale_grad_by_freq or module.sparse:
                self.unsupported("padding_idx, max_norm, scale_grad_by_freq and sparse "
                                 "are not supported")
            a = _Args(self, what, args, kwargs, ["input"])
            return self.embedding(a["input"], self.param_ref(module.weight, f"{what}.weight"))
        if isinstance(module, nn.LayerNorm):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.layer_norm(a["input"], module.normalized_shape,
                                   self.param_ref(module.weight, f"{what}.weight"),
                                   self.param_ref(module.bias, f"{what}.bias"), module.eps)
        if isinstance(module, nn.GELU):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.gelu(a["input"], module.approximate)
        if isinstance(module, nn.ReLU):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.op_relu((a["input"],), {})
        if isinstance(module, nn.SiLU):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.op_silu((a["input"],), {})
        if isinstance(module, nn.Softmax):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.softmax(a["input"], module.dim)
        if isinstance(module, nn.Dropout):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.dropout(a["input"], module.p)
        if isinstance(module, nn.Identity):
            return args[0]
        if isinstance(module, nn.Flatten):
            a = _Args(self, what, args, kwargs, ["input"])
            return self.flatten(a["input"], module.start_dim, module.end_dim)
        if isinstance(module, nn.CrossEntropyLoss):
            a = _Args(self, what, args, kwargs, ["input", "target"])
            if module.weight is not None:
                self.unsupported("class weights are not supported")
            return self.cross_entropy(a["input"], a["target"], module.ignore_index,
                                      module.reduction, module.label_smoothing)
        self.unsupported()

    # Ops. Each op_X takes the evaluated (args, kwargs) of the node.

    def op_identity(self, args, kwargs):
        return args[0]

    def _arith(self, op: str, a: Any, b: Any) -> Any:
        if isinstance(a, torch.Tensor) and a.dim() == 0:
            a = a.item()
        if isinstance(b, torch.Tensor) and b.dim() == 0:
            b = b.item()
        if isinstance(a, bool) or isinstance(b, bool):
            self.unsupported("boolean operands")
        if isinstance(a, CLin) or isinstance(b, CLin):
            return self._complex_arith(op, a, b)
        varying_a, varying_b = _varying(a), _varying(b)
        if varying_a or varying_b:
            return self._constant_arith(op, a, b, varying_a)
        if isinstance(a, Lin) or isinstance(b, Lin):
            result = self._lin_arith(op, a, b)
            if result is not None:
                return result
            a = self.tensor(a) if isinstance(a, Lin) else a
            b = self.tensor(b) if isinstance(b, Lin) else b
        if _is_number(b) and not _is_number(a):
            x, s = self.tensor(a), float(b)
            if op == "mul":
                return self.scale(x, s)
            if op == "div":
                if s == 0:
                    self.fail("division by the constant 0")
                return self.scale(x, 1.0 / s)
            if s == 0:
                return x
            return self._binary(op, x, self.fill(s, element=x.type.element))
        if _is_number(a) and not _is_number(b):
            x, s = self.tensor(b), float(a)
            if op == "mul":
                return self.scale(x, s)
            if op == "add":
                return x if s == 0 else self._binary(
                    "add", x, self.fill(s, element=x.type.element))
            return self._binary(op, self.fill(s, element=x.type.element), x)
        if op == "mul":
            rms = self._match_rmsnorm(a, b)
            if rms is not None:
                return rms
        return self._binary(op, self.tensor(a), self.tensor(b))

    def _constant_arith(self, op: str, a: Any, b: Any, constant_first: bool) -> Any:
        """An op with a constant tensor of several values: an additive causal
        mask, or the cos/sin tables of rotary embeddings (a Lin)."""
        const, other = (a, b) if constant_first else (b, a)
        if isinstance(other, torch.Tensor) or _is_number(other):
            self.fail("internal error: an op on constants only was not evaluated")
        shape = self._shape_of(other)
        if op == "add" and _is_additive_causal(const, shape):
            x = self.tensor(other)
            result = self.f.causal_mask(self.fresh(self._base()), x)
            self.defs[result.name] = ("causal_mask", x)
            return result
        if op == "mul":
            return self.lin_of(other).scaled(const)
        if op == "div" and not constant_first:
            return self.lin_of(other).scaled(1.0 / const.to(torch.float64))
        self.fail(f"{op} with a constant tensor of shape {list(const.shape)} that does not "
                  "hold a single value: only additive causal masks (0 on and below the "
                  "diagonal, -inf above) and rotary-embedding tables are supported; the train "
                  "dialect has no constant tensors")

    def _lin_arith(self, op: str, a: Any, b: Any) -> Any:
        """Lin arithmetic: sums of Lins of one root, scaling; None when the
        Lins must become IR first."""
        if op in ("mul", "div") and (_is_number(a) or _is_number(b)):
            lin, s = (a, float(b)) if _is_number(b) else (b, float(a))
            if op == "div" and _is_number(a):
                return None
            return lin.scaled(1.0 / s if op == "div" else s)
        if op not in ("add", "sub") or _is_number(a) or _is_number(b):
            return None
        la, lb = self.lin_of(a), self.lin_of(b)
        if la.root.name != lb.root.name:
            return None
        if op == "sub":
            lb = lb.scaled(-1.0)
        return linear.add(la, lb, self.fail)

    def _complex_arith(self, op: str, a: Any, b: Any) -> Any:
        clin, const = (a, b) if isinstance(a, CLin) else (b, a)
        if op != "mul" or not isinstance(const, torch.Tensor) or not const.is_complex():
            self.fail("a complex tensor (view_as_complex) may only be multiplied by a "
                      "constant complex tensor (a rotary-embedding table)")
        return clin.times(const.detach(), self.fail)

    def _defined(self, value: Any, kind: str) -> tuple | None:
        """The defs entry of `value` when it is an IR value made by `kind`."""
        if not isinstance(value, ir.Value):
            return None
        d = self.defs.get(value.name)
        return d if d and d[0] == kind else None

    def _match_rmsnorm(self, a: Any, b: Any) -> ir.Value | None:
        """RMSNorm written out: ``x * torch.rsqrt(x.pow(2).mean(-1,
        keepdim=True) + eps)`` becomes train.rmsnorm with a weight of ones,
        and that times a [C] weight (either order, through the casts of
        ``.float()`` / ``.type_as(x)``) train.rmsnorm with the weight."""
        for x, r in ((a, b), (b, a)):
            d = self._defined(r, "rsqrt")
            if not d or not isinstance(x, ir.Value):
                continue
            total = self._defined(d[1], "binary")
            if not total or total[1] != "add":
                continue
            for m, e in ((total[2], total[3]), (total[3], total[2])):
                fill = self._defined(e, "fill")
                kept = self._defined(m, "reshape")
                mean = self._defined(kept[1] if kept else m, "mean")
                if not fill or not mean or e.type.shape != () or \
                        mean[2] != [x.type.rank - 1]:
                    continue
                square = self._defined(mean[1], "binary")
                if not square or square[1] != "mul" or square[2] is not square[3] or \
                        square[2].name != x.name:
                    continue
                ones = self.fill(1.0, x.type.shape[-1:], element=x.type.element)
                result = self.f.rmsnorm(self.fresh(self._base()), x, ones, fill[1])
                self.defs[result.name] = ("rmsnorm", x, None, fill[1])
                return result
        for n, w in ((a, b), (b, a)):
            if not isinstance(n, ir.Value) or not isinstance(w, (ir.Value, ParamRef)):
                continue
            inner = self._uncast(n)
            d = self._defined(inner, "rmsnorm")
            if not d or d[2] is not None:
                continue
            weight = self.tensor(w)
            x = self._uncast(d[1])
            if weight.type.shape != x.type.shape[-1:] or \
                    weight.type.element != x.type.element or \
                    n.type.element != x.type.element:
                continue
            result = self.f.rmsnorm(self.fresh(self._base()), x, weight, d[3])
            self.defs[result.name] = ("rmsnorm", x, weight, d[3])
            return result
        return None

    def _binary(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        try:
            ir._broadcast(a.type.shape, b.type.shape)
        except ValueError:
            self.fail(f"{op} of {a.type} and {b.type}: the shapes do not broadcast")
        if a.type.element != b.type.element:
            self.fail(f"{op} of {a.type} and {b.type}: element types differ")
        result = self.f.binary(op, self.fresh(self._base()), a, b)
        self.defs[result.name] = ("binary", op, a, b)
        return result

    def _arith_op(self, op: str, args, kwargs):
        a = _Args(self, f"Tensor {op}", args, kwargs, ["input", "other"],
                  {"alpha": 1, "rounding_mode": None})
        if a["alpha"] != 1:
            self.unsupported("alpha is not supported")
        if a["rounding_mode"] is not None:
            self.unsupported("rounding_mode is not supported")
        return self._arith(op, a["input"], a["other"])

    def op_add(self, args, kwargs):
        return self._arith_op("add", args, kwargs)

    def op_sub(self, args, kwargs):
        return self._arith_op("sub", args, kwargs)

    def op_mul(self, args, kwargs):
        return self._arith_op("mul", args, kwargs)

    def op_div(self, args, kwargs):
        return self._arith_op("div", args, kwargs)

    def op_neg(self, args, kwargs):
        return self.scale(self.tensor(args[0]), -1.0)

    def op_pow(self, args, kwargs):
        a = _Args(self, "pow", args, kwargs, ["input", "exponent"])
        base, exponent = a["input"], a["exponent"]
        if not _is_number(exponent):
            self.unsupported("only constant exponents 2, 1, 0.5, -0.5 and -1 are supported")
        x = self.tensor(base)
        if exponent == 1:
            return x
        if exponent == 2:
            return self._binary("mul", x, x)
        if exponent == 0.5:
            return self.f.sqrt(self.fresh(self._base()), x)
        if exponent == -1:
            return self._binary("div", self.fill(1.0, element=x.type.element), x)
        if exponent == -0.5:
            root = self.f.sqrt(self.fresh(self._base()), x)
            return self._binary("div", self.fill(1.0, element=x.type.element), root)
        self.unsupported(f"exponent {exponent}: only 2, 1, 0.5, -0.5 and -1 are supported")

    def op_sqrt(self, args, kwargs):
        return self.f.sqrt(self.fresh(self._base()), self.tensor(args[0]))

    def op_rsqrt(self, args, kwargs):
        x = self.tensor(args[0])
        root = self.f.sqrt(self.fresh(self._base()), x)
        result = self._binary("div", self.fill(1.0, element=x.type.element), root)
        self.defs[result.name] = ("rsqrt", x)
        return result

    def op_matmul(self, args, kwargs):
        a = _Args(self, "matmul", args, kwargs, ["input", "other"])
        return self.matmul(self.tensor(a["input"]), self.tensor(a["other"]))

    def linear(self, x: Any, weight: Any, bias: Any) -> ir.Value:
        x, w = self.tensor(x, "input"), self.tensor(weight, "weight")
        if w.type.rank != 2 or x.type.rank < 2 or x.type.shape[-1] != w.type.shape[1]:
            self.fail(f"linear of {x.type} by a weight {w.type}: the input needs two or "
                      "more dimensions and its last must equal the weight's in_features")
        y = self.f.matmul(self.fresh(self._base()), x, w, transpose_rhs=True)
        self.defs[y.name] = ("matmul", x, w, True)
        if bias is not None:
            y = self._binary("add", y, self.tensor(bias, "bias"))
        return y

    def op_linear(self, args, kwargs):
        a = _Args(self, "linear", args, kwargs, ["input", "weight"], {"bias": None})
        return self.linear(a["input"], a["weight"], a["bias"])

    def embedding(self, ids: Any, weight: Any) -> ir.Value:
        table = weight
        if isinstance(ids, IndexView):
            t = self.tensor(table, "table")
            if t.type.rank != 2:
                self.fail(f"embedding table {t.type} must have two dimensions")
            y = self.f.embedding(self.fresh(self._base()), t, ids.base)
            return self.reshape(y, ids.shape + t.type.shape[1:])
        if isinstance(ids, torch.Tensor):
            rows = table.tensor.shape[0] if isinstance(table, ParamRef) else \
                self.tensor(table, "table").type.shape[0]
            name = table.name if isinstance(table, ParamRef) else "the table"
            flat = ids.reshape(-1)
            if ids.is_floating_point() or ids.dtype == torch.bool:
                self.fail("embedding of a constant tensor that is not integer")
            n = flat.numel()
            if n <= rows and torch.equal(flat, torch.arange(n, dtype=flat.dtype)):
                # Positions arange(T) of a table of R >= T rows: its first T rows.
                t = self.tensor(table, "table")
                t = self.slice(t, [0, 0], [n, t.type.shape[1]], [1, 1])
                return self.reshape(t, tuple(ids.shape) + t.type.shape[1:])
            what = f"torch.arange({n})" if torch.equal(
                flat, torch.arange(n, dtype=flat.dtype)) else \
                f"a constant index tensor of shape {list(ids.shape)}"
            self.fail(f"embedding of {what} in {name} ({rows} rows): a constant lookup must "
                      f"read the first rows in order (positions torch.arange(T), T at most "
                      f"the table's rows)")
        self.fail("embedding ids must be the token ids (a forward argument) or "
                  "torch.arange positions")

    def op_embedding(self, args, kwargs):
        a = _Args(self, "embedding", args, kwargs, ["input", "weight"],
                  {"padding_idx": None, "max_norm": None, "norm_type": 2.0,
                   "scale_grad_by_freq": False, "sparse": False})
        if a["padding_idx"] is not None or a["max_norm"] is not None or \
                a["scale_grad_by_freq"] or a["sparse"]:
            self.unsupported("padding_idx, max_norm, scale_grad_by_freq and sparse are "
                             "not supported")
        return self.embedding(a["input"], a["weight"])

    def layer_norm(self, x: Any, normalized_shape: Any, weight: Any, bias: Any,
                   eps: float) -> ir.Value:
        x = self.tensor(x, "input")
        shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list,
                                                                         torch.Size)) \
            else (normalized_shape,)
        if len(shape) != 1 or x.type.rank < 1 or shape[0] != x.type.shape[-1]:
            self.unsupported(f"normalized_shape {list(shape)} of a {x.type}: only the last "
                             "dimension can be normalized")
        c = shape[0]
        w = self.tensor(weight, "weight") if weight is not None else self.fill(1.0, (c,))
        b = self.tensor(bias, "bias") if bias is not None else self.fill(0.0, (c,))
        if w.type.shape != (c,) or b.type.shape != (c,):
            self.fail(f"layer_norm weight {w.type} and bias {b.type} must be [{c}]")
        return self.f.layernorm(self.fresh(self._base()), x, w, b, float(eps))

    def op_layer_norm(self, args, kwargs):
        a = _Args(self, "layer_norm", args, kwargs, ["input", "normalized_shape"],
                  {"weight": None, "bias": None, "eps": 1e-5})
        return self.layer_norm(a["input"], a["normalized_shape"], a["weight"], a["bias"],
                               a["eps"])

    def gelu(self, x: Any, approximate: str) -> ir.Value:
        if approximate not in ("none", "tanh"):
            self.unsupported(f"approximate={approximate!r}")
        return self.f.gelu(self.fresh(self._base()), self.tensor(x),
                           "tanh" if approximate == "tanh" else "erf")

    def op_gelu(self, args, kwargs):
        a = _Args(self, "gelu", args, kwargs, ["input"], {"approximate": "none"})
        return self.gelu(a["input"], a["approximate"])

    def op_relu(self, args, kwargs):
        a = _Args(self, "relu", args, kwargs, ["input"], {"inplace": False})
        return self.f.relu(self.fresh(self._base()), self.tensor(a["input"]))

    def softmax(self, x: Any, dim: Any) -> ir.Value:
        x = self.tensor(x)
        if dim is None or self.dim(dim, x.type.rank) != x.type.rank - 1:
            self.unsupported(f"softmax over dim {dim} of a rank-{x.type.rank} tensor: only "
                             "the last dimension is supported")
        result = self.f.softmax(self.fresh(self._base()), x)
        self.defs[result.name] = ("softmax", x)
        return result

    def op_softmax(self, args, kwargs):
        a = _Args(self, "softmax", args, kwargs, ["input", "dim"],
                  {"_stacklevel": 3, "dtype": None})
        x = a["input"]
        if a["dtype"] is not None:
            if a["dtype"] not in _ELEMENTS:
                self.unsupported(f"softmax in {a['dtype']}: only float32 and bfloat16")
            x = self._convert(x, a["dtype"])
        return self.softmax(x, a["dim"])

    def dropout(self, x: Any, p: float) -> Any:
        """train.dropout with its own mask stream (seed = the dropout's index
        in the forward); nothing for p = 0."""
        if p == 0:
            return x
        if not isinstance(p, (int, float)) or not 0 < p < 1:
            self.unsupported(f"dropout with p={p!r}: p must be in [0, 1)")
        seed = self.dropout_sites
        self.dropout_sites += 1
        return self.f.dropout(self.fresh(self._base()), self.tensor(x), float(p), seed)

    def op_dropout(self, args, kwargs):
        a = _Args(self, "dropout", args, kwargs, ["input"],
                  {"p": 0.5, "training": True, "inplace": False})
        return self.dropout(a["input"], a["p"] if a["training"] else 0.0)

    def cross_entropy(self, logits: Any, target: Any, ignore_index: int, reduction: str,
                      label_smoothing: float) -> ir.Value:
        if reduction != "mean":
            self.unsupported(f"reduction={reduction!r}: only 'mean' is supported")
        if label_smoothing:
            self.unsupported("label_smoothing is not supported")
        if isinstance(ignore_index, int) and ignore_index >= 0:
            self.unsupported(f"ignore_index={ignore_index} is a valid token id; zeroc "
                             "averages over every position (use a negative ignore_index)")
        logits = self.tensor(logits, "logits")
        if not isinstance(target, IndexView):
            self.fail("cross_entropy targets must be the targets argument of forward "
                      "(possibly reshaped)")
        if logits.type.rank >= 3:
            # PyTorch's class dimension is 1: [N, V, d...].
            r = logits.type.rank
            logits = self.transpose(logits, [0] + list(range(2, r)) + [1])
        if logits.type.shape[:-1] != target.shape:
            self.fail(f"cross_entropy of logits {logits.type} against targets "
                      f"{list(target.shape)}")
        base = target.base
        logits = self.reshape(logits, base.type.shape + logits.type.shape[-1:])
        self.vocab = logits.type.shape[-1]
        return self.f.cross_entropy(self.fresh(self._base()), logits, base)

    def op_cross_entropy(self, args, kwargs):
        a = _Args(self, "cross_entropy", args, kwargs, ["input", "target"],
                  {"weight": None, "size_average": None, "ignore_index": -100,
                   "reduce": None, "reduction": "mean", "label_smoothing": 0.0})
        if a["weight"] is not None or a["size_average"] is not None or \
                a["reduce"] is not None:
            self.unsupported("weight, size_average and reduce are not supported")
        return self.cross_entropy(a["input"], a["target"], a["ignore_index"], a["reduction"],
                                  a["label_smoothing"])

    # Shapes.

    def _shape_of(self, x: Any) -> tuple[int, ...]:
        if isinstance(x, ir.Value):
            return x.type.shape
        if isinstance(x, (Lin, CLin)):
            return x.shape
        if isinstance(x, IndexView):
            return x.shape
        if isinstance(x, ParamRef):
            return tuple(x.tensor.shape)
        self.fail(f"expected a tensor, got {type(x).__name__}")

    def _new_shape(self, old: tuple[int, ...], shape: Sequence) -> tuple[int, ...]:
        shape = list(shape)
        if any(not isinstance(d, int) or isinstance(d, bool) for d in shape):
            self.fail(f"shape {shape} is not a list of integers")
        numel = math.prod(old)
        if shape.count(-1) > 1:
            self.fail(f"shape {shape} has more than one -1")
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            if known == 0 or numel % known:
                self.fail(f"cannot view a tensor of shape {list(old)} as {shape}")
            shape[shape.index(-1)] = numel // known
        if math.prod(shape) != numel or any(d <= 0 for d in shape):
            self.fail(f"cannot view a tensor of shape {list(old)} as {shape}")
        return tuple(shape)

    def _reshape_any(self, x: Any, shape: Sequence) -> Any:
        old = self._shape_of(x)
        new = self._new_shape(old, shape)
        if isinstance(x, IndexView):
            return IndexView(x.base, new)
        if isinstance(x, Lin):
            return x.reshape(new)
        return self.reshape(self.tensor(x), new)

    def op_reshape(self, args, kwargs):
        if "shape" in kwargs:
            return self._reshape_any(args[0], tuple(kwargs["shape"]))
        return self._reshape_any(args[0], _dims_tuple(args[1:]))

    def op_view_as(self, args, kwargs):
        return self._reshape_any(args[0], self._shape_of(args[1]))

    def flatten(self, x: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
        old = self._shape_of(x)
        if not old:
            return self._reshape_any(x, (1,))
        s, e = self.dim(start_dim, len(old)), self.dim(end_dim, len(old))
        return self._reshape_any(x, old[:s] + (math.prod(old[s:e + 1]),) + old[e + 1:])

    def op_flatten(self, args, kwargs):
        a = _Args(self, "flatten", args, kwargs, ["input"], {"start_dim": 0, "end_dim": -1})
        return self.flatten(a["input"], a["start_dim"], a["end_dim"])

    def op_unsqueeze(self, args, kwargs):
        a = _Args(self, "unsqueeze", args, kwargs, ["input", "dim"])
        old = self._shape_of(a["input"])
        d = self.dim(a["dim"], len(old) + 1)
        return self._reshape_any(a["input"], old[:d] + (1,) + old[d:])

    def op_squeeze(self, args, kwargs):
        a = _Args(self, "squeeze", args, kwargs, ["input"], {"dim": None})
        old = self._shape_of(a["input"])
        if a["dim"] is None:
            new = tuple(s for s in old if s != 1)
        else:
            d = self.dim(a["dim"], len(old))
            new = old[:d] + old[d + 1:] if old[d] == 1 else old
        if not new:
            self.unsupported("squeezing to a scalar")
        return self._reshape_any(a["input"], new)

    def _perm_op(self, x: Any, perm: Sequence[int]) -> Any:
        if isinstance(x, IndexView):
            self.unsupported("transposing the token or target ids")
        return self.transpose(self.tensor(x), perm)

    def op_transpose(self, args, kwargs):
        a = _Args(self, "transpose", args, kwargs, ["input", "dim0", "dim1"])
        rank = len(self._shape_of(a["input"]))
        d0, d1 = self.dim(a["dim0"], rank), self.dim(a["dim1"], rank)
        perm = list(range(rank))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return self._perm_op(a["input"], perm)

    def op_permute(self, args, kwargs):
        dims = _dims_tuple(args[1:]) if "dims" not in kwargs else tuple(kwargs["dims"])
        rank = len(self._shape_of(args[0]))
        perm = [self.dim(d, rank) for d in dims]
        if sorted(perm) != list(range(rank)):
            self.fail(f"{list(dims)} is not a permutation of {rank} dimensions")
        return self._perm_op(args[0], perm)

    def op_t(self, args, kwargs):
        rank = len(self._shape_of(args[0]))
        if rank > 2:
            self.fail("t() expects a tensor of at most two dimensions")
        return self._perm_op(args[0], list(range(rank))[::-1])

    def op_getattr(self, args, kwargs):
        x, attr = args[0], args[1]
        if isinstance(x, ParamRef):
            if attr in ("T", "mT"):
                return self.op_getattr((self.tensor(x), attr), {})
            return getattr(x.tensor, attr)
        shape = self._shape_of(x)
        if attr == "shape":
            return torch.Size(shape)
        if attr == "ndim":
            return len(shape)
        if attr == "dtype":
            if isinstance(x, IndexView):
                return torch.int64
            if isinstance(x, CLin):
                return torch.complex64
            return _TORCH_DTYPES[x.element if isinstance(x, Lin) else x.type.element]
        if attr == "device":
            return torch.device("cpu")
        if attr == "is_cuda":
            return False
        if attr in ("T", "mT"):
            rank = len(shape)
            perm = list(range(rank))[::-1] if attr == "T" else \
                list(range(rank - 2)) + [rank - 1, rank - 2]
            return self._perm_op(x, perm)
        self.unsupported(f"attribute '{attr}'")

    def op_size(self, args, kwargs):
        shape = self._shape_of(args[0])
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if dim is None:
            return torch.Size(shape)
        return shape[self.dim(dim, len(shape))]

    def op_dim(self, args, kwargs):
        return len(self._shape_of(args[0]))

    def op_numel(self, args, kwargs):
        return math.prod(self._shape_of(args[0]))

    def op_getitem(self, args, kwargs):
        container, index = args
        if isinstance(container, (tuple, list, torch.Size, dict)):
            return container[index]
        if isinstance(container, IndexView):
            self.unsupported("indexing or slicing the token or target ids")
        if _has_tensor(index):
            self.unsupported("indexing by a tensor (only integers, slices, None and ... are "
                             "supported)")
        return self.index(self.tensor(container), index)

    def index(self, x: ir.Value, index: Any) -> ir.Value:
        """``x[index]`` with integers, slices (any step > 0), None and ``...``:
        train.slice of the ranges, then a train.reshape that drops the
        integer-indexed dimensions and inserts the None ones."""
        items = list(index) if isinstance(index, tuple) else [index]
        if sum(1 for i in items if i is Ellipsis) > 1:
            self.fail("an index with more than one '...'")
        named = sum(1 for i in items if i is not None and i is not Ellipsis)
        if named > x.type.rank:
            self.fail(f"too many indices ({named}) for a tensor of rank {x.type.rank}")
        if Ellipsis in items:
            at = items.index(Ellipsis)
            items[at:at + 1] = [slice(None)] * (x.type.rank - named)
        items += [slice(None)] * (x.type.rank - sum(1 for i in items if i is not None))
        offsets, sizes, strides, shape = [], [], [], []
        dim = 0
        for item in items:
            if item is None:
                shape.append(1)
                continue
            if dim >= x.type.rank:
                break
            n = x.type.shape[dim]
            if isinstance(item, bool) or not isinstance(item, (int, slice)):
                self.unsupported(f"index {item!r}")
            if isinstance(item, int):
                if not -n <= item < n:
                    self.fail(f"index {item} is out of range for dimension {dim} of size {n}")
                offsets.append(item % n)
                sizes.append(1)
                strides.append(1)
            else:
                start, stop, step = item.indices(n)
                if step <= 0:
                    self.unsupported(f"slice step {step}: only positive steps are supported")
                count = max(0, (stop - start + step - 1) // step)
                if count == 0:
                    self.fail(f"the slice {item} of dimension {dim} (size {n}) is empty")
                offsets.append(start)
                sizes.append(count)
                strides.append(step)
                shape.append(count)
            dim += 1
        sliced = self.slice(x, offsets, sizes, strides)
        return self.reshape(sliced, tuple(shape))

    def op_split(self, args, kwargs):
        a = _Args(self, "split", args, kwargs, ["input", "split_size_or_sections"],
                  {"dim": 0, "split_size": None})
        size = a["split_size_or_sections"]
        x = self.tensor(a["input"])
        d = self.dim(a["dim"], x.type.rank)
        total = x.type.shape[d]
        if isinstance(size, (list, tuple)):
            if len(set(size)) != 1 or sum(size) != total:
                self.unsupported(f"sections {list(size)} of {total}: only equal parts "
                                 "are supported")
            parts = len(size)
        else:
            if not isinstance(size, int) or size <= 0 or total % size:
                self.unsupported(f"split size {size} of a dimension of {total}: only "
                                 "equal parts are supported")
            parts = total // size
        return self._split(x, parts, d)

    def _split(self, x: ir.Value, parts: int, d: int) -> tuple:
        if parts == 1:
            return (x,)
        base = self._base()
        names = [self.fresh(f"{base}_{i}") for i in range(parts)]
        results = tuple(self.f.split(names, x, d))
        for k, result in enumerate(results):
            self.defs[result.name] = ("split", x, d, k, parts)
        return results

    def op_chunk(self, args, kwargs):
        a = _Args(self, "chunk", args, kwargs, ["input", "chunks"], {"dim": 0})
        x = self.tensor(a["input"])
        d = self.dim(a["dim"], x.type.rank)
        chunks = a["chunks"]
        if not isinstance(chunks, int) or chunks <= 0 or x.type.shape[d] % chunks:
            self.unsupported(f"{chunks} chunks of a dimension of {x.type.shape[d]}: only "
                             "equal parts are supported")
        return self._split(x, chunks, d)

    def op_cat(self, args, kwargs):
        a = _Args(self, "cat", args, kwargs, ["tensors"], {"dim": 0})
        items = list(a["tensors"])
        if not items:
            self.fail("cat of no tensors")
        if any(isinstance(t, Lin) for t in items):
            lins = [self.lin_of(t) for t in items]
            return linear.cat(lins, self.dim(a["dim"], len(lins[0].shape)), self.fail)
        tensors = [self.tensor(t) for t in items]
        if len(tensors) == 1:
            return tensors[0]
        d = self.dim(a["dim"], tensors[0].type.rank)
        try:
            result = self.f.concat(self.fresh(self._base()), tensors, d)
        except ValueError as error:
            self.fail(str(error))
        self.defs[result.name] = ("concat", tensors, d)
        return result

    def op_stack(self, args, kwargs):
        a = _Args(self, "stack", args, kwargs, ["tensors"], {"dim": 0})
        items = list(a["tensors"])
        if not items:
            self.fail("stack of no tensors")
        rank = len(self._shape_of(items[0])) + 1
        d = self.dim(a["dim"], rank)
        if any(isinstance(t, Lin) for t in items):
            return linear.stack([self.lin_of(t) for t in items], d, self.fail)
        parts = []
        for t in items:
            x = self.tensor(t)
            parts.append(self.reshape(x, x.type.shape[:d] + (1,) + x.type.shape[d:]))
        if len(parts) == 1:
            return parts[0]
        try:
            result = self.f.concat(self.fresh(self._base()), parts, d)
        except ValueError as error:
            self.fail(str(error))
        self.defs[result.name] = ("concat", parts, d)
        return result

    def op_unbind(self, args, kwargs):
        a = _Args(self, "unbind", args, kwargs, ["input"], {"dim": 0})
        x = a["input"]
        shape = self._shape_of(x)
        d = self.dim(a["dim"], len(shape))
        if isinstance(x, Lin):
            return tuple(x.select(d, i) for i in range(shape[d]))
        x = self.tensor(x)
        parts = self._split(x, shape[d], d)
        return tuple(self.reshape(p, shape[:d] + shape[d + 1:]) for p in parts)

    def op_view_as_complex(self, args, kwargs):
        x = args[0]
        shape = self._shape_of(x)
        if not shape or shape[-1] != 2:
            self.fail(f"view_as_complex of a tensor of shape {list(shape)}: the last "
                      "dimension must be 2")
        lin = self.lin_of(x)
        return CLin(lin.select(-1, 0), lin.select(-1, 1))

    def op_view_as_real(self, args, kwargs):
        if not isinstance(args[0], CLin):
            self.unsupported("view_as_real of a tensor that is not a rotary embedding's "
                             "complex product")
        return args[0].as_real(self.fail)

    def op_silu(self, args, kwargs):
        a = _Args(self, "silu", args, kwargs, ["input"], {"inplace": False})
        return self.f.silu(self.fresh(self._base()), self.tensor(a["input"]))

    def _reduce(self, op: str, args, kwargs):
        a = _Args(self, op, args, kwargs, ["input"], {"dim": None, "keepdim": False,
                                                     "dtype": None})
        if a["dtype"] is not None:
            self.unsupported("dtype is not supported")
        x = self.tensor(a["input"])
        dims = a["dim"]
        if dims is None:
            dims = list(range(x.type.rank))
        elif isinstance(dims, int):
            dims = [dims]
        dims = sorted({self.dim(d, x.type.rank) for d in dims})
        result = getattr(self.f, op)(self.fresh(self._base()), x, dims)
        self.defs[result.name] = (op, x, dims)
        if a["keepdim"]:
            shape = tuple(1 if i in dims else s for i, s in enumerate(x.type.shape))
            result = self.reshape(result, shape)
        return result

    def op_sum(self, args, kwargs):
        return self._reduce("sum", args, kwargs)

    def op_mean(self, args, kwargs):
        return self._reduce("mean", args, kwargs)

    def op_expand(self, args, kwargs):
        x = self.tensor(args[0])
        sizes = _dims_tuple(args[1:]) if "size" not in kwargs else tuple(kwargs["size"])
        offset = len(sizes) - x.type.rank
        if offset < 0:
            self.fail(f"expand of {x.type} to {list(sizes)}")
        shape = tuple(x.type.shape[i - offset] if s == -1 and i >= offset else s
                      for i, s in enumerate(sizes))
        if shape == x.type.shape:
            return x
        try:
            result = self.f.broadcast(self.fresh(self._base()), x, shape)
        except ValueError as error:
            self.fail(str(error))
        self.defs[result.name] = ("broadcast", x)
        return result

    def op_expand_as(self, args, kwargs):
        return self.op_expand((args[0], self._shape_of(args[1])), {})

    def _like(self, x: Any, value: float, kwargs: dict) -> ir.Value:
        if kwargs.get("dtype") is not None:
            self.unsupported("dtype is not supported")
        return self.fill(value, self._shape_of(x))

    def op_ones_like(self, args, kwargs):
        return self._like(args[0], 1.0, kwargs)

    def op_zeros_like(self, args, kwargs):
        return self._like(args[0], 0.0, kwargs)

    def op_full_like(self, args, kwargs):
        a = _Args(self, "full_like", args, kwargs, ["input", "fill_value"], {"dtype": None})
        return self._like(a["input"], float(a["fill_value"]), {"dtype": a["dtype"]})

    def op_masked_fill(self, args, kwargs):
        a = _Args(self, "masked_fill", args, kwargs, ["input", "mask", "value"])
        x, mask, value = self.tensor(a["input"]), a["mask"], a["value"]
        if isinstance(value, torch.Tensor) and value.dim() == 0:
            value = value.item()
        if not isinstance(mask, torch.Tensor):
            self.unsupported("the mask must be a constant (a causal mask built from "
                             "torch.tril/torch.ones or a buffer)")
        if not _is_number(value) or not (value == -math.inf or value <= -1e9):
            self.unsupported(f"filling with {value!r}: only -inf (or a value at most -1e9) "
                             "before a softmax is supported")
        if not _is_causal(mask, x.type.shape):
            self.unsupported("the mask is not causal (True exactly above the diagonal of "
                             "the last two dimensions)")
        result = self.f.causal_mask(self.fresh(self._base()), x)
        self.defs[result.name] = ("causal_mask", x)
        return result

    # Dtype conversions.

    def _convert(self, x: Any, dtype: Any) -> Any:
        if isinstance(x, IndexView):
            if dtype in (torch.int64, torch.int32, None):
                return x
            self.unsupported(f"converting the ids to {dtype}")
        if isinstance(x, Lin) and (dtype is None or dtype in _ELEMENTS):
            return x if dtype is None else x.with_element(_ELEMENTS[dtype])
        v = self.tensor(x)
        if dtype is None:
            return v
        if dtype not in _ELEMENTS:
            self.unsupported(f"converting a float tensor to {dtype}")
        if _ELEMENTS[dtype] == v.type.element:
            return v
        result = self.f.cast(self.fresh(self._base()), v, _ELEMENTS[dtype])
        self.defs[result.name] = ("cast", v)
        return result

    def op_to(self, args, kwargs):
        dtype = kwargs.get("dtype")
        for arg in args[1:]:
            if isinstance(arg, torch.dtype):
                dtype = arg
            elif isinstance(arg, Lin):
                dtype = _TORCH_DTYPES[arg.element]
            elif isinstance(arg, (ir.Value, ParamRef)):
                dtype = _TORCH_DTYPES[self.tensor(arg).type.element]
            elif isinstance(arg, (str, torch.device)) or arg is None:
                continue
            else:
                self.unsupported(f"argument {arg!r}")
        return self._convert(args[0], dtype)

    def op_float(self, args, kwargs):
        return self._convert(args[0], torch.float32)

    def op_bfloat16(self, args, kwargs):
        return self._convert(args[0], torch.bfloat16)

    def op_long(self, args, kwargs):
        return self._convert(args[0], torch.int64)

    def op_int(self, args, kwargs):
        return self._convert(args[0], torch.int32)

    def op_type_as(self, args, kwargs):
        other = args[1]
        dtype = torch.int64 if isinstance(other, IndexView) else \
            _TORCH_DTYPES[other.element] if isinstance(other, Lin) else \
            _TORCH_DTYPES[self.tensor(other).type.element]
        return self._convert(args[0], dtype)


def _varying(x: Any) -> bool:
    """Whether `x` is a constant tensor of several distinct values."""
    if not isinstance(x, torch.Tensor) or x.numel() <= 1:
        return False
    flat = x.detach().reshape(-1)
    return not bool((flat == flat[0]).all())


def _is_additive_causal(mask: torch.Tensor, shape: Sequence[int]) -> bool:
    """Whether adding `mask` (broadcast to `shape`) is a causal mask: 0 on
    and below the diagonal of the last two dimensions, -inf (or at most
    -1e9) above, as ``torch.full((T, T), -inf).triu(1)``."""
    if mask.is_complex() or not mask.is_floating_point():
        return False
    if len(shape) < 2 or mask.dim() > len(shape) or mask.dim() < 2:
        return False
    t, s = shape[-2], shape[-1]
    if tuple(mask.shape[-2:]) != (t, s):
        return False
    lead = tuple(mask.shape[:-2])
    target_lead = tuple(shape[-2 - len(lead):-2]) if lead else ()
    if any(m != 1 and m != n for m, n in zip(lead, target_lead)):
        return False
    above = torch.ones(t, s, dtype=torch.bool).triu(1).expand(mask.shape)
    m = mask.detach()
    return bool((m[~above] == 0).all()) and bool((m[above] <= -1e9).all())


def _is_causal(mask: torch.Tensor, shape: Sequence[int]) -> bool:
    """Whether `mask` (broadcast to `shape`) is True exactly where j > i on
    the last two dimensions, i.e. ``~torch.tril(ones(T, S))``."""
    if len(shape) < 2 or mask.dim() > len(shape) or mask.dim() < 2:
        return False
    t, s = shape[-2], shape[-1]
    if tuple(mask.shape[-2:]) != (t, s):
        return False
    lead = tuple(mask.shape[:-2])
    target_lead = tuple(shape[-2 - len(lead):-2]) if lead else ()
    if any(m != 1 and m != n for m, n in zip(lead, target_lead)):
        return False
    expected = torch.ones(t, s, dtype=torch.bool).triu(1)
    m = mask.to(torch.bool) if mask.dtype == torch.bool else mask != 0
    return bool(torch.equal(m, expected.expand(m.shape)))


def _init_of(tensor: torch.Tensor) -> dict:
    """A ``train.param`` initializer that resembles `tensor`'s values:
    zeros, ones, or normal with the tensor's root mean square as std."""
    t = tensor.detach().float()
    if t.numel() and bool((t == 0).all()):
        return {"init": "zeros"}
    if t.numel() and bool((t == 1).all()):
        return {"init": "ones"}
    rms = float(t.pow(2).mean().sqrt())
    if not math.isfinite(rms) or rms <= 0:
        return {"init": "zeros"}
    return {"init": "normal", "std": float(f"{rms:.4g}")}


_DEF = re.compile(r"^\s*(%[A-Za-z0-9_$.-]+(?:\s*,\s*%[A-Za-z0-9_$.-]+)*)\s*=")
_USE = re.compile(r"%[A-Za-z0-9_$.-]+")


def dead_code_elimination(body: str) -> str:
    """Drops the lines of a function body whose results nothing uses (the
    ops are all pure); ``return`` and the closing brace stay."""
    lines = body.splitlines(keepends=True)
    live: set[str] = set()
    keep = [False] * len(lines)
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        match = _DEF.match(line)
        if match is None:
            keep[i] = True
            live.update(_USE.findall(line))
            continue
        defined = _USE.findall(match.group(1))
        if any(d in live for d in defined):
            keep[i] = True
            live.update(_USE.findall(line[match.end():].split(" : ", 1)[0]))
    return "".join(line for line, k in zip(lines, keep) if k)
