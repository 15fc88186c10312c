"""A float64 evaluator of the `train` forward functions the ATen importer
writes, in PyTorch, for the importer's tests.

It checks the importer's translation on its own (the IR computes the
module's loss), independently of the compiler's lowering of the generic
ops; the training tests check the compiled executables. Each op follows the
dialect's documentation (ops-spec of issue 31 for the generic ones).

    loss = evaluate(mlir_text, {name: tensor}, tokens, targets)
"""
import math
import re

import torch
import torch.nn.functional as F

_TYPE = re.compile(r"tensor<([0-9x]*?)x?(f32|bf16|i32|i64)>")


def _shape(text):
    m = _TYPE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"not a tensor type: {text}")
    dims = m.group(1)
    return tuple(int(d) for d in dims.split("x") if d) if dims else ()


def _types(text):
    return [_shape(t.group(0)) for t in _TYPE.finditer(text)]


def _float(text):
    text = text.strip()
    if text.startswith("0x"):
        import struct
        return struct.unpack(">d", bytes.fromhex(text[2:]))[0]
    return float(text)


def _dense(text, shape, element):
    hexdata = re.search(r'dense<"0x([0-9A-F]*)">', text).group(1)
    raw = bytes.fromhex(hexdata)
    dtype = {"f32": torch.float32, "i32": torch.int32, "i64": torch.int64}[element]
    if element == "bf16":
        t = torch.frombuffer(bytearray(raw), dtype=torch.int16).view(torch.bfloat16)
    else:
        t = torch.frombuffer(bytearray(raw), dtype=dtype)
    return t.clone().reshape(shape).to(torch.float64 if element in ("f32", "bf16")
                                       else torch.int64)


def evaluate(mlir, weights, tokens, targets):
    """The loss of the module's ``train.forward`` in float64."""
    body = mlir.split("attributes {train.forward}", 1)[1]
    env = {}
    args = re.search(r"@forward\((.*?)\)", mlir).group(1)
    names = re.findall(r"%([A-Za-z0-9_$.-]+):", args)
    env[names[0]], env[names[1]] = tokens.long(), targets.long()
    for line in body.splitlines():
        line = re.sub(r"\s+loc\(.*\)$", "", line.strip())  # the importer's source line
        if not line or line.startswith("//") or line in ("{", "}"):
            continue
        if line.startswith("return"):
            return env[re.match(r"return %(\S+)", line).group(1)]
        lhs, rhs = line.split(" = ", 1)
        results = re.findall(r"%([A-Za-z0-9_$.-]+)", lhs)
        op = rhs.split()[0]
        head, _, types = rhs.rpartition(" : ")
        operands = [env[n] for n in re.findall(r"%([A-Za-z0-9_$.-]+)", head)]
        out_shapes = _types(types)
        out = _apply(op[len("train."):], head, operands, out_shapes, weights, types)
        if len(results) == 1:
            env[results[0]] = out
        else:
            for r, o in zip(results, out):
                env[r] = o
    raise ValueError("no return")


def _dims(head):
    return [int(d) for d in re.search(r"dims = \[([0-9, ]*)\]", head).group(1).split(",")
            if d.strip()]


def _apply(op, head, x, shapes, weights, types):
    result = shapes[-1] if shapes else None
    if op == "read":
        return weights[re.search(r"@(\S+)", head).group(1)].to(torch.float64)
    if op == "fill":
        value = _float(head.split("train.fill", 1)[1])
        return torch.full(result, value, dtype=torch.float64)
    if op == "constant":
        element = _TYPE.search(types).group(2)
        return _dense(head, result, element)
    if op in ("add", "sub", "mul", "div"):
        return {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}[op](*x)
    if op == "scale":
        return x[0] * _float(head.split(" by ", 1)[1])
    if op == "matmul":
        a, b = x
        if "transpose_rhs" in head:
            b = b.transpose(-1, -2)
        return a @ b
    if op == "reshape":
        return x[0].reshape(result)
    if op == "transpose":
        perm = [int(p) for p in re.search(r"\[([0-9, ]*)\]", head).group(1).split(",")]
        return x[0].permute(perm)
    if op == "broadcast":
        return x[0].expand(result).clone()
    if op == "split":
        d = int(re.search(r"dim = (\d+)", head).group(1))
        return list(torch.chunk(x[0], len(shapes) - 1, d))
    if op == "concat":
        return torch.cat(x, int(re.search(r"dim = (\d+)", head).group(1)))
    if op == "slice":
        offsets = [int(v) for v in re.search(r"offsets = \[([0-9, ]*)\]", head).group(1).split(",")]
        strides = [int(v) for v in re.search(r"strides = \[([0-9, ]*)\]", head).group(1).split(",")]
        index = tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offsets, result, strides))
        return x[0][index]
    if op == "softmax":
        return torch.softmax(x[0], -1)
    if op == "log_softmax":
        return torch.log_softmax(x[0], -1)
    if op == "layernorm":
        eps = _float(re.search(r"eps = (\S+)", head).group(1))
        return F.layer_norm(x[0], x[0].shape[-1:], x[1], x[2], eps)
    if op == "gelu":
        return F.gelu(x[0], approximate="tanh" if " tanh" in head else "none")
    if op == "relu":
        return torch.relu(x[0])
    if op == "silu":
        return F.silu(x[0])
    if op in ("tanh", "exp", "log", "neg", "rsqrt", "sqrt"):
        return getattr(torch, op)(x[0])
    if op == "pow":
        return torch.pow(x[0], _float(head.split(" by ", 1)[1]))
    if op == "compare":
        kind = head.split()[-1]
        return getattr(torch, kind)(x[0], x[1]).to(torch.float64)
    if op == "causal_mask":
        t, s = x[0].shape[-2:]
        above = torch.ones(t, s, dtype=torch.bool).triu(1)
        return x[0].masked_fill(above, float("-inf"))
    if op == "select":
        return torch.where(x[0] != 0, x[1], x[2])
    if op in ("tril", "triu"):
        return getattr(torch, op)(x[0], int(re.search(r"diagonal = (-?\d+)", head).group(1)))
    if op in ("sum", "mean", "amax"):
        dims = _dims(head)
        if not dims:
            return x[0]
        return {"sum": torch.sum, "mean": torch.mean, "amax": torch.amax}[op](x[0], dims)
    if op == "var":
        correction = int(re.search(r"correction = (\d+)", head).group(1))
        return torch.var(x[0], _dims(head), correction=correction)
    if op == "gather":
        d = int(re.search(r"dim = (\d+)", head).group(1))
        return torch.gather(x[0], d, x[1].long())
    if op == "embedding":
        return x[0][x[1].long()]
    if op == "dropout":
        if _float(re.search(r"p = (\S+)", head).group(1)) != 0:
            raise ValueError("dropout with p > 0 is random")
        return x[0]
    if op == "cast":
        return x[0]
    if op == "cross_entropy":
        return F.cross_entropy(x[0].reshape(-1, x[0].shape[-1]), x[1].reshape(-1).long())
    raise ValueError(f"the evaluator does not know train.{op}")


__all__ = ["evaluate", "math"]
