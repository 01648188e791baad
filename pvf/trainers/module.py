"""The LightningModule: a thin training loop around a value network it is handed.

`ValueFunctionModule(architecture, layout, lr, lr_schedule)` receives its
network as an `Architecture` (`pvf.valuefn`: positional, particle,
attention, ...), built in a config (`model.init_args.architecture:
{class_path: ..., init_args: {...}}`); the data module's layout is linked
in, and the module builds `self.net = architecture.build(layout)`. The
module itself knows no network. One training step:
  1. the DataLoader yields flat PBS rows (`pvf.trainers.data`); the
     architecture encodes them into its tensors before they are moved to
     the device (`on_before_batch_transfer`);
  2. loss = mean squared error over the batch's real infostates only
     (`mask`), so every architecture minimises the same quantity;
  3. Adam with the configured learning rate: constant (the authors') or,
     with `lr_schedule: cosine`, annealed to 0 over the run's max_steps
     (an option of ours: a lower final loss; docs/results/reproduction.md, fig. 3);
     denormals are flushed to zero in the step (`pvf.trainers.denormals`).

The net is `module.net`, its architecture `module.architecture` and the data
layout `module.layout`; callbacks (e.g. trunk exploitability every k steps)
use them. Hyper-parameters are plain python (the architecture as its name
and arguments), so checkpoints load with `torch.load(..., weights_only=True)`;
each checkpoint also carries a `"pvf"` entry read by `pvf.valuefn.checkpoint`.
"""

from __future__ import annotations

from typing import Any

import pytorch_lightning as pl
import torch
from torch import Tensor

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.trainers.denormals import flush_denormals
from pvf.valuefn.architecture import Architecture, Batch
from pvf.valuefn.checkpoint import value_function_meta
from pvf.valuefn.encoding import PbsRows
from pvf.valuefn.registry import from_class_path, to_class_path

LR_SCHEDULES = ("constant", "cosine")


class ValueFunctionModule(pl.LightningModule):
    """Masked MSE and Adam around `architecture.build(layout)`.

    architecture: the network and its encoding (`pvf.valuefn.architecture`).
    layout: the training data's `DataLayout.to_dict()` (the CLI links it from the data module).
    lr: Adam's learning rate (paper: 1e-3).
    lr_schedule: "constant" (the authors') or "cosine" (annealed to 0 over trainer.max_steps).
    """

    def __init__(
        self, architecture: Architecture, layout: dict[str, Any], lr: float = 1e-3, lr_schedule: str = "constant"
    ) -> None:
        super().__init__()
        if lr_schedule not in LR_SCHEDULES:
            raise PvfError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {lr_schedule!r}")
        if not lr > 0:
            raise PvfError(f"the learning rate lr must be positive, got {lr}")
        if isinstance(architecture, dict):  # hyper-parameters of a checkpoint (`load_from_checkpoint`)
            architecture = from_class_path(architecture)
        self.save_hyperparameters(ignore=["architecture"])
        self.hparams["architecture"] = to_class_path(architecture)
        self.architecture = architecture
        self.layout = DataLayout.from_dict(layout)
        try:
            self.net = architecture.build(self.layout)
        except ValueError as exc:
            raise PvfError(f"{architecture.name} network: {exc}") from None
        self.lr = lr
        self.lr_schedule = lr_schedule
        self._window: Tensor | float = 0.0  # sum of squared errors since train_loss was last logged
        self._window_count = 0

    def on_before_batch_transfer(self, batch: PbsRows | Batch, dataloader_idx: int) -> Batch:
        if isinstance(batch, dict) and "counts" in batch:  # flat rows from the DataLoader
            return self.architecture.encode_batch(batch, self.layout)
        return batch

    def loss(self, batch: Batch) -> tuple[Tensor, int]:
        """(MSE over real infostates, their number)."""
        values, targets, mask = self.architecture.predict(self.net, batch)
        count = int(mask.sum())
        return ((values - targets) ** 2)[mask].mean(), count

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor:
        loss, count = self.loss(batch)
        # `self.log` costs as much as a small net's step, so train_loss is logged only on the
        # steps the loggers write (every trainer.log_every_n_steps): the MSE over the window.
        self._window = self._window + loss.detach() * count
        self._window_count += count
        every = self.trainer.log_every_n_steps or 1
        if (self.global_step + 1) % every == 0:
            self.log("train_loss", self._window / self._window_count, prog_bar=True, batch_size=self._window_count)
            self._window, self._window_count = 0.0, 0
        return loss

    def on_train_batch_end(self, outputs: Any, batch: Batch, batch_idx: int) -> None:
        """At trainer.max_steps, stop through `should_stop`, so Lightning validates (and checkpoints) the last
        step where it falls inside an epoch: stopped by max_steps alone, Lightning does neither, and a fit of
        4,096 steps over epochs of 1,050 batches kept only the weights of step 3,150."""
        if self.trainer.max_steps > 0 and self.global_step >= self.trainer.max_steps:
            self.trainer.should_stop = True

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        loss, count = self.loss(batch)
        self.log("val_loss", loss, prog_bar=True, batch_size=count)

    def test_step(self, batch: Batch, batch_idx: int) -> None:
        loss, count = self.loss(batch)
        self.log("test_loss", loss, prog_bar=True, batch_size=count)

    def optimizer_step(self, epoch: int, batch_idx: int, optimizer: Any, optimizer_closure: Any = None) -> None:
        """Lightning's step (forward, backward and Adam in the closure) with denormals flushed to zero."""
        with flush_denormals():
            super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)

    def configure_optimizers(self) -> torch.optim.Optimizer | dict[str, Any]:
        """Adam at `lr` (the authors'), or with "cosine" annealed to 0 over trainer.max_steps.

        Fused (one kernel over all parameters): the same update as the default per-tensor
        loop, faster on CPU and GPU.
        """
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr, fused=True)
        if self.lr_schedule == "constant":
            return optimizer
        steps = self.trainer.max_steps
        if steps is None or steps < 1:
            raise PvfError("lr_schedule 'cosine' needs trainer.max_steps")
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["pvf"] = value_function_meta(self.architecture.name, self.net, self.layout)
