# REQUIRES: mpi
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --zeroc %zeroc_build/bin/zeroc --src %zeroc_src --work %t --mpirun "%mpirun" | FileCheck %s
#
# CHECK: gpt2 stage 0, 1 rank(s): greedy = PyTorch's argmax decoding on 4 prompts; logits within {{.*}}; top-k 1 and top-p 1e-9 = greedy; top-k 5 draws from the 5 most likely
# CHECK: llama stage 3, 2 rank(s): greedy = PyTorch's argmax decoding on 4 prompts; logits within {{.*}}; top-k 1 and top-p 1e-9 = greedy; top-k 5 draws from the 5 most likely
# CHECK: sampling matches PyTorch
"""The executable's sampling against PyTorch on the same exported weights.

A tiny GPT-2 (nanoGPT's, test/python/Inputs/torch_models.py) and a tiny
Llama (Hugging Face's LlamaForCausalLM names, llama_models.HFLlama), each
built by zeroc's model builder at the same sizes, start from PyTorch's
weights (--init), train 30 steps on byte-level tinyshakespeare and save a
checkpoint; `python3 -m zeroc checkpoint export` writes its weights, which
PyTorch loads with strict load_state_dict. Then, on 4 prompts (one longer
than the block, which both sides crop to its last block of tokens):

* --sample 16 --temperature 0 (greedy) prints, for each prompt, the prompt
  and the tokens of PyTorch's argmax decoding, byte for byte;
* --logits FILE.npy and FILE.safetensors hold each prompt's last-position
  logits, equal to PyTorch's within 1e-4 (relative to the largest);
* --top-k 1 and --top-p 1e-9 (any temperature, any seed) give the greedy
  text; --top-k 5 at temperature 2 gives, as its first token for each
  prompt, one of PyTorch's 5 most likely.

The GPT-2 runs at stage 0 on one rank, the Llama at stage 3 on two (the
logits entry point gathers the parameters).
"""
import os
import subprocess
import sys

import numpy
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "Inputs"))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
import harness  # noqa: E402
import llama_models  # noqa: E402
import torch_models  # noqa: E402
from zeroc import weights  # noqa: E402

BLOCK, VOCAB, NEW = 16, 256, 16
PROMPTS = ["ROMEO:", "To be, or not", "a",
           "First Citizen: Before we proceed any further, hear me speak."]


def gpt2():
    return torch_models.GPT(vocab_size=VOCAB, block_size=BLOCK, n_layer=2, n_head=2,
                            n_embd=32, gelu="tanh")


def gpt2_logits(model, idx):
    t = model.transformer
    x = t.wte(idx) + t.wpe(torch.arange(idx.size(1)))
    for block in t.h:
        x = block(x)
    return model.lm_head(t.ln_f(x))


def llama():
    return llama_models.HFLlama(vocab_size=VOCAB, hidden_size=32, num_layers=2, num_heads=4,
                                num_kv_heads=2, intermediate_size=64, eps=1e-5,
                                max_positions=32, rope_theta=10000.0,
                                tie_word_embeddings=False)


def llama_logits(model, idx):
    return model(idx)[0]


MODELS = {
    "gpt2": (gpt2, gpt2_logits, "zeroc.models.gpt2",
             ["--n-layer", "2", "--n-head", "2", "--n-embd", "32"], 0, 1),
    "llama": (llama, llama_logits, "zeroc.models.llama",
              ["--n-layer", "2", "--dim", "32", "--n-head", "4", "--n-kv-head", "2",
               "--ffn-dim", "64", "--rope-theta", "10000", "--norm-eps", "1e-5",
               "--no-tie-embeddings"], 3, 2),
}


def greedy(model, logits_of, prompt):
    ids = list(prompt.encode())
    with torch.no_grad():
        for _ in range(NEW):
            ctx = torch.tensor([ids[-BLOCK:]])
            ids.append(int(torch.argmax(logits_of(model, ctx)[0, -1])))
    return bytes(ids) + b"\n"


def read_safetensors_logits(path):
    import json
    import struct
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    entry = header["logits"]
    assert entry["dtype"] == "F32", entry
    begin, end = entry["data_offsets"]
    return numpy.frombuffer(data[begin:end], dtype="<f4").reshape(entry["shape"])


