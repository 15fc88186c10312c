"""Linear maps with constant coefficients: rotary embeddings written out.

People write rotary position embeddings with constant tables of cosines and
sines (``freqs_cos[:T]``, Hugging Face's ``cos``/``sin``, Meta's complex
``freqs_cis``) and tensor surgery (reshape to pairs and ``unbind(-1)``,
``rotate_half``'s slices and ``cat``, ``torch.stack(..., dim=-1)``,
``flatten``, ``view_as_complex``). The `train` dialect has no constant
tensors: the importer follows such code symbolically instead.

A `Lin` is a tensor each of whose elements is a sum of a few elements of one
IR value (its *root*) times constants: ``value[e] = sum_k coeff[k][e] *
root.flat[index[k][e]]``. Multiplying an IR value by a constant tensor makes
one; slices, reshapes, unbind, stack, cat, negation, sums and casts of Lins
stay Lins; `Realizer.realize` turns a Lin back into IR when anything else
uses it, by recognizing a rotation of pairs of features by angles
``position * theta^(-2i/D)``: ``train.rope`` in the interleaved or the
rotate-half style, with theta read off the table and checked against every
coefficient. A Lin that is no rotary embedding is an error naming the line
where the constant entered.

`CLin` is a complex Lin (`view_as_complex`), a pair of Lins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from zeroc import ir


@dataclass
class Lin:
    """``value[e] = sum_k coeff[k][e] * root.flat[index[k][e]]``."""

    root: ir.Value
    index: torch.Tensor  # int64 [K, *shape]
    coeff: torch.Tensor  # float64 [K, *shape]
    element: str
    origin: Any = None  # the fx node where a constant first entered
    # IR values known to be views of the root: name -> (value, index map).
    candidates: dict = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.index.shape[1:])

    def _with(self, index, coeff, element=None) -> Lin:
        return Lin(self.root, index, coeff, element or self.element, self.origin,
                   self.candidates)

    def map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Lin:
        """The same structural change of every slot (reshape, select, ...)."""
        return self._with(torch.stack([fn(i) for i in self.index]),
                          torch.stack([fn(c) for c in self.coeff]))

    def reshape(self, shape: Sequence[int]) -> Lin:
        return self.map(lambda t: t.reshape(tuple(shape)))

    def expand(self, shape: Sequence[int]) -> Lin:
        return self.map(lambda t: t.expand(tuple(shape)).contiguous())

    def select(self, dim: int, i: int) -> Lin:
        return self.map(lambda t: t.select(dim, i))

    def unsqueeze(self, dim: int) -> Lin:
        return self.map(lambda t: t.unsqueeze(dim))

    def scaled(self, factor: Any) -> Lin:
        """Times a number or a constant tensor broadcastable with it."""
        if isinstance(factor, torch.Tensor):
            factor = factor.detach().to(torch.float64)
            shape = torch.broadcast_shapes(self.shape, tuple(factor.shape))
            lin = self.expand(shape) if shape != self.shape else self
            return lin._with(lin.index, lin.coeff * factor.expand(shape))
        return self._with(self.index, self.coeff * float(factor))

    def with_element(self, element: str) -> Lin:
        return self._with(self.index, self.coeff, element)

    def compact(self) -> Lin:
        """Adds up slots that read the same element, drops empty slots."""
        index, coeff = self.index.clone(), self.coeff.clone()
        k = index.shape[0]
        for a in range(k):
            for b in range(a + 1, k):
                same = (index[a] == index[b]) & (coeff[b] != 0)
                coeff[a] = torch.where(same, coeff[a] + coeff[b], coeff[a])
                coeff[b] = torch.where(same, torch.zeros_like(coeff[b]), coeff[b])
        keep = [s for s in range(k) if bool((coeff[s] != 0).any())]
        if not keep:
            keep = [0]
        return self._with(index[keep], coeff[keep])


def combine(lins: Sequence[Lin], fail: Callable[[str], None]) -> list[Lin]:
    """Lins of one root broadcast to one shape, ready to be added."""
    root = lins[0].root
    if any(lin.root.name != root.name for lin in lins):
        fail("combines rotary-embedding parts of different tensors")
    shape = torch.broadcast_shapes(*[lin.shape for lin in lins])
    candidates = {}
    for lin in lins:
        candidates.update(lin.candidates)
    out = []
    for lin in lins:
        lin = lin.expand(shape) if lin.shape != shape else lin
        lin.candidates = candidates
        out.append(lin)
    return out


def add(a: Lin, b: Lin, fail: Callable[[str], None]) -> Lin:
    a, b = combine([a, b], fail)
    return a._with(torch.cat([a.index, b.index]), torch.cat([a.coeff, b.coeff])).compact()


def cat(lins: Sequence[Lin], dim: int, fail: Callable[[str], None]) -> Lin:
    """torch.cat of Lins of one root: every input's slots, zero elsewhere."""
    root = lins[0].root
    if any(lin.root.name != root.name for lin in lins):
        fail("joins rotary-embedding parts of different tensors")
    rank = len(lins[0].shape)
    dim = dim % rank
    slots_index, slots_coeff = [], []
    for i, lin in enumerate(lins):
        for s in range(lin.index.shape[0]):
            parts_i, parts_c = [], []
            for j, other in enumerate(lins):
                if j == i:
                    parts_i.append(lin.index[s])
                    parts_c.append(lin.coeff[s])
                else:
                    parts_i.append(torch.zeros_like(other.index[0]))
                    parts_c.append(torch.zeros_like(other.coeff[0]))
            slots_index.append(torch.cat(parts_i, dim))
            slots_coeff.append(torch.cat(parts_c, dim))
    candidates = {}
    for lin in lins:
        candidates.update(lin.candidates)
    out = Lin(root, torch.stack(slots_index), torch.stack(slots_coeff), lins[0].element,
              lins[0].origin, candidates)
    return out.compact()


