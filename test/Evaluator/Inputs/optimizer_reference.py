"""PyTorch's optimizer algorithms in plain Python, for optimizer.mlir.

usage: optimizer_reference.py make-inputs DIR
       optimizer_reference.py check ENTRY RUN.json fp64|f32 [START_STEP]

AdamW follows torch.optim.AdamW's documented single-tensor algorithm, SGD
torch.optim.SGD's (the first step's buffer is the gradient itself), the
schedule nanoGPT's get_lr, the clip coefficient clip_grad_norm_.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalref  # noqa: E402

# The files hold f32 values, so the references start from the same.
W0 = [evalref.f32(x) for x in (0.5, -1.0, 2.0, 0.25)]
U0 = [evalref.f32(x) for x in (1.0, -2.0, 0.5, 0.0)]
# A zero gradient: only weight decay acts on that element.
GRAD_W = [evalref.f32(x) for x in (0.1, -0.2, 0.0, 3.0)]
GRAD_U = [evalref.f32(x) for x in (0.5, 0.25, -1.0, 0.0)]
CLIP_X = [1.0, 2.0, 2.0, 4.0]  # |x|^2 = 25


def make_inputs(directory):
    def path(name):
        return os.path.join(directory, name)
    evalref.write_safetensors(path("init.safetensors"), [
        ("w", "F32", [4], W0), ("u", "F32", [4], U0)])
    evalref.write_safetensors(path("adamw.safetensors"), [
        ("arg0", "F32", [4], GRAD_W), ("arg1", "I64", [], [0])])
    evalref.write_safetensors(path("sgd.safetensors"), [
        ("arg0", "F32", [4], GRAD_U)])
    evalref.write_safetensors(path("step100.safetensors"), [
        ("arg0", "I64", [], [100])])
    evalref.write_safetensors(path("clip.safetensors"), [
        ("arg0", "F32", [2, 2], CLIP_X)])


def adamw(steps, lr=0.01, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1):
    """torch.optim.AdamW, single tensor, amsgrad off."""
    p, m, v = list(W0), [0.0] * 4, [0.0] * 4
    out = []
    for step in range(1, steps + 1):
        results = ([], [], [])
        for i, g in enumerate(GRAD_W):
            p[i] *= 1 - lr * weight_decay
            m[i] += (g - m[i]) * (1 - beta1)        # exp_avg.lerp_(grad, 1 - beta1)
            v[i] = v[i] * beta2 + (1 - beta2) * g * g
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            denom = math.sqrt(v[i]) / math.sqrt(bias_correction2) + eps
            p[i] -= step_size * m[i] / denom
            results[0].append(p[i])
            results[1].append(m[i])
            results[2].append(v[i])
        out.append(results[0] + results[1] + results[2])
    return out, {"w": p, "w.exp_avg": m, "w.exp_avg_sq": v}


def sgd(steps, lr=0.1, momentum=0.9, weight_decay=0.01):
    """torch.optim.SGD with momentum, no dampening, no Nesterov."""
    p, buf = list(U0), None
    out = []
    for _ in range(steps):
        d = [g + weight_decay * x for g, x in zip(GRAD_U, p)]
        buf = list(d) if buf is None else [momentum * b + x for b, x in zip(buf, d)]
        p = [x - lr * b for x, b in zip(p, buf)]
        out.append(p + buf)
    return out


def get_lr(it, learning_rate=1.0, warmup_iters=2, lr_decay_iters=6, min_lr=0.1):
    """nanoGPT's train.py."""
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def clip_coef(total_norm, max_norm):
    """torch.nn.utils.clip_grad_norm_: clip_coef = max_norm / (norm + 1e-6),
    clamped to 1."""
    return min(1.0, max_norm / (total_norm + 1e-6))


def check(entry, run_path, mode, start):
    run = evalref.load_run(run_path)
    steps = [s["results"][0] for s in run["steps"]]
    rtol, atol = (1e-12, 1e-15) if mode == "fp64" else (2e-6, 1e-9)
    checker = evalref.Checker("%s %s" % (entry, mode), rtol, atol)
    if entry == "adamw":
        want, state = adamw(len(steps))
        for k, (got, exp) in enumerate(zip(steps, want)):
            checker.all("step %d" % k, got, exp)
        if "state" in run:
            for name, values in state.items():
                checker.all(name, run["state"][name], values)
    elif entry == "sgd":
        for k, (got, exp) in enumerate(zip(steps, sgd(len(steps)))):
            checker.all("step %d" % k, got, exp)
    elif entry == "schedule":
        for k, got in enumerate(steps):
            checker.all("step %d" % (start + k), got,
                        [get_lr(start + k), 0.3])
    elif entry == "clip":
        norm2 = sum(x * x for x in CLIP_X)
        checker.all("clip", steps[0], [norm2, clip_coef(math.sqrt(norm2), 1.0),
                                       clip_coef(math.sqrt(norm2), 10.0)])
        checker.all("coefficient", steps[0][1:], [1.0 / (5.0 + 1e-6), 1.0])
    checker.finish()


if __name__ == "__main__":
    if sys.argv[1] == "make-inputs":
        make_inputs(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4],
              int(sys.argv[5]) if len(sys.argv) > 5 else 0)
