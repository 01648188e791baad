"""Samples of a PBS dataset file as flat infostate rows, for any architecture to encode.

1. `PbsTorchDataset` serves samples (PBSs) by row of the file. The file is opened
   lazily on the first access in each process and its columns read
   into memory (a Leduc depth-7 file of 54,000 samples is about 30 MB), once
   per process and file: datasets of one file (an ensemble's members, their
   training and validation splits) share one copy while any of them holds
   it (Goofspiel-5's 500,000-PBS file is gigabytes in memory). No open
   handle is ever pickled, so it works with spawned DataLoader workers.
   The DataLoader fetches a batch with one `__getitems__` call: the batch's
   rows gathered with index arrays into a flat `PbsRows`, not B samples.
2. A file too large for memory (300,000 Goofspiel-13 samples: 30 GB as
   float32 columns) is read in blocks of `block_samples` consecutive
   samples (block b: samples [b·S, (b+1)·S)), one block in memory per
   dataset (`default_block_samples` picks S from the file's size).
   `BlockShuffle` then orders an epoch as the blocks in a random order,
   each block's samples shuffled, so each block is read once an epoch;
   a particle file's samples are independent draws (a trunk each), so a
   batch from one block is as unbiased as one from the whole file, and
   `split_by_block` holds out whole blocks' trunks for validation, so a
   validation pass reads about `val_fraction` of the file.
3. `PbsCollate` turns a list of samples into the same flat `PbsRows` (and
   passes `__getitems__`'s rows through); the model's architecture encodes
   rows into its tensors (`pvf.valuefn.architecture.Architecture.encode_batch`),
   so the data side knows nothing of any network.
4. `split_by_trunk` splits sample rows into train and validation so that
   every trunk strategy's samples land on one side.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import NotRequired, TypedDict

import numpy as np
import torch
from torch.utils.data import Dataset, Sampler

from pvf.datasets import schema
from pvf.datasets.layout import check_target
from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError
from pvf.valuefn.encoding import PbsRows, positions


class PbsSample(TypedDict):
    """One PBS with its n infostates (player 1's first)."""

    public: np.ndarray  # [Fp] float32 public features
    player: np.ndarray  # [n] int64 0 or 1
    slot: np.ndarray  # [n] int64 slot in the player's enumeration of the public state
    belief: np.ndarray  # [n] float32 reach of the infostate
    target: np.ndarray  # [n] float32 counterfactual value
    private: np.ndarray  # [n, Fq] float32 private features
    cf_reach: NotRequired[np.ndarray]  # [n] float32 counterfactual reach (0 where the file has none)
    cf_opponent: NotRequired[np.ndarray]  # [n, Fq] float32 mean opponent features ([n, 0] where the file has none)
    cf_rollout: NotRequired[np.ndarray]  # [n] float32 rollout value, targets' convention (0 where the file has none)


class _Columns:
    """Samples [first, last) of the file in memory, private features gathered per infostate row.

    offset: [n + 1] rows of each sample from 0; public: [P', Fp] the public features of the
    samples' public states, `public_state` [n] indexing it; row columns [m] (private, cf_opponent [m, Fq]).
    """

    def __init__(self, ds: PBSDataset, target: str, first: int, last: int) -> None:
        offset = ds.offset[first : last + 1]
        lo, hi = int(offset[0]), int(offset[-1])
        self.offset = offset - lo
        public_state = ds.public_state[first:last]  # [n], n > 0
        low = int(public_state.min())
        self.public_state = public_state - low
        self.public = ds.read_range(schema.FEATURES_PUBLIC, low, int(public_state.max()) + 1)

        # the narrow row columns: slices of the reader's cached columns (its open check read most of them);
        # the wide particle columns and the feature tables: only this block's range, read here
        player, index = ds.player[lo:hi], ds.index[lo:hi]
        self.player = player.astype(np.int64)
        self.slot = ds.slot[lo:hi].astype(np.int64)
        self.belief = ds.belief[lo:hi].astype(np.float32)
        self.target = getattr(ds, check_target(ds, target))[lo:hi].astype(np.float32)
        self.cf_reach = (
            ds.read_range(schema.PARTICLE_DATASETS["cf_reach"][0], lo, hi).astype(np.float32)
            if ds.has_cf_reach
            else np.zeros(hi - lo, dtype=np.float32)
        )
        self.cf_opponent = (
            ds.read_range(schema.PARTICLE_DATASETS["cf_opponent"][0], lo, hi)
            if ds.has_cf_opponent
            else np.zeros((hi - lo, 0), dtype=np.float32)
        )
        self.cf_rollout = (
            ds.read_range(schema.PARTICLE_DATASETS["cf_rollout"][0], lo, hi).astype(np.float32)
            if ds.has_cf_rollout
            else np.zeros(hi - lo, dtype=np.float32)
        )
        self.private = np.empty((hi - lo, ds.private_dim), dtype=np.float32)  # [m, Fq]
        for n in (0, 1):
            mine = player == n
            if mine.any():  # the table rows this block needs, read as one range
                wanted = index[mine]
                low = int(wanted.min())
                self.private[mine] = ds.read_range(schema.FEATURES_PRIVATE[n], low, int(wanted.max()) + 1)[wanted - low]
        if not (np.isfinite(self.belief).all() and np.isfinite(self.target).all()):
            raise PvfError(f"{ds.path}: beliefs or targets hold NaN or infinity")

    def gather(self, samples: np.ndarray) -> PbsRows:
        """The samples `samples: [B]` (0-based in this block) as flat rows."""
        lo, counts = self.offset[samples], self.offset[samples + 1] - self.offset[samples]
        index = np.repeat(lo, counts) + positions(counts)
        return PbsRows(
            counts=counts,
            public=self.public[self.public_state[samples]],
            player=self.player[index],
            slot=self.slot[index],
            belief=self.belief[index],
            target=self.target[index],
            private=self.private[index],
            cf_reach=self.cf_reach[index],
            cf_opponent=self.cf_opponent[index],
            cf_rollout=self.cf_rollout[index],
        )


_LOADED: weakref.WeakValueDictionary[tuple, _Columns] = weakref.WeakValueDictionary()  # (*file_version, target, block)
_OPEN: weakref.WeakValueDictionary[tuple[str, int, int], PBSDataset] = weakref.WeakValueDictionary()
IN_MEMORY_BYTES = 8 << 30  # files whose columns take more are read in blocks (Goofspiel-5's 500,000 PBSs: 2 GiB)
BLOCK_BYTES = 512 << 20  # about what one block's columns take


def file_version(path: str | Path) -> tuple[str, int, int]:
    """(resolved path, modification time in ns, size): what keys a file's contents in the process's caches."""
    stat = Path(path).stat()
    return str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size


def column_bytes(ds: PBSDataset) -> int:
    """What the columns of the whole file take in memory (`_Columns`: float32 features, int64 players and slots)."""
    width = ds.private_dim * (2 if ds.has_cf_opponent else 1)
    public = ds.public_features
    return ds.num_rows * (4 * width + 8 + 8 + 4 + 4 + 4 + 4) + public.nbytes


def default_block_samples(ds: PBSDataset) -> int:
    """0 (the whole file in memory) where its columns take at most `IN_MEMORY_BYTES`, else samples per `BLOCK_BYTES`."""
    size = column_bytes(ds)
    return 0 if size <= IN_MEMORY_BYTES else max(1, BLOCK_BYTES * ds.num_samples // size)


def num_samples(path: str | Path) -> int:
    """The number of samples (PBSs) in the dataset file at `path`."""
    with PBSDataset(path) as ds:
        return ds.num_samples


def _open(path: str) -> PBSDataset:
    """The file at `path` opened once per process while any block-reading dataset holds it."""
    version = file_version(path)
    ds = _OPEN.get(version)
    if ds is None:
        ds = _OPEN[version] = PBSDataset(path)
    return ds


def _load_columns(path: str, target: str, block: tuple[int, int] | None, ds: PBSDataset | None) -> _Columns:
    """Samples `block` = [first, last) of `path` (None: all of them, read from the file opened here; else from
    the open `ds`) for `target`, shared with every dataset of this process that holds them.

    A file rewritten since (another `file_version`) is read again.
    """
    key = (*file_version(path), target, block)
    columns = _LOADED.get(key)
    if columns is None:
        if block is None:
            with PBSDataset(path) as whole:
                columns = _Columns(whole, target, 0, whole.num_samples)
        else:
            columns = _Columns(ds, target, block[0], min(block[1], ds.num_samples))
        _LOADED[key] = columns
    return columns


class PbsTorchDataset(Dataset):
    """Samples `rows` of the PBS file at `path`; item i is a `PbsSample`.

    block_samples: 0, the whole file in memory; S > 0, sample s read in block s // S (module docstring, 2),
        one block held at a time: a loader should visit the rows block by block (`BlockShuffle`, sorted rows).
        While a block is served, the next one of the visiting order (`expect`; by default the blocks in
        file order) is read in a background thread (h5py releases the GIL while it reads and decompresses).
    """

    def __init__(self, path: str | Path, rows: np.ndarray, target: str = "average", block_samples: int = 0) -> None:
        self.path = str(path)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.target = target
        self.block_samples = block_samples
        self._plan: dict[int, int] = {}  # block -> the block read after it
        self._block: tuple[int, _Columns] | None = None
        self._file: PBSDataset | None = None
        self._reader: ThreadPoolExecutor | None = None
        self._next: tuple[int, Future[_Columns]] | None = None
        if block_samples:
            self.expect(np.unique(self.blocks()))

    def __len__(self) -> int:
        return len(self.rows)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_block"] = state["_file"] = state["_reader"] = state["_next"] = None  # each process reads the file
        state["_plan"] = {}  # a worker's copy is not told the epoch's order: it reads no block ahead
        return state

    def blocks(self) -> np.ndarray:
        """[len] the block of each item (all 0 for a whole-file dataset)."""
        return self.rows // self.block_samples if self.block_samples else np.zeros(len(self.rows), dtype=np.int64)

    def expect(self, order: Sequence[int]) -> None:
        """The blocks will be visited in `order` (each once): each one's successor is read ahead."""
        order = [int(b) for b in order]
        self._plan = dict(zip(order, order[1:]))

    def _columns(self, block: int) -> _Columns:
        if self._block is None or self._block[0] != block:
            self._block = None  # the old block freed before the new one is read
            ahead, self._next = self._next, None
            columns = ahead[1].result() if ahead is not None and ahead[0] == block else self._read(block)
            self._block = (block, columns)
            following = self._plan.get(block)
            if following is not None:
                if self._reader is None:
                    self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pvf-block")
                self._next = (following, self._reader.submit(self._read, following))
        return self._block[1]

    def _read(self, block: int) -> _Columns:
        S = self.block_samples
        if not S:
            return _load_columns(self.path, self.target, None, None)
        if self._file is None:
            self._file = _open(self.path)
        return _load_columns(self.path, self.target, (block * S, (block + 1) * S), self._file)

    def __getitem__(self, i: int) -> PbsSample:
        rows = self.__getitems__([i])
        return PbsSample(public=rows["public"][0], **{k: v for k, v in rows.items() if k not in ("counts", "public")})

    def __getitems__(self, indices: list[int]) -> PbsRows:
        """Items `indices` at once: one gather per column (per run of one block) instead of B slices."""
        rows = self.rows[np.asarray(indices, dtype=np.int64)]
        S = self.block_samples
        if not S:
            return self._columns(0).gather(rows)
        block = rows // S
        starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
        runs = [
            self._columns(int(block[a])).gather(rows[a:b] - block[a] * S)
            for a, b in zip(starts, np.r_[starts[1:], len(rows)])
        ]
        return runs[0] if len(runs) == 1 else _concatenate(runs)


class BlockShuffle(Sampler[int]):
    """A dataset's items block by block: the blocks in a random order, each block's items shuffled.

    blocks: [n] the block of each item (`PbsTorchDataset.blocks`); expect: told each epoch's block order
    (`PbsTorchDataset.expect`, so the dataset reads ahead). Each epoch draws its seed from
    torch's global generator, as torch's `RandomSampler` does, so `seed_everything` repeats it.
    """

    def __init__(self, blocks: np.ndarray, expect: Callable[[Sequence[int]], None] | None = None) -> None:
        self.blocks = np.asarray(blocks)
        self.expect = expect

    def __len__(self) -> int:
        return len(self.blocks)

    def __iter__(self) -> Iterator[int]:
        rng = np.random.default_rng(int(torch.empty((), dtype=torch.int64).random_().item()))
        ids, which = np.unique(self.blocks, return_inverse=True)
        rank = rng.permutation(len(ids))
        shuffled = rng.permutation(len(self.blocks))
        if self.expect is not None:  # the dataset reads each block's successor ahead
            self.expect(ids[np.argsort(rank)].tolist())
        return iter(shuffled[np.argsort(rank[which[shuffled]], kind="stable")].tolist())


def _concatenate(parts: list[PbsRows]) -> PbsRows:
    return PbsRows(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]})


