"""``python3 -m zeroc COMMAND``: the launcher and friends.

* ``train MODEL.mlir --zero-stage S --world-size N --data PATH ...``:
  compile (cached) and run under mpirun (`zeroc.launcher`,
  docs/launcher.md);
* ``sample MODEL.mlir CK [--prompt TEXT] [--sample N]``: generate text from
  the weights of a checkpoint, without data;
* ``compile MODEL.mlir --zero-stage S --world-size N [-o EXE]``: compile
  only, print the executable's path;
* ``import FILE.py:NAME ...``: the PyTorch importer (`zeroc.importer`,
  docs/importer.md; needs torch);
* ``data TEXT -o FILE.bin``: byte-level token file (`zeroc.data`);
* ``checkpoint info|verify|export DIR ...``: checkpoints of ``--save``
  (`zeroc.checkpoint`).
* ``trace-summary TRACE.json ...``: time by op kind, exposed communication
  and overlap of a run traced with ``--trace`` (`zeroc.trace`).
"""

from __future__ import annotations

import importlib.util
import os
import sys

USAGE = """usage: python3 -m zeroc COMMAND [ARGS]

commands:
  train MODEL.mlir ...   compile (cached) and run under mpirun; see `train --help`
  sample MODEL.mlir CK   generate text from the weights of checkpoint CK (no data)
  compile MODEL.mlir ... compile into the cache (or -o EXE) and print the path
  import FILE.py:NAME .. import a PyTorch nn.Module as train IR (needs torch)
  data TEXT -o OUT.bin   encode a text file as byte-level uint16 tokens
  checkpoint info|verify|export DIR ...
                         inspect, verify or export a checkpoint of --save
  trace-summary T.json   time by op kind, exposed communication, overlap of a --trace
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command in ("train", "sample", "compile"):
        from zeroc import launcher
        return launcher.main(rest, command)
    if command == "import":
        # The importer's command line, loaded without its package (which
        # imports torch), so that --help and argument errors need no torch.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "importer",
                            "__main__.py")
        spec = importlib.util.spec_from_file_location("zeroc._importer_main", path)
        cli = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cli)
        cli.PROG = "python3 -m zeroc import"
        try:
            return cli.main(rest)
        except ImportError as error:
            text = str(error) if "PyTorch" in str(error) else (
                f"the importer needs PyTorch, which {sys.executable} cannot import "
                f"({error}); Debian's python3-torch is for /usr/bin/python3")
            sys.stderr.write(f"python3 -m zeroc import: error: {text}\n")
            return 1
    if command == "data":
        from zeroc import data
        return data.main(rest)
    if command == "checkpoint":
        from zeroc import checkpoint
        return checkpoint.main(rest)
    if command == "trace-summary":
        from zeroc import trace
        return trace.main(rest)
    sys.stderr.write(f"python3 -m zeroc: error: unknown command '{command}'\n\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
