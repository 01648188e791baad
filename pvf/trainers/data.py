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
2. `PbsCollate` turns a list of samples into the same flat `PbsRows` (and
   passes `__getitems__`'s rows through); the model's architecture encodes
   rows into its tensors (`pvf.valuefn.architecture.Architecture.encode_batch`),
   so the data side knows nothing of any network.
3. `split_by_trunk` splits sample rows into train and validation so that
   every trunk strategy's samples land on one side.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import NotRequired, TypedDict

import numpy as np
from torch.utils.data import Dataset

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


class _Columns:
    """The file's arrays in memory, private features gathered per infostate row."""

    def __init__(self, path: str, target: str) -> None:
        with PBSDataset(path) as ds:
            values = getattr(ds, check_target(ds, target))
            self.public_state = ds.public_state
            self.offset = ds.offset
            self.player = ds.player.astype(np.int64)
            self.slot = ds.slot.astype(np.int64)
            self.belief = ds.belief.astype(np.float32)
            self.target = values.astype(np.float32)
            self.public = ds.public_features
            reach = ds.cf_reach
            self.cf_reach = np.zeros(len(self.player), dtype=np.float32) if reach is None else reach.astype(np.float32)
            opponent = ds.cf_opponent
            self.cf_opponent = np.zeros((len(self.player), 0), dtype=np.float32) if opponent is None else opponent
            private = ds.private_features
            self.private = np.empty((len(self.player), private[0].shape[1]), dtype=np.float32)  # [M, Fq]
            for n in (0, 1):
                self.private[self.player == n] = private[n][ds.index[self.player == n]]
        if not (np.isfinite(self.belief).all() and np.isfinite(self.target).all()):
            raise PvfError(f"{path}: beliefs or targets hold NaN or infinity")


_LOADED: weakref.WeakValueDictionary[tuple[str, int, int, str], _Columns] = weakref.WeakValueDictionary()


def file_version(path: str | Path) -> tuple[str, int, int]:
    """(resolved path, modification time in ns, size): what keys a file's contents in the process's caches."""
    stat = Path(path).stat()
    return str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size


def num_samples(path: str | Path) -> int:
    """The number of samples (PBSs) in the dataset file at `path`."""
    with PBSDataset(path) as ds:
        return ds.num_samples


def _load_columns(path: str, target: str) -> _Columns:
    """The columns of `path` for `target`, shared with every dataset of this process that holds them.

    A file rewritten since (another `file_version`) is read again.
    """
    key = (*file_version(path), target)
    columns = _LOADED.get(key)
    if columns is None:
        columns = _LOADED[key] = _Columns(path, target)
    return columns


class PbsTorchDataset(Dataset):
    """Samples `rows` of the PBS file at `path`; item i is a `PbsSample`."""

    def __init__(self, path: str | Path, rows: np.ndarray, target: str = "average") -> None:
        self.path = str(path)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.target = target
        self._columns: _Columns | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_columns"] = None  # each process reads the file itself
        return state

    @property
    def columns(self) -> _Columns:
        if self._columns is None:
            self._columns = _load_columns(self.path, self.target)
        return self._columns

    def __getitem__(self, i: int) -> PbsSample:
        c = self.columns
        row = self.rows[i]
        lo, hi = c.offset[row], c.offset[row + 1]
        return PbsSample(
            public=c.public[c.public_state[row]],
            player=c.player[lo:hi],
            slot=c.slot[lo:hi],
            belief=c.belief[lo:hi],
            target=c.target[lo:hi],
            private=c.private[lo:hi],
            cf_reach=c.cf_reach[lo:hi],
            cf_opponent=c.cf_opponent[lo:hi],
        )

    def __getitems__(self, indices: list[int]) -> PbsRows:
        """Items `indices` at once: one gather per column instead of B slices and concatenations."""
        c = self.columns
        rows = self.rows[np.asarray(indices, dtype=np.int64)]
        lo, counts = c.offset[rows], c.offset[rows + 1] - c.offset[rows]
        index = np.repeat(lo, counts) + positions(counts)
        return PbsRows(
            counts=counts,
            public=c.public[c.public_state[rows]],
            player=c.player[index],
            slot=c.slot[index],
            belief=c.belief[index],
            target=c.target[index],
            private=c.private[index],
            cf_reach=c.cf_reach[index],
            cf_opponent=c.cf_opponent[index],
        )


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
