"""Writing a file whole or not at all, without destroying what it replaces.

    with atomic_open("train.bin") as out:
        out.write(data)

A regular file (or a new path) is written under a temporary name in its
directory and renamed over the path when the block ends; a symbolic link is
followed (the file it points to is replaced, the link stays). Anything else
that exists at the path, a device such as ``/dev/null`` or a FIFO, is opened
and written in place, as compilers do: it is never renamed over or removed.
The C++ tools follow the same rules (include/zeroc/Support/OutputFile.h).

Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import IO, Iterator


def resolve(path: str) -> str:
    """The file `path` names once symbolic links are followed (what a
    dangling link would create)."""
    current = path
    for _ in range(40):
        try:
            if not stat.S_ISLNK(os.lstat(current).st_mode):
                return current
            target = os.readlink(current)
        except OSError:
            return current
        current = target if os.path.isabs(target) else os.path.join(
            os.path.dirname(current), target)
    return current


def is_special(path: str) -> bool:
    """True when `path` exists and (after symbolic links) is neither a regular
    file nor a directory: a device, a FIFO or a socket, written in place."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "wb", *, encoding: str | None = None) -> Iterator[IO]:
    """Opens `path` for writing (`mode` ``wb``, or ``w`` with `encoding`) so
    that a failure never destroys what is there: a regular file or a new path
    gets a temporary file next to it, renamed to `path` when the block ends
    (with the permissions of the file it replaces, or of a file that ``open``
    creates); if the block raises, the temporary is removed and `path` is
    left as it was. A device or a FIFO is written in place and never removed."""
    if is_special(path):
        with open(path, mode, encoding=encoding) as out:
            yield out
        return
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path}: is a directory")
    target = resolve(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp",
                                dir=directory)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as out:
            yield out
        try:
            permissions = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            permissions = 0o666 & ~umask
        os.chmod(temp, permissions)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
