"""Hugging Face model folders in and out: a Llama-family ``config.json`` read
into a `LlamaConfig`, and a checkpoint written as a folder
``from_pretrained`` accepts.

* `read_config(path)` reads a ``config.json`` (or the folder holding one)
  of ``model_type`` ``llama``, ``qwen2``, ``qwen3`` or ``mistral``. Every
  field that changes the computation is honoured (`HONOURED`) or refused
  with an `HfConfigError` naming the file, the field and its value; fields
  that do not change it (`IGNORED`: token ids, ``torch_dtype``,
  ``use_cache``, ...) are listed so the caller can say so; an unknown field
  is refused, since zeroc cannot tell whether it changes the computation.
* `config_dict(config, base)` is the ``config.json`` of a `LlamaConfig`:
  `base` (the one it was read from) with the honoured fields set to the
  model's values.
* `export(checkpoint, out, ...)` writes ``config.json`` and the weights of a
  zeroc checkpoint (``--save``) as ``save_pretrained`` does: shards of at
  most `max_shard_size` bytes named ``model-0000K-of-0000N.safetensors``
  with ``model.safetensors.index.json`` (one ``model.safetensors`` when
  they fit in one), bf16 or fp32, ``lm_head.weight`` left out when tied.

Standard library only.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile
from array import array
from typing import Any

from zeroc import checkpoint as ck
from zeroc import weights
from zeroc.models import llama

CONFIG_NAME = "config.json"
INDEX_NAME = "model.safetensors.index.json"
MODEL_TYPES = ("llama", "qwen2", "qwen3", "mistral")
ARCHITECTURES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
                 "qwen3": "Qwen3ForCausalLM", "mistral": "MistralForCausalLM"}
DEFAULT_BLOCK = 2048
"""The block size a config gives: max_position_embeddings up to this."""

HONOURED = {
    "model_type": "the family: llama, qwen2 (q/k/v biases), qwen3 (q_norm, k_norm), mistral",
    "hidden_size": "dim",
    "intermediate_size": "ffn_dim",
    "num_hidden_layers": "n_layer",
    "num_attention_heads": "n_head",
    "num_key_value_heads": "n_kv_head (absent or null: num_attention_heads)",
    "head_dim": "head_dim (absent or null: hidden_size / num_attention_heads)",
    "vocab_size": "vocab_size",
    "rms_norm_eps": "norm_eps",
    "rope_theta": "rope_theta (absent: 10000)",
    "rope_scaling": "null, or rope_type llama3 or linear; other types refused",
    "rope_parameters": "the same as rope_theta and rope_scaling (newer transformers)",
    "tie_word_embeddings": "tie_embeddings (absent: false)",
    "attention_bias": "llama, qwen3: biases on q, k, v and o_proj",
    "mlp_bias": "llama: biases on gate, up and down_proj",
    "hidden_act": "silu only",
    "sliding_window": "mistral (and qwen2/3 with use_sliding_window): at least the block size",
    "use_sliding_window": "qwen2, qwen3: whether sliding_window applies",
    "max_window_layers": "qwen2, qwen3: which layers slide (the window must cover the block)",
    "layer_types": "full_attention, or sliding_attention with a window covering the block",
    "attention_dropout": "0 only",
    "rope_interleaved": "false only (Hugging Face's rotate-half pairs)",
    "initializer_range": "init_std (absent: 0.02)",
    "max_position_embeddings": f"the block size's default, up to {DEFAULT_BLOCK}",
}
"""The fields zeroc reads, and what it does with each."""

IGNORED = frozenset({
    "architectures", "bos_token_id", "eos_token_id", "pad_token_id", "torch_dtype", "dtype",
    "use_cache", "transformers_version", "_name_or_path", "pretraining_tp", "tokenizer_class",
    "output_attentions", "output_hidden_states", "return_dict", "use_bfloat16",
    "unsloth_fixed", "is_llama_config",
})
"""Fields that do not change the computation (pretraining_tp > 1 splits the
same products into slices)."""


class HfConfigError(ValueError):
    """A config.json zeroc cannot honour; the message names the file, the
    field and its value."""


def config_path(path: str) -> str:
    """`path` itself, or its config.json when it is a folder."""
    return os.path.join(path, CONFIG_NAME) if os.path.isdir(path) else path


def load_config(path: str) -> tuple[dict, str]:
    """The JSON object of config.json `path` (or of the folder's) and its
    file name."""
    where = config_path(path)
    try:
        with open(where, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as error:
        raise HfConfigError(f"{where}: cannot read: {error.strerror or error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HfConfigError(f"{where}: not JSON: {error}") from None
    if not isinstance(data, dict):
        raise HfConfigError(f"{where}: not a JSON object")
    return data, where


def read_config(path: str) -> tuple[dict[str, Any], list[str], dict]:
    """`LlamaConfig` fields from the config.json `path` (or the folder
    holding one): ``(fields, ignored, raw)``, `ignored` the names of the
    fields that do not change the computation, `raw` the JSON object.
    Raises `HfConfigError` for a field zeroc does not honour."""
    data, where = load_config(path)

    def refuse(field: str, why: str) -> HfConfigError:
        return HfConfigError(f"{where}: {field} = {json.dumps(data.get(field))}: {why}")

    def integer(field: str, default: int | None = None) -> int:
        value = data.get(field, default)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise refuse(field, "a positive integer expected")
        return value

    def number(field: str, default: float | None = None) -> float:
        value = data.get(field, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value <= 0:
            raise refuse(field, "a positive number expected")
        return float(value)

    def flag(field: str, default: bool = False) -> bool:
        value = data.get(field, default)
        if not isinstance(value, bool):
            raise refuse(field, "true or false expected")
        return value

    model_type = data.get("model_type")
    if model_type not in MODEL_TYPES:
        raise refuse("model_type", f"zeroc builds {', '.join(MODEL_TYPES)}")
    allowed = set(HONOURED)
    if model_type in ("llama", "mistral"):
        allowed -= {"use_sliding_window", "max_window_layers", "layer_types"}
    if model_type != "llama":
        allowed -= {"mlp_bias"}
    if model_type in ("qwen2", "mistral"):
        allowed -= {"attention_bias"}
    ignored = []
    for field in data:
        if field in IGNORED:
            ignored.append(field)
        elif field not in allowed:
            raise refuse(field, f"a field zeroc does not know for model_type {model_type} "
                                "(it cannot tell whether it changes the computation)")

    for field in ("hidden_size", "intermediate_size", "num_hidden_layers",
                  "num_attention_heads", "vocab_size"):
        if field not in data:
            raise HfConfigError(f"{where}: no {field}")
    fields: dict[str, Any] = {
        "dim": integer("hidden_size"), "ffn_dim": integer("intermediate_size"),
        "n_layer": integer("num_hidden_layers"), "n_head": integer("num_attention_heads"),
        "vocab_size": integer("vocab_size"),
    }
    fields["n_kv_head"] = fields["n_head"] if data.get("num_key_value_heads") is None \
        else integer("num_key_value_heads")
    if data.get("head_dim") is not None:
        fields["head_dim"] = integer("head_dim")
    fields["norm_eps"] = number("rms_norm_eps", 1e-6)
    fields["init_std"] = number("initializer_range", 0.02)
    fields["tie_embeddings"] = flag("tie_word_embeddings", False)
    if data.get("hidden_act", "silu") != "silu":
        raise refuse("hidden_act", "zeroc's MLP is SwiGLU with silu only")
    dropout = data.get("attention_dropout", 0.0)
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or dropout != 0:
        raise refuse("attention_dropout", "dropout of the attention probabilities is not "
                                          "modelled (0 only)")
    if data.get("rope_interleaved", False) is not False:
        raise refuse("rope_interleaved", "zeroc builds Hugging Face's rotate-half rotary "
                                         "embeddings (false only)")
    if "max_position_embeddings" in data:
        fields["block_size"] = min(integer("max_position_embeddings"), DEFAULT_BLOCK)

    # Biases and norms by family.
    if model_type == "qwen2":
        fields["qkv_bias"] = True
    elif model_type in ("llama", "qwen3"):
        bias = flag("attention_bias", False)
        fields["qkv_bias"] = fields["o_bias"] = bias
    if model_type == "llama":
        fields["mlp_bias"] = flag("mlp_bias", False)
    fields["qk_norm"] = model_type == "qwen3"

    # Rotary embeddings: rope_theta and rope_scaling, or rope_parameters.
    scaling_field = "rope_scaling"
    scaling = data.get("rope_scaling")
    fields["rope_theta"] = number("rope_theta", 10000.0)
    if "rope_parameters" in data:
        params = data["rope_parameters"]
        if not isinstance(params, dict):
            raise refuse("rope_parameters", "an object expected")
        theta = params.get("rope_theta", fields["rope_theta"])
        if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not theta > 0:
            raise refuse("rope_parameters", f"rope_theta {theta!r}: a positive number expected")
        fields["rope_theta"] = float(theta)
        scaling = {k: v for k, v in params.items() if k != "rope_theta"}
        scaling_field = "rope_parameters"
    fields["rope_scaling"] = _rope_scaling(scaling, lambda why: refuse(scaling_field, why))

    # Sliding windows: full causal attention when the window covers the block.
    window = None
    if model_type == "mistral":
        if data.get("sliding_window") is not None:
            window = integer("sliding_window")
    else:
        slides = flag("use_sliding_window", False)
        types = data.get("layer_types")
        if types is not None:
            if not isinstance(types, list) or any(
                    t not in ("full_attention", "sliding_attention") for t in types):
                raise refuse("layer_types", "full_attention or sliding_attention per layer")
            slides = slides or "sliding_attention" in types
        if slides:
            if data.get("sliding_window") is None:
                raise refuse("sliding_window", "use_sliding_window needs a window")
            window = integer("sliding_window")
    if window is not None:
        fields["sliding_window"] = window
    return fields, sorted(ignored), data


def _rope_scaling(scaling: Any, refuse) -> tuple | None:
    """`LlamaConfig.rope_scaling` from a config's rope_scaling object."""
    if scaling is None:
        return None
    if not isinstance(scaling, dict):
        raise refuse("an object expected")
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind in (None, "default") and set(scaling) <= {"rope_type", "type"}:
        return None
    if kind == "linear":
        known, names = {"rope_type", "type", "factor"}, ("factor",)
    elif kind == "llama3":
        known = {"rope_type", "type", "factor", "low_freq_factor", "high_freq_factor",
                 "original_max_position_embeddings"}
        names = ("factor", "low_freq_factor", "high_freq_factor",
                 "original_max_position_embeddings")
    else:
        raise refuse(f"rope type {kind!r} is not implemented (zeroc has llama3 and linear)")
    extra = sorted(set(scaling) - known)
    if extra:
        raise refuse(f"{extra[0]} is not part of {kind} scaling")
    values = []
    for name in names:
        value = scaling.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value <= 0:
            raise refuse(f"{name} must be a positive number")
        values.append(float(value))
    result = (kind, *values)
    try:
        llama.check_rope_scaling(result)
    except ValueError as error:
        raise refuse(str(error)) from None
    return result


def model_type_of(config: llama.LlamaConfig) -> str:
    """The Hugging Face model_type that computes `config`."""
    if config.qk_norm:
        return "qwen3"
    if config.qkv_bias and not config.o_bias and not config.mlp_bias:
        return "qwen2"
    if config.sliding_window is not None and not config.qkv_bias and not config.mlp_bias \
            and not config.o_bias:
        return "mistral"
    return "llama"


def config_dict(config: llama.LlamaConfig, base: dict | None = None,
                dtype: str = "float32") -> dict:
    """The config.json of `config`: `base` (the one it was built from, if
    any) with every honoured field set to `config`'s value and torch_dtype
    to `dtype`."""
    kind = (base or {}).get("model_type") or model_type_of(config)
    if config.qk_norm != (kind == "qwen3") or (kind == "qwen2") != (
            config.qkv_bias and not config.o_bias) or \
            (kind == "mistral" and (config.qkv_bias or config.o_bias)) or \
            (config.mlp_bias and kind != "llama") or kind not in MODEL_TYPES:
        raise ValueError(f"model_type {kind!r} cannot express this model; "
                         f"{model_type_of(config)!r} would")
    out = dict(base or {})
    out.pop("rope_parameters", None)
    out.update({
        "architectures": [ARCHITECTURES[kind]], "model_type": kind,
        "hidden_size": config.dim, "intermediate_size": config.ffn_dim,
        "num_hidden_layers": config.n_layer, "num_attention_heads": config.n_head,
        "num_key_value_heads": config.n_kv_head, "head_dim": config.head_dim,
        "vocab_size": config.vocab_size, "rms_norm_eps": config.norm_eps,
        "rope_theta": config.rope_theta, "tie_word_embeddings": config.tie_embeddings,
        "hidden_act": "silu", "attention_dropout": 0.0,
        "initializer_range": config.init_std, "torch_dtype": dtype,
    })
    out.setdefault("max_position_embeddings", max(config.block_size, (
        int(config.rope_scaling[4] * config.rope_scaling[1])
        if config.rope_scaling and config.rope_scaling[0] == "llama3" else 0)))
    if kind in ("llama", "qwen3"):
        out["attention_bias"] = config.qkv_bias
    if kind == "llama":
        out["mlp_bias"] = config.mlp_bias
    if config.rope_scaling is None:
        out["rope_scaling"] = None
    elif config.rope_scaling[0] == "linear":
        out["rope_scaling"] = {"rope_type": "linear", "factor": config.rope_scaling[1]}
    else:
        _, factor, low, high, original = config.rope_scaling
        out["rope_scaling"] = {"rope_type": "llama3", "factor": factor,
                               "low_freq_factor": low, "high_freq_factor": high,
                               "original_max_position_embeddings": int(original)}
    if kind == "mistral":
        out["sliding_window"] = config.sliding_window
    elif config.sliding_window is not None:
        out["use_sliding_window"], out["sliding_window"] = True, config.sliding_window
    elif out.get("use_sliding_window") or "sliding_attention" in (out.get("layer_types") or []):
        out["use_sliding_window"] = False
        out.pop("layer_types", None)
    return out


# ---------------------------------------------------------------------------
# The folder out
# ---------------------------------------------------------------------------

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)?")
_UNITS = {None: 1, "B": 1, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
          "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40}


def parse_size(text: str) -> int:
    """Bytes of a size as save_pretrained's max_shard_size writes it:
    ``5GB`` (10^9), ``500MiB`` (2^20), ``1000`` (bytes)."""
    match = _SIZE.fullmatch(text.strip().upper())
    if not match:
        raise ValueError(f"max shard size {text!r}: a number of bytes, or with KB, MB, GB, "
                         "KiB, MiB or GiB expected")
    size = int(float(match.group(1)) * _UNITS[match.group(2)])
    if size <= 0:
        raise ValueError(f"max shard size {text!r} must be positive")
    return size


def _f32_to_bf16(data: bytes) -> bytes:
    """Rounds f32 bytes to bf16, to nearest even (torch's .to(bfloat16))."""
    words = array("I")
    words.frombytes(data)
    if struct.pack("=I", 1) != struct.pack("<I", 1):
        words.byteswap()
    out = array("H", bytes(2 * len(words)))
    for i, w in enumerate(words):
        if (w & 0x7F800000) == 0x7F800000 and w & 0x007FFFFF:  # NaN stays NaN
            out[i] = (w >> 16) | 0x40
        else:
            out[i] = ((w + 0x7FFF + ((w >> 16) & 1)) >> 16) & 0xFFFF
    if struct.pack("=H", 1) != struct.pack("<H", 1):
        out.byteswap()
    return out.tobytes()


def _bf16_to_f32(data: bytes) -> bytes:
    count = len(data) // 2
    halves = struct.unpack(f"<{count}H", data)
    return struct.pack(f"<{count}I", *(h << 16 for h in halves))


def export(path: str, out: str, config: llama.LlamaConfig, base: dict | None = None, *,
           dtype: str = "bf16", max_shard_size: int = 5 * 10 ** 9) -> list[str]:
    """Writes checkpoint `path` as the Hugging Face folder `out`: config.json
    (`config_dict` of `config` and `base`), the weights in `dtype` (``bf16``
    or ``fp32``; fp32 from the f32 master where the run kept one, bf16 as
    the run stored them when it stored bf16, else rounded to nearest even),
    in shards of at most `max_shard_size` bytes, every slice's CRC-32C
    checked. The checkpoint's parameters must be `config`'s, by name and
    shape. The folder is written beside `out` and renamed into place
    (an existing `out` must be an empty folder or one this function
    wrote). Returns the files written."""
    if dtype not in ("bf16", "fp32"):
        raise ValueError(f"dtype must be bf16 or fp32, not {dtype!r}")
    manifest = ck.verify(path)
    folder = manifest["folder"]
    expected = {p.name: list(p.type.shape) for p in llama.parameters(config)}
    params = [t for t in manifest["tensors"] if t["kind"] == "param"]
    masters = {t["of"]: t for t in manifest["tensors"] if t["kind"] == "master"}
    found = {t["name"]: t for t in params}
    for name, shape in expected.items():
        if name not in found:
            raise ck.CheckpointError(f"{folder}: no parameter '{name}', which the config has")
        if found[name]["shape"] != shape:
            raise ck.CheckpointError(f"{folder}: parameter '{name}' is {found[name]['shape']}, "
                                     f"the config's is {shape}")
    extra = [t["name"] for t in params if t["name"] not in expected]
    if extra:
        raise ck.CheckpointError(f"{folder}: parameter '{extra[0]}' is not in the config's "
                                 "model")
    out_dtype = "BF16" if dtype == "bf16" else "F32"
    element = 2 if dtype == "bf16" else 4

    # Shards as save_pretrained fills them: in order, a new one when the next
    # tensor would pass the limit.
    shards: list[list[str]] = [[]]
    size = 0
    for name in expected:
        nbytes = math.prod(expected[name]) * element
        if shards[-1] and size + nbytes > max_shard_size:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += nbytes
    if len(shards) == 1:
        names = ["model.safetensors"]
    else:
        names = [f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
                 for k in range(len(shards))]

    def tensor_bytes(name: str) -> bytes:
        stored = found[name]
        source = masters.get(name, stored)
        if dtype == "bf16" and stored["dtype"] == "BF16":
            source = stored
        data = ck.read_tensor(manifest, source["name"])
        if source["dtype"] == out_dtype:
            return data
        return _f32_to_bf16(data) if out_dtype == "BF16" else _bf16_to_f32(data)

    parent = os.path.dirname(os.path.abspath(out)) or "."
    if os.path.exists(out) and (not os.path.isdir(out) or any(
            not (n == CONFIG_NAME or n == INDEX_NAME or n.endswith(".safetensors"))
            for n in os.listdir(out))):
        raise ck.CheckpointError(f"{out}: exists and is not a model folder zeroc wrote "
                                 "(only config.json and safetensors files may be replaced)")
    staging = tempfile.mkdtemp(prefix=".zeroc-hf-", dir=parent)
    try:
        weight_map = {}
        total = 0
        for shard, file_name in zip(shards, names):
            tensors = {}
            for name in shard:
                tensors[name] = weights.RawTensor(out_dtype, tuple(expected[name]),
                                                  tensor_bytes(name))
                weight_map[name] = file_name
                total += len(tensors[name].data)
            weights.save(os.path.join(staging, file_name), tensors, {"format": "pt"})
        with open(os.path.join(staging, CONFIG_NAME), "w", encoding="utf-8") as f:
            json.dump(config_dict(config, base, "bfloat16" if dtype == "bf16" else "float32"),
                      f, indent=2)
            f.write("\n")
        if len(shards) > 1:
            with open(os.path.join(staging, INDEX_NAME), "w", encoding="utf-8") as f:
                json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f,
                          indent=2)
                f.write("\n")
        if os.path.exists(out):
            shutil.rmtree(out)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [CONFIG_NAME] + ([INDEX_NAME] if len(shards) > 1 else []) + names


def export_main(prog: str, args) -> int:
    """``python3 -m zeroc checkpoint export DIR --hf FOLDER --config PATH``
    (zeroc.checkpoint's command line): 0, or 1 after an error line."""
    try:
        if args.config is None:
            raise ValueError("--hf needs --config: the config.json or model folder the model "
                             "was built from, or a preset name")
        if args.dtype == "stored":
            raise ValueError("--hf writes --dtype f32 or bf16, not stored")
        size = parse_size(args.max_shard_size)
        if args.config in llama.PRESETS:
            config, base = llama.LlamaConfig.preset(args.config), None
        else:
            fields, _, base = read_config(args.config)
            # The block is the run's, not the model's: one the window covers.
            block = min(fields.get("block_size", DEFAULT_BLOCK),
                        fields.get("sliding_window", DEFAULT_BLOCK))
            config = llama.LlamaConfig(**{**fields, "block_size": block})
        files = export(args.dir, args.hf, config, base,
                       dtype="bf16" if args.dtype == "bf16" else "fp32", max_shard_size=size)
    except (ValueError, ck.CheckpointError, OSError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
    print(f"{args.hf}: {', '.join(files)}")
    return 0
