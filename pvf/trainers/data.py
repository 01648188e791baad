"""Samples of a PBS dataset file as padded torch batches both networks read.

1. `PbsTorchDataset` serves samples (PBSs) by row of the file. The file is opened
   lazily on the first access in each process and its columns read
   into memory (a Leduc depth-7 file of 54,000 samples is about 30 MB); no
   open handle is ever pickled, so it works with spawned DataLoader workers.
   The DataLoader fetches a batch with one `__getitems__` call: the batch's
   rows gathered with index arrays into a flat `PbsRows`, not B samples.
2. `PbsCollate` pads a `PbsRows` (or a list of samples) into one `PbsBatch` holding both
   views of the same infostates:
   - particle view, N = most infostates of a sample in the batch:
     `beliefs [B, N]`, `features [B, N, Fp + Fq + 2]` (public, private,
     player one-hot), `targets [B, N]`, `mask [B, N]`;
   - positional view, S = K1max + K2max slots (player 2's slot k at
     K1max + k): `slot_beliefs [B, S]`, `slot_targets [B, S]`, `slot_mask [B, S]`;
   - `public [B, Fp]` for both.
3. `split_by_trunk` splits sample rows into train and validation so that
   every trunk strategy's samples land on one side.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import Dataset

from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError
from pvf.nets.normalization import normalize_beliefs
from pvf.trainers.layout import PLAYER_FEATURES, check_target


class PbsSample(TypedDict):
    """One PBS with its n infostates (player 1's first)."""

    public: np.ndarray  # [Fp] float32 public features
    player: np.ndarray  # [n] int64 0 or 1
    slot: np.ndarray  # [n] int64 slot in the player's enumeration of the public state
    belief: np.ndarray  # [n] float32 reach of the infostate
    target: np.ndarray  # [n] float32 counterfactual value
    private: np.ndarray  # [n, Fq] float32 private features


class PbsRows(TypedDict):
    """B samples' infostates back to back (n = Σ counts), as `__getitems__` gathers them."""

    counts: np.ndarray  # [B] infostates per sample
    public: np.ndarray  # [B, Fp]
    player: np.ndarray  # [n]
    slot: np.ndarray  # [n]
    belief: np.ndarray  # [n]
    target: np.ndarray  # [n]
    private: np.ndarray  # [n, Fq]


class PbsBatch(TypedDict):
    """A padded batch; padding holds zeros and False."""

    public: Tensor  # [B, Fp]
    beliefs: Tensor  # [B, N]
    features: Tensor  # [B, N, Fp + Fq + 2]
    targets: Tensor  # [B, N]
    mask: Tensor  # [B, N] bool, True for real infostates
    slot_beliefs: Tensor  # [B, S]
    slot_targets: Tensor  # [B, S]
    slot_mask: Tensor  # [B, S] bool, True for slots holding an infostate


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
            private = ds.private_features
            self.private = np.empty((len(self.player), private[0].shape[1]), dtype=np.float32)  # [M, Fq]
            for n in (0, 1):
                self.private[self.player == n] = private[n][ds.index[self.player == n]]
        if not (np.isfinite(self.belief).all() and np.isfinite(self.target).all()):
            raise PvfError(f"{path}: beliefs or targets hold NaN or infinity")


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
            self._columns = _Columns(self.path, self.target)
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
        )

    def __getitems__(self, indices: list[int]) -> PbsRows:
        """Items `indices` at once: one gather per column instead of B slices and concatenations."""
        c = self.columns
        rows = self.rows[np.asarray(indices, dtype=np.int64)]
        lo, counts = c.offset[rows], c.offset[rows + 1] - c.offset[rows]
        index = np.repeat(lo, counts) + _positions(counts)
        return PbsRows(
            counts=counts,
            public=c.public[c.public_state[rows]],
            player=c.player[index],
            slot=c.slot[index],
            belief=c.belief[index],
            target=c.target[index],
            private=c.private[index],
        )


