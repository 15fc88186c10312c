"""The ATen-level front end: a module's training forward as a functionalized
ATen graph, translated op by op into ``train`` IR through one op table.

Tracing (`trace`): on PyTorch 1.13 the forward, loss included, is traced by
``functorch.make_fx(functorch.experimental.functionalize(f))``, where ``f``
calls the module with its parameters and buffers as inputs (put in the
modules' ``_parameters``/``_buffers`` for the call). Functionalization resolves
every in-place op and every alias: ``x += y`` on a tensor that another name
also holds becomes a functional ``aten.add`` whose result both names then
read, ``masked_fill_`` a ``masked_fill``, ``mul_`` on a view a ``mul`` and a
scatter of the view back into its base. Composite ops that the table does
not list are decomposed by PyTorch's own decomposition tables
(`DECOMPOSITIONS`). On PyTorch 2, where ``torch.export`` exists, it gives
the same core ATen graph (``run_decompositions()``); the op table serves
both (`trace` picks the front end by version).

Translation (`AtenConverter`): placeholders are the parameters (each
``train.read`` under its canonical state-dict name), the buffers (constants)
and the two integer arguments. Every ``call_function`` node is looked up in
`OP_TABLE` (ATen overload -> emitter); a node whose inputs are all constants
(shapes, buffers, ``arange``, ``tril(ones)``) is evaluated with PyTorch on
the spot, and a constant that reaches an IR op becomes ``train.fill`` (one
value) or ``train.constant`` (dense). Any other op is an error naming the
ATen op, the module path it was called from and the user's source line.
Nothing is pattern-matched into fused ops here: the compiler's raising
passes do that on the IR.
"""

from __future__ import annotations

import io
import linecache
import math
import operator
import re
import struct
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.fx
import torch.nn as nn

from zeroc import ir
from zeroc.importer.errors import ImporterError, is_internal

aten = torch.ops.aten

TORCH_VERSION = tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2])
"""(major, minor) of the installed PyTorch."""

HAS_EXPORT = TORCH_VERSION >= (2, 1) and hasattr(torch, "export")
"""Whether ``torch.export`` exists (PyTorch 2.1 and later)."""


def _decompositions() -> dict:
    """PyTorch's decompositions for the composite ops the table lacks: each
    rewrites an op into ops of the table (var_mean into var and mean,
    std into var and sqrt, unbind into selects, stack into unsqueezes and
    cat, ...)."""
    from torch._decomp import get_decompositions
    wanted = [aten.var_mean, aten.std, aten.rsub, aten.split_with_sizes, aten.unbind,
              aten.stack, aten.logsumexp, aten.new_zeros, aten.new_ones, aten.new_full,
              aten.new_empty, aten.hardtanh, aten.clamp_min, aten.clamp_max,
              aten.mv]
    table = get_decompositions(wanted)
    # var_mean with a correction (unbiased=False, keepdim) decomposes into
    # prims: the table translates it (and std_mean) itself.
    table.pop(aten.var_mean.correction, None)
    return table


class _NativeDropout(torch.overrides.TorchFunctionMode):
    """Traces dropout in training mode (F.dropout, nn.Dropout) as
    ``aten.native_dropout`` (train.dropout), not as the draw into an empty
    tensor that its CompositeImplicit kernel writes, whose random values a
    trace would otherwise freeze."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__self__", None) is _REQUIRES_GRAD_ATTRIBUTE and args and \
                id(args[0]) in _REQUIRES_GRAD:
            # A traced parameter's requires_grad is its module's (the
            # functionalized inputs require none).
            return _REQUIRES_GRAD[id(args[0])]
        if getattr(func, "__self__", None) is _DATA_ATTRIBUTE and args:
            # `x.data` is x without its gradient, which the trace would not
            # record: traced as x.detach() (a constant's is a no-op, one
            # computed from the parameters an error).
            return args[0].detach()
        if func in (_F_DROPOUT, torch.dropout):
            return _native_dropout(func, args, kwargs)
        if func is torch.nn.functional.one_hot:
            # PyTorch 1.13's one_hot reads the ids' extremes as Python
            # numbers (a data-dependent branch); with num_classes given it is
            # a comparison of the ids against arange(num_classes).
            bound = dict(zip(("input", "num_classes"), args), **kwargs)
            n = bound.get("num_classes", -1)
            if n > 0:
                ids = bound["input"]
                return (ids.unsqueeze(-1) == torch.arange(n, device=ids.device)).to(torch.int64)
        # This handler runs with the mode off, so a composite function that
        # PyTorch hands it whole (F.multi_head_attention_forward, which
        # drops out its attention weights with F.dropout) calls F.dropout
        # unseen: it runs with F.dropout traced the same way.
        functional = torch.nn.functional
        if functional.dropout is not _F_DROPOUT:
            return func(*args, **kwargs)  # already inside such a call
        functional.dropout = _dropout_in_composite
        try:
            return func(*args, **kwargs)
        finally:
            functional.dropout = _F_DROPOUT


_F_DROPOUT = torch.nn.functional.dropout
_REQUIRES_GRAD_ATTRIBUTE = torch._C._TensorBase.requires_grad
_DATA_ATTRIBUTE = torch._C._TensorBase.data
_REQUIRES_GRAD: dict[int, bool] = {}
"""id of each parameter's traced input -> the parameter's requires_grad,
while tracing."""


def _native_dropout(func, args, kwargs):
    """F.dropout or torch.dropout in training mode as aten.native_dropout."""
    names = ("input", "p", "training", "inplace") if \
        func is _F_DROPOUT else ("input", "p", "train")
    bound = dict(zip(names, args), **kwargs)
    x, p = bound["input"], bound.get("p", 0.5)
    training = bound.get("training", bound.get("train", True))
    if training and p > 0:
        dropped = torch.native_dropout(x, p, True)[0]
        # inplace=True: the caller may keep using `x` and ignore the
        # result; functionalization turns the copy into an update.
        return x.copy_(dropped) if bound.get("inplace", False) else dropped
    return x


def _dropout_in_composite(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """F.dropout while a composite function runs (see _NativeDropout)."""
    return _native_dropout(_F_DROPOUT, (input, p, training, inplace), {})


DECOMPOSITIONS = None  # filled on first use (importing torch._decomp is slow)


class _InlineCheckpoint:
    """Activation checkpointing (``torch.utils.checkpoint.checkpoint``,
    however the model imported it) runs its function inline while tracing:
    recomputing activations in the backward changes memory, not values, and
    its autograd.Function cannot be traced (functorch refuses it). The
    compiler plans the activations' memory itself."""

    def __enter__(self):
        import warnings
        from torch.utils import checkpoint
        self.module = checkpoint
        self.function = checkpoint.CheckpointFunction
        self.apply = self.function.__dict__.get("apply")
        self.function.apply = staticmethod(lambda run, preserve, *args: run(*args))
        # use_reentrant=False: saved-tensor hooks, which functorch refuses too.
        self.plain = getattr(checkpoint, "_checkpoint_without_reentrant", None)
        if self.plain is not None:
            checkpoint._checkpoint_without_reentrant = \
                lambda run, preserve=True, *args, **kwargs: run(*args, **kwargs)
        # (checkpoint() warns that no input requires a gradient: the trace's
        # inputs do not.)
        self.warnings = warnings.catch_warnings()
        self.warnings.__enter__()
        warnings.filterwarnings("ignore", message="None of the inputs have requires_grad")
        return self

    def __exit__(self, *exc):
        self.warnings.__exit__(*exc)
        if self.apply is None:
            del self.function.apply
        else:
            self.function.apply = self.apply
        if self.plain is not None:
            self.module._checkpoint_without_reentrant = self.plain
        return False


# ---------------------------------------------------------------------------
# Tracing


class _Context:
    """The module path being run while tracing (forward hooks)."""

    def __init__(self, root: nn.Module):
        self.names = {id(m): n for n, m in root.named_modules(remove_duplicate=False)}
        self.stack: list[str] = []

    def pre(self, module, inputs):
        name = self.names.get(id(module))
        if name is not None:
            self.stack.append(name)

    def post(self, module, inputs, output):
        if id(module) in self.names and self.stack:
            self.stack.pop()

    @property
    def path(self) -> str:
        for name in reversed(self.stack):
            if name:
                return name
        return ""


def _user_frames() -> list[tuple[str, int, str]]:
    """(file, line, source) of the user's frames on the stack, innermost
    first."""
    frames = []
    for frame in reversed(traceback.extract_stack()):
        if not is_internal(frame.filename) and not frame.filename.startswith("<") and \
                "functorch" not in frame.filename:
            frames.append((frame.filename, frame.lineno, (frame.line or "").strip()))
    return frames


def trace(module: nn.Module, inputs: Sequence[torch.Tensor], constants: dict | None,
          params: Sequence[tuple[str, list[str], torch.Tensor]],
          buffers: Sequence[tuple[str, torch.Tensor]]) -> torch.fx.GraphModule:
    """The functionalized ATen graph of ``module(*inputs, **constants)``.

    Its placeholders are the parameters (one per tensor, in `params` order;
    each is passed under all its names), the buffers, then `inputs`. Each
    node's ``meta["zeroc_module"]`` is the module path it was created in and
    ``meta["zeroc_frames"]`` the user's frames.
    """
    if HAS_EXPORT:
        return _trace_export(module, inputs, constants, params, buffers)
    return _trace_make_fx(module, inputs, constants, params, buffers)


def _swap(module: nn.Module, name: str, kind: str, tensor) -> tuple:
    """Puts `tensor` as the parameter or buffer (`kind`) of dotted `name`;
    returns (table, local name, the tensor it replaced)."""
    prefix, _, local = name.rpartition(".")
    owner = module.get_submodule(prefix) if prefix else module
    table = getattr(owner, kind)
    old = table[local]
    table[local] = tensor
    return table, local, old


def _trace_make_fx(module, inputs, constants, params, buffers):
    global DECOMPOSITIONS
    from functorch import make_fx
    from functorch.experimental import functionalize
    from torch.fx.experimental import proxy_tensor

    if DECOMPOSITIONS is None:
        DECOMPOSITIONS = _decompositions()
    context = _Context(module)
    base = proxy_tensor.PythonKeyTracer

    class Tracer(base):
        def create_node(self, *args, **kwargs):
            node = super().create_node(*args, **kwargs)
            node.meta["zeroc_module"] = context.path
            node.meta["zeroc_frames"] = _user_frames()
            node.meta["zeroc_no_grad"] = not torch.is_grad_enabled()
            return node

    n_params = len(params)

    def f(flat, *args):
        # Each parameter (under all its names) and buffer is the traced input
        # in its module's _parameters/_buffers for the call, so that the
        # forward reads it however it asks: `self.weight`, and
        # `self.parameters()` (an L2 penalty in the loss), which PyTorch
        # 1.13's functional_call leaves to the module's own tensors (a
        # constant of the trace, its gradient lost).
        swapped = []
        try:
            for (_, names, original), tensor in zip(params, flat[:n_params]):
                # `p.requires_grad` reads the module's (see _NativeDropout):
                # a penalty over the trainable parameters filters on it.
                _REQUIRES_GRAD[id(tensor)] = original.requires_grad
                for name in names:
                    swapped.append(_swap(module, name, "_parameters", tensor))
            for (name, _), tensor in zip(buffers, flat[n_params:]):
                swapped.append(_swap(module, name, "_buffers", tensor))
            return module(*args, **(constants or {}))
        finally:
            for table, local, old in reversed(swapped):
                table[local] = old
            _REQUIRES_GRAD.clear()

    flat = [p for _, _, p in params] + [b for _, b in buffers]
    pre = nn.modules.module.register_module_forward_pre_hook(context.pre)
    post = nn.modules.module.register_module_forward_hook(context.post)
    proxy_tensor.PythonKeyTracer = Tracer
    try:
        with _NativeDropout(), _InlineCheckpoint():
            graph = make_fx(functionalize(f), decomposition_table=DECOMPOSITIONS)(
                [t.detach() for t in flat], *inputs)
    finally:
        proxy_tensor.PythonKeyTracer = base
        pre.remove()
        post.remove()
    return graph