def _flatten(samples: list[PbsSample]) -> PbsRows:
    return PbsRows(
        counts=np.array([len(s["belief"]) for s in samples]),
        public=np.stack([s["public"] for s in samples]),
        **{k: np.concatenate([s[k] for s in samples]) for k in samples[0] if k != "public"},
    )


class PbsCollate:
    """The DataLoader's collate: a list of samples as one `PbsRows` (rows from `__getitems__` pass through)."""

    def __call__(self, samples: PbsRows | list[PbsSample]) -> PbsRows:
        return _flatten(samples) if isinstance(samples, list) else samples


def validation_trunk_count(num_trunks: int, val_fraction: float) -> int:
    """The trunk strategies `split_by_trunk` holds out of `num_trunks`: round(val_fraction · T), at least one."""
    return max(1, round(val_fraction * num_trunks))


def split_by_trunk(trunk: np.ndarray, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, validation rows) of samples whose trunk strategy is `trunk: [N]`.

    A seeded permutation of the distinct trunks puts round(val_fraction * T)
    of them (at least one) in validation; no trunk is on both sides.
    """
    if not 0.0 < val_fraction < 1.0:
        raise PvfError(f"val_fraction must lie strictly between 0 and 1, got {val_fraction}")
    trunks = np.unique(trunk)
    num_val = validation_trunk_count(len(trunks), val_fraction)
    if num_val >= len(trunks):
        raise PvfError(
            f"cannot split {len(trunks)} trunk strategies into train and validation "
            f"with val_fraction={val_fraction}; generate more trunks"
        )
    val_trunks = np.random.default_rng(seed).permutation(trunks)[:num_val]
    is_val = np.isin(trunk, val_trunks)
    return np.flatnonzero(~is_val), np.flatnonzero(is_val)


def split_by_block(
    trunk: np.ndarray, block_samples: int, val_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, validation rows) of samples `trunk: [N]` read in blocks of `block_samples` samples.

    A seeded permutation of the blocks puts round(val_fraction · blocks) of them (at least one) in
    validation, with every trunk strategy that has a sample in them: validation is whole blocks (and a
    trunk's samples in a neighbouring block), so a validation pass reads about `val_fraction` of the file.
    """
    if not 0.0 < val_fraction < 1.0:
        raise PvfError(f"val_fraction must lie strictly between 0 and 1, got {val_fraction}")
    blocks = -(-len(trunk) // block_samples)
    num_val = validation_trunk_count(blocks, val_fraction)
    chosen = np.random.default_rng(seed).permutation(blocks)[:num_val]
    is_val = np.isin(trunk, trunk[np.isin(np.arange(len(trunk)) // block_samples, chosen)])
    if num_val >= blocks or is_val.all():
        raise PvfError(
            f"cannot split {len(trunk)} samples in {blocks} blocks of {block_samples} into train and validation "
            f"with val_fraction={val_fraction}; pass a smaller data.block_samples or generate more trunks"
        )
    return np.flatnonzero(~is_val), np.flatnonzero(is_val)
