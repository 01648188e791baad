"""Every ensemble member's training samples encoded once and kept on the device.

A step's batch is then a gather: no encoding and no host-to-device copy of
samples per step (`EnsembleTrainer(preload=True)`).
  1. Sources back to back (`EncodedSamples`): each distinct data file's
     samples once, however many members train on it; member k's sample i
     is the row `lookups[k][i]`. A tensor whose second axis differs between
     sources or chunks (the particle sets) is zero-padded to the widest
     (padding is masked, so no value changes). The encoded samples are
     shared by every trainer of the process that asks for the same files
     and encoding (`shared_samples`): an ensemble trained in groups of one
     member (the CPU default for large nets) holds one copy of a shared
     file, not one per member (Goofspiel-5's 500,000-PBS recipe file: one
     positional copy is about 2.5 GB).
  2. Repeated rows stored once: a particle set's feature rows repeat across
     samples (Goofspiel-5 at depth 3: 3.2 million rows of 99 features per
     member, 1,837 of them distinct; 1.28 GB a member as dense float32). A
     floating tensor `[n, N, F]` is kept as a table of its distinct rows
     `[U, F]` (`pvf.nets.distinct_rows.distinct`; row 0 is the zero row of
     padding) and an int32 index `[n, N]` into it, and a gather reads
     `table[index[rows]]`: exactly the dense tensor's rows. Sets are encoded
     in chunks of `ENCODE_CHUNK` samples, each compressed before the next
     is encoded, so no member's whole dense set ever exists; the chunks'
     tables are then merged into one (each row once, all members).
  3. On CUDA the step's row indices go through a ring of pinned buffers: a
     copy from pinned memory is asynchronous, so the step loop never waits
     for the GPU; a buffer is reused only after the event recorded behind
     its previous copy.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from pvf.nets.distinct_rows import distinct
from pvf.valuefn.architecture import Batch

RING = 4  # pinned index buffers in flight on CUDA
ENCODE_CHUNK = 4096  # samples encoded at once while preloading (Goofspiel-5 at move 3: 200 MB dense)


def to_device(batch: Batch, device: torch.device | str, dtype: torch.dtype) -> Batch:
    """An encoded batch on `device`, floating tensors as `dtype`."""
    return {
        k: v.to(device=device, dtype=dtype if v.is_floating_point() else v.dtype, non_blocking=True)
        for k, v in batch.items()
    }


class EncodedSamples:
    """Encoded samples of several sources back to back (module docstring, 1 and 2).

    sources: in order, each source's samples as encoded batches (`Architecture.encode_batch`) of
        consecutive samples; iterators, so that each batch is compressed before the next is encoded.
    `offsets[j]` is the row of source j's first sample.
    """

    def __init__(self, sources: Iterable[Iterable[Batch]], device: torch.device, dtype: torch.dtype) -> None:
        columns: dict[str, list[Tensor]] = {}
        tables: dict[str, list[Tensor]] = {}  # key -> the padding row, then each chunk's table [U_c, F]
        sizes = []
        for chunks in sources:
            sizes.append(0)
            for chunk in chunks:
                sizes[-1] += len(next(iter(chunk.values())))
                self._add(chunk, columns, tables)
        rows = {key: _padded_cat(values) for key, values in columns.items()}
        merged = {}  # one table for all chunks: each row once, small enough for the caches
        for key, parts in tables.items():
            merged[key], places = distinct(torch.cat(parts))
            rows[key] = places.to(torch.int32)[rows[key]]
        self.rows = to_device(rows, device, dtype)
        self.tables = to_device(merged, device, dtype)
        self.offsets = np.cumsum([0] + sizes)[:-1]

    @staticmethod
    def _add(chunk: Batch, columns: dict[str, list[Tensor]], tables: dict[str, list[Tensor]]) -> None:
        """Append `chunk`'s tensors to `columns`, each floating `[n, N, F]` one as its table places `[n, N]`."""
        for key, value in chunk.items():
            if value.dim() == 3 and value.is_floating_point():
                table, index = distinct(value.reshape(-1, value.shape[-1]))
                known = tables.setdefault(key, [value.new_zeros(1, value.shape[-1])])  # row 0: padding
                value = (index + sum(len(t) for t in known)).to(torch.int32).reshape(value.shape[:2])
                known.append(table)
            columns.setdefault(key, []).append(value)

    def select(self, index: Tensor) -> Batch:
        """The rows `index` [R] (on the device) as a batch `[R, ...]`: the dense tensors' rows."""
        batch = {key: value.index_select(0, index) for key, value in self.rows.items()}
        for key, table in self.tables.items():
            rows = batch[key]  # [R, N] places in the table
            batch[key] = table.index_select(0, rows.reshape(-1)).reshape(*rows.shape, table.shape[1])
        return batch


_SHARED: weakref.WeakValueDictionary[Hashable, EncodedSamples] = weakref.WeakValueDictionary()


def shared_samples(
    key: Hashable, sources: Callable[[], Iterable[Iterable[Batch]]], device: torch.device, dtype: torch.dtype
) -> EncodedSamples:
    """The `EncodedSamples` of `sources()` under `key`, encoded once per process while any trainer holds them.

    key: whatever fixes the encoded values (the files and their versions, the encoding, device and dtype).
    """
    samples = _SHARED.get(key)
    if samples is None:
        samples = _SHARED[key] = EncodedSamples(sources(), device, dtype)
    return samples


class Preloaded:
    """Members' training sets as rows of `samples` (see the module docstring).

    lookups: per member, `[n_k]` the row of each of its training samples in `samples`.
    """

    def __init__(self, samples: EncodedSamples, lookups: Sequence[np.ndarray], device: torch.device) -> None:
        self.samples = samples
        self.lookups = [np.asarray(lookup, dtype=np.int64) for lookup in lookups]
        self.device = device
        self._ring: list[tuple[Tensor, Any]] = []
        self._turn = 0

    def select(self, index: Tensor) -> Batch:
        """The rows `index` [R] of the samples (on the device) as a batch `[R, ...]`."""
        return self.samples.select(index)

    def gather(self, positions: Sequence[np.ndarray]) -> Batch:
        """Members' batches (positions in their training sets) as `[S·B, ...]`."""
        return self.select(self.index(positions))

    def index(self, positions: Sequence[np.ndarray]) -> Tensor:
        """The rows `[S·B]` of members' batches (positions in their training sets), on the device."""
        return self._to_device(np.concatenate([lookup[p] for lookup, p in zip(self.lookups, positions)]))

    def _to_device(self, index: np.ndarray) -> Tensor:
        if self.device.type != "cuda":
            return torch.from_numpy(index).to(self.device)
        if not self._ring or self._ring[0][0].numel() != index.size:
            self._ring = [(torch.empty(index.size, dtype=torch.int64).pin_memory(), None) for _ in range(RING)]
        buffer, done = self._ring[self._turn]
        if done is not None:
            done.synchronize()
        buffer.numpy()[:] = index
        on_device = buffer.to(self.device, non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        self._ring[self._turn] = (buffer, event)
        self._turn = (self._turn + 1) % RING
        return on_device


def _padded_cat(values: Sequence[Tensor]) -> Tensor:
    """`values` concatenated along axis 0, each zero-padded (False for bool) along axis 1 to the widest."""
    if values[0].dim() < 2:
        return torch.cat(values)
    width = max(v.shape[1] for v in values)
    out = torch.zeros((sum(len(v) for v in values), width, *values[0].shape[2:]), dtype=values[0].dtype)
    start = 0
    for v in values:
        out[start : start + len(v), : v.shape[1]] = v
        start += len(v)
    return out
