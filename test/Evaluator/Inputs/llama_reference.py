"""Recomputes the results of llama-ops.mlir's functions independently.

usage: llama_reference.py ENTRY INPUTS.safetensors RUN.json fp64|f32

The forward ops are written from their descriptions in TrainLlamaOps.td
(dropout's mask from the Philox-4x32-10 formula documented in
include/zeroc/Support/Random.h, re-implemented here); the derivative helpers
are checked against central differences of those forward formulas, in
double precision. Standard library only.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalref  # noqa: E402

M32 = 0xFFFFFFFF
LLAMA3 = [4.0, 0.5, 1.2, 8.0]
"""rope_scaled's llama3 scaling: with theta 100 and head dimension 10 the
pairs' wavelengths are 6.3 (below 8 / 1.2: kept), 15.8 (between: blended)
and 40 to 250 (above 8 / 0.5: divided by 4); positions run to 11, past the
original context of 8."""


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def unravel(i, shape):
    index = []
    for d in reversed(shape):
        index.append(i % d)
        i //= d
    return index[::-1]


def ravel(index, shape):
    i = 0
    for x, d in zip(index, shape):
        i = i * d + x
    return i


# --- forward formulas -------------------------------------------------------

def rmsnorm(x, w, eps):
    c = len(w)
    out = []
    for r in range(len(x) // c):
        row = x[r * c:(r + 1) * c]
        rrms = 1 / math.sqrt(sum(v * v for v in row) / c + eps)
        out += [v * rrms * w[i] for i, v in enumerate(row)]
    return out


def silu(x):
    return [v / (1 + math.exp(-v)) for v in x]


def llama3_inv_freq(inv_freq, factor, low_freq_factor, high_freq_factor, old_context_len):
    """transformers' _compute_llama3_parameters for one inverse frequency,
    transcribed (its torch.where masks as conditions)."""
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = inv_freq / factor if wavelen > low_freq_wavelen else inv_freq
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (
        high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + \
        smooth_factor * inv_freq_llama
    is_medium_freq = not wavelen < high_freq_wavelen and not wavelen > low_freq_wavelen
    return smoothed_inv_freq if is_medium_freq else inv_freq_llama


def rope(x, shape, seq_dim, theta, interleaved, inverse=False, scaling=None):
    """`scaling`: None, [factor] (linear) or llama3's four values."""
    d = shape[-1]
    half = d // 2
    out = [0.0] * len(x)
    sign = -1.0 if inverse else 1.0
    inv_freq = [theta ** (-2.0 * i / d) for i in range(half)]
    if scaling is not None and len(scaling) == 1:
        inv_freq = [f / scaling[0] for f in inv_freq]
    elif scaling is not None:
        inv_freq = [llama3_inv_freq(f, *scaling) for f in inv_freq]
    for row in range(len(x) // d):
        p = unravel(row * d, shape)[seq_dim]
        for i in range(half):
            angle = p * inv_freq[i]
            c, s = math.cos(angle), sign * math.sin(angle)
            a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + half)
            xa, xb = x[row * d + a], x[row * d + b]
            out[row * d + a] = xa * c - xb * s
            out[row * d + b] = xb * c + xa * s
    return out


def slice_(x, shape, offsets, strides, sizes):
    out = []
    for o in range(prod(sizes)):
        at = unravel(o, sizes)
        out.append(x[ravel([off + i * st for off, i, st in zip(offsets, at, strides)],
                           shape)])
    return out


