"""An imported PyTorch model trains to PyTorch's own losses.

    importer_train.py --model gpt-tanh|gpt-erf|mlp|... --zeroc ZEROC --src SRC --work DIR --mpirun CMD
        [--steps N] [--configs STAGE:RANKS,...] [--raise-check] [--dropout-check]

1. `python3 -m zeroc.importer` imports the model of torch_models.py (seed 0)
   and exports its weights;
2. PyTorch trains the same model from the same seed (its weights must equal
   the exported ones) with AdamW (decay on rank >= 2) and gradient clipping
   on byte-level tinyshakespeare, batches drawn with the executable's
   sampling formula (zeroc.data.sample_batch);
3. zeroc compiles the imported IR for ZeRO stage 0 on 1 rank and stage 2 on
   2 ranks; each executable trains from the exported weights (--init) under
   mpirun (or the --configs given: the ATen models' tests train 10 steps at
   stage 0 on 1 rank and stage 3 on 2). Every step's loss must be within
   1e-4 (relative) of PyTorch's,
   and the weights the executable saves (with the module's buffers) load
   into the PyTorch model with strict load_state_dict and are within 1e-4 of
   PyTorch's trained weights.

With --dropout-check (a model with dropout p > 0, whose masks are zeroc's
own Philox stream, not PyTorch's), every configuration trains with and
without the raising passes (--raise=false) instead, and all the runs' losses
must agree within 1e-5 (relative): the raised program (train.attention with
its dropout) with the generic one (train.dropout of the probabilities), and
each world size with the others (the masks are those of the global batch).
"""
import argparse
import json
import os
import re
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch_models  # noqa: E402
from zeroc import data, weights  # noqa: E402

BATCH, BLOCK, STEPS = 4, 16, 6
LR, BETAS, EPS, WD, CLIP = 1e-3, (0.9, 0.95), 1e-8, 0.1, 1.0
MODELS = {
    "gpt-tanh": ("GPT", {"gelu": "tanh"}),
    "gpt-erf": ("GPT", {"gelu": "erf"}),
    # Layers on [B*T, C] rows: reshapes that merge the batch dimension, which
    # the data-parallel passes must split correctly.
    "mlp": ("MLPLM", {"flatten": True}),
    # Llama-class models of llama_models.py, with attention scores of order 1
    # (qk_std) so that the rotary embeddings matter to the loss: llama2.c's
    # interleaved style, Meta's complex one, Hugging Face's rotate-half; and
    # minGPT (separate q/k/v, a sliced position parameter, dropout 0).
    "llama-interleaved": ("llama_models:MetaLlama", {"qk_std": 0.4}),
    "llama-complex": ("llama_models:MetaLlama", {"qk_std": 0.4, "complex_rope": True}),
    "llama-rotate-half": ("llama_models:HFLlama", {"qk_std": 0.4}),
    "mingpt": ("llama_models:MinGPT", {}),
    # Everyday styles of aten_models.py (issue 31).
    "torch-transformer": ("aten_models:TorchTransformer", {}),
    "einsum-gqa": ("aten_models:EinsumGQA", {}),
    "mingpt-newgelu": ("aten_models:MinGPTNewGELU", {}),
    "nll-smoothing": ("aten_models:NLLSmoothing", {}),
    "padding-idx": ("aten_models:PaddingIdx", {}),
    "alias-add": ("aten_models:AliasAdd", {}),
    "permute-qkv": ("aten_models:PermuteQKV", {}),
    "masked-fill-inplace": ("aten_models:MaskedFillInplace", {}),
    "mul-view-inplace": ("aten_models:MulViewInplace", {}),
    "inplace-activation": ("aten_models:InplaceActivation", {}),
    "computed-ids": ("aten_models:ComputedIds", {}),
    # Piecewise activations, norms, pads, id masks, a frozen table.
    "everyday": ("everyday_models:Everyday", {}),
    "ids-as-numbers": ("everyday_models:IdsAsNumbers", {}),
    "scalar-params": ("everyday_models:ScalarParams", {}),
    "ignore-index-smoothing": ("ignore_index_models:IgnoreIndexSmoothing", {}),
    # Dropout of the attention probabilities (raised into train.attention).
    "attention-dropout": ("aten_models:AttentionDropout", {"p": 0.1}),
    "attention-dropout-0": ("aten_models:AttentionDropout", {"p": 0.0}),
}


