"""Training data for zeroc's executables: token files and their batches.

An executable reads tokens as raw little-endian uint16 ids (nanoGPT's
``.bin``), or a text file as bytes with ``--data-format=text``. This module
writes the former from text, byte-level (id = byte value, vocabulary 256),
and reproduces the executable's sampling formula, so that a reference
implementation (PyTorch, say) can train on exactly the same batches.

    python3 -m zeroc.data input.txt -o train.bin --val-fraction 0.1 --val-output val.bin

Standard library only.
"""

from __future__ import annotations

import argparse
import array
import sys
from typing import Sequence

from zeroc.files import atomic_open

BYTE_VOCAB = 256
"""The vocabulary of byte-level tokens."""


def encode_bytes(data: bytes) -> array.array:
    """Byte-level tokens: each byte is one id in [0, 256)."""
    # (array("H", bytes) would reinterpret the bytes as uint16 pairs.)
    return array.array("H", iter(data))


def tokens_to_bytes(tokens: Sequence[int]) -> bytes:
    """Token ids as raw little-endian uint16 (the ``.bin`` format); every id
    must be in [0, 65536)."""
    packed = array.array("H")
    try:
        packed.extend(tokens)
    except OverflowError:
        bad = next(t for t in tokens if not 0 <= t < 65536)
        raise ValueError(f"token id {bad} does not fit in uint16") from None
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def write_tokens(path: str, tokens: Sequence[int]) -> None:
    """Writes `tokens` to `path` as raw little-endian uint16, through a
    temporary file and a rename."""
    data = tokens_to_bytes(tokens)
    with atomic_open(path) as out:
        out.write(data)


def read_tokens(path: str, data_format: str = "bin") -> array.array:
    """The token ids of `path`: ``bin`` (little-endian uint16) or ``text``
    (bytes), as the executable reads them."""
    with open(path, "rb") as f:
        raw = f.read()
    if data_format == "text":
        return encode_bytes(raw)
    if data_format != "bin":
        raise ValueError(f"unknown data format {data_format!r} (bin or text)")
    if len(raw) % 2:
        raise ValueError(f"{path}: {len(raw)} bytes is not a whole number of uint16 tokens")
    tokens = array.array("H")
    tokens.frombytes(raw)
    if sys.byteorder != "little":
        tokens.byteswap()
    return tokens


def text_to_bin(text_path: str, output: str, *, val_output: str | None = None,
                val_fraction: float = 0.0) -> tuple[int, int]:
    """Encodes the text file `text_path` byte-level into `output`; with
    `val_output`, the last `val_fraction` of the bytes go there instead (as
    nanoGPT's prepare scripts split). Returns the token counts written
    ``(train, val)``."""
    if not 0 <= val_fraction < 1:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    if (val_output is None) != (val_fraction == 0):
        raise ValueError("a validation split needs both val_output and val_fraction")
    with open(text_path, "rb") as f:
        data = f.read()
    split = len(data) - int(len(data) * val_fraction)
    write_tokens(output, encode_bytes(data[:split]))
    if val_output is not None:
        write_tokens(val_output, encode_bytes(data[split:]))
    return split, len(data) - split


def batch_starts(num_tokens: int, step: int, batch_size: int, block_size: int) -> list[int]:
    """Where each sequence of step `step` starts, by the executable's formula:
    sequence i of the global batch G starts at ((step*G + i)*T) mod (L - T - 1).
    """
    if num_tokens < block_size + 2:
        raise ValueError(f"{num_tokens} tokens are fewer than block_size + 2 = {block_size + 2}")
    span = num_tokens - block_size - 1
    return [((step * batch_size + i) * block_size) % span for i in range(batch_size)]


def sample_batch(tokens: Sequence[int], step: int, batch_size: int,
                 block_size: int) -> tuple[list[list[int]], list[list[int]]]:
    """The global batch of step `step`: ``(inputs, targets)``, each
    `batch_size` lists of `block_size` ids; targets are the inputs shifted by
    one token. ``torch.tensor(inputs)`` gives what the executable trains on."""
    inputs, targets = [], []
    for start in batch_starts(len(tokens), step, batch_size, block_size):
        inputs.append(list(tokens[start:start + block_size]))
        targets.append(list(tokens[start + 1:start + block_size + 1]))
    return inputs, targets


def main(argv: list[str] | None = None) -> int:
    """``python3 -m zeroc.data``: text to a byte-level uint16 token file."""
    parser = argparse.ArgumentParser(
        prog="python3 -m zeroc.data",
        description="Encode a text file byte-level (vocabulary 256) as raw little-endian "
                    "uint16 tokens, the executable's --data format.", allow_abbrev=False)
    parser.add_argument("input", help="text file (read as bytes)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.bin",
                        help="token file to write")
    parser.add_argument("--val-output", metavar="FILE.bin",
                        help="also write the last --val-fraction of the text here")
    parser.add_argument("--val-fraction", type=float, default=0.0, metavar="F",
                        help="fraction of the text for --val-output (default: 0)")
    args = parser.parse_args(argv)
    if (args.val_output is None) != (args.val_fraction == 0):
        parser.error("--val-output and --val-fraction go together")
    try:
        train, val = text_to_bin(args.input, args.output, val_output=args.val_output,
                                 val_fraction=args.val_fraction)
    except (OSError, ValueError) as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 1
    message = f"{args.output}: {train:,} tokens"
    if args.val_output:
        message += f"; {args.val_output}: {val:,} tokens"
    print(message, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
