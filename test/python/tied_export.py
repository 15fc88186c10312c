# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %zeroc_build/bin %t | FileCheck %s
#
# CHECK: gpt: train.tied = {"lm_head.weight" = @transformer.wte.weight}
# CHECK: gpt: manifest aliases {'lm_head.weight': 'transformer.wte.weight'}
# CHECK: gpt: strict load_state_dict of the export: ok
# CHECK: gpt: --init with lm_head.weight only: same losses
# CHECK: gpt: --resume into the model that calls it lm_head.weight: same losses
# CHECK: gpt: --init with tied names that differ: refused
# CHECK: custom: train.tied = {"head.weight" = @tok.weight}
# CHECK: custom: manifest aliases {'head.weight': 'tok.weight'}
# CHECK: custom: strict load_state_dict of the export: ok
# CHECK: custom: --init with head.weight only: same losses
# CHECK: custom: --resume into the model that calls it head.weight: same losses
# CHECK: custom: --init with tied names that differ: refused
"""Tied weights survive import, training and export.

A nanoGPT-style GPT (``lm_head.weight`` tied to ``transformer.wte.weight``,
torch_models.GPT) and a model with names of its own (``head.weight`` tied to
``tok.weight``, tied_models.TiedCustom) are imported (the importer declares
the tying as the module's ``train.tied``), trained 3 steps at ZeRO stage 2
on 2 ranks through the launcher, and exported with ``python3 -m zeroc
checkpoint export``: the file loads into the PyTorch module with strict
``load_state_dict``, the loaded tensors equal the file's (both names the
same values), and training changed them. A weights file that has the
parameter only under its second name is a valid ``--init`` (the first
step's loss equals the one from the full file), and the checkpoint resumes
into the same model with the two names swapped (the losses of the model
that wrote it); a weights file whose two names differ is refused with a
message naming both.
"""
import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

import torch_models  # noqa: E402
import tied_models  # noqa: E402
from zeroc import data, weights  # noqa: E402

BIN, WORK = sys.argv[1], sys.argv[2]
VOCAB, BLOCK, BATCH = 64, 8, 4
MODELS = {
    "gpt": (os.path.join(HERE, "Inputs", "torch_models.py"), "GPT",
            dict(vocab_size=VOCAB, block_size=BLOCK, n_layer=1, n_head=2, n_embd=16),
            "lm_head.weight", "transformer.wte.weight"),
    "custom": (os.path.join(HERE, "Inputs", "tied_models.py"), "TiedCustom",
               dict(vocab_size=VOCAB, n_embd=16), "head.weight", "tok.weight"),
}
ENV = dict(os.environ, ZEROC=os.path.join(BIN, "zeroc"), TMPDIR=WORK,
           ZEROC_CACHE_DIR=os.path.join(WORK, "cache"))


def run(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "zeroc", *args], capture_output=True,
                            text=True, env=ENV)
    if check and result.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def train(model, tokens, init, steps, log, save=None):
    args = ["train", model, "--zero-stage", "2", "--world-size", "2", "--data", tokens,
            "--init", init, "--steps", str(steps), "--log-json", log, "--quiet"]
    return run(*args, *(["--save", save] if save else []), check=False)


def losses(log):
    with open(log) as f:
        return [json.loads(line)["loss"] for line in f if '"loss"' in line]


tokens = os.path.join(WORK, "tokens.bin")
data.write_tokens(tokens, [(i * 11 + i // 7) % VOCAB for i in range(4000)])
for key, (source, cls, kwargs, alias, target) in MODELS.items():
    work = os.path.join(WORK, key)
    os.makedirs(work)
    mlir, init = os.path.join(work, "m.mlir"), os.path.join(work, "init.safetensors")
    run("import", f"{source}:{cls}", "--batch-size", str(BATCH), "--block-size", str(BLOCK),
        *[f"--arg={k}={v}" for k, v in kwargs.items()], "-o", mlir, "--weights", init)
    text = open(mlir).read()
    declared = f'train.tied = {{"{alias}" = @{target}}}'
    assert declared in text, text[:400]
    print(f"{key}: {declared}")

    ck, log = os.path.join(work, "ck"), os.path.join(work, "log.jsonl")
    result = train(mlir, tokens, init, 3, log, save=ck)
    assert result.returncode == 0, result.stderr
    info = json.load(open(os.path.join(ck, "step-0000003", "manifest.json")))
    print(f"{key}: manifest aliases {info['aliases']}")
    exported = os.path.join(work, "export.safetensors")
    run("checkpoint", "export", ck, "-o", exported)
    state = weights.load_state_dict(exported)
    assert set(state) >= {alias, target}, sorted(state)
    assert torch.equal(state[alias], state[target])

    sys.path.insert(0, os.path.dirname(source))
    module = getattr(__import__(os.path.splitext(os.path.basename(source))[0]), cls)(**kwargs)
    module.load_state_dict(state, strict=True)
    loaded = module.state_dict()
    for name, tensor in state.items():
        assert torch.equal(loaded[name], tensor), name
    assert not torch.equal(state[target], weights.load_state_dict(init)[target]), \
        "training did not change the tied weight"
    print(f"{key}: strict load_state_dict of the export: ok")

    # --init from a file with the parameter under its second name only.
    full = weights.load_state_dict(init)
    full[alias] = full[target]
    second = {k: v for k, v in full.items() if k != target}
    only_alias = os.path.join(work, "alias.safetensors")
    weights.save_state_dict(only_alias, second)
    first_log, alias_log = os.path.join(work, "first.jsonl"), os.path.join(work, "alias.jsonl")
    a = train(mlir, tokens, init, 1, first_log)
    b = train(mlir, tokens, only_alias, 1, alias_log)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert losses(first_log) == losses(alias_log) and losses(first_log), \
        (losses(first_log), losses(alias_log))
    print(f"{key}: --init with {alias} only: same losses")

    # --resume into a model that declares the other name of the tied
    # parameter (the IR with the two names swapped): the checkpoint's
    # tensors (and moments) are found under the other name, and the
    # resumed run's losses equal those of the model that wrote it.
    swapped = os.path.join(work, "swapped.mlir")
    with open(swapped, "w") as f:
        f.write(text.replace(declared, f'train.tied = {{"{target}" = @{alias}}}')
                .replace(f"@{target} ", f"@{alias} "))
    same_log, swap_log = os.path.join(work, "same.jsonl"), os.path.join(work, "swap.jsonl")
    for model, out in ((mlir, same_log), (swapped, swap_log)):
        result = run("train", model, "--zero-stage", "2", "--world-size", "2", "--data",
                     tokens, "--resume", ck, "--steps", "5", "--log-json", out, "--quiet",
                     check=False)
        assert result.returncode == 0, result.stderr
    assert losses(same_log) == losses(swap_log) and len(losses(same_log)) == 2, \
        (losses(same_log), losses(swap_log))
    print(f"{key}: --resume into the model that calls it {alias}: same losses")

    full[alias] = full[target] + 1.0
    differ = os.path.join(work, "differ.safetensors")
    weights.save_state_dict(differ, full)
    c = train(mlir, tokens, differ, 1, os.path.join(work, "differ.jsonl"))
    assert c.returncode == 1, (c.returncode, c.stderr)
    assert f"tensor '{alias}' differs from '{target}'" in c.stderr, c.stderr
    print(f"{key}: --init with tied names that differ: refused")
