"""The ZeRO equivalence check (driver of zero-equivalence.test).

Every ZeRO stage, world size and bucket size must train exactly the model
that one rank trains without partitioning. For each configuration this
script runs

    zeroc-opt MODEL --train-pipeline="stage=S world-size=N bucket-bytes=B"
    zeroc-run OUT --ranks N --steps 3 --seed 7 --print-state [--fp64]

and compares with the reference, the single-rank unpartitioned step
(`zeroc-opt --train-autodiff --train-optimizer`, the same zeroc-run flags
on one rank):

* the loss and the gradient norm of every step, on every rank;
* every parameter after the 3 AdamW steps, and every optimizer state the
  reference has (exp_avg, exp_avg_sq; master in bf16): zeroc-run prints the
  full logical tensors, reassembled from the ranks' shards;
* every tensor that all ranks hold whole agrees across ranks (zeroc-run's
  "replica_max_abs_diff"), except stage 1's `grad` buffers, which hold each
  rank's own unreduced gradient by design.

The error of a tensor is max_i |zero_i - ref_i| / max_i |ref_i| (relative to
its largest element); of a scalar, |zero - ref| / |ref|. Tolerances are
printed with the worst error observed; see zero-equivalence.test for the
numbers and why each tolerance is what it is.

Standard library only. Exits 1 naming every failing configuration and its
worst tensor.
"""

import argparse
import concurrent.futures
import json
import math
import os
import re
import struct
import subprocess
import sys

STAGES = (0, 1, 2, 3)
WORLD_SIZES = (1, 2, 3, 4)
BUCKETS = (1, 100000000)  # one tensor per bucket; everything in one bucket
STEPS = 3
SEED = 7

# fp64 (no rounding anywhere): only the order of floating-point sums differs
# between the programs, so they agree to double rounding error.
FP64_TOL = 1e-9
# f32: every op result is rounded to f32, and a different summation order
# (local means then an average, packed buckets) changes the roundings. The
# tolerance is 1e-5, or for a tensor where f32 rounding alone moves the
# single-rank reference further than that from its fp64 value, four times
# that distance (the attention key biases: their true gradient is exactly
# zero, so AdamW normalizes f32 rounding noise into updates of ~1e-3 lr).
F32_TOL = 1e-5
F32_NOISE_FACTOR = 4.0
# bf16 mixed precision (bf16 params, activations and gradients, f32 master
# weights and moments): local batch means and the averaging of bf16 gradient
# buckets round differently from the single-rank step, and AdamW's first
# steps are nearly sign(g), so an element whose gradient is within bf16
# noise of zero can move by +-lr either way. Parameters are therefore
# compared by their update: ||zero - ref|| / ||ref - init|| (L2 over the
# tensor), which must stay below max(0.05, 2 x the same distance between
# the bf16 and the f32 single-rank runs), i.e. ZeRO adds less than bf16
# itself does. Over the whole model the update error must be below 0.05.
BF16_LOSS_TOL = 1e-3
BF16_NORM_TOL = 1e-2
BF16_TENSOR_FLOOR = 0.05
BF16_NOISE_FACTOR = 2.0
BF16_MODEL_TOL = 0.05


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("FAILED: %s\n  exit %d\n%s" %
                 (" ".join(cmd), proc.returncode, proc.stderr[-4000:]))
    return proc.stdout


class Tools:
    def __init__(self, args):
        self.opt = args.zeroc_opt
        self.run = args.zeroc_run
        self.work = args.work
        self.model = args.model

    def compile(self, name, passes):
        out = os.path.join(self.work, name + ".mlir")
        run([self.opt, self.model] + passes + ["-o", out])
        return out

    def evaluate(self, mlir, ranks, fp64, steps=STEPS):
        cmd = [self.run, mlir, "--ranks", str(ranks), "--steps", str(steps),
               "--seed", str(SEED), "--print-state"]
        if fp64:
            cmd.append("--fp64")
        return json.loads(run(cmd))


def state_kinds(mlir_path):
    """{symbol: kind} of the train.state declarations, {symbol: shards}: the
    `shards = N` of the sharded train.buffer it is a member of, else 0 (a
    declaration has no `shards` of its own: its verifier rejects it)."""
    kinds, shards = {}, {}
    decl = re.compile(r"^\s*train\.(param|state) @(\S+) : [^ ]+ (.*)$")
    buffer = re.compile(r"^\s*train\.buffer @\S+ : .* members \[([^]]*)\]"
                        r" offsets \[[^]]*\] shards = (\d+)")
    in_buffer = {}
    with open(mlir_path) as f:
        for line in f:
            b = buffer.match(line)
            if b:
                for member in b.group(1).split(","):
                    in_buffer[member.strip().lstrip("@")] = int(b.group(2))
            m = decl.match(line)
            if not m:
                continue
            what, name, rest = m.groups()
            kinds[name] = "param" if what == "param" else rest.split()[0]
            shards[name] = 0
    for name, n in in_buffer.items():
        shards[name] = n
    return kinds, shards


