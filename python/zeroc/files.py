"""Writing a file whole or not at all.

    with atomic_open("train.bin") as out:
        out.write(data)

Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Iterator


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "wb", *, encoding: str | None = None) -> Iterator[IO]:
    """Opens a temporary file next to `path` for writing (`mode` ``wb``, or
    ``w`` with `encoding`); when the block ends it is renamed to `path`, with
    the permissions of a file that ``open`` creates. If the block raises, the
    temporary file is removed and `path` is left as it was."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                dir=directory)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as out:
            yield out
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise
