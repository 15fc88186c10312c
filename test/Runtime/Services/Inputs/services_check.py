"""Checks of the CPU runtime's services, standard library only.

Drives the tests in test/Runtime/Services with linear_program.cpp (V = 16,
C = 8, T = 8, a global batch of 4 sequences). Safetensors and the RNG come
from the evaluator tests' independent reference (test/Evaluator/Inputs/
evalref.py, the formula of include/zeroc/Support/Random.h).

usage: services_check.py make-data DIR
       services_check.py make-init DIR MODEL.safetensors
       services_check.py init-values MODEL.safetensors SEED
       services_check.py same-tensors A.safetensors B.safetensors
       services_check.py same-losses FULL.json PART1.json PART2.json...
       services_check.py log LOG.json STEPS EVALS WORLD STAGE BF16
       services_check.py batches DUMP WORLD STEPS DATA(.bin|.txt) [FIRST_STEP]
       services_check.py close-losses TOLERANCE FULL.json PART.json...
       services_check.py tensor-names FILE.safetensors...
       services_check.py tensor-dtypes FILE.safetensors
       services_check.py step-losses FULL.json PART.json   (PART's steps as FULL's)
       services_check.py same-checkpoint A B   (every tensor and value equal)
       services_check.py slices CHECKPOINT   (each parameter's slices: elements, file)
       services_check.py poke-nan FOLDER TENSOR ELEMENT   (checksums redone)
       services_check.py flip FILE OFFSET          (one bit; OFFSET < 0: from the end)
       services_check.py truncate FILE BYTES
       services_check.py edit-manifest FOLDER EDIT...   (re-signed; EDIT is
           shape=TENSOR:D0,D1  step=N  drop=TENSOR  model=NAME)
       services_check.py signal OUT SIGNALS STEP -- COMMAND...
           runs COMMAND; once it prints "step STEP/", sends each of SIGNALS
           (TERM,TERM: 0.3 s apart) to its ranks (the children of mpirun, or
           COMMAND itself; USR1@mpirun: to mpirun); writes OUT.out and
           OUT.err, prints the exit status
"""

import json
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "Evaluator", "Inputs"))
import evalref  # noqa: E402

V, C, T, GLOBAL_BATCH = 16, 8, 8, 4
# name -> (shape, init, std) of linear_program.cpp's parameters.
PARAMS = {
    "transformer.wte.weight": ([V, C], "normal", 0.5),
    "transformer.proj.weight": ([C, C], "normal", 0.3),
    "transformer.proj.bias": ([C], "zeros", 0.0),
    "transformer.scale": ([C], "ones", 0.0),
}


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def numel(shape):
    count = 1
    for dim in shape:
        count *= dim
    return count


def write_tokens(path, tokens):
    with open(path, "wb") as f:
        f.write(struct.pack("<%dH" % len(tokens), *tokens))