def _trace_export(module, inputs, constants, params, buffers):  # pragma: no cover - torch 2
    """PyTorch 2: ``torch.export`` gives the core ATen graph, parameters and
    buffers lifted to placeholders described by the graph signature. They
    are put in the order of `params`, `buffers`, inputs
    (``zeroc_placeholders``); lifted tensor constants become constants
    (``zeroc_constants``). PyTorch 1.13 (installed here) has no torch.export:
    this path is untested."""
    # Dropout traced as native_dropout, as on the make_fx path (its
    # CompositeImplicit kernel would freeze one mask into a constant).
    with _NativeDropout():
        exported = torch.export.export(module, tuple(inputs), constants or None)
        exported = exported.run_decompositions()
    graph_module = exported.graph_module
    signature = exported.graph_signature
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    by_target, users, lifted = {}, [], {}
    for spec, node in zip(signature.input_specs, placeholders):
        kind = getattr(spec.kind, "name", str(spec.kind))
        if kind == "USER_INPUT":
            users.append(node)
        elif kind in ("CONSTANT_TENSOR", "CUSTOM_OBJ"):
            lifted[node] = exported.constants[spec.target]
        else:
            by_target[spec.target] = node
    order = []
    for _, names, _ in params:
        found = [by_target[n] for n in names if n in by_target]
        if not found:
            raise ImporterError(f"torch.export did not lift parameter {names[0]}")
        order.append(found[0])
    for name, _ in buffers:
        if name not in by_target:
            raise ImporterError(f"torch.export did not lift buffer {name}")
        order.append(by_target[name])
    order += users
    for node in graph_module.graph.nodes:
        frames = []
        location = node.meta.get("stack_trace")
        if location:
            lines = location.splitlines()
            for i, line in enumerate(lines):
                match = re.search(r'File "([^"]+)", line (\d+)', line)
                if match and not is_internal(match.group(1)):
                    code = lines[i + 1].strip() if i + 1 < len(lines) else ""
                    frames.insert(0, (match.group(1), int(match.group(2)), code))
        node.meta["zeroc_frames"] = frames
        stack = node.meta.get("nn_module_stack") or {}
        node.meta["zeroc_module"] = list(stack.values())[-1][0] if stack else ""
    graph_module.zeroc_placeholders = order
    graph_module.zeroc_constants = lifted
    return graph_module


# ---------------------------------------------------------------------------
# Values


def _init_of(tensor: torch.Tensor) -> dict:
    """A ``train.param`` initializer that resembles `tensor`'s values:
    zeros, ones, or normal with the tensor's root mean square as std (the
    executable's --seed initialization; --init gives the exact values)."""
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


@dataclass(frozen=True)
class ParamInput:
    """A parameter placeholder: its canonical name and tensor."""

    name: str
    tensor: torch.Tensor


_FLOATS = {torch.float32: "f32", torch.bfloat16: "bf16"}
_INTS = {torch.int32: "i32", torch.int64: "i64"}


def _hex(tensor: torch.Tensor, element: str) -> str:
    """A dense attribute's hexadecimal form (little-endian raw data)."""
    if element == "f32":
        data = tensor.detach().to(torch.float32).contiguous().numpy().tobytes()
    elif element == "bf16":
        data = tensor.detach().to(torch.bfloat16).view(torch.int16).contiguous().numpy().tobytes()
    elif element == "i32":
        data = tensor.detach().to(torch.int32).contiguous().numpy().tobytes()
    else:
        data = tensor.detach().to(torch.int64).contiguous().numpy().tobytes()
    return '"0x' + data.hex().upper() + '"'


def float_literal(value: float) -> str:
    """An MLIR f64 literal: decimal when finite, the IEEE bits in hex for
    infinities and NaN (``0xFFF0000000000000`` is -inf)."""
    value = float(value)
    if math.isfinite(value):
        return ir.format_float(value)
    return "0x" + struct.pack(">d", value).hex().upper()


@dataclass(frozen=True)
class ComplexValue:
    """A complex tensor computed from the parameters, held as its real and
    imaginary parts (two real IR values of its shape): what
    ``view_as_complex`` of an [..., n, 2] tensor gives. The dialect has no
    complex type; only the chain view_as_complex -> multiplication by a
    constant complex tensor -> view_as_real is translated (`_complex`)."""

    real: ir.Value
    imag: ir.Value


def _is_tensorish(x: Any) -> bool:
    return isinstance(x, (ir.Value, ParamInput, ComplexValue, _MaskedSelection))


def _any(obj: Any, pred: Callable[[Any], bool]) -> bool:
    if pred(obj):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_any(x, pred) for x in obj)
    if isinstance(obj, dict):
        return any(_any(x, pred) for x in obj.values())
    return False


_RANDOM = {"rand", "randn", "randint", "bernoulli", "normal", "uniform", "rand_like",
           "randn_like", "randint_like", "randperm", "multinomial", "native_dropout",
           "exponential", "geometric", "cauchy", "log_normal", "random"}
"""Random ops (and their in-place forms, ``bernoulli_``): never evaluated as
constants at trace time (a frozen draw), an error unless the table maps
them."""


