"""LightningDataModule over one PBS dataset file (docs/hdf5_schema.md).

1. At construction the file's layout (game, feature widths, slots) is read,
   so the CLI can hand it to the model before training (`link_arguments`).
2. `setup()` splits the samples by trunk strategy (`/samples/trunk`) with a
   seeded permutation: validation holds whole trunks, never single rows.
3. Loaders yield `PbsBatch`es (pvf.trainers.data) that both networks read;
   workers open the file themselves, so `num_workers > 0` is spawn-safe.
"""

from __future__ import annotations

from typing import Literal

import pytorch_lightning as pl
from torch.utils.data import DataLoader

from pvf.datasets.reader import PBSDataset
from pvf.trainers.data import PbsCollate, PbsTorchDataset, split_by_trunk
from pvf.trainers.layout import DataLayout


class PbsDataModule(pl.LightningDataModule):
    """Train/validation loaders over the PBS file at `path`.

    path: HDF5 dataset written by `pvf generate`.
    target: train on the average-profile values ("average", column `target`)
        or the last CFR+ iterate's ("current", column `target_current`).
    batch_size: samples (PBSs) per batch.
    val_fraction: share of trunk strategies held out for validation.
    split_seed: seed of the trunk permutation.
    num_workers: DataLoader worker processes (0: load in the main process).
    normalize: beliefs normalised per player, targets divided by the
        opponent's belief mass (`pvf.nets.normalization`); losses are then in
        normalised units. False: raw reaches and values, as the authors trained.
    """

    def __init__(
        self,
        path: str,
        target: Literal["average", "current"] = "average",
        batch_size: int = 64,
        val_fraction: float = 0.1,
        split_seed: int = 0,
        num_workers: int = 0,
        normalize: bool = True,
    ) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layout = DataLayout.from_file(path, target, normalize)
        self.collate = PbsCollate(self.layout.max_slots, normalize)
        self.train_set: PbsTorchDataset | None = None
        self.val_set: PbsTorchDataset | None = None

    def setup(self, stage: str | None = None) -> None:
        if self.train_set is not None:
            return
        with PBSDataset(self.hparams.path) as ds:
            trunk = ds.trunk
        train_rows, val_rows = split_by_trunk(trunk, self.hparams.val_fraction, self.hparams.split_seed)
        self.train_set = PbsTorchDataset(self.hparams.path, train_rows, self.hparams.target)
        self.val_set = PbsTorchDataset(self.hparams.path, val_rows, self.hparams.target)

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_set, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_set, shuffle=False)

    def _loader(self, dataset: PbsTorchDataset | None, shuffle: bool) -> DataLoader:
        if dataset is None:
            raise RuntimeError("call setup() before asking for a loader")
        workers = self.hparams.num_workers
        return DataLoader(
            dataset,
            batch_size=self.hparams.batch_size,
            shuffle=shuffle,
            collate_fn=self.collate,
            num_workers=workers,
            persistent_workers=workers > 0,
        )