def read_tokens(path):
    """A .txt file is bytes (--data-format=text), anything else uint16."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".txt"):
        return list(data)
    return list(struct.unpack("<%dH" % (len(data) // 2), data))


def make_data(directory):
    # A mostly periodic sequence that the model can learn a little of.
    tokens, x, state = [], 0, 12345
    for _ in range(1000):
        state = (state * 1103515245 + 12345) % 2 ** 31
        x = (x * 5 + 3 + (1 if state % 10 == 0 else 0)) % V
        tokens.append(x)
    write_tokens(os.path.join(directory, "train.bin"), tokens)
    write_tokens(os.path.join(directory, "val.bin"), tokens[500:])
    write_tokens(os.path.join(directory, "short.bin"), tokens[:T + 1])
    write_tokens(os.path.join(directory, "minimal.bin"), tokens[:T + 2])
    bad = list(tokens)
    bad[700] = 40000
    write_tokens(os.path.join(directory, "bad-id.bin"), bad)
    bad = list(tokens[:300])
    bad[77] = V
    write_tokens(os.path.join(directory, "bad-val.bin"), bad)
    with open(os.path.join(directory, "odd.bin"), "wb") as f:
        f.write(b"\x01\x00" * 50 + b"\x01")
    with open(os.path.join(directory, "text.txt"), "wb") as f:
        f.write(bytes(t for t in tokens[:400]))
    with open(os.path.join(directory, "bad-text.txt"), "wb") as f:
        f.write(bytes(tokens[:100]) + b"A" + bytes(tokens[:100]))


def init_values(path, seed):
    tensors, metadata, _ = evalref.read_safetensors(path)
    expected = set(PARAMS) | {"lm_head.weight"}
    if set(tensors) != expected:
        fail("%s holds %s, expected %s" % (path, sorted(tensors), sorted(expected)))
    for name, (shape, init, std) in PARAMS.items():
        dtype, got_shape, values = tensors[name]
        if dtype != "F32" or got_shape != shape:
            fail("%s: %s is %s %s" % (path, name, dtype, got_shape))
        for i, value in enumerate(values):
            want = {"zeros": 0.0, "ones": 1.0}.get(init)
            if want is None:
                want = evalref.f32(evalref.normal(name, seed, std, i))
            if value != want:
                fail("%s: %s[%d] = %r, the RNG formula gives %r" %
                     (path, name, i, value, want))
    if tensors["lm_head.weight"] != tensors["transformer.wte.weight"]:
        fail("%s: lm_head.weight differs from transformer.wte.weight" % path)
    print("init-values: %d tensors match the formula (seed %d)" %
          (len(tensors), seed))


def make_init(directory, model_path):
    tensors, _, _ = evalref.read_safetensors(model_path)
    good = [(name, "F32", tensors[name][1], tensors[name][2]) for name in PARAMS]

    def write(name, entries):
        evalref.write_safetensors(os.path.join(directory, name), entries)

    write("init-f32.safetensors", good)
    write("init-bf16.safetensors",
          [(n, "BF16", s, v) for n, _, s, v in good])
    wte = tensors["transformer.wte.weight"]
    write("init-tied.safetensors",
          good + [("lm_head.weight", "F32", wte[1], wte[2])])
    write("init-untied.safetensors",
          good + [("lm_head.weight", "F32", wte[1], [v + 1 for v in wte[2]])])
    write("init-missing.safetensors",
          [e for e in good if e[0] != "transformer.proj.bias"])
    write("init-extra.safetensors",
          good + [("transformer.h.0.mlp.weight", "F32", [2], [1.0, 2.0])])
    write("init-shape.safetensors",
          [e if e[0] != "transformer.proj.weight" else
           (e[0], "F32", [C * C], e[3]) for e in good])
    write("init-dtype.safetensors",
          [e if e[0] != "transformer.scale" else
           (e[0], "I32", e[2], [1] * C) for e in good])


def same_tensors(a, b):
    ta, _, _ = evalref.read_safetensors(a)
    tb, _, _ = evalref.read_safetensors(b)
    if ta != tb:
        fail("%s and %s hold different tensors" % (a, b))
    print("same-tensors: %d tensors equal" % len(ta))


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def same_losses(full, parts):
    want = [(r["step"], r["loss"]) for r in read_log(full) if "loss" in r]
    got = []
    for part in parts:
        got += [(r["step"], r["loss"]) for r in read_log(part) if "loss" in r]
    if want != got:
        fail("losses differ:\n  uninterrupted %s\n  in parts      %s" % (want, got))
    print("same-losses: %d steps equal" % len(want))


def ring(factor, n, ranks):
    numerator = factor * (ranks - 1) * n
    return (2 * numerator + ranks) // (2 * ranks)


def log(path, steps, evals, world, stage, bf16):
    records = read_log(path)
    step_records = [r for r in records if "loss" in r]
    eval_records = [r for r in records if "val_loss" in r]
    summaries = [r for r in records if r.get("summary")]
    if len(step_records) != steps or len(eval_records) != evals:
        fail("%d step and %d eval records, expected %d and %d" %
             (len(step_records), len(eval_records), steps, evals))
    for r in step_records:
        if sorted(r) != ["grad_norm", "loss", "lr", "ms", "step", "tokens_per_s"]:
            fail("step record keys %s" % sorted(r))
        if not (isinstance(r["step"], int) and r["loss"] > 0 and
                r["grad_norm"] > 0 and r["ms"] >= 0 and r["tokens_per_s"] >= 0):
            fail("bad step record %s" % r)
    for r in eval_records:
        if sorted(r) != ["step", "val_loss"] or not r["val_loss"] > 0:
            fail("bad eval record %s" % r)
    if len(summaries) != 1 or records[-1] is not summaries[0]:
        fail("expected one summary record, last")
    summary = summaries[0]
    if summary["steps"] != steps or len(summary["ranks"]) != world:
        fail("summary %s" % summary)

    # What linear_program.cpp holds and sends, by the ring formula.
    size = 2 if bf16 else 4
    shards = world if stage == 3 else 1
    storage = [-(-numel(s) // shards) for s, _, _ in PARAMS.values()]
    per_param = sum(storage) * size
    peaks = {"parameters": per_param, "gradients": per_param,
             "optimizer_states": sum(storage) * 4 * (2 if bf16 else 1),
             "gathered_parameters": per_param * world if stage == 3 else 0,
             "gradient_buckets": per_param * world if stage == 3 else 0,
             "activations": (3 * C + V) * (GLOBAL_BATCH // world) * T * 4}
    if stage == 3:
        gather = sum(ring(1, s * world, world) for s in storage) * size
        scatter = sum(ring(1, s * world, world) for s in storage) * size
        norm = ring(2, 1, world) * 4
        sent = steps * (gather + scatter + norm) + evals * gather
    else:
        sent = steps * sum(ring(2, s, world) for s in storage) * size
    for rank, entry in enumerate(summary["ranks"]):
        if entry["rank"] != rank:
            fail("rank %d listed as %s" % (rank, entry["rank"]))
        if entry["peak_bytes"] != peaks:
            fail("rank %d peak_bytes %s, expected %s" %
                 (rank, entry["peak_bytes"], peaks))
        if entry["bytes_sent"] != sent:
            fail("rank %d bytes_sent %d, the ring formula gives %d" %
                 (rank, entry["bytes_sent"], sent))
        if not entry["seconds_waiting"] >= 0:
            fail("rank %d seconds_waiting %s" % (rank, entry["seconds_waiting"]))
    print("log: %d steps, %d evals, %d ranks, bytes_sent %d per rank" %
          (steps, evals, world, sent))


def batches(dump, world, steps, data, first_step):
    tokens = read_tokens(data)
    span = len(tokens) - T - 1
    per_rank = GLOBAL_BATCH // world
    for rank in range(world):
        with open("%s.rank%d" % (dump, rank)) as f:
            lines = [line for line in f if line.startswith("train")]
        if len(lines) != steps:
            fail("rank %d was given %d batches, expected %d" %
                 (rank, len(lines), steps))
        for k, line in enumerate(lines):
            step = first_step + k
            head, body = line.split(":", 1)
            if int(head.split()[1]) != step:
                fail("rank %d: batch %d has step %s" % (rank, k, head))
            got_x, got_y = [[int(v) for v in part.split()]
                            for part in body.split("|")]
            want_x, want_y = [], []
            for j in range(per_rank):
                i = rank * per_rank + j
                start = ((step * GLOBAL_BATCH + i) * T) % span
                want_x += tokens[start:start + T]
                want_y += tokens[start + 1:start + T + 1]
            if (got_x, got_y) != (want_x, want_y):
                fail("rank %d step %d: got %s | %s, the formula gives %s | %s" %
                     (rank, step, got_x, got_y, want_x, want_y))
    print("batches: %d ranks x %d steps follow the sampling formula" %
          (world, steps))


def close_losses(tolerance, full, parts):
    want = [(r["step"], r["loss"]) for r in read_log(full) if "loss" in r]
    got = []
    for part in parts:
        got += [(r["step"], r["loss"]) for r in read_log(part) if "loss" in r]
    if [s for s, _ in want] != [s for s, _ in got]:
        fail("steps differ:\n  uninterrupted %s\n  in parts      %s" % (want, got))
    worst = max(abs(a - b) / abs(a) for (_, a), (_, b) in zip(want, got))
    if worst > tolerance:
        fail("losses differ by %.2e (relative) > %g:\n  %s\n  %s" %
             (worst, tolerance, want, got))
    print("close-losses: %d steps within %g" % (len(want), tolerance))


def step_losses(full, part):
    want = {r["step"]: r["loss"] for r in read_log(full) if "loss" in r}
    got = [(r["step"], r["loss"]) for r in read_log(part) if "loss" in r]
    if not got or any(want.get(s) != loss for s, loss in got):
        fail("losses differ:\n  uninterrupted %s\n  resumed       %s" %
             (sorted(want.items()), got))
    print("step-losses: steps %d..%d equal" % (got[0][0], got[-1][0]))


def checkpoint_module():
    from zeroc import checkpoint
    return checkpoint


def same_checkpoint(a, b):
    checkpoint = checkpoint_module()
    ma, mb = checkpoint.read_manifest(a), checkpoint.read_manifest(b)
    names = [t["name"] for t in ma["tensors"]]
    if names != [t["name"] for t in mb["tensors"]]:
        fail("%s and %s hold different tensors" % (a, b))
    for key in ("model", "step", "data_position", "seed"):
        if ma[key] != mb[key]:
            fail("%s: %s %r, %s: %r" % (a, key, ma[key], b, mb[key]))
    for name in names:
        if checkpoint.read_tensor(ma, name) != checkpoint.read_tensor(mb, name):
            fail("tensor %s differs between %s and %s" % (name, a, b))
    print("same-checkpoint: %d tensors equal (written by %d and %d ranks)" %
          (len(names), ma["world_size"], mb["world_size"]))


def poke_nan(folder, name, element):
    """Writes a NaN into element ELEMENT of an F32 tensor and redoes every
    checksum, as a run that diverged would have written it."""
    checkpoint = checkpoint_module()
    manifest = checkpoint.read_manifest(folder)
    tensor = next(t for t in manifest["tensors"] if t["name"] == name)
    piece = next(p for p in tensor["slices"]
                 if p["elements"][0] <= element < p["elements"][1])
    path = os.path.join(manifest["folder"], piece["file"])
    data = bytearray(open(path, "rb").read())
    at = piece["bytes"][0] + 4 * (element - piece["elements"][0])
    data[at:at + 4] = struct.pack("<f", float("nan"))
    with open(path, "wb") as f:
        f.write(data)
    begin, end = piece["bytes"]
    piece["crc32c"] = "%08x" % checkpoint.crc32c(bytes(data[begin:end]))
    record = next(r for r in manifest["files"] if r["name"] == piece["file"])
    record["crc32c"] = "%08x" % checkpoint.crc32c(bytes(data))
    with open(os.path.join(manifest["folder"], "manifest.json"), "w") as f:
        f.write(checkpoint.manifest_text(manifest))


def flip(path, offset):
    data = bytearray(open(path, "rb").read())
    data[offset] ^= 0x01
    with open(path, "wb") as f:
        f.write(data)


def truncate(path, size):
    with open(path, "r+b") as f:
        f.truncate(size)


def edit_manifest(folder, edits):
    checkpoint = checkpoint_module()
    manifest = checkpoint.read_manifest(folder)
    for edit in edits:
        key, value = edit.split("=", 1)
        if key == "shape":
            name, dims = value.split(":")
            tensor = next(t for t in manifest["tensors"] if t["name"] == name)
            tensor["shape"] = [int(d) for d in dims.split(",")]
        elif key == "step":
            manifest["step"] = int(value)
        elif key == "model":
            manifest["model"] = value
        elif key == "drop":
            manifest["tensors"] = [t for t in manifest["tensors"] if t["name"] != value]
        else:
            fail("unknown edit " + edit)
    with open(os.path.join(manifest["folder"], "manifest.json"), "w") as f:
        f.write(checkpoint.manifest_text(manifest))


def children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def signal_run(out, signals, step, command):
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=open(out + ".err", "w"), text=True)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("step %s/" % step):
            break
    else:
        fail("the run ended before step %s: %s" % (step, "".join(lines)))
    launched = os.path.basename(command[0]) in ("mpirun", "mpiexec")
    ranks = children(process.pid) if launched else [process.pid]
    for i, name in enumerate(signals.split(",")):
        if i:
            time.sleep(0.3)
        if name.endswith("@mpirun"):  # the launcher itself
            os.kill(process.pid, getattr(signal, "SIG" + name[:-len("@mpirun")]))
            continue
        for pid in ranks:
            try:
                os.kill(pid, getattr(signal, "SIG" + name))
            except ProcessLookupError:  # mpirun ended it after another rank
                pass
    lines += process.stdout.readlines()
    status = process.wait(timeout=120)
    with open(out + ".out", "w") as f:
        f.write("".join(lines))
    print("exit %d" % status)


def slices(path):
    """Prints "NAME [BEGIN, END) FILE..." for each parameter of checkpoint
    PATH, by name: the element ranges the ranks wrote, in order."""
    manifest = checkpoint_module().read_manifest(path)
    for tensor in sorted(manifest["tensors"], key=lambda t: t["name"]):
        if tensor["name"] in PARAMS:
            print(tensor["name"], " ".join(
                "[%d, %d) %s" % (p["elements"][0], p["elements"][1], p["file"])
                for p in tensor["slices"]))


def main(argv):
    command, args = argv[1], argv[2:]
    if command == "make-data":
        make_data(args[0])
    elif command == "make-init":
        make_init(args[0], args[1])
    elif command == "init-values":
        init_values(args[0], int(args[1]))
    elif command == "same-tensors":
        same_tensors(args[0], args[1])
    elif command == "same-losses":
        same_losses(args[0], args[1:])
    elif command == "log":
        log(args[0], *[int(a) for a in args[1:]])
    elif command == "batches":
        batches(args[0], int(args[1]), int(args[2]), args[3],
                int(args[4]) if len(args) > 4 else 0)
    elif command == "close-losses":
        close_losses(float(args[0]), args[1], args[2:])
    elif command == "tensor-dtypes":
        for name, (dtype, shape, _) in sorted(evalref.read_safetensors(args[0])[0].items()):
            print(name, dtype, shape)
    elif command == "tensor-names":
        for path in args:
            print(sorted(evalref.read_safetensors(path)[0]))
    elif command == "step-losses":
        step_losses(args[0], args[1])
    elif command == "same-checkpoint":
        same_checkpoint(args[0], args[1])
    elif command == "poke-nan":
        poke_nan(args[0], args[1], int(args[2]))
    elif command == "flip":
        flip(args[0], int(args[1]))
    elif command == "truncate":
        truncate(args[0], int(args[1]))
    elif command == "edit-manifest":
        edit_manifest(args[0], args[1:])
    elif command == "signal":
        if args[3] != "--":
            fail("signal OUT SIGNALS STEP -- COMMAND...")
        signal_run(args[0], args[1], args[2], args[4:])
    elif command == "slices":
        slices(args[0])
    else:
        fail("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv)