def _positions(counts: np.ndarray) -> np.ndarray:
    """[Σ counts] position of each element within its group, for groups of `counts: [B]` back to back."""
    return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


def _flatten(samples: list[PbsSample]) -> PbsRows:
    return PbsRows(
        counts=np.array([len(s["belief"]) for s in samples]),
        public=np.stack([s["public"] for s in samples]),
        **{k: np.concatenate([s[k] for s in samples]) for k in ("player", "slot", "belief", "target", "private")},
    )


class PbsCollate:
    """Pads samples into a `PbsBatch`; `max_slots` = (K1max, K2max) of the file.

    With `normalize`, beliefs are normalised per sample and player and targets
    divided by the opponent's belief mass (`pvf.nets.normalization`).
    """

    def __init__(self, max_slots: tuple[int, int], normalize: bool = True) -> None:
        self.max_slots = (int(max_slots[0]), int(max_slots[1]))
        self.normalize = normalize

    def __call__(self, samples: PbsRows | list[PbsSample]) -> PbsBatch:
        rows = _flatten(samples) if isinstance(samples, list) else samples
        counts, public, player, slot = rows["counts"], rows["public"], rows["player"], rows["slot"]
        belief, target, private = rows["belief"], rows["target"], rows["private"]
        B = len(counts)
        N, S = int(counts.max()), sum(self.max_slots)
        sample = np.repeat(np.arange(B), counts)
        position = _positions(counts)
        if self.normalize:
            belief, scale = normalize_beliefs(belief, player, sample, B)
            target = np.divide(target, scale, out=np.zeros_like(target), where=scale > 0)
        if (slot >= np.asarray(self.max_slots)[player]).any():
            raise PvfError(f"an infostate slot lies outside the layout's slots {list(self.max_slots)}")
        slot = slot + np.where(player == 1, self.max_slots[0], 0)
        Fp, Fq = public.shape[1], private.shape[1]
        features = np.zeros((B, N, Fp + Fq + PLAYER_FEATURES), dtype=np.float32)
        features[sample, position, :Fp] = public[sample]
        features[sample, position, Fp : Fp + Fq] = private
        features[sample, position, Fp + Fq + player] = 1.0
        dense = np.zeros((3, B, N), dtype=np.float32)  # beliefs, targets, mask
        dense[0, sample, position] = belief
        dense[1, sample, position] = target
        dense[2, sample, position] = 1.0
        slots = np.zeros((3, B, S), dtype=np.float32)  # the same in slots
        slots[0, sample, slot] = belief
        slots[1, sample, slot] = target
        slots[2, sample, slot] = 1.0
        return PbsBatch(
            public=torch.from_numpy(public.astype(np.float32, copy=False)),
            beliefs=torch.from_numpy(dense[0]),
            features=torch.from_numpy(features),
            targets=torch.from_numpy(dense[1]),
            mask=torch.from_numpy(dense[2] > 0),
            slot_beliefs=torch.from_numpy(slots[0]),
            slot_targets=torch.from_numpy(slots[1]),
            slot_mask=torch.from_numpy(slots[2] > 0),
        )


def split_by_trunk(trunk: np.ndarray, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, validation rows) of samples whose trunk strategy is `trunk: [N]`.

    A seeded permutation of the distinct trunks puts round(val_fraction * T)
    of them (at least one) in validation; no trunk is on both sides.
    """
    if not 0.0 < val_fraction < 1.0:
        raise PvfError(f"val_fraction must lie strictly between 0 and 1, got {val_fraction}")
    trunks = np.unique(trunk)
    num_val = max(1, round(val_fraction * len(trunks)))
    if num_val >= len(trunks):
        raise PvfError(
            f"cannot split {len(trunks)} trunk strategies into train and validation "
            f"with val_fraction={val_fraction}; generate more trunks"
        )
    val_trunks = np.random.default_rng(seed).permutation(trunks)[:num_val]
    is_val = np.isin(trunk, val_trunks)
    return np.flatnonzero(~is_val), np.flatnonzero(is_val)
