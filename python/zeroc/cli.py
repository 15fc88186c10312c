"""Command-line pieces shared by zeroc's Python tools.

The optimizer flags of ``python3 -m zeroc.models.gpt2`` and ``python3 -m
zeroc.importer``: one flag per `zeroc.ir.OptimizerConfig` field, with its
defaults.

    add_optimizer_arguments(parser)
    args = parser.parse_args()
    check_schedule_arguments(parser, args)
    optimizer = optimizer_from_args(args)  # ValueError: parser.error(str(error))

Standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses

from zeroc.ir import OptimizerConfig

OPTIMIZERS = ("adamw", "sgd")
SCHEDULES = ("constant", "cosine")


def add_optimizer_arguments(
        parser: argparse.ArgumentParser, *, title: str = "optimizer",
        weight_decay_help: str = "weight decay of parameters of rank >= 2",
) -> argparse._ArgumentGroup:
    """Adds the optimizer flags to `parser`, in a group named `title`, each
    stored under its `OptimizerConfig` field name; returns the group."""
    opt = parser.add_argument_group(title)
    defaults = OptimizerConfig()

    def number(flag: str, help_text: str, type_: type = float) -> None:
        field = flag[2:].replace("-", "_")
        opt.add_argument(flag, dest=field, type=type_, default=getattr(defaults, field),
                         metavar="X" if type_ is float else "STEPS",
                         help=f"{help_text} (default: %(default)r)")

    opt.add_argument("--optimizer", dest="kind", choices=OPTIMIZERS, default=defaults.kind,
                     help="default: %(default)s")
    number("--lr", "peak learning rate")
    number("--beta1", "AdamW beta1")
    number("--beta2", "AdamW beta2")
    number("--eps", "AdamW epsilon")
    number("--momentum", "SGD momentum")
    number("--weight-decay", weight_decay_help)
    number("--grad-clip", "global gradient-norm clipping, 0 = off")
    opt.add_argument("--lr-schedule", dest="schedule", choices=SCHEDULES,
                     default=defaults.schedule, help="default: %(default)s")
    number("--warmup", "cosine: linear warmup steps", int)
    number("--min-lr", "cosine: learning rate reached at --max-steps")
    opt.add_argument("--max-steps", type=int, metavar="STEPS",
                     help="cosine: length of the schedule in steps (required with cosine)")
    return opt


def check_schedule_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exits through ``parser.error`` when the schedule flags do not go
    together (cosine without --max-steps, cosine's flags without cosine)."""
    if args.schedule == "cosine" and args.max_steps is None:
        parser.error("--lr-schedule cosine requires --max-steps")
    if args.schedule == "constant" and (args.warmup or args.min_lr or args.max_steps is not None):
        parser.error("--warmup, --min-lr and --max-steps need --lr-schedule cosine")


def optimizer_from_args(args: argparse.Namespace) -> OptimizerConfig:
    """The `OptimizerConfig` of parsed optimizer flags; ValueError (its
    message names the field) when the values are out of range."""
    return OptimizerConfig(**{field.name: getattr(args, field.name)
                              for field in dataclasses.fields(OptimizerConfig)})
