"""LightningDataModule over one PBS dataset file (docs/hdf5_schema.md).

1. At construction the file's layout (game, feature widths, slots) is read,
   so the CLI can hand it to the model before training (`link_arguments`).
2. `setup()` splits the samples by trunk strategy (`/samples/trunk`) with a
   seeded permutation: validation holds whole trunks, never single rows.
   A file too large for memory is read in blocks of samples
   (`pvf.trainers.data`, 2): the training loader visits the blocks in a
   random order, each shuffled, and validation holds whole blocks' trunks.
3. Loaders yield flat `PbsRows` (pvf.trainers.data) that the model's
   architecture encodes; workers open the file themselves, so
   `num_workers > 0` is spawn-safe. `pvf train test` evaluates on the
   validation trunks (the only held-out data a file has).
"""

from __future__ import annotations

from typing import Literal

import pytorch_lightning as pl
from torch.utils.data import DataLoader

from pvf.datasets.layout import DataLayout
from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError
from pvf.trainers.data import (
    BlockShuffle,
    PbsCollate,
    PbsTorchDataset,
    default_block_samples,
    split_by_block,
    split_by_trunk,
)


class PbsDataModule(pl.LightningDataModule):
    """Train/validation loaders over the PBS file at `path`.

    path: HDF5 dataset written by `pvf generate`.
    target: train on the average-profile values ("average", column `target`),
        the last CFR+ iterate's ("current", column `target_current`) or best
        responses, guarded where a belief is zero ("best_response"), or to one
        mixed plan ("grouped", "local"; column `target` of a file generated
        with that target); None (the default): the file's
        column `target`, whichever it holds (`pvf generate` writes best
        responses by default, older files the average profile's).
    batch_size: samples (PBSs) per batch.
    val_fraction: share of trunk strategies held out for validation.
    split_seed: seed of the trunk permutation.
    num_workers: DataLoader worker processes (0: load in the main process).
    normalize: beliefs normalised per player, targets divided by the
        opponent's belief mass (`pvf.valuefn.encoding`); losses are then in
        normalised units. False: raw reaches and values, as the authors trained.
    reach_feature: particle nets also take each row's counterfactual reach
        (`/infostates/cf_reach`) as an input where the file has one; false
        ignores it (the nets of files written before it).
    opponent_feature: particle nets also take each row's mean opponent
        private features (`/infostates/cf_opponent`) where the file has them;
        false ignores them.
    rollout_feature: particle nets also take each row's rollout value
        (`/infostates/cf_rollout`, `pvf generate --rollout-input β`) where
        the file has it; false ignores it.
    block_samples: read the file in blocks of this many consecutive samples, one
        block in memory per loader; 0: the whole file in memory; None (the
        default): the whole file where its columns take at most 8 GiB, else
        blocks of about 512 MiB (`pvf.trainers.data.default_block_samples`).
        With `num_workers` > 0 each worker reads the blocks of its batches itself
        (consecutive batches share a block, so each worker reads most blocks) and
        none ahead; with 0 the next block is read in a background thread.
    """

    def __init__(
        self,
        path: str,
        target: Literal["average", "current", "best_response", "grouped", "local"] | None = None,
        batch_size: int = 64,
        val_fraction: float = 0.1,
        split_seed: int = 0,
        num_workers: int = 0,
        normalize: bool = True,
        reach_feature: bool = True,
        opponent_feature: bool = True,
        rollout_feature: bool = True,
        block_samples: int | None = None,
    ) -> None:
        super().__init__()
        if batch_size < 1:
            raise PvfError(f"data.batch_size must be a positive integer, got {batch_size}")
        if block_samples is not None and block_samples < 0:
            raise PvfError(
                f"data.block_samples must be non-negative (0: the whole file in memory), got {block_samples}"
            )
        if num_workers < 0:
            raise PvfError(f"data.num_workers must be non-negative, got {num_workers}")
        if not 0.0 < val_fraction < 1.0:  # checked here, before the trainer starts, not at the split
            raise PvfError(f"data.val_fraction must lie strictly between 0 and 1, got {val_fraction}")
        self.save_hyperparameters()
        self.layout = DataLayout.from_file(path, target, normalize, reach_feature, opponent_feature, rollout_feature)
        self.collate = PbsCollate()
        self.train_set: PbsTorchDataset | None = None
        self.val_set: PbsTorchDataset | None = None

    def setup(self, stage: str | None = None) -> None:
        if self.train_set is not None:
            return
        block = self.hparams.block_samples
        with PBSDataset(self.hparams.path) as ds:
            trunk = ds.trunk
            block = default_block_samples(ds) if block is None else block
        if block:
            train_rows, val_rows = split_by_block(trunk, block, self.hparams.val_fraction, self.hparams.split_seed)
        else:
            train_rows, val_rows = split_by_trunk(trunk, self.hparams.val_fraction, self.hparams.split_seed)
        self.train_set = PbsTorchDataset(self.hparams.path, train_rows, self.layout.target, block)
        self.val_set = PbsTorchDataset(self.hparams.path, val_rows, self.layout.target, block)

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_set, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_set, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader(self.val_set, shuffle=False)

    def _loader(self, dataset: PbsTorchDataset | None, shuffle: bool) -> DataLoader:
        if dataset is None:
            raise RuntimeError("call setup() before asking for a loader")
        workers = self.hparams.num_workers
        by_block = shuffle and dataset.block_samples > 0
        return DataLoader(
            dataset,
            batch_size=self.hparams.batch_size,
            shuffle=shuffle and not by_block,
            sampler=BlockShuffle(dataset.blocks(), dataset.expect) if by_block else None,
            collate_fn=self.collate,
            num_workers=workers,
            persistent_workers=workers > 0,
        )