def attention(q, qs, k, ks, v, causal, scale):
    """softmax(mask(scale * q k^T)) v; query head h reads key head h / group."""
    b, h, t, d = qs
    hkv, s = ks[1], ks[2]
    group = h // hkv
    out = [0.0] * (b * h * t * d)
    for bh in range(b * h):
        kv = (bh // h) * hkv + (bh % h) // group
        for i in range(t):
            scores = []
            for j in range(s):
                if causal and j > i:
                    scores.append(-math.inf)
                    continue
                dot = sum(q[(bh * t + i) * d + c] * k[(kv * s + j) * d + c]
                          for c in range(d))
                scores.append(scale * dot)
            m = max(scores)
            e = [math.exp(x - m) for x in scores]
            z = sum(e)
            for c in range(d):
                out[(bh * t + i) * d + c] = sum(
                    e[j] / z * v[(kv * s + j) * d + c] for j in range(s))
    return out


def philox(counter, key):
    c, k = list(counter), list(key)
    for r in range(10):
        if r:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
    return c


def dropout_keeps(seed, step, position, p):
    q = position >> 2
    word = philox([q & M32, q >> 32, step & M32, step >> 32],
                  [seed & M32, seed >> 32])[position & 3]
    return (word >> 8) >= math.ceil(p * 2 ** 24)


def dropout(x, shape, step, p, seed, batch_dim=None, ranks=1, rank=0):
    """The mask of each element by its place in the global batch."""
    out = []
    for i, v in enumerate(x):
        index = unravel(i, shape)
        global_shape = list(shape)
        if batch_dim is not None:
            index[batch_dim] += rank * shape[batch_dim]
            global_shape[batch_dim] *= ranks
        keep = dropout_keeps(seed, step, ravel(index, global_shape), p)
        out.append(v / (1 - p) if keep else 0.0)
    return out


# --- central differences -----------------------------------------------------

def fd_gradient(f, x, h=1e-6):
    grad = []
    for i in range(len(x)):
        step = h * max(1.0, abs(x[i]))
        plus, minus = list(x), list(x)
        plus[i] += step
        minus[i] -= step
        grad.append((f(plus) - f(minus)) / (2 * step))
    return grad


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


# --- entries -----------------------------------------------------------------

def expected(entry, args):
    """(values, (rtol, atol) for FD checks or None)."""
    vals = [a[2] for a in args]
    shapes = [a[1] for a in args]
    if entry == "rmsnorm":
        return rmsnorm(vals[0], vals[1], 1e-5), None
    if entry == "silu":
        return silu(vals[0]), None
    if entry == "rope":
        x, s = vals[0], shapes[0]
        return (rope(x, s, 1, 10000.0, True) + rope(x, s, 2, 500000.0, False)
                + rope(x, s, 1, 10000.0, True, inverse=True)), None
    if entry == "rope_scaled":
        x, s = vals[0], shapes[0]
        return (rope(x, s, 1, 100.0, False, scaling=LLAMA3)
                + rope(x, s, 1, 100.0, False, scaling=[2.0])
                + rope(x, s, 1, 100.0, True, inverse=True, scaling=LLAMA3)), None
    if entry == "slice":
        x, s = vals[0], shapes[0]
        return (slice_(x, s, [0, 1, 0], [1, 1, 1], [2, 3, 6])
                + slice_(x, s, [1, 0, 1], [1, 2, 2], [1, 2, 3])), None
    if entry == "gqa":
        q, k, v = vals
        return (attention(q, shapes[0], k, shapes[1], v, True, 0.5)
                + attention(q, shapes[0], k, shapes[1], v, False, 0.3)), None
    if entry == "dropout":
        x, step = vals[0], int(vals[1][0])
        return (dropout(x, shapes[0], step, 0.25, 11)
                + dropout(x, shapes[0], step + 1, 0.25, 11)
                + dropout(x, shapes[0], step, 0.25, 12)
                + x), None

    fd = (1e-6, 1e-8)
    if entry == "rmsnorm_grad":
        dy, x, w = vals
        return (fd_gradient(lambda y: dot(dy, rmsnorm(y, w, 1e-5)), x)
                + fd_gradient(lambda y: dot(dy, rmsnorm(x, y, 1e-5)), w)), fd
    if entry == "silu_grad":
        g, x = vals
        return fd_gradient(lambda y: dot(g, silu(y)), x), fd
    if entry == "rope_grad":
        # The inverse rotation is the transpose: <dy, rope(x)> differentiated.
        dy, x = vals
        s = shapes[1]
        return (fd_gradient(lambda y: dot(dy, rope(y, s, 1, 10000.0, True)), x)
                + fd_gradient(lambda y: dot(dy, rope(y, s, 2, 500000.0, False)), x)), fd
    if entry == "rope_scaled_grad":
        dy, x = vals
        s = shapes[1]
        return fd_gradient(lambda y: dot(dy, rope(y, s, 1, 100.0, False, scaling=LLAMA3)),
                           x), fd
    if entry == "slice_grad":
        g, x = vals
        s = shapes[1]
        return fd_gradient(lambda y: dot(g, slice_(y, s, [0, 1, 1], [1, 2, 3], [2, 2, 2])),
                           x), fd
    if entry == "gqa_grad":
        dy, q, k, v = vals
        qs, ks = shapes[1], shapes[2]

        def loss(qq, kk, vv):
            return dot(dy, attention(qq, qs, kk, ks, vv, True, 0.6))

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
        rtol, atol = 1.2e-7, 1e-12
    checker = evalref.Checker("%s %s" % (entry, mode), rtol, atol)
    checker.all(entry, got, want)
    checker.finish()


if __name__ == "__main__":
    main()
