"""The importer's error and the user's source location of a failure."""

from __future__ import annotations

import os
import traceback

import torch

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_IMPORTER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class ImporterError(Exception):
    """A model the importer cannot translate. `location` is ``(file, line,
    source text)`` of the user code at fault when known, `target` the
    PyTorch operation's name (the ATen op)."""

    def __init__(self, message: str, *, location: tuple[str, int, str] | None = None,
                 target: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.target = target

    def __str__(self) -> str:
        if not self.location:
            return f"error: {self.message}"
        filename, line, code = self.location
        text = f"{filename}:{line}: error: {self.message}"
        if code:
            text += f"\n    {code}"
        return text


def is_internal(filename: str) -> bool:
    """Whether `filename` is torch's, this package's or generated code."""
    if filename.startswith(("<frozen", "<eval_with_key")):
        return True
    path = os.path.abspath(filename)
    return path.startswith(_TORCH_DIR) or path.startswith(_IMPORTER_DIR)


def location_of_exception(error: BaseException) -> tuple[str, int, str] | None:
    """The innermost frame of `error`'s traceback that is in user code."""
    found = None
    for frame in traceback.extract_tb(error.__traceback__):
        if not is_internal(frame.filename):
            found = (frame.filename, frame.lineno, (frame.line or "").strip())
    return found