def mpirun(args):
    """The mpirun command, with this test's own TMPDIR: Open MPI's session
    folder under a shared one can collide with a concurrent test's."""
    return ["env", f"TMPDIR={args.work}", *args.mpirun.split()]


def module_file(name):
    """(source file, class name) of a MODELS entry."""
    if ":" in name:
        stem, cls = name.split(":")
        return os.path.join(HERE, f"{stem}.py"), cls
    return os.path.join(HERE, "torch_models.py"), name


def construct(name, kwargs):
    torch.manual_seed(0)
    if ":" in name:
        stem, cls = name.split(":")
        module = __import__(stem)
        return getattr(module, cls)(**kwargs)
    return getattr(torch_models, name)(**kwargs)


FAST_OPS = ("train.attention", "train.layernorm", "train.rmsnorm", "train.gelu",
            "train.silu", "train.rope", "train.cross_entropy")


def count_ops(text):
    return {op: len(re.findall(re.escape(op) + r"\b", text)) for op in FAST_OPS}


def report_raised(args, mlir, stage):
    """Prints the fast ops of the compiled step of which the imported IR had
    none (what train-raise made): `raised: train.attention, ...`."""
    before = count_ops(open(mlir).read())
    step = subprocess.run([args.zeroc, mlir, f"--zero-stage={stage}", "--emit=mlir"],
                          check=True, capture_output=True, text=True).stdout
    after = count_ops(step)
    # (A fast op the importer wrote already is not listed.)
    raised = [op for op in FAST_OPS if after[op] and not before[op]]
    print(f"{args.model}: raised: {', '.join(raised) if raised else 'nothing'}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=MODELS, required=True)
    parser.add_argument("--zeroc", required=True)
    parser.add_argument("--src", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--frontend", choices=("aten",),
                        help="ignored (the ATen front end is the only one); accepted for one "
                             "release, as the importer's own --frontend is")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--raise-check", action="store_true",
                        help="also train the first configuration with --raise=false, "
                             "print which fast ops train-raise made and check that both "
                             "forms give the same losses (1e-5 relative)")
    parser.add_argument("--raise-check-all", action="store_true",
                        help="with --raise-check, train every configuration with "
                             "--raise=false too (the generic ops on several ranks), "
                             "each compared with PyTorch")
    parser.add_argument("--dropout-check", action="store_true",
                        help="the model drops out: train every configuration with and "
                             "without --raise=false and check that all the losses agree "
                             "(1e-5 relative) instead of comparing with PyTorch")
    parser.add_argument("--configs", default="0:1,2:2",
                        help="ZeRO stage:world size pairs to train (default 0:1,2:2)")
    args = parser.parse_args()
    steps = args.steps
    configs = [tuple(int(v) for v in item.split(":")) for item in args.configs.split(",")]
    torch.set_num_threads(1)
    name, kwargs = MODELS[args.model]

    mlir = os.path.join(args.work, "model.mlir")
    init = os.path.join(args.work, "init.safetensors")
    path, cls = module_file(name)
    command = [sys.executable, "-m", "zeroc.importer", f"{path}:{cls}",
               "--batch-size", str(BATCH), "--block-size", str(BLOCK), "--vocab-size", "256",
               "--lr", str(LR), "--beta1", str(BETAS[0]), "--beta2", str(BETAS[1]),
               "--eps", str(EPS), "--weight-decay", str(WD), "--grad-clip", str(CLIP),
               "-o", mlir, "--weights", init]
    command += [f"--arg={k}={v!r}" for k, v in kwargs.items()]
    subprocess.run(command, check=True)

    model = construct(name, kwargs)
    exported = weights.load_state_dict(init)
    state = model.state_dict()
    for key, tensor in exported.items():
        assert torch.equal(tensor, state[key]), f"exported {key} differs from the module's"
    missing = set(state) - set(exported)
    print(f"exported {len(exported)} tensors; not exported (tied weights and buffers): {sorted(missing)}")
    text_path = os.path.join(args.src, "data", "tinyshakespeare.txt")
    tokens = data.read_tokens(text_path, "text")
    reference = torch_models.adamw_losses(model, tokens, steps, BATCH, BLOCK, lr=LR,
                                          betas=BETAS, eps=EPS, weight_decay=WD, clip=CLIP)

    failures = []
    run_losses = []
    runs = [(stage, ranks, []) for stage, ranks in configs]
    if args.dropout_check:
        runs = [(stage, ranks, flags) for stage, ranks in configs
                for flags in ([], ["--raise=false"])]
        report_raised(args, mlir, configs[0][0])
    elif args.raise_check:
        # The same model with the raising passes off: the generic ops alone
        # (on the first configuration, or on each with --raise-check-all).
        for stage, ranks in (configs if args.raise_check_all else configs[:1]):
            runs.append((stage, ranks, ["--raise=false"]))
        report_raised(args, mlir, configs[0][0])
    for stage, ranks, flags in runs:
        tag = f"{args.model}, stage {stage}, {ranks} rank(s)" + \
            ("".join(f", {f}" for f in flags))
        exe = os.path.join(args.work, f"{args.model}-s{stage}-n{ranks}" +
                           ("-noraise" if flags else ""))
        subprocess.run([args.zeroc, mlir, f"--zero-stage={stage}", f"--world-size={ranks}",
                        *flags, "-o", exe], check=True)
        log, save = exe + ".jsonl", exe + ".saved"
        subprocess.run(mpirun(args) + ["-np", str(ranks), exe, "--data", text_path,
                                              "--data-format=text", "--init", init,
                                              "--steps", str(steps), "--log-json", log,
                                              "--save", save, "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)
        losses = [json.loads(line)["loss"] for line in open(log) if '"loss"' in line]
        run_losses.append(losses)
        if args.dropout_check:
            print(f"{tag}: losses " + " ".join(f"{x:.6f}" for x in losses))
            gap = max(abs(a - b) / abs(b) for a, b in zip(losses, run_losses[0]))
            print(f"{tag}: differs from the first run by at most {gap:.2e} (relative)")
            if len(losses) != steps or gap > 1e-5:
                failures.append(f"{tag}: losses differ from the first run's by {gap:.2e}")
            continue
        worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
        print(f"{tag}: worst relative loss difference {worst:.2e}")
        for s, (a, b) in enumerate(zip(losses, reference)):
            print(f"  step {s}: zeroc {a:.6f}  pytorch {b:.6f}")
        if len(losses) != steps or worst > 1e-4:
            failures.append(f"{tag}: losses differ by {worst:.2e}")
        exported = exe + ".safetensors"
        subprocess.run([sys.executable, "-m", "zeroc", "checkpoint", "export", save,
                        "-o", exported], check=True, stdout=subprocess.DEVNULL)
        saved = weights.load_state_dict(exported)
        check = construct(name, kwargs)
        # The executable saves parameters (and the tied lm_head.weight); the
        # module's buffers (nanoGPT's causal mask) and frozen parameters
        # (requires_grad=False) are constants of the IR.
        buffers = dict(check.named_buffers())  # persistent ones are in the state dict
        buffers.update((k, p) for k, p in check.named_parameters() if not p.requires_grad)
        check.load_state_dict({**{k: v for k, v in check.state_dict().items() if k in buffers},
                               **saved}, strict=True)
        drift = max((check.state_dict()[k] - v.detach()).abs().max().item()
                    for k, v in model.state_dict().items())
        print(f"  saved weights: {len(saved)} tensors, max |zeroc - pytorch| {drift:.2e}")
        if drift > 1e-4:
            failures.append(f"{tag}: weights differ by {drift:.2e}")
    if args.raise_check:
        # The raised and the generic forms of the first configuration
        # compute the same losses (to float rounding), step by step.
        raised = run_losses[0]
        generic = run_losses[len(configs)]
        gap = max(abs(a - b) / abs(b) for a, b in zip(raised, generic))
        print(f"{args.model}: raised and --raise=false losses differ by at most {gap:.2e} "
              f"(relative)")
        if len(raised) != len(generic) or gap > 1e-5:
            failures.append(f"{args.model}: raised and --raise=false losses differ by {gap:.2e}")
    if args.dropout_check:
        # The dropout matters: PyTorch's losses without it are not these.
        gap = max(abs(a - b) / abs(b) for a, b in zip(run_losses[0], reference))
        print(f"{args.model}: the losses differ from PyTorch's (other masks) by {gap:.2e}")
        if gap < 1e-4:
            failures.append(f"{args.model}: dropout changed nothing")
        if failures:
            print("\n".join(failures))
            sys.exit(1)
        print(f"{args.model}: the raised and generic programs agree on every configuration")
        return
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"{args.model}: the imported model matches PyTorch")


if __name__ == "__main__":
    main()