def op_name(target: Any) -> str:
    """``aten.add.Tensor`` for an ATen overload, else a readable name."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if target is operator.getitem:
        return "operator.getitem"
    return getattr(target, "__name__", str(target))


# ---------------------------------------------------------------------------
# The converter


class AtenConverter:
    """Writes the ``train.forward`` body of a functionalized ATen graph."""

    def __init__(self, graph_module: torch.fx.GraphModule, placeholders: Sequence[Any],
                 element: str, decay: Callable[[str, torch.Tensor], bool],
                 names: Sequence[str] = (), arguments: Sequence[str] = ("tokens", "targets")):
        self.gm = graph_module
        self.input_names = list(names)
        self.argument_names = list(arguments)
        self.placeholder_names: dict[torch.fx.Node, str] = {}
        self.element = element
        self.decay = decay
        self.inputs = list(placeholders)
        self.params: dict[str, ir.Param] = {}
        self.param_tensors: dict[str, torch.Tensor] = {}
        self.out = io.StringIO()
        self.f = ir.FunctionWriter(self.out, self.params)
        self.names: set[str] = set()
        self.reads: dict[str, ir.Value] = {}
        self.defs: dict[str, tuple] = {}
        self.arguments: list[ir.Value] = []
        self.node: torch.fx.Node | None = None
        self.loss: ir.Value | None = None
        self.vocab: int | None = None
        self.dropout_sites = 0
        self.id_bound: int | None = None
        self.no_grad: dict[str, torch.fx.Node] = {}
        self.fills: dict[tuple, ir.Value] = {}

    # Errors and names.

    def location(self, node: torch.fx.Node | None = None):
        node = node or self.node
        frames = node.meta.get("zeroc_frames") if node is not None else None
        return frames[0] if frames else None

    def source_location(self, node: torch.fx.Node) -> str | None:
        """The MLIR location of `node`: the user's innermost source line (the
        column of its first character), named by the module path it ran in,
        ``loc("blocks.0.attn"("model.py":42:9))``; None without a user frame."""
        where = self.location(node)
        if where is None:
            return None
        filename, line, _ = where
        text = linecache.getline(filename, line)
        column = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
        return ir.file_location(filename, line, column, node.meta.get("zeroc_module") or None)

    def fail(self, message: str, node: torch.fx.Node | None = None) -> None:
        node = node or self.node
        target = op_name(self.node.target if self.node is not None else node.target) \
            if node is not None else None
        if node is not None:
            where = node.meta.get("zeroc_module")
            prefix = f"{target}"
            if where:
                prefix += f" (in module {where})"
            message = f"{prefix}: {message}"
        raise ImporterError(message, location=self.location(node), target=target)

    def fresh(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_$.-]", "_", base) or "v"
        if base[0].isdigit() or base[0] in "$.-":
            base = "v" + base
        name, i = base, 1
        while name in self.names:
            name = f"{base}_{i}"
            i += 1
        self.names.add(name)
        return name

    def _name(self, suffix: str = "") -> str:
        base = self.node.name if self.node is not None else "v"
        return self.fresh(base + suffix)

    # Emission of ops that zeroc.ir.FunctionWriter does not write.

    def emit(self, op: str, operands: Sequence[ir.Value], type_: ir.TensorType, text: str,
             functional: bool = False, suffix: str = "") -> ir.Value:
        """``%r = train.<op> <text> : <types>``; `functional` writes
        ``(operand types) -> type``, else ``operand type -> type`` or the
        single type when they are equal."""
        name = self._name(suffix)
        result = self.f._define(name, type_)
        if functional:
            types = f"({', '.join(str(v.type) for v in operands)}) -> {type_}"
        elif operands and operands[0].type != type_:
            types = f"{operands[0].type} -> {type_}"
        else:
            types = str(type_)
        self.f._line(f"{result} = train.{op} {text} : {types}")
        self.defs[result.name] = (op, tuple(operands))
        return result

    def track(self, value: ir.Value, op: str, *operands) -> ir.Value:
        self.defs[value.name] = (op, tuple(operands))
        return value

    # Values.

    def read(self, ref: ParamInput) -> ir.Value:
        if ref.name in self.reads:
            return self.reads[ref.name]
        tensor = ref.tensor
        if _FLOATS.get(tensor.dtype) != self.element:
            self.fail(f"parameter {ref.name} is {tensor.dtype}; every parameter must be "
                      f"{'torch.float32' if self.element == 'f32' else 'torch.bfloat16'}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", ref.name):
            self.fail(f"parameter name '{ref.name}' is not a valid MLIR symbol (it must start "
                      "with a letter or '_'); give the submodule a name (an attribute, not "
                      "an index of nn.Sequential at the top level)")
        self.params[ref.name] = ir.Param(
            ref.name, ir.TensorType(tuple(tensor.shape), self.element),
            **_init_of(tensor), decay=bool(self.decay(ref.name, tensor)))
        self.param_tensors[ref.name] = tensor
        value = self.f.read(self.fresh(ref.name), ref.name)
        self.reads[ref.name] = value
        return value

    def float_type(self, shape: Sequence[int], element: str | None = None) -> ir.TensorType:
        return ir.TensorType(tuple(int(s) for s in shape), element or self.element)

    def constant(self, t: torch.Tensor, element: str | None = None) -> ir.Value:
        """A constant tensor: ``train.fill`` when it holds one value, else
        ``train.constant`` (float, or integer ids)."""
        if t.dtype == torch.bool:
            t = t.to(torch.float32)
        if t.is_floating_point():
            element = element or self.element
        elif t.dtype in (torch.int32, torch.int64, torch.int16, torch.int8, torch.uint8):
            element = element or "i64"
        elif t.is_complex():
            self.fail(f"a complex constant ({t.dtype}) reaches an op other than the "
                      "multiplication of a view_as_complex value: the train dialect has no "
                      "complex type (only view_as_complex -> multiplication by a constant "
                      "complex tensor -> view_as_real is translated, docs/importer.md)")
        else:
            self.fail(f"a constant of type {t.dtype} has no train equivalent")
        shape = tuple(t.shape)
        flat = t.detach().reshape(-1)
        if element in ("f32", "bf16") and flat.numel() and bool((flat == flat[0]).all()) \
                and not bool(torch.isnan(flat[0])):
            return self.fill(float(flat[0]), shape, element)
        type_ = ir.TensorType(shape, element)
        name = self._name("_const")
        result = self.f._define(name, type_)
        self.f._line(f"{result} = train.constant dense<{_hex(t, element)}> : {type_}")
        self.defs[result.name] = ("constant", (), t)
        return result

    def fill(self, value: float, shape: Sequence[int] = (), element: str | None = None
             ) -> ir.Value:
        type_ = self.float_type(shape, element)
        key = (float(value), str(type_))
        if key in self.fills and not math.isnan(value):
            return self.fills[key]
        name = self._name("_fill")
        result = self.f._define(name, type_)
        self.f._line(f"{result} = train.fill {float_literal(value)} : {type_}")
        self.defs[result.name] = ("fill", (), float(value))
        self.fills[key] = result
        return result

    def tensor(self, x: Any, like: ir.Value | None = None) -> ir.Value:
        """`x` as an IR value: parameters are read, constants written."""
        if isinstance(x, ir.Value):
            return x
        if isinstance(x, ParamInput):
            return self.read(x)
        if isinstance(x, torch.Tensor):
            # Next to a float value a constant is of its type, an integer or
            # boolean one too (PyTorch's type promotion: `x / counts`).
            element = like.type.element if like is not None and self.is_float(like) and \
                not x.is_complex() else None
            return self.constant(x, element)
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            element = like.type.element if like is not None else None
            return self.fill(float(x), (), element)
        self.fail(f"expected a tensor, got {type(x).__name__} {x!r}")

    def is_float(self, v: ir.Value) -> bool:
        return v.type.element in ("f32", "bf16")

    # Shape helpers.

    def reshape(self, x: ir.Value, shape: Sequence[int]) -> ir.Value:
        """`x` with `shape`; a reshape of a reshape is one reshape of the
        first one's operand, none when that has the shape already."""
        shape = tuple(int(s) for s in shape)
        if shape == x.type.shape:
            return x
        d = self.defs.get(x.name)
        if d is not None and d[0] == "reshape":
            return self.reshape(d[1][0], shape)
        return self.track(self.f.reshape(self._name(), x, shape), "reshape", x)

    def broadcast(self, x: ir.Value, shape: Sequence[int]) -> ir.Value:
        shape = tuple(int(s) for s in shape)
        if x.type.shape == shape:
            return x
        if len(x.type.shape) < len(shape):
            x = self.reshape(x, (1,) * (len(shape) - len(x.type.shape)) + x.type.shape)
            if x.type.shape == shape:
                return x
        return self.track(self.f.broadcast(self._name(), x, shape), "broadcast", x)

    def transpose(self, x: ir.Value, perm: Sequence[int]) -> ir.Value:
        perm = [int(p) % max(x.type.rank, 1) for p in perm]
        if perm == list(range(x.type.rank)):
            return x
        return self.track(self.f.transpose(self._name(), x, perm), "transpose", x, tuple(perm))

    def dim(self, d: int, rank: int) -> int:
        d = int(d)
        if not -max(rank, 1) <= d < max(rank, 1):
            self.fail(f"dimension {d} out of range for rank {rank}")
        return d % max(rank, 1)

    def result_shape(self) -> tuple[int, ...] | None:
        meta = self.node.meta.get("tensor_meta") if self.node is not None else None
        if meta is None:
            val = self.node.meta.get("val") if self.node is not None else None
            if isinstance(val, torch.Tensor):
                return tuple(int(s) for s in val.shape)
            return None
        shape = getattr(meta, "shape", None)
        return tuple(int(s) for s in shape) if shape is not None else None

    # The walk.

    def run(self, input_types: Sequence[ir.TensorType]) -> None:
        env: dict[torch.fx.Node, Any] = {}
        placeholders = getattr(self.gm, "zeroc_placeholders", None) or \
            [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(self.inputs) + len(input_types):
            raise ImporterError(f"the traced graph has {len(placeholders)} inputs, expected "
                                f"{len(self.inputs) + len(input_types)}")
        names = self.argument_names
        for node, value in zip(placeholders, self.inputs + [None] * len(input_types)):
            env[node] = value
        for node, name in zip(placeholders, self.input_names):
            self.placeholder_names[node] = name
        self.param_names = {x.name for x in self.inputs if isinstance(x, ParamInput)}
        for node, value in (getattr(self.gm, "zeroc_constants", None) or {}).items():
            env[node] = value.detach().clone() if isinstance(value, torch.Tensor) else value
        for i, (node, type_) in enumerate(zip(placeholders[len(self.inputs):], input_types)):
            arg = self.f.argument(self.fresh(names[i] if i < 2 else f"arg{i}"), type_)
            self.arguments.append(arg)
            env[node] = arg
        self.id_bound = self._id_bound()
        output = None
        for node in self.gm.graph.nodes:
            self.node = node
            # The ops written for the node carry its PyTorch source line.
            self.f.location = self.source_location(node)
            if node.op == "placeholder":
                continue
            if node.op == "get_attr":
                value = getattr(self.gm, node.target)
                env[node] = value.detach().clone() if isinstance(value, torch.Tensor) \
                    else value
                continue
            if node.op == "output":
                output = torch.fx.node.map_arg(node.args[0], lambda n: env[n])
                break
            args = torch.fx.node.map_arg(node.args, lambda n: env[n])
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
            env[node] = self.convert(node, args, kwargs)
        self.node = None
        self.f.location = None
        self.finish(output)

    def _id_bound(self) -> int | None:
        """A bound on the token ids, for comparisons of the ids read before
        the loss (a padding mask): the largest of the loss's class count and
        the row counts of the tables indexed by ids (the ids index them, so
        they are below it); None without either."""
        def shape(node):
            meta = node.meta.get("tensor_meta") if isinstance(node, torch.fx.Node) else None
            val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
            shape = getattr(meta, "shape", None) or getattr(val, "shape", None)
            return tuple(int(s) for s in shape) if shape is not None else None
        sizes = []
        for node in self.gm.graph.nodes:
            if node.op != "call_function" or not node.args:
                continue
            if node.target in (aten.nll_loss_forward.default, aten.nll_loss2d_forward.default):
                logp = shape(node.args[0])
                if logp:
                    sizes.append(logp[0] if len(logp) == 1 else logp[1])
            elif node.target is aten.embedding.default:
                table = shape(node.args[0])
                if table:
                    sizes.append(table[0])
        return max(sizes) if sizes else None

    def convert(self, node: torch.fx.Node, args: tuple, kwargs: dict) -> Any:
        target = node.target
        if node.op != "call_function":
            self.fail(f"unexpected {node.op} node in the ATen graph")
        if target is operator.getitem:
            return args[0][args[1]]
        name = op_name(target)
        packet = name.split(".")[1] if name.startswith("aten.") else name
        if target in (aten._local_scalar_dense.default, aten.item.default,
                      aten.is_nonzero.default):
            self.fail("a tensor's value is read as a Python number (a data-dependent branch, "
                      "`if tensor:`, .item() or int(tensor)): the traced graph would hold "
                      "only the branch taken for the example inputs")
        if packet in ("nonzero", "unique", "_unique2", "unique_dim", "unique_consecutive"):
            self.fail("the result's shape depends on the tensor's values (data-dependent "
                      "shape), which a compiled training step cannot have")
        if target is aten.copy_.default:
            dst, src = node.args[0], node.args[1]
            what = "an input"
            if dst in self.placeholder_names:
                name = self.placeholder_names[dst]
                kind = "parameter" if name in self.param_names else "buffer"
                what = f"{kind} {name}"
            self.fail(f"the forward writes into {what} in place (running statistics, a "
                      "counter): the train dialect has no mutable state but the parameters",
                      src if isinstance(src, torch.fx.Node) else node)
        for x in (*args, *kwargs.values()):
            if isinstance(x, _Unavailable):
                self.fail(f"reads {x.what}: not supported")
        if not _any((args, kwargs), _is_tensorish) and packet.rstrip("_") not in _RANDOM:
            return self.evaluate(node, args, kwargs)
        if _any((args, kwargs), lambda x: isinstance(x, _MaskedSelection)) and \
                target not in (aten.mean.default, aten.sum.default):
            self.fail("the result's shape depends on the tensor's values (data-dependent "
                      "shape): a masked_select of a computed mask is supported only when "
                      "a mean or a sum reads it")
        if target in _COMPLEX_OPS or _any((args, kwargs), _is_complex):
            return _complex(self, target, args, kwargs)
        emitter = OP_TABLE.get(target)
        if emitter is None:
            self.fail("unsupported ATen op: the train dialect has no equivalent "
                      "(see the op table in docs/importer.md)")
        no_grad = node.meta.get("zeroc_no_grad")
        existing = set(self.names) if no_grad else None
        try:
            result = emitter(self, *args, **kwargs)
        except ImporterError:
            raise
        except (ValueError, TypeError, IndexError, KeyError) as error:
            self.fail(f"cannot be translated: {error}")
        self.check_shape(node, result)
        if no_grad:
            # Computed under torch.no_grad(): an error where an op with a
            # gradient reads it and it would carry one (a comparison's mask
            # carries none).
            for x in (result if isinstance(result, (list, tuple)) else [result]):
                if isinstance(x, ir.Value) and x.name not in existing:
                    self.no_grad[x.name] = node
        else:
            for x in (*args, *kwargs.values()):
                for v in (x if isinstance(x, (list, tuple)) else [x]):
                    if isinstance(v, ir.Value) and v.name in self.no_grad and \
                            not _gradient_free(self, v):
                        self.fail("reads a value that this line computes under "
                                  "torch.no_grad() from values with a gradient: PyTorch "
                                  "stops the gradient there, which the train dialect cannot "
                                  "express (compute it outside no_grad, or from constants)",
                                  self.no_grad[v.name])
        return result

    def evaluate(self, node, args, kwargs):
        """An op of constants, computed now with PyTorch."""
        try:
            return node.target(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - any op
            self.fail(f"evaluating this op of constants failed: {type(error).__name__}: "
                      f"{error}")

    def check_shape(self, node, result):
        if not isinstance(result, ir.Value):
            return
        expected = self.result_shape()
        if expected is not None and tuple(expected) != tuple(result.type.shape):
            self.fail(f"internal error: the IR value has shape {list(result.type.shape)}, "
                      f"PyTorch's {list(expected)}")

    def finish(self, output: Any) -> None:
        """Returns the loss: the only scalar f32 value among the outputs."""
        found = []

        def visit(x):
            if isinstance(x, ir.Value):
                if x.type.shape == () and x.type.element in ("f32", "bf16"):
                    found.append(x)
            elif isinstance(x, (tuple, list)):
                for y in x:
                    visit(y)
            elif isinstance(x, dict):
                for y in x.values():
                    visit(y)
        visit(output)
        if len(found) != 1:
            raise ImporterError(
                f"forward must return one scalar loss computed from the inputs, found "
                f"{len(found)} scalar values among its outputs")
        loss = found[0]
        if loss.type.element != "f32":
            loss = self.f.cast(self.fresh("loss_f32"), loss, "f32")
        self.loss = loss
        self.f.ret(loss)


# ---------------------------------------------------------------------------
# Emitters: one per ATen op (or family of overloads). Each takes the node's
# arguments (IR values, ParamInputs, constants) and returns the IR value(s).


def _value(c: AtenConverter, x: Any, like: ir.Value | None = None) -> ir.Value:
    return c.tensor(x, like)


def _first_value(*xs) -> ir.Value | None:
    for x in xs:
        if isinstance(x, ir.Value) and x.type.element in ("f32", "bf16"):
            return x
    return None


def _operands(c: AtenConverter, a: Any, b: Any) -> tuple[ir.Value, ir.Value]:
    a = c.read(a) if isinstance(a, ParamInput) else a
    b = c.read(b) if isinstance(b, ParamInput) else b
    like = _first_value(a, b)
    return _value(c, a, like), _value(c, b, like)


def _binary(op: str):
    def emit(c: AtenConverter, a, b, alpha=1, rounding_mode=None):
        if rounding_mode is not None:
            c.fail(f"rounding_mode={rounding_mode!r} is not supported")
        a = c.read(a) if isinstance(a, ParamInput) else a
        b = c.read(b) if isinstance(b, ParamInput) else b
        if op == "mul" and isinstance(b, (int, float)) and isinstance(a, ir.Value):
            return c.track(c.f.scale(c._name(), a, float(b)), "scale", a, float(b))
        if op == "mul" and isinstance(a, (int, float)) and isinstance(b, ir.Value):
            return c.track(c.f.scale(c._name(), b, float(a)), "scale", b, float(a))
        if op == "div" and isinstance(b, (int, float)) and isinstance(a, ir.Value) and b != 0:
            return c.track(c.f.scale(c._name(), a, 1.0 / float(b)), "scale", a, 1.0 / float(b))
        if alpha != 1:
            b = c.read(b) if isinstance(b, ParamInput) else b
            if isinstance(b, ir.Value):
                b = c.track(c.f.scale(c._name("_alpha"), b, float(alpha)), "scale", b)
            else:
                b = b * alpha
        x, y = _operands(c, a, b)
        return c.track(c.f.binary(op, c._name(), x, y), op, x, y)
    return emit


def _rsub(c, a, b, alpha=1):
    """``b - alpha * a``."""
    if alpha != 1:
        a = _binary("mul")(c, a, alpha)
    return _binary("sub")(c, b, a)


def _unary(op: str):
    def emit(c: AtenConverter, x):
        x = c.tensor(x)
        return c.emit(op, [x], x.type, f"{x}")
    return emit


def _reciprocal(c, x):
    """``1 / x``: a train.div of a one-value fill."""
    x = c.tensor(x)
    one = c.fill(1.0, (), x.type.element)
    return c.track(c.f.div(c._name(), one, x), "div", one, x)


def _neg(c, x):
    x = c.tensor(x)
    return c.emit("neg", [x], x.type, f"{x}")


def _sqrt(c, x):
    x = c.tensor(x)
    return c.track(c.f.sqrt(c._name(), x), "sqrt", x)


def _relu(c, x):
    x = c.tensor(x)
    return c.track(c.f.relu(c._name(), x), "relu", x)


def _silu(c, x):
    x = c.tensor(x)
    return c.track(c.f.silu(c._name(), x), "silu", x)


def _sigmoid(c, x):
    # sigmoid(x) = 1 / (1 + exp(-x)), written with generic ops.
    x = c.tensor(x)
    n = c.emit("neg", [x], x.type, f"{x}", suffix="_neg")
    e = c.emit("exp", [n], x.type, f"{n}", suffix="_exp")
    one = c.fill(1.0, (), x.type.element)
    d = c.track(c.f.add(c._name("_den"), e, one), "add", e, one)
    return c.track(c.f.div(c._name(), one, d), "div", one, d)


def _gelu(c, x, approximate="none"):
    x = c.tensor(x)
    kind = {"none": "erf", "tanh": "tanh"}.get(approximate)
    if kind is None:
        c.fail(f"approximate={approximate!r}")
    return c.track(c.f.gelu(c._name(), x, kind), "gelu", x, kind)


def _pow(c, x, exponent):
    if isinstance(exponent, (ir.Value, ParamInput, torch.Tensor)):
        if isinstance(exponent, torch.Tensor) and exponent.numel() == 1:
            exponent = float(exponent)
        else:
            c.fail("only a number exponent is supported (train.pow by a scalar)")
    if isinstance(x, (int, float)):
        c.fail("a number raised to a tensor power is not supported")
    x = c.tensor(x)
    return c.emit("pow", [x], x.type, f"{x} by {float_literal(float(exponent))}")


def _matmul_operand(c: AtenConverter, b: ir.Value) -> tuple[ir.Value, bool]:
    """(`rhs`, transpose_rhs): a rank-2 (or batched) transpose of the last two
    dimensions folds into the matmul."""
    d = c.defs.get(b.name)
    if d is not None and d[0] == "transpose":
        (src, perm) = d[1]
        rank = src.type.rank
        if rank >= 2 and list(perm) == list(range(rank - 2)) + [rank - 1, rank - 2]:
            return src, True
    return b, False


def _unmerged(c: AtenConverter, v: ir.Value) -> ir.Value | None:
    """The operand of a reshape that made the rank-3 `v` by merging the
    leading (batch) dimensions of a value of rank > 3, else None."""
    d = c.defs.get(v.name)
    if d is None or d[0] != "reshape":
        return None
    src = d[1][0]
    if src.type.rank <= 3 or src.type.shape[-2:] != v.type.shape[-2:] or \
            math.prod(src.type.shape[:-2]) != v.type.shape[0]:
        return None
    return src


def _mm(c, a, b):
    """``aten.mm``/``aten.bmm``: train.matmul. torch.matmul of [*batch, m, k]
    tensors reaches ATen as a bmm between reshapes that merge and split the
    batch dimensions: that is one batched train.matmul of the originals (so
    `q @ k.transpose(-2, -1)` on [B, H, T, D] heads stays one op over the
    heads, with transpose_rhs)."""
    a, b = c.tensor(a), c.tensor(b)
    if a.type.rank == 3 and b.type.rank == 3:
        a4, b4 = _unmerged(c, a), _unmerged(c, b)
        if a4 is not None and b4 is not None and \
                a4.type.shape[:-2] == b4.type.shape[:-2]:
            rhs, transposed = _matmul_operand(c, b4)
            y = c.track(c.f.matmul(c._name(), a4, rhs, transpose_rhs=transposed), "matmul",
                        a4, b4)
            return c.reshape(y, (a.type.shape[0],) + y.type.shape[-2:])
    if a.type.rank == 2 and b.type.rank == 2:
        # F.linear on [B, T, C] reaches ATen as a mm of the rows [B*T, C]:
        # one matmul of the rank-3 activations by the shared weight.
        d = c.defs.get(a.name)
        if d is not None and d[0] == "reshape":
            src = d[1][0]
            if src.type.rank > 2 and src.type.shape[-1] == a.type.shape[-1] and \
                    math.prod(src.type.shape[:-1]) == a.type.shape[0] and \
                    src.type.element == b.type.element:
                rhs, transposed = _matmul_operand(c, b)
                y = c.track(c.f.matmul(c._name(), src, rhs, transpose_rhs=transposed),
                            "matmul", src, b)
                return c.reshape(y, (a.type.shape[0], y.type.shape[-1]))
    rhs, transposed = _matmul_operand(c, b)
    return c.track(c.f.matmul(c._name(), a, rhs, transpose_rhs=transposed), "matmul", a, b)


def _addmm(c, bias, a, b, beta=1, alpha=1):
    product = _mm(c, a, b)
    if alpha != 1:
        product = c.track(c.f.scale(c._name("_alpha"), product, float(alpha)), "scale", product)
    bias = c.tensor(bias, product)
    if beta != 1:
        bias = c.track(c.f.scale(c._name("_beta"), bias, float(beta)), "scale", bias)
    d = c.defs.get(product.name)
    if d is not None and d[0] == "reshape" and bias.type.rank <= 1:
        # The rows of a rank-3 product (F.linear): the bias added to it.
        src = d[1][0]
        if src.type.shape[-1] == product.type.shape[-1]:
            y = c.track(c.f.add(c._name(), src, bias), "add", src, bias)
            return c.reshape(y, product.type.shape)
    return c.track(c.f.add(c._name(), product, bias), "add", product, bias)


def _baddbmm(c, bias, a, b, beta=1, alpha=1):
    return _addmm(c, bias, a, b, beta, alpha)


def _linear(c, x, w, b=None):
    x, w = c.tensor(x), c.tensor(w)
    y = c.track(c.f.matmul(c._name(), x, w, transpose_rhs=True), "matmul", x, w)
    if b is not None:
        b = c.tensor(b, y)
        y = c.track(c.f.add(c._name("_bias"), y, b), "add", y, b)
    return y


def _view(c, x, shape):
    x = c.tensor(x)
    shape = list(shape)
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        shape[shape.index(-1)] = x.type.numel // known if known else 0
    return c.reshape(x, shape)


def _reshape_alias(c, x, shape, stride=None):
    return _view(c, x, shape)


def _unsqueeze(c, x, dim):
    x = c.tensor(x)
    d = int(dim) % (x.type.rank + 1)
    shape = list(x.type.shape)
    shape.insert(d, 1)
    return c.reshape(x, shape)


def _squeeze(c, x, dim=None):
    x = c.tensor(x)
    if dim is None:
        return c.reshape(x, [s for s in x.type.shape if s != 1])
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    dims = {c.dim(d, x.type.rank) for d in dims}
    return c.reshape(x, [s for i, s in enumerate(x.type.shape) if not (i in dims and s == 1)])


def _identity(c, x, *args, **kwargs):
    return c.tensor(x) if isinstance(x, ParamInput) else x


def _gradient_free(c, x: ir.Value) -> bool:
    """Whether `x` has no gradient: made of constants, the integer ids and
    comparisons (train.compare has no derivative) only. (Iterative: a value
    computed from the parameters may be thousands of ops deep.)"""
    seen: set[str] = set()
    stack = [x]
    while stack:
        v = stack.pop()
        if v.name in seen:
            continue
        seen.add(v.name)
        d = c.defs.get(v.name)
        if d is None:
            if c.is_float(v) or v not in c.arguments:  # not the ids: a parameter
                return False
        elif d[0] not in ("compare", "fill", "constant"):
            operands = [o for o in d[1] if isinstance(o, ir.Value)]
            if not operands:
                return False
            stack.extend(operands)
    return True


def _detach(c, x):
    if isinstance(x, ir.Value) and _gradient_free(c, x):
        return x  # a mask of comparisons: nothing to stop
    if isinstance(x, (ir.Value, ParamInput)):
        c.fail("detach() (or .data) of a value computed from the parameters stops its "
               "gradient, which the train dialect cannot express")
    return x


def _clone(c, x, memory_format=None):
    return _identity(c, x)


def _to_copy(c, x, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    x = c.tensor(x)
    if dtype is None:
        return x
    if dtype in _FLOATS and x.type.element in ("f32", "bf16"):
        element = _FLOATS[dtype]
        if element == x.type.element:
            return x
        return c.track(c.f.cast(c._name(), x, element), "cast", x)
    if dtype in _INTS and x.type.element in ("i32", "i64"):
        return x  # ids stay in the argument's integer type
    if dtype in _FLOATS and x.type.element in ("i32", "i64"):
        return _ids_as_float(c, x, _FLOATS[dtype])
    if (dtype in _INTS or dtype == torch.bool) and c.is_float(x) and _gradient_free(c, x):
        # A mask of comparisons (F.one_hot's, `(x > 0).long()`) as integers:
        # it stays a float tensor of the same (integer) values.
        return x
    c.fail(f"conversion of {x.type} to {dtype} is not supported")


def _ids_as_float(c, ids: ir.Value, element: str | None = None) -> ir.Value:
    """Integer ids as float values: a train.gather of each id in a constant
    vector 0, 1, ..., n - 1, n the bound of the ids (the loss's classes, the
    rows of the tables they index), exact below 2 ** 24 in f32."""
    if c.is_float(ids):
        return ids
    bound = c.vocab or c.id_bound
    if bound is None:
        c.fail("integer ids used as numbers need a bound on the ids: a loss (nll_loss, "
               "cross_entropy) or an embedding table that they index")
    element = element or c.element
    table = c.constant(torch.arange(bound, dtype=torch.float32), element)
    flat = ids if ids.type.rank == 1 else c.reshape(ids, (ids.type.numel,))
    values = _gather(c, table, 0, flat)
    return c.reshape(values, ids.type.shape)


def _t(c, x):
    x = c.tensor(x)
    if x.type.rank < 2:
        return x
    return c.transpose(x, [1, 0])


def _transpose(c, x, d0, d1):
    x = c.tensor(x)
    rank = x.type.rank
    perm = list(range(rank))
    a, b = c.dim(d0, rank), c.dim(d1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return c.transpose(x, perm)


def _permute(c, x, dims):
    x = c.tensor(x)
    return c.transpose(x, [c.dim(d, x.type.rank) for d in dims])


def _expand(c, x, shape, implicit=False):
    x = c.tensor(x)
    shape = list(shape)
    offset = len(shape) - x.type.rank
    for i, s in enumerate(shape):
        if s == -1:
            shape[i] = x.type.shape[i - offset]
    return c.broadcast(x, shape)


def _softmax(c, x, dim, half_to_float=False):
    return _last_axis(c, x, dim, "softmax")


def _log_softmax(c, x, dim, half_to_float=False):
    return _last_axis(c, x, dim, "log_softmax")


def _last_axis(c, x, dim, op):
    """Softmax-like ops over the last axis; another axis is moved last and
    back by transposes."""
    x = c.tensor(x)
    d = c.dim(dim, x.type.rank)
    last = x.type.rank - 1
    perm = list(range(x.type.rank))
    perm[d], perm[last] = perm[last], perm[d]
    y = c.transpose(x, perm)
    if op == "softmax":
        y = c.track(c.f.softmax(c._name(), y), "softmax", y)
    else:
        y = c.emit("log_softmax", [y], y.type, f"{y}")
    return c.transpose(y, perm)


def _layer_norm(c, x, normalized_shape, weight, bias, eps):
    x = c.tensor(x)
    if len(normalized_shape) != 1:
        c.fail("layer_norm over more than the last dimension is not supported "
               "(train.layernorm normalizes the last dimension)")
    width = x.type.shape[-1]
    w = c.tensor(weight) if weight is not None else c.fill(1.0, (width,), x.type.element)
    b = c.tensor(bias) if bias is not None else c.fill(0.0, (width,), x.type.element)
    y = c.track(c.f.layernorm(c._name(), x, w, b, float(eps)), "layernorm", x, w, b)
    # (output, mean, rstd): the statistics are only read by the backward.
    return (y, None, None)


def _reduce(op: str):
    """sum, mean or amax over `dims` (all of them by default)."""
    def emit(c, x, dims=None, keepdim=False, dtype=None):
        x = c.tensor(x)
        dims = _reduce_dims(c, x, dims)
        if x.type.rank == 0:
            return x
        if op in ("sum", "mean"):
            y = c.track(c.f._reduction(op, c._name(), x, dims), op, x, tuple(dims))
        else:
            y = _amax_value(c, x, dims)
        return _keepdim(c, y, x, dims, keepdim)
    return emit


def _sum_default(c, x, dtype=None):
    if isinstance(x, _MaskedSelection):
        return _masked_mean(c, x.x, x.mask, mean=False)
    return _reduce("sum")(c, x)


def _mean_default(c, x, dtype=None):
    if isinstance(x, _MaskedSelection):
        return _masked_mean(c, x.x, x.mask)
    return _reduce("mean")(c, x)


def _var(c, x, dims=None, unbiased=None, keepdim=False, correction=None):
    x = c.tensor(x)
    rank = x.type.rank
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if dims is None or len(dims) == 0:
        dims = list(range(rank))
    dims = sorted({c.dim(d, rank) for d in dims})
    shape = [s for i, s in enumerate(x.type.shape) if i not in dims]
    y = c.emit("var", [x], c.float_type(shape, x.type.element),
               f"{x} dims = [{', '.join(map(str, dims))}] correction = {int(correction)}")
    if keepdim:
        y = c.reshape(y, [1 if i in dims else s for i, s in enumerate(x.type.shape)])
    return y


def _var_mean(std: bool):
    """``var_mean``/``std_mean`` with a correction: (variance or its root,
    mean) over `dims`. (PyTorch's decompositions of these write prims.)"""
    def emit(c, x, dims=None, correction=None, keepdim=False):
        x = c.tensor(x)
        v = _var(c, x, dims, None, keepdim, 1 if correction is None else correction)
        if std:
            v = c.track(c.f.sqrt(c._name("_std"), v), "sqrt", v)
        return (v, _reduce("mean")(c, x, dims, keepdim))
    return emit


def _var_dim(c, x, dim=None, unbiased=True, keepdim=False):
    return _var(c, x, dim, unbiased, keepdim)


def _var_default(c, x, unbiased=True):
    return _var(c, x, None, unbiased, False)


def _embedding(c, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if scale_grad_by_freq or sparse:
        c.fail("scale_grad_by_freq and sparse embeddings are not supported")
    table = c.tensor(weight)
    if isinstance(indices, torch.Tensor):
        ids = indices
        if ids.dim() == 1 and torch.equal(ids, torch.arange(ids.numel())) \
                and ids.numel() <= table.type.shape[0]:
            # Positions arange(T): the table's first T rows.
            if ids.numel() == table.type.shape[0]:
                return table
            return c.track(c.f.slice(c._name(), table, [0, 0],
                                     [ids.numel(), table.type.shape[1]]), "slice", table)
        indices = c.constant(ids, "i32")
    if not isinstance(indices, ir.Value) or indices.type.element not in ("i32", "i64"):
        c.fail("embedding ids must be integers")
    type_ = table.type.with_shape(indices.type.shape + table.type.shape[1:])
    attr = ""
    if padding_idx is not None and padding_idx >= 0:
        attr = f" padding_idx = {int(padding_idx)}"
    elif padding_idx is not None and padding_idx < -1:
        attr = f" padding_idx = {int(padding_idx) % table.type.shape[0]}"
    return c.emit("embedding", [table, indices], type_, f"{table}[{indices}]{attr}",
                  functional=True)


def _split(c, x, split_size, dim=0):
    x = c.tensor(x)
    d = c.dim(dim, x.type.rank)
    size = x.type.shape[d]
    if isinstance(split_size, (list, tuple)):
        sizes = list(split_size)
    else:
        sizes = [split_size] * (size // split_size) + \
            ([size % split_size] if size % split_size else [])
    if len(sizes) == 1:
        return [x]
    if len(set(sizes)) == 1:
        names = [c._name(f"_{i}") for i in range(len(sizes))]
        parts = c.f.split(names, x, d)
        for p in parts:
            c.track(p, "split", x)
        return parts
    parts, start = [], 0
    for s in sizes:
        parts.append(_slice_dim(c, x, d, start, start + s, 1))
        start += s
    return parts


def _split_sizes(c, x, sizes, dim=0):
    return _split(c, x, list(sizes), dim)


def _slice_dim(c, x, d, start, end, step):
    size = x.type.shape[d]
    start = 0 if start is None else int(start)
    end = size if end is None else int(end)
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    count = (end - start + step - 1) // step
    if count == size and step == 1:
        return x
    if count <= 0:
        c.fail("an empty slice")
    offsets = [0] * x.type.rank
    sizes = list(x.type.shape)
    strides = [1] * x.type.rank
    offsets[d], sizes[d], strides[d] = start, count, step
    return c.track(c.f.slice(c._name(), x, offsets, sizes, strides), "slice", x)


def _slice(c, x, dim=0, start=None, end=None, step=1):
    if isinstance(x, ParamInput):
        x = c.read(x)
    if not isinstance(x, ir.Value):
        return x[(slice(None),) * int(dim) + (slice(start, end, step),)]
    if step < 1:
        c.fail("a slice with a step below 1")
    return _slice_dim(c, x, c.dim(dim, x.type.rank), start, end, int(step))


def _select(c, x, dim, index):
    x = c.tensor(x)
    d = c.dim(dim, x.type.rank)
    i = int(index) % x.type.shape[d]
    if x.type.shape[d] == 1:
        y = x
    else:
        offsets = [0] * x.type.rank
        sizes = list(x.type.shape)
        offsets[d], sizes[d] = i, 1
        y = c.track(c.f.slice(c._name("_row"), x, offsets, sizes), "slice", x)
    return c.reshape(y, [s for k, s in enumerate(x.type.shape) if k != d])


def _cat(c, tensors, dim=0):
    values = [c.tensor(t, _first_value(*tensors)) for t in tensors]
    values = [v for v in values if v.type.numel > 0]
    d = c.dim(dim, values[0].type.rank)
    if len(values) == 1:
        return values[0]
    return c.track(c.f.concat(c._name(), values, d), "concat", *values)


def _index_select(c, x, dim, index):
    """A gather of whole slices by constant indices: runs of consecutive
    indices are slices; ``arange(n).repeat_interleave(r)`` (grouped-query
    attention's repeated heads) is a reshape, broadcast and reshape. Indices
    computed at run time are a ``train.embedding`` (`_gather_rows`)."""
    x = c.tensor(x)
    d = c.dim(dim, x.type.rank)
    if isinstance(index, ir.Value):
        if index.type.rank > 1:
            c.fail("index_select needs a 1-D index")
        return _gather_rows(c, x, d, index)
    idx = [int(i) for i in index.reshape(-1)]
    n = x.type.shape[d]
    if idx == list(range(n)):
        return x
    if len(idx) % n == 0 and idx == [i for i in range(n) for _ in range(len(idx) // n)]:
        r = len(idx) // n
        shape = list(x.type.shape)
        expanded = shape[:d + 1] + [r] + shape[d + 1:]
        y = c.reshape(x, shape[:d + 1] + [1] + shape[d + 1:])
        y = c.broadcast(y, expanded)
        return c.reshape(y, shape[:d] + [n * r] + shape[d + 1:])
    parts, start = [], 0
    while start < len(idx):
        end = start + 1
        while end < len(idx) and idx[end] == idx[end - 1] + 1:
            end += 1
        parts.append(_slice_dim(c, x, d, idx[start], idx[start] + end - start, 1))
        start = end
    if len(parts) == 1:
        return parts[0]
    return c.track(c.f.concat(c._name(), parts, d), "concat", *parts)


def _gather_rows(c, x: ir.Value, d: int, ids: ir.Value) -> ir.Value:
    """``x`` indexed along dimension `d` by integer ids computed at run time
    (any shape): the result is ``x.shape[:d] + ids.shape + x.shape[d+1:]``.
    A ``train.embedding`` of `x` as a [x.shape[d], rest] table: dimension `d`
    transposed to the front and the others merged, then the rows unmerged and
    the ids' dimensions moved back to position `d`."""
    if ids.type.element not in ("i32", "i64"):
        c.fail("indexing by a computed boolean mask selects a number of elements that "
               "depends on the values (data-dependent shape); use masked_fill or a "
               "multiplication by the mask")
    if not c.is_float(x):
        c.fail("indexing an integer tensor by computed ids is not supported (train.embedding "
               "gathers rows of a float table)")
    shape = list(x.type.shape)
    rest = shape[:d] + shape[d + 1:]
    table = c.transpose(x, [d] + [i for i in range(len(shape)) if i != d])
    table = c.reshape(table, [shape[d], math.prod(rest)])
    type_ = table.type.with_shape(ids.type.shape + table.type.shape[1:])
    rows = c.emit("embedding", [table, ids], type_, f"{table}[{ids}]", functional=True)
    k = ids.type.rank
    rows = c.reshape(rows, list(ids.type.shape) + rest)
    # [ids..., x.shape[:d], x.shape[d+1:]] -> [x.shape[:d], ids..., x.shape[d+1:]]
    perm = list(range(k, k + d)) + list(range(k)) + list(range(k + d, k + len(rest)))
    return c.transpose(rows, perm)


def _index(c, x, indices):
    """``x[..., idx]`` with one index tensor (the others None): a constant
    1-D one selects slices (`_index_select`), one computed at run time gathers
    rows (`_gather_rows`)."""
    used = [i for i, t in enumerate(indices) if t is not None]
    if len(used) == 1 and isinstance(indices[used[0]], ir.Value):
        x = c.tensor(x)
        return _gather_rows(c, x, c.dim(used[0], x.type.rank), indices[used[0]])
    if len(used) != 1 or not isinstance(indices[used[0]], torch.Tensor) or \
            indices[used[0]].dim() != 1 or indices[used[0]].dtype == torch.bool:
        c.fail("indexing by tensors is supported only with one index tensor (the other "
               "dimensions taken whole): a constant 1-D one, or integer ids computed at run "
               "time")
    return _index_select(c, x, used[0], indices[used[0]])


def _id_mask(c, ids: ir.Value, k: int, equal: bool) -> ir.Value:
    """``ids == k`` (or ``!=``) for token ids in [0, V), V the vocabulary of
    the loss read so far, as a float mask: a train.gather of each id in a
    constant [V] vector that is 1 at k (0 for ``!=``) and 0 elsewhere."""
    vocab = c.vocab or c.id_bound
    if vocab is None:
        c.fail("comparisons of integer ids against a token id need a bound on the ids: "
               "a loss (nll_loss, cross_entropy) or an embedding table that they index")
    table = torch.zeros(vocab) if equal else torch.ones(vocab)
    if 0 <= k < vocab:
        table[k] = 1.0 if equal else 0.0
    flat = ids if ids.type.rank == 1 else c.reshape(ids, (math.prod(ids.type.shape),))
    m = _gather(c, c.constant(table, "f32"), 0, flat)
    return c.reshape(m, ids.type.shape)


class _MaskedSelection:
    """``x[mask]`` for a computed mask: its size depends on the data, so it
    is kept as (x, mask) for the one reduction that reads it."""

    def __init__(self, x: ir.Value, mask: ir.Value):
        self.x, self.mask = x, mask


def _masked_mean(c, x: ir.Value, mask: ir.Value, mean: bool = True) -> ir.Value:
    """The mean (or sum) of the elements of `x` where `mask` (1.0 / 0.0) is
    set: sum(select(mask, x, 0)) / sum(mask), NaN when none is (0 / 0, as
    PyTorch's mean of an empty selection)."""
    shape = x.type.shape
    m = _mask(c, mask, shape, x.type.element)
    zero = c.fill(0.0, shape, x.type.element)
    kept = c.emit("select", [m, x, zero], x.type, f"{m}, {x}, {zero}", suffix="_kept")
    dims = range(len(shape))
    total = c.track(c.f._reduction("sum", c._name("_sum"), kept, dims), "sum", kept)
    if not mean:
        return total
    count = c.track(c.f._reduction("sum", c._name("_count"), m, dims), "sum", m)
    return c.track(c.f.binary("div", c._name(), total, count), "div", total, count)


def _masked_select(c, x, mask):
    """``x[mask]``: its size depends on the mask's values, known only for a
    constant mask; one that is all True (what cross-entropy with label
    smoothing selects when no target equals the ignore_index) is the
    flattened tensor. A computed mask (an ignore_index that is a token id)
    is kept for the mean or sum that reads the selection."""
    if isinstance(mask, ir.Value) and c.is_float(mask):
        x = c.tensor(x)
        if tuple(x.type.shape) != tuple(mask.type.shape):
            c.fail("masked_select with a computed mask of another shape is not supported")
        return _MaskedSelection(x, mask)
    if not isinstance(mask, torch.Tensor) or not bool(mask.all()):
        c.fail("the result's shape depends on the tensor's values (data-dependent "
               "shape), which a compiled training step cannot have")
    x = c.tensor(x)
    shape = torch.broadcast_shapes(tuple(x.type.shape), tuple(mask.shape))
    return c.reshape(c.broadcast(x, shape), (math.prod(shape),))


def _index_put(c, x, indices, values, accumulate=False):
    """``x[mask] = value`` with one constant boolean mask and one value:
    a masked_fill."""
    computed = len(indices) == 1 and isinstance(indices[0], ir.Value) and \
        c.is_float(indices[0])  # a mask from a comparison (an ignore_index)
    if accumulate or len(indices) != 1 or not computed and (
            not isinstance(indices[0], torch.Tensor) or indices[0].dtype != torch.bool):
        c.fail("index_put is supported only as x[boolean mask] = number")
    value = values
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = float(value)
    if not isinstance(value, (int, float)):
        c.fail("index_put is supported only as x[boolean mask] = number")
    x = c.tensor(x)
    mask = indices[0]
    if computed:
        if tuple(mask.type.shape) != tuple(x.type.shape):
            c.fail("index_put with a computed mask of another shape is not supported")
        return _masked_fill(c, x, mask, value)
    mask = mask.reshape(tuple(mask.shape) + (1,) * (x.type.rank - mask.dim()))
    return _masked_fill(c, x, mask, value)


def _gather(c, x, dim, index, sparse_grad=False):
    x = c.tensor(x)
    d = c.dim(dim, x.type.rank)
    if isinstance(index, torch.Tensor):
        index = c.constant(index, "i32")
    if not isinstance(index, ir.Value) or index.type.element not in ("i32", "i64"):
        c.fail("gather indices must be integers")
    type_ = x.type.with_shape(index.type.shape)
    return c.emit("gather", [x, index], type_, f"{x}[{index}] dim = {d}", functional=True)


def _mask(c, mask: Any, shape: Sequence[int], element: str) -> ir.Value:
    """A boolean mask as a float 1.0/0.0 tensor of `shape`."""
    if isinstance(mask, torch.Tensor):
        m = mask.to(torch.float32)
        return c.broadcast(c.constant(m, element), shape)
    m = c.tensor(mask)
    if m.type.element != element:
        m = c.track(c.f.cast(c._name("_mask"), m, element), "cast", m)
    return c.broadcast(m, shape)


def _where(c, cond, a, b):
    if isinstance(cond, torch.Tensor) and cond.dtype == torch.bool and \
            (bool(cond.all()) or not bool(cond.any())):
        # A constant mask that is all True or all False picks one side.
        shape = c.result_shape()
        side = a if bool(cond.all()) else b
        like = _first_value(c.read(a) if isinstance(a, ParamInput) else a,
                            c.read(b) if isinstance(b, ParamInput) else b)
        return c.broadcast(c.tensor(side, like), shape)
    like = _first_value(c.read(a) if isinstance(a, ParamInput) else a,
                        c.read(b) if isinstance(b, ParamInput) else b)
    if like is None:
        c.fail("where() of constants selected by a computed mask is not supported")
    a, b = c.tensor(a, like), c.tensor(b, like)
    shape = c.result_shape()
    element = like.type.element
    m = _mask(c, cond, shape, element)
    a, b = c.broadcast(a, shape), c.broadcast(b, shape)
    return c.emit("select", [m, a, b], a.type, f"{m}, {a}, {b}")


def _masked_fill(c, x, mask, value):
    x = c.tensor(x)
    if isinstance(value, torch.Tensor):
        value = float(value)
    if not isinstance(value, (int, float)):
        c.fail("masked_fill with a computed fill value is not supported")
    shape = c.result_shape() or x.type.shape
    if isinstance(mask, torch.Tensor) and not bool(mask.any()):
        return c.broadcast(x, shape)
    m = _mask(c, mask, shape, x.type.element)
    # The value as a fill of the result's shape (what train-raise's
    # attention pattern reads as a masked score).
    filled = c.fill(float(value), shape, x.type.element)
    x = c.broadcast(x, shape)
    return c.emit("select", [m, filled, x], x.type, f"{m}, {filled}, {x}")


def _compare(kind: str):
    def emit(c, a, b):
        a = c.read(a) if isinstance(a, ParamInput) else a
        b = c.read(b) if isinstance(b, ParamInput) else b
        like = _first_value(a, b)
        if like is None:
            ids = a if isinstance(a, ir.Value) else b
            number = b if ids is a else a
            if isinstance(number, torch.Tensor) and number.numel() == 1:
                number = number.item()
            if isinstance(number, (int, float)) and number < 0:
                # Token ids are in [0, V): against a negative number (an
                # ignore_index of -100 or -1) the answer is known.
                below = (kind in ("eq", "le", "lt")) if ids is a else \
                    (kind in ("eq", "ge", "gt"))
                return torch.full(ids.type.shape, not below, dtype=torch.bool)
            if kind in ("eq", "ne") and isinstance(number, int) and \
                    not isinstance(number, bool):
                # An ignore_index that is a token id: a look-up of each id
                # in a constant [V] vector, 1 at the index (eq) or 0 (ne).
                return _id_mask(c, ids, number, kind == "eq")
            # Any other comparison of the ids: of their float values.
            a = _ids_as_float(c, a) if isinstance(a, ir.Value) else a
            b = _ids_as_float(c, b) if isinstance(b, ir.Value) else b
            like = _first_value(a, b)
        x, y = c.tensor(a, like), c.tensor(b, like)
        shape = c.result_shape()
        x, y = c.broadcast(x, shape), c.broadcast(y, shape)
        return c.emit("compare", [x, y], x.type, f"{x}, {y} {kind}")
    return emit


def _logical_not(c, x):
    x = c.tensor(x)
    one = c.fill(1.0, (), x.type.element)
    return c.track(c.f.sub(c._name(), one, x), "sub", one, x)


def _tril(kind: str):
    def emit(c, x, diagonal=0):
        x = c.tensor(x)
        return c.emit(kind, [x], x.type, f"{x} diagonal = {int(diagonal)}")
    return emit


def _dropout(c, x, p, train=True):
    x = c.tensor(x)
    if not train or p == 0:
        return (x, None)
    seed = c.dropout_sites
    c.dropout_sites += 1
    return (c.track(c.f.dropout(c._name(), x, float(p), seed), "dropout", x), None)


def _nll_loss(c, logp, target, weight=None, reduction=1, ignore_index=-100):
    """Negative log-likelihood of the targets' entries: a gather along the
    class axis, then the mean (reduction 1), sum (2) or nothing (0). Targets
    are the data's token ids, in [0, V): a negative ignore_index never
    matches one. A token id as ignore_index masks its positions out: their
    losses are 0 and the mean is over the others, sum(select(keep, -picked,
    0)) / sum(keep) with keep = (target != ignore_index)."""
    logp = c.tensor(logp)
    if weight is not None:
        c.fail("class weights are not supported")
    if isinstance(target, torch.Tensor):
        target = c.constant(target, "i32")
    if not isinstance(target, ir.Value) or target.type.element not in ("i32", "i64"):
        c.fail("the targets must be integer ids")
    c.vocab = logp.type.shape[-1] if logp.type.rank == 1 else logp.type.shape[1]
    if logp.type.rank == 1:
        idx = c.reshape(target, (1,))
        picked = _gather(c, logp, 0, idx)
    else:
        # [N, C] (or [N, C, d...]): the class axis is 1.
        idx_shape = list(target.type.shape)
        idx_shape.insert(1, 1)
        # (Not folded into a reshape of the reshape's operand: the index is
        # the targets [N] unsqueezed, what train-raise's cross-entropy
        # pattern reads.)
        idx = c.track(c.f.reshape(c._name(), target, idx_shape), "reshape", target)
        picked = _gather(c, logp, 1, idx)
        picked = c.reshape(picked, target.type.shape)
    # -x as a scale by -1: exact, and an op every back end has.
    neg = c.track(c.f.scale(c._name("_nll"), picked, -1.0), "scale", picked, -1.0)
    if ignore_index >= 0:
        keep = _id_mask(c, target, int(ignore_index), equal=False)
        if reduction == 0:
            zero = c.fill(0.0, neg.type.shape, neg.type.element)
            m = _mask(c, keep, neg.type.shape, neg.type.element)
            return (c.emit("select", [m, neg, zero], neg.type, f"{m}, {neg}, {zero}"), None)
        return (_masked_mean(c, neg, keep, mean=reduction == 1), None)
    if reduction == 0:
        return (neg, None)
    op = "mean" if reduction == 1 else "sum"
    loss = c.track(c.f._reduction(op, c._name(), neg, range(neg.type.rank)), op, neg)
    return (loss, None)


def _alias_copy(c, x, *args, **kwargs):
    return _identity(c, x)


def _fill_like(value: float):
    def emit(c, x, dtype=None, layout=None, device=None, pin_memory=None,
             memory_format=None):
        return _full(c, value, c.tensor(x))
    return emit


def _full_like(c, x, value, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    return _full(c, value, c.tensor(x))


def _split_with_sizes(c, x, sizes, dim=0):
    return _split(c, x, list(sizes), dim)


def _slice_scatter(c, base, src, dim=0, start=None, end=None, step=1):
    """``base`` with a slice replaced by `src` (functionalization's write-back
    of an in-place op on a view): the parts of `base` around it and `src`,
    concatenated."""
    base = c.tensor(base)
    src = c.tensor(src, base)
    d = c.dim(dim, base.type.rank)
    size = base.type.shape[d]
    start = 0 if start is None else int(start)
    end = size if end is None else min(int(end), size)
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step != 1:
        c.fail("an in-place write into a strided slice is not supported")
    src = c.broadcast(src, [end - start if i == d else s for i, s in enumerate(base.type.shape)])
    parts = []
    if start > 0:
        parts.append(_slice_dim(c, base, d, 0, start, 1))
    parts.append(src)
    if end < size:
        parts.append(_slice_dim(c, base, d, end, size, 1))
    if len(parts) == 1:
        return parts[0]
    return c.track(c.f.concat(c._name(), parts, d), "concat", *parts)


def _select_scatter(c, base, src, dim, index):
    base = c.tensor(base)
    d = c.dim(dim, base.type.rank)
    i = int(index) % base.type.shape[d]
    src = _unsqueeze(c, c.tensor(src, base), d)
    return _slice_scatter(c, base, src, d, i, i + 1, 1)


# ---------------------------------------------------------------------------
# Piecewise functions: clamps, maximum/minimum, leaky ReLU, ELU, softplus and
# the activations built on it (mish, log-sigmoid), hard sigmoid/swish, abs,
# sign, vector norms, constant padding. The dialect has no op for them; each
# is written with generic ops, the branches chosen by train.compare (which
# has no derivative) and train.select (whose gradient goes to the side
# chosen), so values and gradients are PyTorch's. A branch that a select
# discards is computed on a safe input (0 where it is not chosen): the exp of
# a large value would be inf, and its zero gradient times inf a NaN.


class _Unavailable:
    """A result the dialect cannot compute (the indices of ``max(dim)``),
    an error only if an op reads it."""

    def __init__(self, what: str):
        self.what = what


def _full(c, value: float, like: ir.Value) -> ir.Value:
    """A train.fill of `value` with `like`'s type."""
    return c.fill(float(value), like.type.shape, like.type.element)


def _test(c, x: ir.Value, kind: str, other) -> ir.Value:
    """The 1.0/0.0 mask ``x <kind> other`` (a number or a value of x's
    shape)."""
    y = _full(c, other, x) if isinstance(other, (int, float)) else other
    return c.emit("compare", [x, y], x.type, f"{x}, {y} {kind}", suffix="_mask")


def _choose(c, mask: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return c.emit("select", [mask, a, b], a.type, f"{mask}, {a}, {b}")


def _float_value(c, x, what: str) -> ir.Value:
    x = c.tensor(x)
    if not c.is_float(x):
        c.fail(f"{what} of integer ids is not supported (the ids are not values the "
               "train dialect computes with)")
    return x


def _bound(c, bound, x: ir.Value):
    """A clamp bound: a number, or a value of `x`'s shape."""
    if isinstance(bound, torch.Tensor) and bound.numel() == 1:
        return float(bound)
    if isinstance(bound, (int, float)):
        return float(bound)
    return c.broadcast(c.tensor(bound, x), x.type.shape)


def _clamp_value(c, x: ir.Value, low=None, high=None) -> ir.Value:
    """``min(max(x, low), high)``: x below `low` replaced by it, then x above
    `high`; the gradient goes to x where low <= x <= high (PyTorch's)."""
    for bound, kind in ((low, "lt"), (high, "gt")):
        if bound is None:
            continue
        bound = _bound(c, bound, x)
        b = _full(c, bound, x) if isinstance(bound, float) else bound
        x = _choose(c, _test(c, x, kind, b), b, x)
    return x


def _clamp(c, x, min=None, max=None):  # noqa: A002 - ATen's argument names
    x = _float_value(c, x, "clamp")
    return _clamp_value(c, c.broadcast(x, c.result_shape() or x.type.shape), min, max)


def _extremum(kind: str):
    """``maximum`` (kind gt) and ``minimum`` (lt): a select of the operand
    that wins; on a tie the gradient goes to the second (PyTorch splits it)."""
    def emit(c, a, b):
        x, y = _operands(c, a, b)
        if not c.is_float(x) or not c.is_float(y):
            c.fail("maximum/minimum of integer ids is not supported")
        shape = c.result_shape()
        x, y = c.broadcast(x, shape), c.broadcast(y, shape)
        return _choose(c, _test(c, x, kind, y), x, y)
    return emit


def _leaky_relu(c, x, negative_slope=0.01):
    x = _float_value(c, x, "leaky_relu")
    slope = c.track(c.f.scale(c._name("_slope"), x, float(negative_slope)), "scale", x)
    return _choose(c, _test(c, x, "gt", 0.0), x, slope)


def _elu(c, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """``x > 0 ? scale * x : scale * alpha * (exp(input_scale * x) - 1)``
    (ELU, and SELU and CELU through it), the exp of the negative part only."""
    x = _float_value(c, x, "elu")
    positive = _test(c, x, "gt", 0.0)
    negative = _choose(c, positive, _full(c, 0.0, x), x)
    if input_scale != 1:
        negative = c.track(c.f.scale(c._name("_in"), negative, float(input_scale)), "scale",
                           negative)
    e = c.emit("exp", [negative], x.type, f"{negative}", suffix="_exp")
    one = c.fill(1.0, (), x.type.element)
    e = c.track(c.f.sub(c._name("_expm1"), e, one), "sub", e, one)
    if alpha * scale != 1:
        e = c.track(c.f.scale(c._name("_neg"), e, float(alpha * scale)), "scale", e)
    if scale != 1:
        x = c.track(c.f.scale(c._name("_pos"), x, float(scale)), "scale", x)
    return _choose(c, positive, x, e)


def _softplus_value(c, x: ir.Value, beta=1.0, threshold=20.0) -> ir.Value:
    """``beta * x > threshold ? x : log(1 + exp(beta * x)) / beta``
    (PyTorch's softplus); the exp of the values under the threshold only."""
    bx = x if beta == 1 else c.track(c.f.scale(c._name("_beta"), x, float(beta)), "scale", x)
    over = _test(c, bx, "gt", float(threshold))
    safe = _choose(c, over, _full(c, 0.0, x), bx)
    e = c.emit("exp", [safe], x.type, f"{safe}", suffix="_exp")
    one = c.fill(1.0, (), x.type.element)
    e = c.track(c.f.add(c._name("_1p"), e, one), "add", e, one)
    y = c.emit("log", [e], x.type, f"{e}", suffix="_log")
    if beta != 1:
        y = c.track(c.f.scale(c._name("_div"), y, 1.0 / float(beta)), "scale", y)
    return _choose(c, over, x, y)


def _softplus(c, x, beta=1.0, threshold=20.0):
    return _softplus_value(c, _float_value(c, x, "softplus"), beta, threshold)


def _mish(c, x):
    """``x * tanh(softplus(x))``."""
    x = _float_value(c, x, "mish")
    sp = _softplus_value(c, x)
    t = c.emit("tanh", [sp], x.type, f"{sp}", suffix="_tanh")
    return c.track(c.f.mul(c._name(), x, t), "mul", x, t)


def _sign_value(c, x: ir.Value) -> ir.Value:
    """1, 0 or -1: ``(x > 0) - (x < 0)``, no gradient (compares)."""
    pos, neg = _test(c, x, "gt", 0.0), _test(c, x, "lt", 0.0)
    return c.track(c.f.sub(c._name("_sign"), pos, neg), "sub", pos, neg)


def _abs_value(c, x: ir.Value) -> ir.Value:
    """``x * sign(x)``: the gradient is sign(x), 0 at 0 (PyTorch's)."""
    s = _sign_value(c, x)
    return c.track(c.f.mul(c._name("_abs"), x, s), "mul", x, s)


def _sign(c, x):
    return _sign_value(c, _float_value(c, x, "sign"))


def _abs(c, x):
    return _abs_value(c, _float_value(c, x, "abs"))


def _log_sigmoid(c, x):
    """``min(x, 0) - log(1 + exp(-|x|))`` (PyTorch's stable form; exp of
    values <= 0 only). aten.log_sigmoid_forward's second result is a buffer
    for its backward."""
    x = _float_value(c, x, "logsigmoid")
    a = _abs_value(c, x)
    n = c.emit("neg", [a], x.type, f"{a}", suffix="_neg")
    e = c.emit("exp", [n], x.type, f"{n}", suffix="_exp")
    one = c.fill(1.0, (), x.type.element)
    e = c.track(c.f.add(c._name("_1p"), e, one), "add", e, one)
    log = c.emit("log", [e], x.type, f"{e}", suffix="_log")
    low = _choose(c, _test(c, x, "lt", 0.0), x, _full(c, 0.0, x))
    return (c.track(c.f.sub(c._name(), low, log), "sub", low, log), None)


def _hardsigmoid_value(c, x: ir.Value) -> ir.Value:
    """``clamp(x + 3, 0, 6) / 6``."""
    three = c.fill(3.0, (), x.type.element)
    y = c.track(c.f.add(c._name("_3"), x, three), "add", x, three)
    y = _clamp_value(c, y, 0.0, 6.0)
    return c.track(c.f.scale(c._name("_6"), y, 1.0 / 6.0), "scale", y)


def _hardsigmoid(c, x):
    return _hardsigmoid_value(c, _float_value(c, x, "hardsigmoid"))


def _hardswish(c, x):
    """``x * hardsigmoid(x)``."""
    x = _float_value(c, x, "hardswish")
    h = _hardsigmoid_value(c, x)
    return c.track(c.f.mul(c._name(), x, h), "mul", x, h)


def _glu(c, x, dim=-1):
    """``a * sigmoid(b)`` of the two halves of `x` along `dim`."""
    x = _float_value(c, x, "glu")
    d = c.dim(dim, x.type.rank)
    if x.type.shape[d] % 2:
        c.fail(f"glu needs an even dimension {d}, got {x.type.shape[d]}")
    a, b = _split(c, x, x.type.shape[d] // 2, d)
    s = _sigmoid(c, b)
    return c.track(c.f.mul(c._name(), a, s), "mul", a, s)


def _expm1(c, x):
    """``exp(x) - 1`` (PyTorch's expm1 is more precise for |x| near 0)."""
    x = _float_value(c, x, "expm1")
    e = c.emit("exp", [x], x.type, f"{x}", suffix="_exp")
    one = c.fill(1.0, (), x.type.element)
    return c.track(c.f.sub(c._name(), e, one), "sub", e, one)


def _log1p(c, x):
    """``log(1 + x)`` (PyTorch's log1p is more precise for |x| near 0)."""
    x = _float_value(c, x, "log1p")
    one = c.fill(1.0, (), x.type.element)
    y = c.track(c.f.add(c._name("_1p"), x, one), "add", x, one)
    return c.emit("log", [y], x.type, f"{y}")


def _reduce_dims(c, x: ir.Value, dims) -> list[int]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(x.type.rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({c.dim(d, x.type.rank) for d in dims})


def _keepdim(c, y: ir.Value, x: ir.Value, dims: list[int], keepdim: bool) -> ir.Value:
    if keepdim:
        return c.reshape(y, [1 if i in dims else s for i, s in enumerate(x.type.shape)])
    return y


def _amax_value(c, x: ir.Value, dims: list[int], negate: bool = False) -> ir.Value:
    """train.amax over `dims`; with `negate`, the amin: -amax(-x)."""
    if negate:
        x = c.emit("neg", [x], x.type, f"{x}", suffix="_neg")
    shape = [s for i, s in enumerate(x.type.shape) if i not in dims]
    y = c.emit("amax", [x], c.float_type(shape, x.type.element),
               f"{x} dims = [{', '.join(map(str, dims))}]")
    if negate:
        y = c.emit("neg", [y], y.type, f"{y}", suffix="_min")
    return y


def _amin(c, x, dims=(), keepdim=False):
    x = _float_value(c, x, "amin")
    dims = _reduce_dims(c, x, dims)
    return _keepdim(c, _amax_value(c, x, dims, negate=True), x, dims, keepdim)


def _max_dim(negate: bool):
    """``max(x, dim)`` / ``min(x, dim)``: the values are train.amax (of -x
    for min); the indices (an argmax) are an error if anything reads them.
    On a tie the gradient is shared as amax's (PyTorch's max(dim) gives it
    to the index it returns)."""
    def emit(c, x, dim, keepdim=False):
        x = _float_value(c, x, "max/min")
        dims = _reduce_dims(c, x, dim)
        values = _keepdim(c, _amax_value(c, x, dims, negate), x, dims, keepdim)
        return (values, _Unavailable("the indices of max(dim)/min(dim) (an argmax, an "
                                     "integer result the train dialect cannot compute)"))
    return emit


def _max_all(negate: bool):
    def emit(c, x):
        x = _float_value(c, x, "max/min")
        return _amax_value(c, x, list(range(x.type.rank)), negate)
    return emit


def _vector_norm(c, x, ord=2, dims=None, keepdim=False, dtype=None):  # noqa: A002
    """``sum(|x|^p) ^ (1/p)`` over `dims`: p = 2 is sqrt(sum(x ** 2)), p = 1
    sum(|x|), p = inf amax(|x|). The root of a zero sum is 0 with gradient 0
    (PyTorch's norm of a zero vector): the root is taken of 1 there."""
    x = _float_value(c, x, "norm")
    p = 2.0 if ord is None else float(ord)
    dims = _reduce_dims(c, x, dims)
    if p == math.inf:
        y = _amax_value(c, _abs_value(c, x), dims)
    elif p == 1:
        a = _abs_value(c, x)
        y = c.track(c.f._reduction("sum", c._name(), a, dims), "sum", a)
    elif p > 0:
        a = x if p == 2 else _abs_value(c, x)
        powered = c.emit("pow", [a], a.type, f"{a} by {float_literal(p)}", suffix="_pow")
        s = c.track(c.f._reduction("sum", c._name("_sum"), powered, dims), "sum", powered)
        nonzero = _test(c, s, "gt", 0.0)
        safe = _choose(c, nonzero, s, _full(c, 1.0, s))
        if p == 2:
            root = c.track(c.f.sqrt(c._name("_root"), safe), "sqrt", safe)
        else:
            root = c.emit("pow", [safe], safe.type, f"{safe} by {float_literal(1.0 / p)}",
                          suffix="_root")
        y = _choose(c, nonzero, root, _full(c, 0.0, s))
    else:
        c.fail(f"a norm of order {ord} is not supported (orders above 0 and inf are)")
    return _keepdim(c, y, x, dims, keepdim)


def _norm(c, x, p=2, dim=None, keepdim=False, dtype=None):
    return _vector_norm(c, x, p, dim, keepdim)


def _pad_part(c, x: ir.Value, d: int, width: int, value: float) -> ir.Value:
    """`width` entries of `value` along dimension `d` of `x`: a select of a
    fill, its other side a broadcast slice of x (no gradient reaches it).
    Not a bare train.fill: the data-parallel passes split a concat along the
    batch only when each operand is computed from the batch."""
    row = _slice_dim(c, x, d, 0, 1, 1)
    shape = list(x.type.shape)
    shape[d] = width
    row = c.broadcast(row, shape)
    ones = c.fill(1.0, shape, x.type.element)
    return _choose(c, ones, c.fill(value, shape, x.type.element), row)


def _constant_pad(c, x, pad, value=0):
    """F.pad(mode="constant"): per dimension from the last, fills of `value`
    concatenated before and after (a negative pad is a slice)."""
    x = c.tensor(x)
    pad = [int(p) for p in pad]
    rank = x.type.rank
    if len(pad) % 2 or len(pad) // 2 > rank:
        c.fail(f"padding {pad} of a rank-{rank} tensor")
    element = x.type.element
    if element not in ("f32", "bf16"):
        c.fail("padding integer ids is not supported")
    for i in range(len(pad) // 2):
        d = rank - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left < 0 or right < 0:
            size = x.type.shape[d]
            x = _slice_dim(c, x, d, max(-left, 0), size - max(-right, 0), 1)
        parts = []
        for width in (left, None, right):
            if width is None:
                parts.append(x)
            elif width > 0:
                parts.append(_pad_part(c, x, d, width, float(value)))
        if len(parts) > 1:
            x = c.track(c.f.concat(c._name(), parts, d), "concat", *parts)
    return x


def _cumsum(c, x, dim, dtype=None):
    """The running sum along `dim`: a train.matmul by the upper-triangular
    ones (train.triu of a fill), `dim` moved last and back."""
    x = _float_value(c, x, "cumsum")
    d = c.dim(dim, x.type.rank)
    n = x.type.shape[d]
    last = x.type.rank - 1
    perm = list(range(x.type.rank))
    perm[d], perm[last] = perm[last], perm[d]
    y = c.transpose(x, perm)
    if y.type.rank == 1:
        y = c.reshape(y, (1, n))
    ones = c.fill(1.0, (n, n), x.type.element)
    upper = c.emit("triu", [ones], ones.type, f"{ones} diagonal = 0", suffix="_upper")
    y = c.track(c.f.matmul(c._name(), y, upper), "matmul", y, upper)
    return c.transpose(c.reshape(y, [x.type.shape[p] for p in perm]), perm)


def _celu(c, x, alpha=1.0):
    """ELU with ``input_scale = 1 / alpha``."""
    return _elu(c, x, alpha, 1.0, 1.0 / float(alpha))


def _threshold(c, x, threshold, value):
    """``x > threshold ? x : value``."""
    x = _float_value(c, x, "threshold")
    return _choose(c, _test(c, x, "gt", float(threshold)), x, _full(c, value, x))


def _prelu(c, x, weight):
    """``x > 0 ? x : weight * x``, the weight along dimension 1 (channels)
    or one shared value."""
    x = _float_value(c, x, "prelu")
    w = c.tensor(weight, x)
    if w.type.numel != 1 and x.type.rank >= 2:
        w = c.reshape(w, [1, w.type.numel] + [1] * (x.type.rank - 2))
    elif w.type.numel == 1:
        w = c.reshape(w, ())
    product = c.track(c.f.mul(c._name("_slope"), x, w), "mul", x, w)
    return _choose(c, _test(c, x, "gt", 0.0), x, product)


def _lerp(c, a, b, weight):
    """``a + weight * (b - a)``."""
    diff = _binary("sub")(c, b, a)
    return _binary("add")(c, a, _binary("mul")(c, diff, weight))


def _addcmul(c, x, t1, t2, value=1):
    """``x + value * t1 * t2``."""
    product = _binary("mul")(c, t1, t2)
    if value != 1:
        product = _binary("mul")(c, product, value)
    return _binary("add")(c, x, product)


def _addcdiv(c, x, t1, t2, value=1):
    """``x + value * t1 / t2``."""
    quotient = _binary("div")(c, t1, t2)
    if value != 1:
        quotient = _binary("mul")(c, quotient, value)
    return _binary("add")(c, x, quotient)


def _logaddexp(c, a, b):
    """``m + log(exp(a - m) + exp(b - m))``, m the larger of a and b."""
    m = _extremum("gt")(c, a, b)
    x, y = c.broadcast(c.tensor(a, m), m.type.shape), c.broadcast(c.tensor(b, m), m.type.shape)
    parts = []
    for v in (x, y):
        d = c.track(c.f.sub(c._name("_d"), v, m), "sub", v, m)
        parts.append(c.emit("exp", [d], d.type, f"{d}", suffix="_exp"))
    total = c.track(c.f.add(c._name("_sum"), *parts), "add", *parts)
    log = c.emit("log", [total], total.type, f"{total}", suffix="_log")
    return c.track(c.f.add(c._name(), m, log), "add", m, log)


def _repeat(c, x, repeats):
    """Tiles of `x`: ``[r0 * s0, r1 * s1, ...]`` as a broadcast of
    ``[1, s0, 1, s1, ...]`` to ``[r0, s0, r1, s1, ...]`` and a reshape."""
    x = c.tensor(x)
    repeats = [int(r) for r in repeats]
    if len(repeats) < x.type.rank:
        c.fail("repeat needs a count for every dimension")
    shape = [1] * (len(repeats) - x.type.rank) + list(x.type.shape)
    split = [d for s in shape for d in (1, s)]
    tiled = [d for r, s in zip(repeats, shape) for d in (r, s)]
    y = c.broadcast(c.reshape(x, split), tiled)
    return c.reshape(y, [r * s for r, s in zip(repeats, shape)])


def _roll(c, x, shifts, dims=()):
    """Each rolled dimension: its last `shift` entries moved first (two
    slices and a concat); without dims, of the flattened tensor."""
    x = c.tensor(x)
    shifts = [int(s) for s in (shifts if isinstance(shifts, (list, tuple)) else [shifts])]
    dims = list(dims if isinstance(dims, (list, tuple)) else [dims])
    if not dims:
        flat = c.reshape(x, (x.type.numel,))
        return c.reshape(_roll(c, flat, shifts, [0]), x.type.shape)
    for shift, dim in zip(shifts, dims):
        d = c.dim(dim, x.type.rank)
        n = x.type.shape[d]
        k = shift % n
        if k:
            parts = [_slice_dim(c, x, d, n - k, n, 1), _slice_dim(c, x, d, 0, n - k, 1)]
            x = c.track(c.f.concat(c._name(), parts, d), "concat", *parts)
    return x


# ---------------------------------------------------------------------------
# Complex tensors: decomposed into their real and imaginary parts. The
# dialect has no complex type, so this is the decomposition of a type, not
# the recognition of a fused op: Meta's rotary embeddings,
#
#     x_ = torch.view_as_complex(x.reshape(..., -1, 2))
#     y = torch.view_as_real(x_ * freqs_cis).flatten(3)
#
# with freqs_cis = cos + i sin a constant buffer, become exactly the ops that
# the real interleaved form (llama2.c's xr * cos - xi * sin, xr * sin +
# xi * cos, stacked on a last axis of 2) gives, through the same emitters:
# the compiler's rope raising sees one computation, however it was written.

_COMPLEX_OPS = {aten.view_as_complex.default, aten.view_as_real.default}


def _is_complex(x: Any) -> bool:
    return isinstance(x, ComplexValue) or \
        (isinstance(x, torch.Tensor) and x.is_complex())


def _complex_error(c: AtenConverter) -> None:
    c.fail("complex tensors are supported only as view_as_complex(x) multiplied by a "
           "constant complex tensor (a buffer such as freqs_cis), then view_as_real; the "
           "train dialect has no complex type (docs/importer.md)")


def _complex(c: AtenConverter, target: Any, args: tuple, kwargs: dict) -> Any:
    if kwargs:
        _complex_error(c)
    if target is aten.view_as_complex.default:
        x = c.tensor(args[0])
        if x.type.rank < 1 or x.type.shape[-1] != 2:
            c.fail("view_as_complex needs a last dimension of 2")
        # The same ops as unbind(-1) of the interleaved form: two slices of
        # the last axis, each squeezed.
        last = x.type.rank - 1
        real = _slice(c, x, last, 0, 1, 1)
        imag = _slice(c, x, last, 1, 2, 1)
        return ComplexValue(_squeeze(c, real, last), _squeeze(c, imag, last))
    if target is aten.view_as_real.default:
        z = args[0]
        if not isinstance(z, ComplexValue):
            _complex_error(c)
        # torch.stack([real, imag], dim=-1): unsqueezes and a cat.
        rank = z.real.type.rank
        return _cat(c, [_unsqueeze(c, z.real, rank), _unsqueeze(c, z.imag, rank)], -1)
    if target in (aten.clone.default, aten.alias.default) and isinstance(args[0], ComplexValue):
        return args[0]
    if target is aten.mul.Tensor and len(args) == 2:
        z, w = args
        if isinstance(w, ComplexValue):
            z, w = w, z
        if isinstance(z, ComplexValue) and isinstance(w, torch.Tensor) and w.is_complex():
            # (xr + i xi)(cos + i sin) = (xr cos - xi sin) + i (xr sin + xi cos),
            # the interleaved form's four multiplications, sub and add.
            cos = w.real.to(torch.float32).contiguous()
            sin = w.imag.to(torch.float32).contiguous()
            mul, sub, add = _binary("mul"), _binary("sub"), _binary("add")
            real = sub(c, mul(c, z.real, cos), mul(c, z.imag, sin))
            imag = add(c, mul(c, z.real, sin), mul(c, z.imag, cos))
            return ComplexValue(real, imag)
    _complex_error(c)


OP_TABLE: dict[Any, Callable] = {}
"""ATen overload -> emitter. docs/importer.md lists it with the train op
each gives and the raising pass that may fuse it."""


def _register_one(overloads: Sequence, emitter: Callable) -> None:
    for overload in overloads:
        OP_TABLE[overload] = emitter


_register_one([aten.add.Tensor, aten.add.Scalar], _binary("add"))
_register_one([aten.sub.Tensor, aten.sub.Scalar], _binary("sub"))
_register_one([aten.mul.Tensor, aten.mul.Scalar], _binary("mul"))
_register_one([aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode], _binary("div"))
_register_one([aten.rsub.Tensor, aten.rsub.Scalar], _rsub)
_register_one([aten.neg.default], _neg)
_register_one([aten.reciprocal.default], _reciprocal)
_register_one([aten.exp.default], _unary("exp"))
_register_one([aten.log.default], _unary("log"))
_register_one([aten.tanh.default], _unary("tanh"))
_register_one([aten.rsqrt.default], _unary("rsqrt"))
_register_one([aten.erf.default], _unary("erf"))
_register_one([aten.sqrt.default], _sqrt)
_register_one([aten.relu.default], _relu)
_register_one([aten.silu.default], _silu)
_register_one([aten.sigmoid.default], _sigmoid)
_register_one([aten.gelu.default], _gelu)
_register_one([aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor], _pow)
_register_one([aten.mm.default, aten.bmm.default], _mm)
_register_one([aten.addmm.default], _addmm)
_register_one([aten.baddbmm.default], _baddbmm)
_register_one([aten.view.default, aten._unsafe_view.default, aten.reshape.default], _view)
_register_one([aten._reshape_alias.default], _reshape_alias)
_register_one([aten.unsqueeze.default], _unsqueeze)
_register_one([aten.squeeze.default, aten.squeeze.dim], _squeeze)
_register_one([aten.clone.default], _clone)
_register_one([aten.alias.default, aten.lift_fresh_copy.default, aten.lift_fresh.default],
              _alias_copy)
_register_one([aten.detach.default], _detach)
_register_one([aten._to_copy.default], _to_copy)
_register_one([aten.t.default], _t)
_register_one([aten.transpose.int], _transpose)
_register_one([aten.permute.default], _permute)
_register_one([aten.expand.default], _expand)
_register_one([aten._softmax.default], _softmax)
_register_one([aten._log_softmax.default], _log_softmax)
_register_one([aten.native_layer_norm.default], _layer_norm)
_register_one([aten.sum.dim_IntList], _reduce("sum"))
_register_one([aten.sum.default], _sum_default)
_register_one([aten.mean.dim], _reduce("mean"))
_register_one([aten.mean.default], _mean_default)
_register_one([aten.amax.default], _reduce("amax"))
_register_one([aten.var.correction], _var)
_register_one([aten.var.dim], _var_dim)
_register_one([aten.var.default], _var_default)
_register_one([aten.var_mean.correction], _var_mean(False))
_register_one([aten.std_mean.correction], _var_mean(True))
_register_one([aten.embedding.default], _embedding)
_register_one([aten.split.Tensor], _split)
_register_one([aten.split_with_sizes.default], _split_with_sizes)
_register_one([aten.slice.Tensor], _slice)
_register_one([aten.select.int], _select)
_register_one([aten.cat.default], _cat)
_register_one([aten.index_select.default], _index_select)
_register_one([aten.index.Tensor], _index)
_register_one([aten.gather.default], _gather)
_register_one([aten.index_put.default], _index_put)
_register_one([aten.masked_select.default], _masked_select)
_register_one([aten.where.self], _where)
_register_one([aten.masked_fill.Scalar, aten.masked_fill.Tensor], _masked_fill)
for _kind in ("eq", "ne", "lt", "le", "gt", "ge"):
    _register_one([getattr(aten, _kind).Tensor, getattr(aten, _kind).Scalar], _compare(_kind))
_register_one([aten.bitwise_not.default, aten.logical_not.default], _logical_not)
_register_one([aten.tril.default], _tril("tril"))
_register_one([aten.triu.default], _tril("triu"))
_register_one([aten.native_dropout.default], _dropout)
_register_one([aten.nll_loss_forward.default, aten.nll_loss2d_forward.default], _nll_loss)
_register_one([aten.ones_like.default], _fill_like(1.0))
_register_one([aten.zeros_like.default], _fill_like(0.0))
_register_one([aten.full_like.default], _full_like)
_register_one([aten.slice_scatter.default], _slice_scatter)
_register_one([aten.select_scatter.default], _select_scatter)
_register_one([aten.clamp.default, aten.clamp.Tensor], _clamp)
_register_one([aten.maximum.default], _extremum("gt"))
_register_one([aten.minimum.default], _extremum("lt"))
_register_one([aten.leaky_relu.default], _leaky_relu)
_register_one([aten.elu.default], _elu)
_register_one([aten.softplus.default], _softplus)
_register_one([aten.mish.default], _mish)
_register_one([aten.log_sigmoid_forward.default], _log_sigmoid)
_register_one([aten.hardsigmoid.default], _hardsigmoid)
_register_one([aten.hardswish.default], _hardswish)
_register_one([aten.glu.default], _glu)
_register_one([aten.abs.default], _abs)
_register_one([aten.sign.default], _sign)
_register_one([aten.expm1.default], _expm1)
_register_one([aten.log1p.default], _log1p)
_register_one([aten.amin.default], _amin)
_register_one([aten.max.dim], _max_dim(False))
_register_one([aten.min.dim], _max_dim(True))
_register_one([aten.max.default], _max_all(False))
_register_one([aten.min.default], _max_all(True))
_register_one([aten.linalg_vector_norm.default], _vector_norm)
_register_one([aten.norm.ScalarOpt_dim, aten.norm.Scalar], _norm)
_register_one([aten.constant_pad_nd.default], _constant_pad)
_register_one([aten.cumsum.default], _cumsum)
_register_one([aten.celu.default], _celu)
_register_one([aten.threshold.default], _threshold)
_register_one([aten.prelu.default], _prelu)
_register_one([aten.lerp.Scalar, aten.lerp.Tensor], _lerp)
_register_one([aten.addcmul.default], _addcmul)
_register_one([aten.addcdiv.default], _addcdiv)
_register_one([aten.logaddexp.default], _logaddexp)
_register_one([aten.repeat.default], _repeat)
_register_one([aten.roll.default], _roll)
