"""``python3 -m zeroc.importer``: a PyTorch module file to `train` IR and weights.

    /usr/bin/python3 -m zeroc.importer model.py:GPT --batch-size 8 --block-size 64 \\
        --lr 1e-3 --grad-clip 1.0 -o gpt.mlir --weights gpt.safetensors

Exit status 0 on success, 1 when the model cannot be imported (the message
names the ATen op, the module path and the source line), 2 for bad
arguments.
"""

from __future__ import annotations

import argparse
import ast
import sys

from zeroc import cli

PROG = "python3 -m zeroc.importer"

DECAY_RULES = ("rank2", "all", "none")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, allow_abbrev=False,
        description="Trace a PyTorch nn.Module's training forward to a functionalized ATen "
                    "graph and write it, op by op, as `train` dialect IR, with its weights "
                    "as safetensors (for the executable's --init). The compiler's "
                    "train-raise pass turns the attention, norms, activations and "
                    "cross-entropy written out with generic ops into its fast ops. See "
                    "docs/importer.md.")
    parser.add_argument("model", metavar="FILE.py:NAME",
                        help="the module: a class (or a function returning an nn.Module, or "
                             "an nn.Module instance) in a Python file; forward(tokens, "
                             "targets) must return the loss")
    parser.add_argument("-o", "--output", required=True, metavar="MODEL.mlir",
                        help="the IR to write")
    parser.add_argument("--weights", metavar="W.safetensors",
                        help="write the module's parameters here (canonical state-dict "
                             "names, tied weights once); without it the executable starts "
                             "from its --seed initialization")

    model = parser.add_argument_group("model")
    model.add_argument("--batch-size", type=int, required=True, metavar="B",
                       help="global number of sequences per step, a default: zeroc's "
                       "--micro-batch-size or --global-batch-size sets another")
    model.add_argument("--block-size", type=int, required=True, metavar="T",
                       help="tokens per sequence")
    model.add_argument("--vocab-size", type=int, metavar="V",
                       help="check that the model's vocabulary (the logits' last dimension) "
                            "is V (256 for byte-level text)")
    model.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE",
                       help="keyword argument for NAME(...), VALUE a Python literal "
                            "(repeatable; a VALUE that is not a literal is a string)")
    model.add_argument("--seed", type=int, default=0,
                       help="torch.manual_seed before constructing the module (default: 0)")
    model.add_argument("--state-dict", metavar="FILE",
                       help="load these weights into the module first (.safetensors, or a "
                            "torch.save'd state dict)")
    model.add_argument("--ids-dtype", choices=("i32", "i64"), default="i32",
                       help="element type of the token-id arguments (default: i32)")
    model.add_argument("--model-name", metavar="NAME",
                       help="the module's train.model attribute (default: the class name, "
                            "lower case)")
    model.add_argument("--frontend", choices=("aten",), default="aten",
                       help="deprecated, accepted for one release: the functionalized ATen "
                            "graph (aten) is the only front end; the torch.fx one (fx) was "
                            "removed")
    model.add_argument("--decay", choices=DECAY_RULES, default="rank2",
                       help="parameters with weight decay: rank2 (two or more dimensions, "
                            "the default), all or none")

    cli.add_optimizer_arguments(parser, title="optimizer (defaults: the GPT-2 builder's)",
                                weight_decay_help="weight decay (of the parameters --decay "
                                                  "selects)")
    return parser


def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    cli.check_schedule_arguments(parser, args)
    for flag, value in (("--batch-size", args.batch_size), ("--block-size", args.block_size),
                        ("--vocab-size", args.vocab_size)):
        if value is not None and value <= 0:
            parser.error(f"{flag} must be positive, got {value}")
    kwargs = {}
    for item in args.arg:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            parser.error(f"--arg {item!r} is not KEY=VALUE")
        kwargs[key] = _literal(value)
    try:
        optimizer = cli.optimizer_from_args(args)
    except ValueError as error:
        parser.error(str(error))

    import torch  # noqa: F401 - after argument errors, which should be quick
    from zeroc import importer, weights

    decay = {"rank2": importer.default_decay, "all": lambda name, t: True,
             "none": lambda name, t: False}[args.decay]
    try:
        module = importer.load_module(args.model, kwargs, seed=args.seed)
        if args.state_dict:
            if args.state_dict.endswith(".safetensors"):
                state = weights.load_state_dict(args.state_dict)
            else:
                state = torch.load(args.state_dict, map_location="cpu")
            importer.load_weights(module, state, what=f"--state-dict {args.state_dict}")
        imported = importer.import_module(
            module, batch_size=args.batch_size, block_size=args.block_size,
            optimizer=optimizer, ids_dtype=args.ids_dtype, vocab_size=args.vocab_size,
            model_name=args.model_name, decay=decay, source=args.model,
            frontend=args.frontend)
    except importer.ImporterError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1

    try:
        imported.write(args.output, args.weights)
    except OSError as error:
        print(f"{PROG}: error: cannot write {error.filename or args.output}: "
              f"{error.strerror or error}", file=sys.stderr)
        return 1
    for name in imported.unused:
        print(f"{PROG}: warning: parameter {name} is not used by forward; it is left out",
              file=sys.stderr)
    for name in imported.frozen:
        print(f"{PROG}: note: parameter {name} has requires_grad=False: a constant of the "
              "IR, neither trained nor exported", file=sys.stderr)
    tied = "".join(f"; {a} tied to {c}" for a, c in imported.tied.items())
    written = args.output + (f" and {args.weights}" if args.weights else "")
    print(f"{PROG}: wrote {written}: {len(imported.params)} parameters "
          f"({imported.num_parameters:,} values), vocabulary {imported.vocab_size}{tied}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
