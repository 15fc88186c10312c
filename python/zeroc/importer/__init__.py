"""The PyTorch importer: an nn.Module's training forward as `train` IR.

The module's ``forward(tokens, targets)`` must return the loss (alone or
among other outputs, as nanoGPT's ``(logits, loss)``). It is traced at the
caller's batch shape (B x T token ids and targets) to a functionalized
ATen graph and translated op by op into a ``train.forward`` function through
one op table (`zeroc.importer.aten`); what the table writes out with generic
ops (attention, norms, rotary embeddings, cross-entropy) the compiler's
``train-raise`` pass turns into its fast ops. Its parameters become ``train.param`` declarations under their state-dict names, and their
current values are exported (safetensors) for the executable's ``--init``.
A parameter tied under two names (nanoGPT's ``lm_head.weight`` and
``transformer.wte.weight``) is one parameter under its first name.

    import torch
    from zeroc import importer, ir
    model = GPT()
    imported = importer.import_module(model, batch_size=8, block_size=64,
                                      optimizer=ir.OptimizerConfig(lr=1e-3))
    imported.write("gpt.mlir", "gpt.safetensors")

or from the command line (``python3 -m zeroc.importer --help``; the
supported ops and the rules are in docs/importer.md):

    python3 -m zeroc.importer model.py:GPT --batch-size 8 --block-size 64 \\
        -o gpt.mlir --weights gpt.safetensors

This package imports PyTorch (``import zeroc`` does not).
"""

from __future__ import annotations

import importlib.util
import inspect
import io
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

try:
    import torch
    import torch.nn as nn
except ImportError as _error:
    raise ImportError(
        f"zeroc.importer needs PyTorch, which {sys.executable} cannot import ({_error}); "
        "Debian's python3-torch is for /usr/bin/python3") from None

from zeroc import ir, weights as weights_io
from zeroc.files import atomic_open
from zeroc.importer.errors import ImporterError, location_of_exception

__all__ = ["ImportedModel", "ImporterError", "default_decay", "import_module", "load_module",
           "load_weights"]

IDS_DTYPES = {"i32": torch.int32, "i64": torch.int64}
"""Element types of the token-id arguments, by name."""

FRONTENDS = ("aten",)
"""The tracing front ends: only the functionalized ATen graph with its op
table (docs/importer.md). The torch.fx front end (``"fx"``) was removed;
``frontend="aten"`` is still accepted, for one release."""


def default_decay(name: str, tensor: torch.Tensor) -> bool:
    """Weight decay on parameters of rank 2 and more (matrices and
    embeddings), as nanoGPT's configure_optimizers and zeroc's builder."""
    return tensor.dim() >= 2


@dataclass
class ImportedModel:
    """The result of `import_module`.

    `mlir` is the module's text; `weights` the exported tensors by canonical
    name (the declared parameters, in declaration order); `tied` maps every
    other state-dict name of a declared parameter to its canonical name;
    `unused` lists parameters the forward never uses (not declared, not
    exported); `frozen` the parameters with ``requires_grad=False``, which
    are constants of the IR, as buffers (not declared, not exported, not
    trained).
    """

    mlir: str
    weights: dict[str, torch.Tensor]
    params: list[ir.Param]
    tied: dict[str, str] = field(default_factory=dict)
    unused: list[str] = field(default_factory=list)
    vocab_size: int | None = None
    batch_size: int = 0
    block_size: int = 0
    model_name: str = ""
    frozen: list[str] = field(default_factory=list)

    @property
    def num_parameters(self) -> int:
        """Trainable scalars (each tied parameter once)."""
        return sum(p.type.numel for p in self.params)

    def save_weights(self, path: str) -> None:
        """Writes the weights as safetensors (F32 or BF16), the executable's
        ``--init`` format."""
        weights_io.save_state_dict(path, self.weights, keep_tied=True,
                                   metadata={"producer": "zeroc.importer",
                                             "model": self.model_name})

    def write(self, mlir_path: str, weights_path: str | None = None) -> None:
        """Writes the IR to `mlir_path` and, if given, the weights."""
        with atomic_open(mlir_path, "w", encoding="utf-8") as out:
            out.write(self.mlir)
        if weights_path is not None:
            self.save_weights(weights_path)


