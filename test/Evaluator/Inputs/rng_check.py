"""Checks zeroc-run's generated inputs and initial parameters against the
RNG formula of include/zeroc/Support/Random.h (re-implemented in evalref).

usage: rng_check.py make-inputs DIR
       rng_check.py same-values A.json B.json
       rng_check.py inputs INPUTS.safetensors SEED K
       rng_check.py params RUN.json SEED
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evalref  # noqa: E402


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def make_inputs(directory):
    evalref.write_safetensors(os.path.join(directory, "global.safetensors"), [
        ("arg0", "F32", [4, 3], [float(i) for i in range(12)])])
    evalref.write_safetensors(os.path.join(directory, "local.safetensors"), [
        ("arg0", "F32", [2, 3], [-float(i) for i in range(1, 7)])])
    evalref.write_safetensors(os.path.join(directory, "step.safetensors"), [
        ("arg0", "I64", [], [41])])


def same_values(a, b):
    va = [v for rank in evalref.load_run(a)["steps"][0]["results"] for v in rank]
    vb = [v for rank in evalref.load_run(b)["steps"][0]["results"] for v in rank]
    if va != vb:
        fail("values differ")
    print("same %d values" % len(va))


def inputs(path, seed, k):
    tensors, _, _ = evalref.read_safetensors(path)
    dtype, shape, values = tensors["arg0"]
    want = [evalref.f32(evalref.normal("arg0", seed, 1.0, i))
            for i in range(len(values))]
    if dtype != "F32" or values != want:
        fail("arg0 differs from the formula")
    dtype, shape, ids = tensors["arg1"]
    want = [evalref.uniform_int("arg1", seed, k, i) for i in range(len(ids))]
    if dtype != "I64" or ids != want:
        fail("arg1 differs from the formula: %r vs %r" % (ids, want))
    print("inputs ok: arg0 normal f32 %d values, arg1 uniform [0, %d) %d values"
          % (len(values), k, len(ids)))


def params(path, seed):
    state = evalref.load_run(path)["state"]

    def expect(name, values):
        if state[name] != values:
            fail("%s values differ: %r vs %r" % (name, state[name], values))

    big = "transformer.h.0.attn.c_attn.weight"
    expect(big, [evalref.f32(evalref.normal(big, seed, 0.02, i)) for i in range(12)])
    expect("wpe", [evalref.f32(evalref.normal("wpe", seed, 1.0, i)) for i in range(8)])
    start = [evalref.f32(evalref.normal("emb", seed, 0.5, i)) for i in range(8)]
    expect("emb", [evalref.bf16(x) for x in start])
    expect("emb.master", start)
    expect("bias", [0.0] * 3)
    expect("gain", [1.0] * 3)
    print("params ok: 12 + 8 normal f32, 8 normal bf16, 8 master, 3 zeros, 3 ones")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "make-inputs":
        make_inputs(sys.argv[2])
    elif command == "same-values":
        same_values(sys.argv[2], sys.argv[3])
    elif command == "inputs":
        inputs(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif command == "params":
        params(sys.argv[2], int(sys.argv[3]))
