"""Random view chains through train-raise's `views` family.

    random_views.py --bin BIN --work DIR --seeds FIRST:LAST

For each seed, a tiny model whose forward embeds the tokens ([4, 6, 8]),
takes the embedding through a random chain of train.reshape (size-1
dimensions included), train.transpose (the batch dimension kept first) and
train.broadcast (of a size-1 dimension), reshapes it to [4, 6, N] and ends
with a head matmul and cross-entropy. Each model is compiled by the
pipeline with and without train-raise (raise=false) at stage 0 on one rank
and stage 3 on two, and both forms train 2 steps on the reference
evaluator (zeroc-run): their losses must agree to 1e-5 relative. Prints
one line per seed and configuration, and how many of the chains the views
family changed; exits 1 on a difference or a failure.
"""
import argparse
import json
import os
import random
import subprocess
import sys


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def factor(n, rng):
    """n as 1 to 3 random factors, with up to two size-1 dimensions."""
    factors = []
    while n > 1 and len(factors) < 3:
        d = rng.choice([d for d in range(2, n + 1) if n % d == 0]) if len(factors) < 2 else n
        factors.append(d)
        n //= d
    for _ in range(rng.randint(0, 2)):
        factors.insert(rng.randint(0, len(factors)), 1)
    return factors


def tensor(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def model(seed):
    rng = random.Random(seed)
    lines, value, shape, k = [], "%x", [4, 6, 8], 0
    for _ in range(rng.randint(2, 7)):
        kind = rng.choice(["reshape", "transpose", "transpose", "broadcast"])
        name = f"%v{k + 1}"
        if kind == "reshape":
            new = [4] + factor(prod(shape[1:]), rng)
            lines.append(f"    {name} = train.reshape {value} : {tensor(shape)} -> {tensor(new)}")
        elif kind == "transpose":
            rest = list(range(1, len(shape)))
            rng.shuffle(rest)
            perm = [0] + rest
            new = [shape[p] for p in perm]
            lines.append(f"    {name} = train.transpose {value} [{', '.join(map(str, perm))}] : "
                         f"{tensor(shape)} -> {tensor(new)}")
        else:
            units = [i for i, d in enumerate(shape) if d == 1 and i > 0]
            if not units:
                continue
            new = list(shape)
            new[rng.choice(units)] = 2
            lines.append(f"    {name} = train.broadcast {value} : {tensor(shape)} -> {tensor(new)}")
        k += 1
        value, shape = name, new
    n = prod(shape[1:]) // 6
    body = "\n".join(lines)
    return f"""module {{
  train.optimizer adamw lr = 1.000000e-02 beta1 = 0.9 beta2 = 0.95 eps = 1.000000e-08 weight_decay = 0.0 grad_clip = 0.0
  train.param @wte : tensor<16x8xf32> init = normal std = 5.000000e-01
  train.param @head : tensor<16x{n}xf32> init = normal std = 3.000000e-01
  func.func @forward(%tokens: tensor<4x6xi32>, %targets: tensor<4x6xi32>) -> tensor<f32> attributes {{train.forward}} {{
    %wte = train.read @wte : tensor<16x8xf32>
    %x = train.embedding %wte[%tokens] : (tensor<16x8xf32>, tensor<4x6xi32>) -> tensor<4x6x8xf32>
{body}
    %flat = train.reshape {value} : {tensor(shape)} -> {tensor([4, 6, n])}
    %head = train.read @head : tensor<16x{n}xf32>
    %logits = train.matmul %flat, %head transpose_rhs : (tensor<4x6x{n}xf32>, tensor<16x{n}xf32>) -> tensor<4x6x16xf32>
    %loss = train.cross_entropy %logits, %targets : (tensor<4x6x16xf32>, tensor<4x6xi32>) -> tensor<f32>
    return %loss : tensor<f32>
  }}
}}
"""


def run(command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--seeds", default="0:8")
    args = parser.parse_args()
    first, last = (int(s) for s in args.seeds.split(":"))
    opt, evaluator = os.path.join(args.bin, "zeroc-opt"), os.path.join(args.bin, "zeroc-run")
    failures, changed = 0, 0
    for seed in range(first, last):
        source = os.path.join(args.work, f"views-{seed}.mlir")
        with open(source, "w") as f:
            f.write(model(seed))
        if run([opt, source, "--train-raise=families=views"]) != run([opt, source]):
            changed += 1
        for stage, ranks in ((0, 1), (3, 2)):
            losses = {}
            for form in ("true", "false"):
                out = os.path.join(args.work, f"views-{seed}-s{stage}-{form}.mlir")
                run([opt, source, f"--train-pipeline=stage={stage} world-size={ranks} raise={form}",
                     "-o", out])
                steps = json.loads(run([evaluator, out, "--steps", "2", "--seed", "1",
                                        "--ranks", str(ranks)]))["steps"]
                losses[form] = [step["results"][0][0] for step in steps]
            gap = max(abs(a - b) / abs(b) for a, b in zip(losses["true"], losses["false"]))
            same = gap <= 1e-5 and len(losses["true"]) == len(losses["false"]) == 2
            failures += not same
            print(f"seed {seed}, stage {stage}, {ranks} rank(s): "
                  f"{'agree' if same else 'DIFFER'} ({gap:.1e})")
    print(f"{changed} of {last - first} chains changed by the views")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