def scalar_err(a, r):
    if isinstance(a, str) or isinstance(r, str):
        return math.inf
    return abs(a - r) / abs(r) if r else abs(a)


def tensor_err(a, r):
    """max |a - r| / max |r|; inf on a shape or NaN mismatch."""
    if len(a) != len(r):
        return math.inf
    if any(isinstance(x, str) for x in a + r):
        return math.inf
    scale = max((abs(x) for x in r), default=0.0)
    diff = max((abs(x - y) for x, y in zip(a, r)), default=0.0)
    return diff / scale if scale else diff


def update_err(a, r, init):
    """||a - r|| / ||r - init|| over the tensor."""
    num = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, r)))
    den = math.sqrt(sum((y - z) ** 2 for y, z in zip(r, init)))
    return num / den if den else num


def bf16(x):
    """Round an f32 value to bf16 (nearest even on the f32 bits)."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def step_results(result):
    """[[loss, grad_norm] per rank] per step."""
    return [s["results"] for s in result["steps"]]


class Report:
    def __init__(self):
        self.failures = []

    def fail(self, config, what):
        self.failures.append("%s: %s" % (config, what))


def compare_scalars(report, config, zero, ref, tol):
    """Per-step loss and grad norm of every rank; returns the worst error."""
    worst = (0.0, "")
    for step, (zranks, rranks) in enumerate(zip(step_results(zero),
                                                step_results(ref))):
        for rank, values in enumerate(zranks):
            for index, what in enumerate(("loss", "grad_norm")):
                err = scalar_err(values[index], rranks[0][index])
                if err > worst[0] or math.isnan(err):
                    worst = (err, "%s of step %d on rank %d (%r vs %r)" %
                             (what, step, rank, values[index],
                              rranks[0][index]))
    if not worst[0] <= tol:
        report.fail(config, "worst step result: %s, relative error %.3g > %g"
                    % (worst[1], worst[0], tol))
    return worst[0]


def check_replicas(report, config, zero, kinds, stage):
    """Tensors every rank holds whole must agree bit for bit."""
    diffs = zero.get("replica_max_abs_diff", {})
    checked = 0
    for name, diff in diffs.items():
        if stage == 1 and kinds.get(name) == "grad":
            continue  # each rank's own local gradient (ZeRO-1 keeps it whole)
        checked += 1
        if diff != 0:
            report.fail(config, "@%s differs between ranks by up to %r"
                        % (name, diff))
    return checked


def fp32_config(tools, stage, world, bucket, refs, accum=1):
    config = "stage=%d world-size=%d bucket-bytes=%d%s" % (
        stage, world, bucket, " grad-accum=%d" % accum if accum > 1 else "")
    name = "s%d-n%d-b%d-k%d" % (stage, world, bucket, accum)
    mlir = tools.compile(name, ["--train-pipeline=stage=%d world-size=%d "
                                "bucket-bytes=%d grad-accum=%d"
                                % (stage, world, bucket, accum)])
    kinds, shards = state_kinds(mlir)
    report = Report()
    line = {"config": config, "sharded": sum(1 for s in shards.values() if s),
            "collectives": 0}
    with open(mlir) as f:
        text = f.read()
    line["collectives"] = len(re.findall(
        r"train\.(all_reduce|reduce_scatter|all_gather)_start", text))
    # ZeRO must actually shard what its stage says it does (on one rank
    # there is nothing to split).
    if world > 1:
        for sym, kind in kinds.items():
            if kind in ("exp_avg", "exp_avg_sq", "master"):
                expected = stage >= 1
            elif kind == "grad":
                expected = stage >= 2
            elif kind == "param":
                expected = stage == 3
            else:
                continue
            if (shards[sym] == world) != expected:
                report.fail(config, "@%s (%s) has shards = %d, expected %s"
                            % (sym, kind, shards[sym],
                               world if expected else "none"))
    for mode, fp64 in (("fp64", True), ("f32", False)):
        zero = tools.evaluate(mlir, world, fp64)
        ref = refs[mode]
        tol = FP64_TOL if fp64 else F32_TOL
        line[mode + "_scalar"] = compare_scalars(
            report, config + " " + mode, zero, ref, tol)
        worst = (0.0, "-")
        bad = []
        for sym, rvalues in ref["state"].items():
            if sym not in zero["state"]:
                report.fail(config, "%s: no @%s in the partitioned state"
                            % (mode, sym))
                continue
            err = tensor_err(zero["state"][sym], rvalues)
            limit = tol if fp64 else max(
                tol, F32_NOISE_FACTOR * refs["f32_noise"][sym])
            if err > worst[0] or math.isnan(err):
                worst = (err, sym)
            if not fp64 and err / limit > line.get("f32_ratio", (0.0,))[0]:
                line["f32_ratio"] = (err / limit, sym, err, limit)
            if not err <= limit:
                bad.append((err / limit if limit else math.inf, sym, err,
                            limit))
        if bad:
            bad.sort(reverse=True)
            report.fail(config, "%s: %d tensors differ from the reference; "
                        "worst @%s, relative error %.3g > %.3g" %
                        ((mode, len(bad)) + bad[0][1:]))
        line[mode + "_tensor"] = worst
        line["replicas"] = check_replicas(report, config + " " + mode, zero,
                                          kinds, stage)
    return line, report


def bf16_config(tools, stage, world, bucket, refs):
    config = "bf16 stage=%d world-size=%d bucket-bytes=%d" % (
        stage, world, bucket)
    name = "bf16-s%d-n%d-b%d" % (stage, world, bucket)
    mlir = tools.compile(name, [
        "--train-pipeline=stage=%d world-size=%d bucket-bytes=%d "
        "precision=bf16" % (stage, world, bucket)])
    kinds, _ = state_kinds(mlir)
    report = Report()
    zero = tools.evaluate(mlir, world, False)
    ref, ref32, init = refs["bf16"], refs["f32"], refs["bf16_init"]
    line = {"config": config}

    # Loss and grad norm, step by step.
    worst_loss = worst_norm = 0.0
    for step, (zranks, rranks) in enumerate(zip(step_results(zero),
                                                step_results(ref))):
        for rank, values in enumerate(zranks):
            el = scalar_err(values[0], rranks[0][0])
            en = scalar_err(values[1], rranks[0][1])
            worst_loss, worst_norm = max(worst_loss, el), max(worst_norm, en)
            if not el <= BF16_LOSS_TOL:
                report.fail(config, "loss of step %d on rank %d: %r vs %r"
                            % (step, rank, values[0], rranks[0][0]))
            if not en <= BF16_NORM_TOL:
                report.fail(config, "grad norm of step %d on rank %d: %r vs %r"
                            % (step, rank, values[1], rranks[0][1]))
    line["loss"], line["norm"] = worst_loss, worst_norm

    # Parameters (their f32 masters) and moments, by their update.
    worst = (0.0, "", 0.0)
    num = den = 0.0
    for sym, rvalues in ref["state"].items():
        kind = kinds.get(sym)
        if kind == "param":
            continue  # compared through its master; see the cast check
        z = zero["state"][sym]
        err = update_err(z, rvalues, init[sym])
        # The same distance between the bf16 and the f32 single-rank runs
        # (a master's f32 counterpart is the f32 param itself).
        f32_sym = sym[:-len(".master")] if kind == "master" else sym
        noise = update_err(rvalues, ref32["state"][f32_sym], init[sym])
        limit = max(BF16_TENSOR_FLOOR, BF16_NOISE_FACTOR * noise)
        if err / limit > worst[0]:
            worst = (err / limit, sym, err)
        if not err <= limit:
            report.fail(config, "@%s update error %.3g > %.3g (bf16 vs f32 "
                        "single-rank: %.3g)" % (sym, err, limit, noise))
        if kind == "master":
            num += sum((x - y) ** 2 for x, y in zip(z, rvalues))
            den += sum((y - i) ** 2 for y, i in zip(rvalues, init[sym]))
        # A bf16 param is its master rounded.
        if kind == "master":
            param = zero["state"][f32_sym]
            bad = [i for i, (p, m) in enumerate(zip(param, z)) if p != bf16(m)]
            if bad:
                report.fail(config, "@%s element %d is %r, not bf16 of its "
                            "master %r" % (f32_sym, bad[0], param[bad[0]],
                                           z[bad[0]]))
    model_err = math.sqrt(num / den)
    if not model_err <= BF16_MODEL_TOL:
        report.fail(config, "whole-model update error %.3g > %g"
                    % (model_err, BF16_MODEL_TOL))
    line["model"], line["worst"] = model_err, worst
    line["replicas"] = check_replicas(report, config, zero, kinds, stage)
    return line, report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--zeroc-opt", required=True)
    parser.add_argument("--zeroc-run", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    tools = Tools(args)

    # References: the unpartitioned step on one rank.
    ref_mlir = tools.compile("reference", ["--train-autodiff",
                                           "--train-optimizer"])
    bf16_mlir = tools.compile("reference-bf16", [
        "--train-mixed-precision=precision=bf16", "--train-autodiff",
        "--train-optimizer"])
    refs = {"fp64": tools.evaluate(ref_mlir, 1, True),
            "f32": tools.evaluate(ref_mlir, 1, False),
            "bf16": tools.evaluate(bf16_mlir, 1, False),
            "bf16_init": tools.evaluate(bf16_mlir, 1, False, steps=0)["state"]}
    refs["f32_noise"] = {
        sym: tensor_err(refs["f32"]["state"][sym], refs["fp64"]["state"][sym])
        for sym in refs["f32"]["state"]}

    # Clipping must be active, or the global norm's all-reduce goes untested.
    with open(args.model) as f:
        clip = float(re.search(r"grad_clip = ([0-9.e+-]+)", f.read()).group(1))
    norms = [s[0][1] for s in step_results(refs["fp64"])]
    losses = [s[0][0] for s in step_results(refs["fp64"])]
    print("reference: losses %s, grad norms %s" %
          (", ".join("%.4f" % x for x in losses),
           ", ".join("%.4f" % x for x in norms)))
    if not all(n > clip for n in norms):
        sys.exit("FAILED: clipping is not active at every step: grad norms "
                 "%s, grad_clip %g" % (norms, clip))
    print("clipping active at every step: every grad norm > grad_clip %g"
          % clip)
    worst_noise = max(refs["f32_noise"].items(), key=lambda kv: kv[1])
    print("f32 reference vs fp64 reference: worst @%s %.2g"
          % (worst_noise[0], worst_noise[1]))

    jobs = [(fp32_config, s, n, b) for s in STAGES
            for n in WORLD_SIZES for b in BUCKETS]
    jobs += [(bf16_config, s, 2, b) for s in STAGES for b in BUCKETS]
    # With two micro-batches (stages 0-1 reduce the sums once; stages 2-3
    # sum each micro-batch's reduced shard into the sharded gradient
    # buffer; stage 3 gathers each bucket around each micro-batch's forward
    # and backward).
    jobs += [(fp32_config, s, n, b, 2) for s in STAGES
             for n, b in ((2, 1), (3, 100000000))]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda j: j[0](tools, j[1], j[2], j[3], refs, *j[4:]), jobs))

    failures = []
    totals = {"fp64": (0.0, ""), "f32": (0.0, "")}
    worst_ratio = (0.0, "")
    for line, report in results:
        failures += report.failures
        status = "FAIL" if report.failures else "ok"
        if "fp64_tensor" in line:
            for mode in ("fp64", "f32"):
                err, sym = line[mode + "_tensor"]
                if err >= totals[mode][0]:
                    totals[mode] = (err, "%s @%s" % (line["config"], sym))
            if line.get("f32_ratio", (0.0,))[0] > worst_ratio[0]:
                r = line["f32_ratio"]
                worst_ratio = (r[0], "@%s in %s: %.3g, limit %.3g" %
                               (r[1], line["config"], r[2], r[3]))
            print("%s: %s; fp64 tensors %.2g, steps %.2g; f32 tensors %.2g "
                  "(@%s), steps %.2g; %d sharded declarations, %d "
                  "collectives, %d replicated tensors agree" %
                  (line["config"], status, line["fp64_tensor"][0],
                   line["fp64_scalar"], line["f32_tensor"][0],
                   line["f32_tensor"][1], line["f32_scalar"], line["sharded"],
                   line["collectives"], line["replicas"]))
        else:
            print("%s: %s; loss %.2g, grad norm %.2g; update error: model "
                  "%.3g, worst @%s %.3g (%.2f of its limit); %d replicated "
                  "tensors agree" %
                  (line["config"], status, line["loss"], line["norm"],
                   line["model"], line["worst"][1], line["worst"][2],
                   line["worst"][0], line["replicas"]))
    for mode in ("fp64", "f32"):
        print("worst %s tensor error: %.3g (%s)" % (mode, totals[mode][0],
                                                     totals[mode][1]))
    print("closest f32 tensor to its limit: %.2f of it (%s)" % worst_ratio)
    if failures:
        print("ZERO EQUIVALENCE FAILED in %d checks:" % len(failures))
        for failure in failures:
            print("  " + failure)
        sys.exit(1)
    print("zero equivalence: %d fp32 configurations and %d bf16 "
          "configurations match the single-rank reference" %
          (sum(1 for j in jobs if j[0] is fp32_config),
           sum(1 for j in jobs if j[0] is bf16_config)))


if __name__ == "__main__":
    main()
