"""Recomputes the results of nn-ops.mlir's functions independently.

usage: nn_reference.py ENTRY INPUTS.safetensors RUN.json fp64|f32

Forward ops are written from the op descriptions in TrainOps.td; the
derivative ops are checked against central differences of those forward
formulas (not against derivative formulas), in double precision.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalref  # noqa: E402


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# --- forward formulas -------------------------------------------------------

def layernorm(x, w, b, eps):
    c = len(w)
    out = []
    for r in range(len(x) // c):
        row = x[r * c:(r + 1) * c]
        mean = sum(row) / c
        var = sum((v - mean) ** 2 for v in row) / c
        out += [(v - mean) / math.sqrt(var + eps) * w[i] + b[i]
                for i, v in enumerate(row)]
    return out


def softmax(x, c):
    out = []
    for r in range(len(x) // c):
        row = x[r * c:(r + 1) * c]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        out += [v / s for v in e]
    return out


def gelu_tanh(x):
    return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1 + math.erf(x / math.sqrt(2)))


def attention(q, qs, k, ks, v, causal, scale):
    """softmax(mask(scale * q k^T)) v on [B, H, T, D] and [B, H, S, D]."""
    b, h, t, d = qs
    s = ks[2]
    out = [0.0] * (b * h * t * d)
    for bh in range(b * h):
        for i in range(t):
            scores = []
            for j in range(s):
                if causal and j > i:
                    scores.append(-math.inf)
                    continue
                dot = sum(q[(bh * t + i) * d + c] * k[(bh * s + j) * d + c]
                          for c in range(d))
                scores.append(scale * dot)
            m = max(scores)
            e = [math.exp(x - m) for x in scores]
            z = sum(e)
            for c in range(d):
                out[(bh * t + i) * d + c] = sum(
                    e[j] / z * v[(bh * s + j) * d + c] for j in range(s))
    return out


def cross_entropy(logits, vocab, targets):
    total = 0.0
    for r, target in enumerate(targets):
        row = logits[r * vocab:(r + 1) * vocab]
        m = max(row)
        lse = m + math.log(sum(math.exp(v - m) for v in row))
        total += lse - row[int(target)]
    return total / len(targets)


def matmul(a, ashape, b, bshape, ta, tb):
    """Batched product of the last two dims; a rank-2 rhs is shared."""
    m, k = (ashape[-1], ashape[-2]) if ta else (ashape[-2], ashape[-1])
    n = bshape[-2] if tb else bshape[-1]
    batches = prod(ashape[:-2])
    shared = len(bshape) == 2
    out = []
    for bi in range(batches):
        ab = bi * m * k
        bb = 0 if shared else bi * k * n
        for i in range(m):
            for j in range(n):
                total = 0.0
                for p in range(k):
                    x = a[ab + (p * m + i if ta else i * k + p)]
                    y = b[bb + (j * k + p if tb else p * n + j)]
                    total += x * y
                out.append(total)
    return out


def embedding(table, width, ids):
    out = []
    for i in ids:
        out += table[int(i) * width:(int(i) + 1) * width]
    return out


def embedding_grad(g, width, ids, vocab):
    out = [0.0] * (vocab * width)
    for p, i in enumerate(ids):
        for c in range(width):
            out[int(i) * width + c] += g[p * width + c]
    return out


# --- central differences -----------------------------------------------------

def fd_gradient(f, x, h=1e-6):
    """d f / d x by central differences, element by element."""
    grad = []
    for i in range(len(x)):
        step = h * max(1.0, abs(x[i]))
        plus = list(x)
        plus[i] += step
        minus = list(x)
        minus[i] -= step
        grad.append((f(plus) - f(minus)) / (2 * step))
    return grad


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


# --- entries -----------------------------------------------------------------

def expected(entry, args):
    """Returns (values, rtol, atol or None): tolerances only for FD checks."""
    vals = [a[2] for a in args]
    shapes = [a[1] for a in args]
    if entry == "layernorm":
        return layernorm(vals[0], vals[1], vals[2], 1e-5), None
    if entry == "softmax":
        return softmax(vals[0], shapes[0][-1]), None
    if entry == "gelu":
        return [gelu_tanh(x) for x in vals[0]] + [gelu_erf(x) for x in vals[0]], None
    if entry == "attention_causal":
        return attention(vals[0], shapes[0], vals[1], shapes[1], vals[2], True, 0.5), None
    if entry == "attention_full":
        return attention(vals[0], shapes[0], vals[1], shapes[1], vals[2], False, 0.7), None
    if entry == "cross_entropy":
        return [cross_entropy(vals[0], shapes[0][-1], vals[1])], None
    if entry == "matmul":
        a, w, at, b, bt, m, n = vals
        sa, sw, sat, sb, sbt, sm, sn = shapes
        return (matmul(a, sa, w, sw, False, True) + matmul(a, sa, b, sb, False, False)
                + matmul(at, sat, b, sb, True, False) + matmul(at, sat, bt, sbt, True, True)
                + matmul(m, sm, n, sn, False, False)), None
    if entry == "embedding":
        table, ids, g = vals
        vocab, width = shapes[0]
        return embedding(table, width, ids) + embedding_grad(g, width, ids, vocab), None

    # Derivative ops: central differences of the forward formulas.
    fd = (1e-6, 1e-8)
    if entry == "cross_entropy_grad":
        s, logits, targets = vals
        vocab = shapes[1][-1]
        return fd_gradient(lambda x: s[0] * cross_entropy(x, vocab, targets), logits), fd
    if entry == "softmax_grad":
        x, g = vals
        c = shapes[0][-1]
        return fd_gradient(lambda y: dot(g, softmax(y, c)), x), fd
    if entry == "layernorm_grad":
        dy, x, w = vals
        zero = [0.0] * len(w)
        dx = fd_gradient(lambda y: dot(dy, layernorm(y, w, zero, 1e-5)), x)
        dw = fd_gradient(lambda y: dot(dy, layernorm(x, y, zero, 1e-5)), w)
        db = fd_gradient(lambda y: dot(dy, layernorm(x, w, y, 1e-5)), zero)
        return dx + dw + db, fd
    if entry == "gelu_grad":
        g, x = vals
        dt = fd_gradient(lambda y: dot(g, [gelu_tanh(v) for v in y]), x)
        de = fd_gradient(lambda y: dot(g, [gelu_erf(v) for v in y]), x)
        return dt + de, fd
    if entry == "relu_grad":
        g, x = vals
        return fd_gradient(lambda y: dot(g, [max(v, 0.0) for v in y]), x), fd
    if entry == "attention_grad":
        dy, q, k, v = vals
        s = shapes[1]

        def loss(qq, kk, vv):
            return dot(dy, attention(qq, s, kk, s, vv, True, 0.6))

        return (fd_gradient(lambda y: loss(y, k, v), q)
                + fd_gradient(lambda y: loss(q, y, v), k)
                + fd_gradient(lambda y: loss(q, k, y), v)), fd
    raise SystemExit("unknown entry " + entry)


def main():
    entry, inputs_path, run_path, mode = sys.argv[1:5]
    tensors, _, _ = evalref.read_safetensors(inputs_path)
    args = [tensors["arg%d" % i] for i in range(len(tensors))]
    run = evalref.load_run(run_path)
    got = run["steps"][0]["results"][0]
    want, fd = expected(entry, args)
    if fd:
        rtol, atol = fd
    elif mode == "fp64":
        rtol, atol = 1e-12, 1e-14
    else:
        # One rounding to f32 of a value computed in double.
        rtol, atol = 1.2e-7, 1e-12
    checker = evalref.Checker("%s %s" % (entry, mode), rtol, atol)
    checker.all(entry, got, want)
    checker.finish()


if __name__ == "__main__":
    main()
