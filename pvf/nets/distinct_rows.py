"""A row-wise network applied once per distinct input row.

A particle net's change-basis MLP sees one feature row per infostate row,
and the rows repeat: Goofspiel-5's infostates at move 2 have 260 distinct
(public, private, player) rows, while a batch of 64 PBSs holds about 2,560
infostate rows (padding included). Since the MLP acts on each row alone,
`mlp(rows)` equals `mlp(table)[index]` where `table` holds each distinct
row once and `index` points every row at its copy: the same values, at a
fraction of the matrix products (the backward pass sums the gradients of
equal rows, which is the gather's scatter-add).

Finding the distinct rows: each row is hashed to one int64 (the bits of
its dot products with fixed random weights: two in float32, one in
float64), member by member (S > 1 for stacked nets, `pvf.nets.stacked`:
member s's rows are the s-th slice and are valued by member s's weights,
so each member gets its own table, all padded to the longest). Sorting the
S·R keys is cheap; `torch.unique(dim=0)` on the rows themselves cost 5 ms
per 2,560 rows. Equal hashes of unequal rows are caught by comparing
`table[index]` with the rows. Then, where the table would hold more than
half the rows, and wherever deduplication cannot apply (under `vmap`; on a
GPU, whose steps are fixed-shape CUDA graphs and not bounded by
arithmetic), the MLP runs on every row as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor, nn

_MEMBER_BITS = 8  # member index in the key's top bits: up to 2**8 stacked members
_CHECK_CHUNK = 1 << 18  # rows compared at once by `distinct`
_WEIGHTS: dict[tuple[int, torch.dtype], Tensor] = {}
_enabled = True


@contextmanager
def every_row() -> Iterator[None]:
    """Inside the block `row_wise` runs the MLP on every row: the baseline that benchmarks time it against, and
    the shortcut for callers that know their rows cannot repeat enough to pay for a table (the same values)."""
    global _enabled
    previous, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = previous


def row_wise(mlp: nn.Module, rows: Tensor) -> Tensor:
    """`mlp(rows)` computed once per distinct row of each member.

    mlp: acts on each row alone (Linear layers and elementwise activations);
        its first parameter is `[S, out, in]` for S stacked members
        (`pvf.nets.stacked.MemberLinear`), whose rows are then S equal slices.
    rows: [M, F]. Returns [M, K], equal to `mlp(rows)`.
    """
    first = next(mlp.parameters())
    members = first.shape[0] if first.dim() == 3 else 1
    if not _applicable(rows, members):
        return mlp(rows)
    M, F = rows.shape
    key = _row_keys(rows)
    member = torch.arange(members, device=rows.device).repeat_interleave(M // members)
    key = (key & ((1 << (63 - _MEMBER_BITS)) - 1)) | (member << (63 - _MEMBER_BITS))
    unique, inverse = torch.unique(key, sorted=True, return_inverse=True)
    owner = unique >> (63 - _MEMBER_BITS)  # [U] member of each distinct key, in member order
    counts = torch.bincount(owner, minlength=members)
    width = int(counts.max())
    if width * members * 2 > M:  # too few repeats to pay for the gather
        return mlp(rows)
    start = torch.cumsum(counts, 0) - counts
    slot = owner * width + torch.arange(len(unique), device=rows.device) - start[owner]  # [U] place in the table
    index = slot[inverse]  # [M] each row's place in the table
    table = rows.new_zeros(members * width, F)
    table[index] = rows  # equal rows write the same values (checked below)
    if not torch.equal(table[index], rows):  # two unequal rows hashed alike
        return mlp(rows)
    return mlp(table)[index]


def distinct(rows: Tensor) -> tuple[Tensor, Tensor]:
    """rows [M, F] -> (table [U, F], index [M] int64): each distinct row once, `table[index]` equal to `rows`.

    Rows are found by their hash keys (as `row_wise`), checked in chunks; should two unequal rows hash
    alike, `torch.unique(dim=0)` (exact, slower) decides instead.
    """
    unique, index = torch.unique(_row_keys(rows), return_inverse=True)
    table = rows.new_empty(len(unique), rows.shape[1])
    table[index] = rows
    for start in range(0, len(rows), _CHECK_CHUNK):
        if not torch.equal(table[index[start : start + _CHECK_CHUNK]], rows[start : start + _CHECK_CHUNK]):
            return torch.unique(rows, dim=0, return_inverse=True)
    return table, index


def _applicable(rows: Tensor, members: int) -> bool:
    return (
        _enabled
        and rows.device.type == "cpu"
        and rows.dim() == 2
        and rows.dtype in (torch.float32, torch.float64)
        and not rows.requires_grad
        and rows.shape[0] > 0
        and rows.shape[0] % members == 0
        and members < 1 << _MEMBER_BITS
        and not torch._C._functorch.is_batchedtensor(rows)
    )


def _row_keys(rows: Tensor) -> Tensor:
    """[M] int64 hash of each row: the bits of its dot products with two fixed random weight vectors."""
    F = rows.shape[1]
    if (F, rows.dtype) not in _WEIGHTS:
        generator = torch.Generator().manual_seed(F)
        _WEIGHTS[F, rows.dtype] = (torch.rand(F, 64 // (8 * rows.element_size()), generator=generator) + 0.5).to(
            rows.dtype
        )
    products = rows.detach() @ _WEIGHTS[F, rows.dtype].to(rows.device)  # [M, 2] (float32) or [M, 1] (float64)
    return products.contiguous().view(torch.int64).reshape(-1)