def stack(lins: Sequence[Lin], dim: int, fail: Callable[[str], None]) -> Lin:
    rank = len(lins[0].shape) + 1
    dim = dim % rank
    return cat([lin.unsqueeze(dim) for lin in lins], dim, fail)


@dataclass
class CLin:
    """A complex tensor: real and imaginary parts (`view_as_complex`)."""

    re: Lin
    im: Lin

    @property
    def shape(self) -> tuple[int, ...]:
        return self.re.shape

    def times(self, c: torch.Tensor, fail: Callable[[str], None]) -> CLin:
        """Times a complex constant."""
        cr, ci = c.real.to(torch.float64), c.imag.to(torch.float64)
        re = add(self.re.scaled(cr), self.im.scaled(-ci), fail)
        im = add(self.re.scaled(ci), self.im.scaled(cr), fail)
        return CLin(re, im)

    def as_real(self, fail: Callable[[str], None]) -> Lin:
        """`view_as_real`: [..., 2] of (real, imaginary)."""
        return stack([self.re, self.im], -1, fail)


def partner(index: torch.Tensor, style: str) -> torch.Tensor:
    """The index map of each feature's rotation partner along the last
    dimension: 2i <-> 2i+1 (interleaved) or i <-> i + D/2 (rotate-half)."""
    d = index.shape[-1]
    if style == "interleaved":
        return index.reshape(index.shape[:-1] + (d // 2, 2)).flip(-1).reshape(index.shape)
    return torch.roll(index, d // 2, -1)


def rope_tables(shape: Sequence[int], seq_dim: int, theta: float, style: str):
    """(cos, signed sin) coefficients of train.rope on `shape`: the direct
    term's and the partner's."""
    rank, d = len(shape), shape[-1]
    half = d // 2
    j = torch.arange(d, dtype=torch.float64)
    i = torch.floor(j / 2) if style == "interleaved" else torch.remainder(j, half)
    first = (torch.remainder(j, 2) == 0) if style == "interleaved" else (j < half)
    freq = theta ** (-2.0 * i / d)
    pos = torch.arange(shape[seq_dim], dtype=torch.float64)
    view = [1] * rank
    view[seq_dim] = shape[seq_dim]
    angle = pos.reshape(view) * freq.reshape([1] * (rank - 1) + [d])
    sign = torch.where(first, -1.0, 1.0).to(torch.float64).reshape([1] * (rank - 1) + [d])
    return (torch.cos(angle).expand(tuple(shape)), (sign * torch.sin(angle)).expand(tuple(shape)))


def estimate_theta(c_partner: torch.Tensor, seq_dim: int, style: str) -> float | None:
    """theta from the partner coefficient of pair 1 at position 1 (-sin f1,
    f1 = theta^(-2/D)); None when the table cannot tell (D == 2 or a single
    position: any theta gives the same rotation)."""
    shape = c_partner.shape
    d = shape[-1]
    if d < 4 or shape[seq_dim] < 2:
        return None
    at = [0] * len(shape)
    at[seq_dim] = 1
    at[-1] = 2 if style == "interleaved" else 1
    s = -float(c_partner[tuple(at)])
    if not 0 < s < 1:
        return -1.0
    f1 = math.asin(s)
    return f1 ** (-d / 2)


def match_rope(lin: Lin, y_index: torch.Tensor):
    """How `lin` rotates the tensor whose index map is `y_index`: (style,
    seq_dim, theta), "identity", or None."""
    index, coeff = lin.index, lin.coeff
    direct = (coeff * (index == y_index)).sum(0)
    shape = lin.shape
    if bool(((coeff * (index != y_index)) == 0).all()):
        if bool((direct == 1).all()):
            return "identity"
        return None
    d = shape[-1]
    if d % 2 or len(shape) < 2:
        return None
    tol = 1e-3 if lin.element == "f32" else 2e-2
    for style in ("interleaved", "rotate_half"):
        p_index = partner(y_index, style)
        other = (index != y_index) & (index != p_index)
        if not bool(((coeff * other) == 0).all()):
            continue
        part = (coeff * (index == p_index)).sum(0)
        for seq_dim in range(len(shape) - 1):
            theta = estimate_theta(part, seq_dim, style)
            if theta is not None and theta <= 0:
                continue
            # The estimate carries the table's f32 rounding: the shortest
            # decimal that reproduces the table is the theta of the code
            # (10000.0, not 10000.007).
            guesses = [10000.0] if theta is None else \
                [float(f"{theta:.{k}g}") for k in range(1, 10)] + [theta]
            for guess in guesses:
                cos, sin = rope_tables(shape, seq_dim, guess, style)
                if torch.allclose(direct, cos, rtol=0, atol=tol) and \
                        torch.allclose(part, sin, rtol=0, atol=tol):
                    return style, seq_dim, guess
    return None
