"""Compile a model and train it in one command: ``python3 -m zeroc train``.

    python3 -m zeroc train examples/gpt2-tiny.mlir --zero-stage 3 --world-size 4 \\
        --data data/tinyshakespeare.txt --data-format=text --steps 100
    python3 -m zeroc sample examples/gpt2-tiny.mlir CK --prompt "ROMEO:"

1. finds the ``zeroc`` compiler (``--zeroc``, ``$ZEROC``, the build tree next
   to this package, then ``PATH``);
2. compiles the model for the ZeRO stage, world size, target and precision
   into a cache directory, keyed by a hash of the model text, those options
   and the compiler and runtime library themselves, so a second run starts
   at once (``--rebuild`` forces a compile);
3. runs the executable under ``mpirun -np N``, adding what a single machine
   needs: ``--allow-run-as-root`` as root, ``--oversubscribe`` (and one
   OpenMP thread per rank) when there are more ranks than cores, otherwise
   ``OMP_NUM_THREADS`` = cores / ranks unless it is set; ``--bind-to none``
   so that each rank's threads may use several cores.

The executable's own options (``--data``, ``--steps``, ``--init``, ...) are
checked and passed on; any other option the launcher does not know
(``--sample``, ``--prompt``, ``--trace``, a newer runtime's) is passed on as
it is, with its value, and so is anything after ``--``. Open MPI's
multi-line abort banners are left out of the output. The exit status is
the executable's. Standard library only; see docs/launcher.md.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import IO, Sequence

from zeroc import files

PROG = "python3 -m zeroc train"

TARGETS = ("cpu", "cuda")
PRECISIONS = ("fp32", "bf16")
REMAT = ("none", "full", "selective")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_REPO_BUILD = os.path.join(os.path.dirname(os.path.dirname(_PACKAGE_DIR)), "build")


class LaunchError(Exception):
    """A problem the launcher reports as ``error: ...`` with exit status 1."""


def find_zeroc(explicit: str | None = None) -> str:
    """The zeroc compiler: `explicit`, ``$ZEROC``, ``build/bin/zeroc`` of the
    source tree this package sits in, or ``zeroc`` on PATH."""
    for source, path in (("--zeroc", explicit), ("$ZEROC", os.environ.get("ZEROC"))):
        if path:
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise LaunchError(f"{source} {path}: not an executable file")
            return os.path.abspath(path)
    candidate = os.path.join(_REPO_BUILD, "bin", "zeroc")
    if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which("zeroc")
    if found:
        return os.path.abspath(found)
    raise LaunchError(
        "cannot find the zeroc compiler: build it (cmake --build --preset default --target "
        f"zeroc, which writes {candidate}), or pass --zeroc PATH or set ZEROC")


def find_mpirun(explicit: str | None = None) -> str | None:
    """mpirun: `explicit`, ``$MPIRUN``, then ``mpirun``/``mpiexec`` on PATH."""
    for source, path in (("--mpirun", explicit), ("$MPIRUN", os.environ.get("MPIRUN"))):
        if path:
            resolved = shutil.which(path)
            if resolved is None:
                raise LaunchError(f"{source} {path}: not found or not executable")
            return resolved
    return shutil.which("mpirun") or shutil.which("mpiexec")


_OPEN_MPI: dict[str, bool] = {}


def is_open_mpi(mpirun: str) -> bool:
    """Whether `mpirun` is Open MPI's (whose options the launcher adds)."""
    if mpirun not in _OPEN_MPI:
        try:
            result = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                                    timeout=30)
            _OPEN_MPI[mpirun] = "Open MPI" in result.stdout + result.stderr or \
                "OpenRTE" in result.stdout + result.stderr
        except (OSError, subprocess.SubprocessError):
            _OPEN_MPI[mpirun] = False
    return _OPEN_MPI[mpirun]


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def cache_directory(explicit: str | None = None) -> str:
    """Where compiled executables go: `explicit`, ``$ZEROC_CACHE_DIR``,
    ``$XDG_CACHE_HOME/zeroc`` or ``~/.cache/zeroc``."""
    if explicit:
        return os.path.abspath(explicit)
    if os.environ.get("ZEROC_CACHE_DIR"):
        return os.path.abspath(os.environ["ZEROC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "zeroc")


def _file_hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class CompileOptions:
    """What the executable is compiled for."""

    stage: int = 0
    ranks: int = 1
    target: str = "cpu"
    precision: str | None = None
    bucket_bytes: int | None = None
    remat: str | None = None
    grad_accum: int | None = None

    def zeroc_flags(self) -> list[str]:
        flags = [f"--zero-stage={self.stage}", f"--world-size={self.ranks}",
                 f"--target={self.target}"]
        if self.precision:
            flags.append(f"--precision={self.precision}")
        if self.bucket_bytes is not None:
            flags.append(f"--bucket-bytes={self.bucket_bytes}")
        if self.remat and self.remat != "none":
            flags.append(f"--remat={self.remat}")
        if self.grad_accum is not None:
            flags.append(f"--grad-accum={self.grad_accum}")
        return flags


def runtime_library(zeroc: str) -> str | None:
    """The CPU runtime archive next to a build tree's zeroc, if any."""
    path = os.path.join(os.path.dirname(os.path.dirname(zeroc)), "lib", "libzeroc_rt_cpu.a")
    return path if os.path.isfile(path) else None


def cache_key(model: str, options: CompileOptions, zeroc: str) -> str:
    """A hash of everything the executable depends on: the model's bytes,
    the options, the compiler and its runtime library."""
    parts = {"model": _file_hash(model), "flags": options.zeroc_flags(),
             "zeroc": _file_hash(zeroc)}
    library = runtime_library(zeroc)
    if library:
        parts["runtime"] = _file_hash(library)
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def cached_executable(model: str, options: CompileOptions, zeroc: str, cache_dir: str) -> str:
    """The executable's path in the cache (it may not exist yet)."""
    stem = "".join(c if c.isalnum() or c in "-_" else "_"
                   for c in os.path.splitext(os.path.basename(model))[0]) or "model"
    key = cache_key(model, options, zeroc)[:20]
    return os.path.join(cache_dir, f"{stem}-s{options.stage}-n{options.ranks}-"
                                   f"{options.target}-{key}")


def compile_model(model: str, options: CompileOptions, zeroc: str, output: str,
                  *, verbose: bool = True, lock: bool = True) -> None:
    """Runs zeroc to write `output`, atomically (a temporary file renamed).
    With `lock` (the cache), an ``output.lock`` file serializes concurrent
    launches, so that they compile once, and ``output.json`` records what
    was compiled."""
    directory = os.path.dirname(os.path.abspath(output))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise LaunchError(f"cannot create {directory}: {error.strerror}") from None
    if not lock:
        _run_zeroc(model, options, zeroc, output, verbose)
        return
    try:
        lock_file = open(output + ".lock", "w")
    except OSError as error:
        raise LaunchError(f"cannot write to the cache {directory}: {error.strerror}") from None
    with lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if os.path.isfile(output):
            return
        _run_zeroc(model, options, zeroc, output, verbose)
        meta = {"model": os.path.abspath(model), "zeroc": zeroc,
                "flags": options.zeroc_flags()}
        with open(output + ".json", "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")


def _run_zeroc(model: str, options: CompileOptions, zeroc: str, output: str,
               verbose: bool) -> None:
    if files.is_special(output):
        # A device or a FIFO (-o /dev/null): zeroc writes it in place; it is
        # never renamed over or removed.
        command = [zeroc, model, *options.zeroc_flags(), "-o", output]
        if verbose:
            print(f"zeroc: compiling {model}: {shlex.join(command)}", file=sys.stderr)
        try:
            result = subprocess.run(command)
        except OSError as error:
            raise LaunchError(f"cannot run {zeroc}: {error.strerror}") from None
        if result.returncode != 0:
            raise LaunchError(f"compiling {model} failed (zeroc exited with status "
                              f"{result.returncode})")
        return
    target = files.resolve(output)
    temp = f"{target}.tmp{os.getpid()}"
    command = [zeroc, model, *options.zeroc_flags(), "-o", temp]
    if verbose:
        print(f"zeroc: compiling {model}: {shlex.join(command)}", file=sys.stderr)
    try:
        result = subprocess.run(command)
    except OSError as error:
        raise LaunchError(f"cannot run {zeroc}: {error.strerror}") from None
    if result.returncode != 0 or not os.path.isfile(temp):
        if os.path.exists(temp):
            os.unlink(temp)
        raise LaunchError(f"compiling {model} failed (zeroc exited with status "
                          f"{result.returncode})")
    os.replace(temp, target)


@dataclass
class RunPlan:
    """The command that runs the executable, and its environment changes."""

    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def plan_run(executable: str, ranks: int, exe_args: Sequence[str], *,
             mpirun: str | None, extra_mpirun_args: Sequence[str] = (),
             cores: int | None = None, is_root: bool | None = None,
             open_mpi: bool | None = None, environ: dict | None = None) -> RunPlan:
    """How to start `ranks` ranks of `executable` on this machine."""
    cores = cores if cores is not None else available_cores()
    is_root = is_root if is_root is not None else os.geteuid() == 0
    environ = environ if environ is not None else dict(os.environ)
    plan = RunPlan([])
    oversubscribed = ranks > cores
    if oversubscribed:
        plan.env["OMP_NUM_THREADS"] = "1"
        plan.notes.append(f"{ranks} ranks on {cores} cores: oversubscribed, "
                          "OMP_NUM_THREADS=1")
    elif not environ.get("OMP_NUM_THREADS"):
        plan.env["OMP_NUM_THREADS"] = str(max(1, cores // ranks))
    if mpirun is None:
        if ranks != 1:
            raise LaunchError(f"{ranks} ranks need mpirun, and there is none on PATH "
                              "(install Open MPI, or pass --mpirun PATH)")
        plan.command = [executable, *exe_args]
        return plan
    open_mpi = open_mpi if open_mpi is not None else is_open_mpi(mpirun)
    command = [mpirun, "-np", str(ranks)]
    if open_mpi:
        if is_root:
            command.append("--allow-run-as-root")
        if oversubscribed:
            command.append("--oversubscribe")
        command += ["--bind-to", "none", "-x", "OMP_NUM_THREADS"]
    command += list(extra_mpirun_args)
    plan.command = command + [executable, *exe_args]
    return plan


# The executable's options (lib/Runtime/Common/Args.cpp), passed on as given.
_EXE_VALUE_FLAGS = [
    ("--data", "PATH", "training tokens (required): uint16 .bin, or text with "
                       "--data-format=text", "path"),
    ("--data-format", "FMT", "bin (default) or text (bytes, vocabulary 256)", None),
    ("--steps", "K", "train until the step counter reaches K (executable default: 10)", "int"),
    ("--seed", "S", "initialization seed (executable default: 1337)", "int"),
    ("--init", "W.safetensors", "start from these weights (a safetensors file, or a "
                                "checkpoint directory's)", "exists"),
    ("--save", "DIR", "write a checkpoint here at the end (and on SIGTERM/SIGUSR1)", None),
    ("--save-every", "K", "also every K steps (with --save)", "int"),
    ("--keep-last", "M", "keep only the M newest checkpoints (with --save)", "int"),
    ("--resume", "DIR", "continue from a checkpoint written by --save, on any number "
                        "of ranks and stage", "dir"),
    ("--log-json", "PATH", "JSON Lines log (rank 0)", None),
    ("--eval-every", "K", "validation loss every K steps (with --val-data)", "int"),
    ("--val-data", "PATH", "validation tokens (with --eval-every)", "path"),
]


# The launcher's old option names, kept one release: old -> new.
DEPRECATED = {"--stage": "--zero-stage", "--ranks": "--world-size"}


def _parser(command: str) -> argparse.ArgumentParser:
    train = command in ("train", "sample")
    descriptions = {
        "train": "Compile a train-dialect model with zeroc (cached) and run it under "
                 "mpirun. Options it does not know go to the executable with their "
                 "values. See docs/launcher.md.",
        "sample": "Compile a train-dialect model with zeroc (cached) and generate text "
                  "from the weights of CK (a checkpoint directory of --save, or a "
                  "safetensors file): the executable's --init CK --sample N, no data. "
                  "Options it does not know go to the executable. See docs/launcher.md.",
        "compile": "Compile a train-dialect model with zeroc into the launcher's cache "
                   "(or -o) and print the executable's path.",
    }
    parser = argparse.ArgumentParser(
        prog=f"python3 -m zeroc {command}", allow_abbrev=False,
        description=descriptions[command])
    parser.add_argument("model", metavar="MODEL.mlir", help="the model (train dialect)")
    if command == "sample":
        parser.add_argument("checkpoint", metavar="CK",
                            help="the weights: a checkpoint directory (or step folder) "
                                 "of --save, or a safetensors file")
    build = parser.add_argument_group("compiling")
    build.add_argument("--zero-stage", "--stage", dest="stage", type=int,
                       choices=(0, 1, 2, 3), metavar="S",
                       help="ZeRO stage 0-3 (default: 0, plain data parallelism); "
                            "--stage is its old name, kept one release")
    build.add_argument("--world-size", "--nproc-per-node", "--ranks", dest="ranks",
                       type=int, metavar="N",
                       help="data-parallel ranks started with mpirun -np N (default: 1); "
                            "--nproc-per-node is torchrun's name, --ranks the old one, "
                            "kept one release")
    build.add_argument("--target", choices=TARGETS, default="cpu",
                       help="backend (default: cpu)")
    build.add_argument("--precision", choices=PRECISIONS,
                       help="training precision (default: the model's)")
    build.add_argument("--bucket-bytes", type=int, metavar="B",
                       help="gradient bucket size (default: zeroc's, by the model's size: an "
                            "eighth of its gradient bytes within 1 MiB and 25 MiB)")
    build.add_argument("--remat", choices=REMAT,
                       help="activation rematerialization (default: none): full "
                            "recomputes each transformer block in backward, selective "
                            "all but its GEMM and attention outputs")
    build.add_argument("--grad-accum", type=int, metavar="K",
                       help="gradient accumulation: K micro-batches per step, passed to "
                            "zeroc (default: the model's train.micro_batches, else 1)")
    build.add_argument("--zeroc", metavar="PATH",
                       help="the compiler (default: $ZEROC, build/bin/zeroc next to this "
                            "package, or zeroc on PATH)")
    build.add_argument("--cache-dir", metavar="DIR",
                       help="compiled executables (default: $ZEROC_CACHE_DIR, "
                            "$XDG_CACHE_HOME/zeroc or ~/.cache/zeroc)")
    build.add_argument("--rebuild", action="store_true",
                       help="compile even if the cache has the executable")
    if not train:
        build.add_argument("-o", "--output", metavar="EXE",
                           help="write the executable here instead of the cache")
        return parser
    run = parser.add_argument_group("running")
    run.add_argument("--mpirun", metavar="PATH",
                     help="mpirun to use (default: $MPIRUN, mpirun or mpiexec on PATH)")
    run.add_argument("--mpirun-arg", action="append", default=[], metavar="ARG",
                     help="extra argument for mpirun, before the executable (repeatable: "
                          "--mpirun-arg=--hostfile --mpirun-arg=hosts)")
    run.add_argument("--dry-run", action="store_true",
                     help="print the commands instead of compiling and running")
    exe = parser.add_argument_group("the executable's options (docs/executable.md)")
    if command == "sample":
        exe.add_argument("--sample", metavar="N", dest="exe_sample",
                         help="tokens to generate (default: 200)")
        exe.add_argument("--prompt", metavar="TEXT", dest="exe_prompt",
                         help="the text to continue (byte-level models)")
    else:
        for flag, metavar, help_text, _ in _EXE_VALUE_FLAGS:
            exe.add_argument(flag, metavar=metavar, help=help_text,
                             dest="exe_" + flag[2:].replace("-", "_"))
    exe.add_argument("--quiet", action="store_true",
                     help="no progress lines or summary table (also quiets the launcher)")
    parser.epilog = (
        "Any other option (--sample N, --prompt TEXT, --temperature T, --trace PATH, "
        "--skip-nonfinite K, ...) goes to the executable as given, with the word "
        "after it as its value unless that starts with --; so does everything "
        "after --. See the executable's --help (docs/executable.md).")
    return parser


def split_arguments(parser: argparse.ArgumentParser, argv: Sequence[str]
                    ) -> tuple[list[str], list[str]]:
    """(the launcher's arguments, the executable's): an option the parser
    does not know goes to the executable with its value (``--flag=value``, or
    the next word unless it starts with ``--``: every option of the
    executable but --help and --quiet takes a value), and so does everything
    after ``--``."""
    known = parser._option_string_actions  # noqa: SLF001 (argparse has no public view)
    ours: list[str] = []
    theirs: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            theirs += argv[i + 1:]
            break
        if not arg.startswith("-") or arg == "-":
            ours.append(arg)
            i += 1
            continue
        name = arg.split("=", 1)[0]
        action = known.get(name)
        if action is not None:
            ours.append(arg)
            if "=" not in arg and action.nargs != 0 and i + 1 < len(argv):
                ours.append(argv[i + 1])
                i += 1
            i += 1
            continue
        theirs.append(arg)
        if (arg.startswith("--") and "=" not in arg and i + 1 < len(argv)
                and not argv[i + 1].startswith("--")):
            theirs.append(argv[i + 1])
            i += 1
        i += 1
    return ours, theirs


def _deprecations(argv: Sequence[str], prog: str) -> list[str]:
    """The notes for old option names among `argv` (the launcher's own)."""
    notes = []
    for arg in argv:
        name = arg.split("=", 1)[0]
        if name in DEPRECATED:
            notes.append(f"{prog}: note: {name} is deprecated and will be removed in the "
                         f"next release; use {DEPRECATED[name]}")
    return sorted(set(notes), key=notes.index)


def _passes(passthrough: Sequence[str], flag: str) -> bool:
    """Whether the executable's arguments `passthrough` hold option `flag`."""
    return any(a == flag or a.startswith(flag + "=") for a in passthrough)


def _check_sample_args(parser: argparse.ArgumentParser, args: argparse.Namespace
                       ) -> list[str]:
    """``sample MODEL CK``: the executable's --init CK --sample N [--prompt]."""
    if not os.path.exists(args.checkpoint):
        raise LaunchError(f"checkpoint {args.checkpoint}: no such file or directory")
    count = args.exe_sample if args.exe_sample is not None else "200"
    try:
        if int(count) <= 0:
            raise ValueError
    except ValueError:
        parser.error(f"--sample: '{count}' is not a positive integer")
    for flag in ("--data", "--init", "--resume", "--save"):
        if _passes(args.passthrough, flag):
            parser.error(f"{flag} does not go with sample: it generates from the "
                         "weights of CK, without data")
    out = [f"--init={args.checkpoint}", f"--sample={count}"]
    if args.exe_prompt is not None:
        out.append(f"--prompt={args.exe_prompt}")
    if args.quiet:
        out.append("--quiet")
    return out + list(args.passthrough)


def _check_exe_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    out = []
    sampling = _passes(args.passthrough, "--sample")
    for flag, _, _, kind in _EXE_VALUE_FLAGS:
        value = getattr(args, "exe_" + flag[2:].replace("-", "_"))
        if value is None:
            continue
        if kind == "int":
            try:
                number = int(value)
            except ValueError:
                parser.error(f"{flag}: '{value}' is not an integer")
            if number < 0 or (number == 0 and flag in ("--eval-every", "--save-every",
                                                        "--keep-last")):
                parser.error(f"{flag}: '{value}' is out of range")
        elif kind == "path" and not os.path.isfile(value):
            raise LaunchError(f"{flag} {value}: no such file")
        elif kind == "exists" and not os.path.exists(value):
            raise LaunchError(f"{flag} {value}: no such file or directory")
        elif kind == "dir" and not os.path.isdir(value):
            raise LaunchError(f"{flag} {value}: no such directory")
        out.append(f"{flag}={value}")
    if sampling:
        # Generation from weights: the executable's --sample takes no data.
        for flag in ("data", "save", "eval_every"):
            if getattr(args, "exe_" + flag) is not None:
                parser.error(f"--sample takes no --{flag.replace('_', '-')} (it generates "
                             "text from --init or --resume weights, without data)")
    elif args.exe_data is None and not any(a in ("--help", "-h") or a.startswith("--data")
                                           for a in args.passthrough):
        parser.error("--data PATH is required (a uint16 token file, or text with "
                     "--data-format=text), unless --sample N generates from --init "
                     "or --resume weights")
    if args.exe_data_format not in (None, "bin", "text"):
        parser.error(f"--data-format: '{args.exe_data_format}' is not 'bin' or 'text'")
    if (args.exe_eval_every is None) != (args.exe_val_data is None):
        parser.error("--eval-every and --val-data go together")
    if args.exe_init is not None and args.exe_resume is not None:
        parser.error("--init and --resume cannot be combined")
    for flag in ("save_every", "keep_last"):
        if getattr(args, "exe_" + flag) is not None and args.exe_save is None:
            parser.error(f"--{flag.replace('_', '-')} needs --save DIR")
    if args.quiet:
        out.append("--quiet")
    return out + list(args.passthrough)


def main(argv: Sequence[str] | None = None, command: str = "train") -> int:
    """``python3 -m zeroc train|sample|compile``; returns the exit status."""
    parser = _parser(command)
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if command in ("train", "sample"):
        argv, passthrough = split_arguments(parser, argv)
    args = parser.parse_args(argv)
    args.passthrough = passthrough
    for note in _deprecations(argv, parser.prog):
        print(note, file=sys.stderr)
    for names, what in ((("--zero-stage", "--stage"), "the ZeRO stage"),
                        (("--world-size", "--nproc-per-node", "--ranks"), "the world size")):
        given = {}
        for i, arg in enumerate(argv):
            name, eq, value = arg.partition("=")
            if name in names:
                given.setdefault(name, value if eq else
                                 (argv[i + 1] if i + 1 < len(argv) else ""))
        if len(set(given.values())) > 1:
            parser.error(f"{' and '.join(f'{k} {v}' for k, v in given.items())} "
                         f"give two values of {what}")
    if args.stage is None:
        args.stage = 0
    if args.ranks is None:
        args.ranks = 1
    if args.ranks < 1:
        parser.error(f"--world-size must be positive, got {args.ranks}")
    if args.bucket_bytes is not None and args.bucket_bytes <= 0:
        parser.error(f"--bucket-bytes must be positive, got {args.bucket_bytes}")
    running = command in ("train", "sample")
    quiet = running and args.quiet
    try:
        if not os.path.isfile(args.model):
            raise LaunchError(f"model file {args.model}: " + (
                "no such file" if not os.path.exists(args.model) else "not a regular file"))
        exe_args = (_check_exe_args(parser, args) if command == "train" else
                    _check_sample_args(parser, args) if command == "sample" else [])
        zeroc = find_zeroc(args.zeroc)
        options = CompileOptions(args.stage, args.ranks, args.target, args.precision,
                                 args.bucket_bytes, args.remat, args.grad_accum)
        if command == "compile" and args.output:
            executable = os.path.abspath(args.output)
            compile_model(args.model, options, zeroc, executable, lock=False)
            print(executable)
            return 0
        else:
            executable = cached_executable(args.model, options, zeroc,
                                           cache_directory(args.cache_dir))
            if args.rebuild and os.path.exists(executable):
                os.unlink(executable)
        dry = running and args.dry_run
        cached = os.path.isfile(executable)
        if dry:
            state = "cached" if cached else "would compile"
            print(f"# {state}: {shlex.join([zeroc, args.model, *options.zeroc_flags(), '-o', executable])}")
        elif cached:
            if not quiet:
                print(f"zeroc: using the cached {executable}", file=sys.stderr)
        else:
            compile_model(args.model, options, zeroc, executable, verbose=not quiet)
        if command == "compile":
            print(executable)
            return 0
        plan = plan_run(executable, args.ranks, exe_args, mpirun=find_mpirun(args.mpirun),
                        extra_mpirun_args=args.mpirun_arg)
    except LaunchError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 1
    environment = " ".join(f"{k}={v}" for k, v in plan.env.items())
    line = (environment + " " if environment else "") + shlex.join(plan.command)
    if dry:
        for note in plan.notes:
            print(f"# {note}")
        print(line)
        return 0
    if not quiet:
        for note in plan.notes:
            print(f"zeroc: {note}", file=sys.stderr)
        print(f"zeroc: running {line}", file=sys.stderr)
    save = getattr(args, "exe_save", None)
    saved_before = saved_step(save) if save else None
    sys.stderr.flush()
    try:
        process = subprocess.Popen(plan.command, env={**os.environ, **plan.env},
                                   stderr=subprocess.PIPE)
    except OSError as error:
        print(f"{parser.prog}: error: cannot run {plan.command[0]}: "
              f"{error.strerror or errno.errorcode.get(error.errno, error)}", file=sys.stderr)
        return 1
    copier = threading.Thread(target=filter_mpi_banners,
                              args=(process.stderr, _ByteSink(sys.stderr)), daemon=True)
    copier.start()
    interrupted = False
    while True:
        try:
            returncode = process.wait()
            break
        except KeyboardInterrupt:
            # The interrupt reached mpirun too (same process group): it
            # stops the ranks, which may be writing their final checkpoint;
            # wait for them rather than kill them halfway.
            interrupted = True
    copier.join(timeout=10)
    returncode = returncode if returncode >= 0 else 128 - returncode
    if interrupted:
        returncode, note = after_interrupt(returncode, save, saved_before)
        if note:
            print(note, file=sys.stderr)
    return returncode


def saved_step(save: str) -> int | None:
    """The step of the complete checkpoint that `save`'s ``latest`` names
    (its manifest, written last, is there and intact), or None."""
    from zeroc import checkpoint
    try:
        return int(checkpoint.read_manifest(save)["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def after_interrupt(returncode: int, save: str | None, saved_before: int | None
                    ) -> tuple[int, str | None]:
    """The launcher's status after a Ctrl-C, and a note: the executable
    stops on an interrupt, saves and exits 0, but mpirun may still exit
    non-zero when the interrupt lands as the ranks finish (in their final
    save, say). When this run left a complete checkpoint newer than the one
    there at its start, the work is saved: status 0, and a note saying so."""
    if returncode == 0 or not save:
        return returncode, None
    step = saved_step(save)
    if step is None or (saved_before is not None and step <= saved_before):
        return returncode, None
    return 0, (f"zeroc: interrupted: mpirun exited with status {returncode}, but the "
               f"checkpoint of step {step} in {save} is complete; resume with "
               f"--resume {save}") if returncode >= 0 else 128 - returncode


class _ByteSink:
    """Bytes written to a text stream (its buffer when it has one)."""

    def __init__(self, stream):
        self._stream = stream
        self._buffer = getattr(stream, "buffer", None)

    def write(self, data: bytes) -> None:
        if self._buffer is not None:
            self._buffer.write(data)
        else:
            self._stream.write(data.decode("utf-8", errors="replace"))

    def flush(self) -> None:
        (self._buffer or self._stream).flush()


# Open MPI's help messages sit between lines of dashes; these are the ones
# that follow any failed rank and say nothing the rank's own error did not.
_BANNER_RULE = b"-" * 74
_BANNER_LINES = 40  # a longer "block" is not a banner: copied as it is
_ABORT_BANNERS = (b"Primary job", b"terminated normally, but", b"MPI_ABORT was invoked",
                  b"mpirun detected that one or more processes exited",
                  b"mpirun noticed that process rank", b"exited on signal")


def filter_mpi_banners(source: IO[bytes], sink: IO[bytes]) -> None:
    """Copies `source` to `sink` line by line, leaving out Open MPI's
    multi-line abort banners (a block between two rules of dashes that
    names a failed or aborted rank); other blocks, such as "not enough
    slots", are kept."""
    block: list[bytes] | None = None
    for line in iter(source.readline, b""):
        rule = line.rstrip(b"\r\n") == _BANNER_RULE
        if block is None:
            if rule:
                block = [line]
                continue
            sink.write(line)
            sink.flush()
            continue
        block.append(line)
        if not rule and len(block) > _BANNER_LINES:
            sink.write(b"".join(block))
            sink.flush()
            block = None
        elif rule:
            text = b"".join(block)
            if not any(marker in text for marker in _ABORT_BANNERS):
                sink.write(text)
                sink.flush()
            block = None
    if block:
        sink.write(b"".join(block))
        sink.flush()
