"""torch.fx tracing with concrete shapes and source locations.

A plain ``torch.fx.symbolic_trace`` cannot trace nanoGPT: its attention
computes ``1.0 / math.sqrt(k.size(-1))``, and a traced ``size()`` is a
Proxy that ``math.sqrt`` rejects. `Tracer` builds on torch's
``MetaTracer``: the inputs are meta tensors of the caller's batch shape, so
every ``size()``, ``shape`` and ``dim()`` is a plain int during tracing and
Python arithmetic on shapes simply runs; tensors built from them
(``torch.arange(t)``, ``torch.tril(torch.ones(t, t))``) become constants.

It also

* records where each node comes from (``node.stack_trace``, which torch
  1.13 keeps only with ``record_stack_traces``), pointing into the user's
  code rather than into torch or this package;
* stores the meta tensor of each traced value in ``node.meta["zeroc_meta"]``
  (its shape is checked against the IR the importer writes);
* refuses ``x += y`` (and the other augmented assignments) on a traced
  tensor: torch.fx would trace it as ``x = x + y`` and miss that eager
  PyTorch changes every alias of ``x`` (`InPlaceError`);
* fixes ``a, b, c = proxy`` on Python 3.11, where torch 1.13 misreads the
  bytecode (it indexes instructions by ``f_lasti // 2``, which no longer
  accounts for inline cache entries).
"""

from __future__ import annotations

import dis
import inspect
import os
import warnings

import torch
import torch.fx
from torch.fx.experimental.meta_tracer import MetaProxy, MetaTracer

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_IMPORTER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class InPlaceError(Exception):
    """Augmented assignment (``x += y``) on a traced tensor."""


def _in_place(symbol: str):
    def refuse(self, other):
        raise InPlaceError(
            f"in-place `{symbol}` on a tensor: in eager PyTorch it changes every alias of "
            "the tensor (`skip = x; x += f(x)` changes skip), which torch.fx tracing does "
            "not see; import with --frontend=aten (a functionalized ATen graph), or write "
            f"`x = x {symbol[:-1]} ...`")
    return refuse


class _Proxy(MetaProxy):
    __iadd__ = _in_place("+=")
    __isub__ = _in_place("-=")
    __imul__ = _in_place("*=")
    __itruediv__ = _in_place("/=")
    __ipow__ = _in_place("**=")
    __imatmul__ = _in_place("@=")

    @property
    def ndim(self):
        # A plain int, as size(), dim() and shape are (llama2.c's
        # reshape_for_broadcast asserts on x.ndim).
        meta = getattr(self, "_tensor_meta", None)
        if meta is not None:
            return meta.dim()
        return self.tracer.create_proxy("call_function", getattr, (self, "ndim"), {})

    def __iter__(self):
        frame = inspect.currentframe()
        calling = frame.f_back if frame is not None else None
        if calling is not None:
            for inst in dis.get_instructions(calling.f_code):
                if inst.offset == calling.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        return self.tracer.iter(self)


def _is_internal(filename: str) -> bool:
    """Whether `filename` is torch's, this package's or generated code."""
    if filename.startswith(("<frozen", "<eval_with_key")):
        return True
    path = os.path.abspath(filename)
    return path.startswith(_TORCH_DIR) or path.startswith(_IMPORTER_DIR)


class Tracer(MetaTracer):
    """``MetaTracer`` with locations, recorded metas and the 3.11 fix."""

    record_stack_traces = True

    def proxy(self, node):
        return _Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        with warnings.catch_warnings():
            # "Could not compute metadata for ...": the IR's own shapes take over.
            warnings.simplefilter("ignore")
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                         proxy_factory_fn)
        meta = getattr(proxy, "_tensor_meta", None)
        if meta is None and kind in ("call_function", "call_method"):
            meta = self._meta_with_constants(kind, target, args, kwargs)
            if meta is not None:
                proxy.install_tensor_meta(meta)
        if meta is not None:
            proxy.node.meta["zeroc_meta"] = meta
        return proxy

    def _meta_with_constants(self, kind, target, args, kwargs):
        """The op's meta output with constant tensors (buffers, tensors built
        from shapes) moved to the meta device too: MetaTracer only handles
        proxies, so ``xq_r * freqs_cos[:T]`` would get no meta and a later
        ``.ndim`` or ``.shape`` would be a proxy."""
        def to_meta(value):
            if isinstance(value, torch.fx.Proxy):
                return getattr(value, "_tensor_meta", None)
            if isinstance(value, torch.Tensor) and value.device.type != "meta":
                return value.to("meta")
            return value
        try:
            args_metas = torch.fx.node.map_aggregate(args, to_meta)
            kwargs_metas = torch.fx.node.map_aggregate(kwargs, to_meta)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if kind == "call_function":
                    out = target(*args_metas, **kwargs_metas)
                else:
                    out = getattr(args_metas[0], target)(*args_metas[1:], **kwargs_metas)
        except Exception:  # noqa: BLE001 - no meta, as MetaTracer would
            return None
        return out if isinstance(out, torch.Tensor) else None

    def _find_user_frame(self):
        frame = inspect.currentframe()
        while frame is not None and _is_internal(frame.f_code.co_filename):
            frame = frame.f_back
        return frame


def user_location(stack_trace: str | None) -> tuple[str, int, str] | None:
    """``(file, line, source text)`` of the innermost user frame of a node's
    ``stack_trace`` (as `Tracer` records it: innermost frame first)."""
    if not stack_trace:
        return None
    lines = stack_trace.splitlines()
    for i, line in enumerate(lines):
        line = line.strip()
        if not line.startswith('File "'):
            continue
        try:
            filename, rest = line[6:].split('", line ', 1)
            lineno = int(rest.split(",", 1)[0])
        except ValueError:
            continue
        if _is_internal(filename):
            continue
        code = lines[i + 1].strip() if i + 1 < len(lines) and \
            not lines[i + 1].strip().startswith('File "') else ""
        return filename, lineno, code
    return None


def location_of_exception(error: BaseException) -> tuple[str, int, str] | None:
    """The innermost frame of `error`'s traceback that is in user code."""
    import traceback
    found = None
    for frame in traceback.extract_tb(error.__traceback__):
        if not _is_internal(frame.filename):
            found = (frame.filename, frame.lineno, (frame.line or "").strip())
    return found


def _embedding_meta(self, input):
    # MetaTracer's own override makes the rows f32 whatever the table: a
    # bf16 model's `x.dtype` would then read f32 (Hugging Face's RMSNorm
    # casts back to it).
    return torch.empty(*input.shape, self.weight.shape[-1], device="meta",
                       dtype=self.weight.dtype)


def trace(module: torch.nn.Module, meta_args: dict, concrete_args: dict | None = None
          ) -> torch.fx.GraphModule:
    """Traces `module` with meta tensors `meta_args` for its tensor inputs."""
    from torch.fx.experimental import meta_tracer
    tracer = Tracer()
    saved = meta_tracer.manual_meta_overrides.get(torch.nn.Embedding)
    meta_tracer.manual_meta_overrides[torch.nn.Embedding] = _embedding_meta
    try:
        graph = tracer.trace(module, meta_args, concrete_args)
    finally:
        meta_tracer.manual_meta_overrides[torch.nn.Embedding] = saved
    return torch.fx.GraphModule(tracer.root, graph, module.__class__.__name__)
