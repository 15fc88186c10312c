"""Weights as safetensors files, the format of ``--init`` and of the files
of a checkpoint (``--save``; `zeroc.checkpoint` exports its weights as one
file).

The file format (https://github.com/huggingface/safetensors): an 8-byte
little-endian header length, a JSON header mapping each tensor name to
``{"dtype", "shape", "data_offsets"}`` (plus an optional ``__metadata__``
object of strings), then the tensors' bytes, row-major, little-endian.

Two layers:

* standard library only: `RawTensor` (dtype name, shape, bytes), `save` and
  `load` of ``{name: RawTensor}``, `read_header`;
* PyTorch's side (torch is imported inside these functions only, so that
  ``import zeroc.weights`` never imports it): `save_state_dict` writes a
  state dict (tensors that share storage with an earlier one, i.e. tied
  weights, are written once under the first name unless asked otherwise),
  `load_state_dict` reads a file back into CPU tensors, ready for
  ``module.load_state_dict``.

    from zeroc import weights
    weights.save_state_dict("init.safetensors", model.state_dict())
    model.load_state_dict(weights.load_state_dict("model.safetensors"))  # an export
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from dataclasses import dataclass
from typing import Mapping

from zeroc.files import atomic_open

DTYPE_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2,
               "I8": 1, "U8": 1, "U16": 2, "BOOL": 1}
"""Bytes per element of the safetensors dtypes this module reads and writes."""

_MAX_HEADER = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    """A malformed or unsupported safetensors file; the message names it."""


@dataclass(frozen=True)
class RawTensor:
    """One tensor of a safetensors file: its dtype name (``F32``, ``BF16``,
    ...), its shape and its row-major little-endian bytes."""

    dtype: str
    shape: tuple[int, ...]
    data: bytes

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        if self.dtype not in DTYPE_SIZES:
            raise SafetensorsError(f"unsupported dtype {self.dtype!r}")
        if any(d < 0 for d in self.shape):
            raise SafetensorsError(f"negative dimension in shape {self.shape}")
        if len(self.data) != math.prod(self.shape) * DTYPE_SIZES[self.dtype]:
            raise SafetensorsError(
                f"{self.dtype} {list(self.shape)} needs "
                f"{math.prod(self.shape) * DTYPE_SIZES[self.dtype]} bytes, got {len(self.data)}")

    @property
    def numel(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)


def _header_bytes(tensors: Mapping[str, RawTensor], metadata: Mapping[str, str] | None) -> bytes:
    header: dict[str, object] = {}
    if metadata:
        for key, value in metadata.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise SafetensorsError("metadata keys and values must be strings")
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, tensor in tensors.items():
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise SafetensorsError(f"invalid tensor name {name!r}")
        header[name] = {"dtype": tensor.dtype, "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(tensor.data)]}
        offset += len(tensor.data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # align the data to 8 bytes, as the reference writer does
    return struct.pack("<Q", len(text)) + text


def save(path: str, tensors: Mapping[str, RawTensor],
         metadata: Mapping[str, str] | None = None) -> None:
    """Writes `tensors` (in their order) and string `metadata` to `path`,
    through a temporary file and a rename."""
    header = _header_bytes(tensors, metadata)
    with atomic_open(path) as out:
        out.write(header)
        for tensor in tensors.values():
            out.write(tensor.data)


def read_header(path: str) -> tuple[dict, dict[str, str], int]:
    """The header of `path`: ``(tensors, metadata, data_start)``, where
    `tensors` maps each name to its header entry and `data_start` is the
    byte offset of the data section."""
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) != 8:
            raise SafetensorsError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        (size,) = struct.unpack("<Q", prefix)
        if size > _MAX_HEADER:
            raise SafetensorsError(f"{path}: not a safetensors file (header of {size} bytes)")
        text = f.read(size)
        if len(text) != size:
            raise SafetensorsError(f"{path}: truncated header")
        data_size = os.fstat(f.fileno()).st_size - 8 - size
    try:
        header = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SafetensorsError(f"{path}: the header is not JSON: {error}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: the header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    for name, info in header.items():
        try:
            begin, end = info["data_offsets"]
            dtype, shape = info["dtype"], info["shape"]
        except (KeyError, TypeError, ValueError):
            raise SafetensorsError(f"{path}: malformed entry for {name!r}") from None
        if dtype not in DTYPE_SIZES:
            raise SafetensorsError(f"{path}: tensor {name!r} has unsupported dtype {dtype!r}")
        if not 0 <= begin <= end <= data_size or \
                end - begin != math.prod(shape) * DTYPE_SIZES[dtype]:
            raise SafetensorsError(f"{path}: tensor {name!r} has bad data offsets")
    # The format's rule, as the C++ reader checks it (lib/Support/SafeTensors.cpp):
    # in order of their offsets, the tensors' bytes follow one another without
    # gap, overlap or alias and cover the data exactly.
    covered, previous = 0, None
    for name, info in sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"])):
        begin, end = info["data_offsets"]
        if begin < covered:
            raise SafetensorsError(f"{path}: tensor {name!r}: data_offsets [{begin}, {end}] "
                                   f"overlap those of tensor {previous!r}")
        if begin > covered:
            raise SafetensorsError(f"{path}: tensor {name!r}: data_offsets [{begin}, {end}] "
                                   f"leave bytes [{covered}, {begin}) to no tensor")
        covered, previous = end, name
    if covered != data_size:
        raise SafetensorsError(f"{path}: bytes [{covered}, {data_size}) of the data belong "
                               f"to no tensor")
    return header, metadata, 8 + size


def load(path: str) -> tuple[dict[str, RawTensor], dict[str, str]]:
    """Reads `path`: ``({name: RawTensor}, metadata)``, tensors in file order."""
    header, metadata, start = read_header(path)
    tensors = {}
    with open(path, "rb") as f:
        for name, info in header.items():
            begin, end = info["data_offsets"]
            f.seek(start + begin)
            tensors[name] = RawTensor(info["dtype"], tuple(info["shape"]), f.read(end - begin))
    return tensors, metadata


# PyTorch's side. torch is imported by these functions, never by the module.

def _torch_dtypes():
    import torch
    return {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
            torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
            torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}


def tensor_to_raw(tensor) -> RawTensor:
    """A torch tensor as a `RawTensor` (copied to the CPU, row-major)."""
    import torch
    if sys.byteorder != "little":
        raise SafetensorsError("safetensors is little-endian; this machine is not")
    dtypes = _torch_dtypes()
    if tensor.dtype not in dtypes:
        raise SafetensorsError(f"unsupported tensor dtype {tensor.dtype}")
    t = tensor.detach().to("cpu").contiguous()
    if t.dtype == torch.bfloat16:
        data = t.view(torch.int16).numpy().tobytes()
    else:
        data = t.numpy().tobytes()
    return RawTensor(dtypes[tensor.dtype], tuple(t.shape), data)


def raw_to_tensor(raw: RawTensor):
    """A `RawTensor` as a torch tensor of its dtype (U16 becomes int32,
    which torch 1.13 lacks)."""
    import torch
    if sys.byteorder != "little":
        raise SafetensorsError("safetensors is little-endian; this machine is not")
    if raw.dtype == "U16":
        values = struct.unpack(f"<{raw.numel}H", raw.data)
        return torch.tensor(values, dtype=torch.int32).reshape(raw.shape)
    dtype = {v: k for k, v in _torch_dtypes().items()}[raw.dtype]
    if raw.numel == 0:
        return torch.empty(raw.shape, dtype=dtype)
    if raw.dtype == "BF16":
        flat = torch.frombuffer(bytearray(raw.data), dtype=torch.int16).view(torch.bfloat16)
    else:
        flat = torch.frombuffer(bytearray(raw.data), dtype=dtype)
    return flat.reshape(raw.shape)


def save_state_dict(path: str, state_dict: Mapping[str, object], *,
                    metadata: Mapping[str, str] | None = None,
                    dtype=None, keep_tied: bool = False) -> list[str]:
    """Writes a PyTorch state dict to `path` as safetensors.

    An entry whose tensor shares its storage with an earlier entry (a tied
    weight: nanoGPT's ``lm_head.weight`` is ``transformer.wte.weight``) is
    left out unless `keep_tied`; the names left out are returned. `dtype`
    (say ``torch.float32``) converts every floating-point tensor. The
    metadata ``format`` is ``pt`` unless `metadata` says otherwise.
    """
    seen: dict[tuple, str] = {}
    tensors, skipped = {}, []
    for name, tensor in state_dict.items():
        key = (tensor.data_ptr(), tensor.dtype, tuple(tensor.shape), tuple(tensor.stride()))
        if not keep_tied and tensor.numel() > 0 and key in seen:
            skipped.append(name)
            continue
        seen[key] = name
        if dtype is not None and tensor.is_floating_point():
            tensor = tensor.to(dtype)
        tensors[name] = tensor_to_raw(tensor)
    save(path, tensors, {"format": "pt", **(metadata or {})})
    return skipped


def load_state_dict(path: str) -> dict:
    """Reads `path` into ``{name: torch.Tensor}`` (CPU tensors, file order)."""
    tensors, _ = load(path)
    return {name: raw_to_tensor(raw) for name, raw in tensors.items()}