def _forward_inputs(module: nn.Module) -> tuple[list[str], dict[str, Any]]:
    """The names of forward's first two arguments, and the defaults of the
    others (traced as constants)."""
    try:
        signature = inspect.signature(module.forward)
    except (TypeError, ValueError):
        raise ImporterError("cannot read the signature of forward") from None
    names, constants = [], {}
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ImporterError("forward must take named arguments (no *args or **kwargs)")
        if len(names) < 2:
            names.append(parameter.name)
        elif parameter.default is parameter.empty:
            raise ImporterError(
                f"forward's argument '{parameter.name}' has no default; forward takes the "
                "token ids and the targets, then only arguments with defaults")
        else:
            constants[parameter.name] = parameter.default
    if len(names) < 2:
        raise ImporterError("forward must take two tensors, the token ids and the targets "
                            f"(it takes {len(names)})")
    return names, constants


def import_module(module: nn.Module, *, batch_size: int | None = None,
                  block_size: int | None = None, example_inputs: tuple | None = None,
                  optimizer: ir.OptimizerConfig | None = None, ids_dtype: str = "i32",
                  vocab_size: int | None = None, model_name: str | None = None,
                  decay: Callable[[str, torch.Tensor], bool] = default_decay,
                  source: str | None = None, frontend: str = "aten") -> ImportedModel:
    """Translates `module` (put in training mode) into `train` IR.

    The batch shape is `batch_size` x `block_size`, or that of
    `example_inputs` ``(tokens, targets)`` (whose dtype, int32 or int64, then
    gives `ids_dtype`). `optimizer` defaults to the builder's AdamW
    (`ir.OptimizerConfig()`); `decay` picks the parameters with weight decay.
    `vocab_size`, when given, must equal the model's (the last dimension of
    the logits). `frontend` is deprecated: only ``"aten"`` (the
    functionalized ATen graph, the only front end) is accepted, for one
    release. Raises `ImporterError`, with the ATen op, the module path and
    the user's source line where it can.
    """
    if frontend not in FRONTENDS:
        raise ImporterError(f"frontend {frontend!r} does not exist: the functionalized ATen "
                            "graph ('aten') is the only front end (the torch.fx one was "
                            "removed)")
    if example_inputs is not None:
        if len(example_inputs) != 2:
            raise ImporterError("example_inputs must be (tokens, targets)")
        tokens, targets = example_inputs
        if tokens.dim() != 2 or tuple(tokens.shape) != tuple(targets.shape):
            raise ImporterError("example tokens and targets must both be [B, T]")
        batch_size, block_size = tokens.shape
        ids = {v: k for k, v in IDS_DTYPES.items()}.get(tokens.dtype)
        if ids is None:
            raise ImporterError(f"example tokens must be int32 or int64, not {tokens.dtype}")
        ids_dtype = ids
    for what, value in (("batch_size", batch_size), ("block_size", block_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ImporterError(f"{what} must be a positive integer, got {value!r}")
    if ids_dtype not in IDS_DTYPES:
        raise ImporterError(f"ids_dtype must be i32 or i64, got {ids_dtype!r}")
    if not isinstance(module, nn.Module):
        raise ImporterError(f"expected an nn.Module, got {type(module).__name__}")
    optimizer = optimizer if optimizer is not None else ir.OptimizerConfig()
    model_name = model_name or type(module).__name__.lower()

    named = list(module.named_parameters())
    if not named:
        raise ImporterError("the module has no parameters")
    dtypes = {p.dtype for _, p in named}
    if dtypes == {torch.float32}:
        element = "f32"
    elif dtypes == {torch.bfloat16}:
        element = "bf16"
    else:
        raise ImporterError("parameters must all be float32 or all bfloat16, found "
                            + ", ".join(sorted(str(d) for d in dtypes)))
    canonical = _canonical_names(module)
    named = [(canonical[id(p)], p) for _, p in named]

    module.train()
    arguments, constants = _forward_inputs(module)
    ids_type = ir.TensorType((batch_size, block_size), ids_dtype)
    from zeroc.importer import aten
    converter, _ = _convert_aten(module, canonical, element, ids_type, constants, decay,
                                 arguments)
    body = aten.dead_code_elimination(converter.out.getvalue())
    return _assemble(module, converter, body, named, canonical, element, optimizer,
                     vocab_size, model_name, batch_size, block_size, ids_dtype, source)


def _convert_aten(module: nn.Module, canonical: dict[int, str], element: str,
                  ids_type: ir.TensorType, constants: dict, decay,
                  arguments: list[str]) -> tuple:
    """Traces `module` to a functionalized ATen graph and translates it
    (`zeroc.importer.aten`)."""
    from zeroc.importer import aten
    aliases: dict[int, list[str]] = {}
    tensors: dict[int, torch.Tensor] = {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for local, param in sub._parameters.items():
            if param is None:
                continue
            name = f"{prefix}.{local}" if prefix else local
            aliases.setdefault(id(param), [])
            if name not in aliases[id(param)]:
                aliases[id(param)].append(name)
            tensors[id(param)] = param
    params = [(canonical[key], names, tensors[key]) for key, names in aliases.items()]
    buffers = [(name, b) for name, b in module.named_buffers()]
    # Example ids: valid token ids (zeros) of the batch shape; the trace does
    # not depend on their values (a data-dependent branch is an error).
    inputs = [torch.zeros(ids_type.shape, dtype=torch.long) for _ in range(2)]
    try:
        graph_module = aten.trace(module, inputs, constants or None, params, buffers)
    except ImporterError:
        raise
    except Exception as error:  # noqa: BLE001 - tracing runs the user's code
        location = location_of_exception(error)
        if "value out of a tracing tensor" in str(error):
            raise ImporterError(
                "a data-dependent branch: the forward reads a tensor's value as a Python "
                "value (`if tensor:`, .item(), int(tensor)), so the traced graph would hold "
                "only the branch taken for the example inputs", location=location,
                target="aten._local_scalar_dense") from None
        raise ImporterError(f"tracing the forward to ATen ops failed: {type(error).__name__}: "
                            f"{error}", location=location) from None
    # A frozen parameter (requires_grad=False: nn.Embedding.from_pretrained's
    # default) gets no gradient and no update in PyTorch: a constant, as a
    # buffer.
    placeholders = [aten.ParamInput(name, tensor) if tensor.requires_grad
                    else tensor.detach().clone() for name, _, tensor in params] + \
        [b.detach().clone() for _, b in buffers]
    converter = aten.AtenConverter(graph_module, placeholders, element, decay,
                                   [name for name, _, _ in params] + [n for n, _ in buffers],
                                   arguments)
    converter.run([ids_type, ids_type])
    return converter, params


def _assemble(module, converter, body, named, canonical, element, optimizer, vocab_size,
              model_name, batch_size, block_size, ids_dtype, source) -> ImportedModel:
    """The module's text and weights from a converter's function body."""
    read = set(re.findall(r"= train\.read @(\S+) :", body))
    params = [converter.params[name] for name, _ in named if name in read]
    frozen = [name for name, p in named if not p.requires_grad]
    unused = [name for name, p in named if name not in read and p.requires_grad]
    tensors = {p.name: converter.param_tensors[p.name].detach().clone().contiguous()
               for p in params}
    tied = {}
    for name, value in module.state_dict(keep_vars=True).items():
        target = canonical.get(id(value))
        if target is not None and target != name and target in read:
            tied[name] = target

    vocab = converter.vocab
    if vocab is None:
        vocab = vocab_size  # a loss without nll_loss (one_hot): as given
    if vocab_size is not None and vocab is not None and vocab_size != vocab:
        raise ImporterError(f"the model's vocabulary is {vocab} (the logits' last dimension), "
                            f"not {vocab_size} (--vocab-size)")

    out = io.StringIO()
    writer = ir.ModuleWriter(out)
    count = sum(p.type.numel for p in params)
    header = [f"Imported from PyTorch by zeroc.importer: {source or type(module).__name__}",
              f"batch {batch_size} x block {block_size}, {ids_dtype} ids, "
              f"vocabulary {vocab}, {element}; {count:,} parameters."]
    if tied:
        header.append("Tied: " + ", ".join(f"{a} is {c}" for a, c in tied.items()) + ".")
    writer.comment(header)
    writer.open({"train.model": _model_attribute(model_name)}, tied=tied)
    writer.optimizer(optimizer)
    for param in params:
        writer.param(param)
    writer.function("forward", [(a.name, a.type) for a in converter.arguments],
                    ir.TensorType((), "f32"), ["train.forward"])
    out.write(body)
    writer.close()
    return ImportedModel(out.getvalue(), tensors, params, tied, unused, vocab, batch_size,
                         block_size, model_name, frozen)


def _canonical_names(module: nn.Module) -> dict[int, str]:
    """The name each parameter is declared and exported under, by id: its
    first state-dict name, unless another of its names is an nn.Embedding's
    weight (a tied lm_head is declared as the embedding table, whichever way
    round the tying assignment was written)."""
    names: dict[int, list[str]] = {}
    embedding: dict[int, str] = {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for local, param in sub._parameters.items():
            if param is None:
                continue
            name = f"{prefix}.{local}" if prefix else local
            names.setdefault(id(param), [])
            if name not in names[id(param)]:
                names[id(param)].append(name)
            if isinstance(sub, nn.Embedding) and local == "weight":
                embedding.setdefault(id(param), name)
    return {key: embedding.get(key, aliases[0]) for key, aliases in names.items()}


def load_weights(module: nn.Module, state: Mapping[str, torch.Tensor],
                 what: str = "weights") -> None:
    """``module.load_state_dict(state, strict=True)``, except that a tied
    name may be missing when another name of the same tensor is present (a
    file the importer exported has each tied parameter once)."""
    own = module.state_dict(keep_vars=True)
    by_id: dict[int, list[str]] = {}
    for name, value in own.items():
        by_id.setdefault(id(value), []).append(name)
    complete = dict(state)
    for name, value in own.items():
        if name not in complete:
            present = [n for n in by_id[id(value)] if n in state]
            if present:
                complete[name] = state[present[0]]
    try:
        module.load_state_dict(complete, strict=True)
    except RuntimeError as error:
        raise ImporterError(f"{what}: {error}") from None


def _model_attribute(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return cleaned or "model"


def load_module(spec: str, kwargs: Mapping[str, Any] | None = None,
                seed: int | None = 0) -> nn.Module:
    """The module named by ``FILE.py:NAME``: NAME is a class or a function,
    called with `kwargs` after ``torch.manual_seed(seed)``, or an nn.Module
    instance. FILE's directory is put on sys.path for its own imports."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise ImporterError(f"'{spec}' is not FILE.py:NAME")
    if not os.path.isfile(path):
        raise ImporterError(f"{path}: no such file")
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    unique = f"zeroc_import_{stem}_{abs(hash(os.path.abspath(path)))}"
    loader_spec = importlib.util.spec_from_file_location(unique, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ImporterError(f"{path}: cannot load it as a Python module")
    python_module = importlib.util.module_from_spec(loader_spec)
    sys.modules[unique] = python_module
    try:
        loader_spec.loader.exec_module(python_module)
    except Exception as error:  # noqa: BLE001 - the user's code
        raise ImporterError(f"running {path} failed: {type(error).__name__}: {error}",
                            location=location_of_exception(error)) from None
    if not hasattr(python_module, name):
        modules = sorted(n for n, v in vars(python_module).items()
                         if isinstance(v, type) and issubclass(v, nn.Module)
                         and v.__module__ == unique)
        hint = f" (its nn.Modules: {', '.join(modules)})" if modules else ""
        raise ImporterError(f"{path} has no '{name}'{hint}")
    obj = getattr(python_module, name)
    if isinstance(obj, nn.Module):
        if kwargs:
            raise ImporterError(f"'{name}' is a module instance; it takes no arguments")
        return obj
    if not callable(obj):
        raise ImporterError(f"'{name}' in {path} is neither an nn.Module class nor a function")
    if seed is not None:
        torch.manual_seed(seed)
    try:
        result = obj(**dict(kwargs or {}))
    except Exception as error:  # noqa: BLE001 - the user's code
        raise ImporterError(f"{name}({_kwargs_text(kwargs)}) failed: "
                            f"{type(error).__name__}: {error}",
                            location=location_of_exception(error)) from None
    if not isinstance(result, nn.Module):
        raise ImporterError(f"{name}({_kwargs_text(kwargs)}) returned "
                            f"{type(result).__name__}, not an nn.Module")
    return result


def _kwargs_text(kwargs: Mapping[str, Any] | None) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in (kwargs or {}).items())