def check(args, name, failures):
    make, logits_of, module, flags, stage, ranks = MODELS[name]
    torch.manual_seed(0)
    model = make()
    init = os.path.join(args.work, f"{name}-init.safetensors")
    weights.save_state_dict(init, {n: p for n, p in model.state_dict().items()
                                   if not (name == "gpt2" and n == "lm_head.weight")},
                            dtype=torch.float32)
    mlir = harness.build_model(args, name, module,
                               [*flags, "--vocab-size", str(VOCAB), "--block-size", str(BLOCK),
                                "--batch-size", "8", "--lr", "1e-2"])
    exe = os.path.join(args.work, f"{name}-s{stage}")
    subprocess.run([args.zeroc, mlir, f"--zero-stage={stage}", f"--world-size={ranks}",
                    "-o", exe], check=True)
    run = harness.mpirun(args) + ["-np", str(ranks), exe]
    ck = os.path.join(args.work, f"{name}-ck")
    subprocess.run(run + ["--data", harness.text_data(args), "--data-format=text",
                          "--init", init, "--steps", "30", "--save", ck, "--quiet"], check=True)
    exported = ck + ".safetensors"
    subprocess.run([sys.executable, "-m", "zeroc", "checkpoint", "export", ck, "-o", exported],
                   check=True, stdout=subprocess.DEVNULL)
    model.load_state_dict(weights.load_state_dict(exported), strict=True)
    model.eval()

    prompts = os.path.join(args.work, "prompts.txt")
    with open(prompts, "w") as f:
        f.write("\n".join(PROMPTS) + "\n")

    def sample(*extra):
        return subprocess.run(run + ["--init", ck, "--prompts", prompts, "--sample", str(NEW),
                                     *extra], check=True, capture_output=True).stdout

    expected = b"".join(greedy(model, logits_of, p) for p in PROMPTS)
    npy = os.path.join(args.work, f"{name}-logits.npy")
    st = os.path.join(args.work, f"{name}-logits.safetensors")
    got = sample("--temperature", "0", "--logits", npy)
    if got != expected:
        failures.append(f"{name}: greedy\n{got!r}\n!= PyTorch's\n{expected!r}")
    subprocess.run(run + ["--init", ck, "--prompts", prompts, "--logits", st], check=True,
                   capture_output=True)
    with torch.no_grad():
        reference = torch.stack([logits_of(model, torch.tensor([list(p.encode())[-BLOCK:]]))[0, -1]
                                 for p in PROMPTS]).numpy()
    scale = float(numpy.abs(reference).max())
    worst = 0.0
    for path, values in ((npy, numpy.load(npy)), (st, read_safetensors_logits(st))):
        if values.shape != reference.shape:
            failures.append(f"{name}: {path} has shape {values.shape}, not {reference.shape}")
            continue
        worst = max(worst, float(numpy.abs(values - reference).max()) / scale)
    if worst > 1e-4:
        failures.append(f"{name}: logits differ by {worst:.2e} relative")
    for extra in (["--top-k", "1", "--temperature", "0.9", "--seed", "5"],
                  ["--top-p", "1e-9", "--temperature", "1.5", "--seed", "6"]):
        if sample(*extra) != expected:
            failures.append(f"{name}: {' '.join(extra)} is not greedy")
    drawn = sample("--top-k", "5", "--temperature", "2", "--seed", "7")
    offset = 0
    for p, row in zip(PROMPTS, reference):
        offset += len(p.encode())
        first = drawn[offset]
        if first not in numpy.argsort(-row)[:5]:
            failures.append(f"{name}: --top-k 5 drew {first} after {p!r}, not among "
                            f"{numpy.argsort(-row)[:5]}")
        offset += NEW + 1
    if not failures:
        print(f"{name} stage {stage}, {ranks} rank(s): greedy = PyTorch's argmax decoding on "
              f"{len(PROMPTS)} prompts; logits within {worst:.1e}; top-k 1 and top-p 1e-9 = "
              f"greedy; top-k 5 draws from the 5 most likely")


def main():
    args = harness.parse_args(tools=("--zeroc",))
    torch.set_num_threads(1)
    failures = []
    for name in ("gpt2", "llama"):
        check(args, name, failures)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("sampling matches PyTorch")


if __name__ == "__main__":
    main()
