"""Thin LightningModules around the value networks (which know nothing of Lightning).

One training step:
  1. the subclass runs its net on its view of the `PbsBatch`
     (`PositionalModule`: slots; `ParticleModule`: the padded particle set);
  2. loss = mean squared error over the batch's real infostates only
     (`mask` / `slot_mask`), so both nets minimise the same quantity;
  3. Adam with the configured learning rate: constant (the authors') or,
     with `lr_schedule: cosine`, annealed to 0 over the run's max_steps
     (an option of ours: a lower final loss; README, fig. 3).

The net is `module.net` and the data layout it was built for `module.layout`
(a `DataLayout`); callbacks (e.g. trunk exploitability every k steps) use
both. Hyper-parameters, the layout included, are plain python, so
checkpoints load with `torch.load(..., weights_only=True)`; each checkpoint
also carries a `"pvf"` entry read by `pvf.trainers.checkpoint`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytorch_lightning as pl
import torch
from torch import Tensor, nn

from pvf.nets import ParticleVF, PositionalVF
from pvf.trainers.checkpoint import value_function_meta
from pvf.trainers.data import PbsBatch
from pvf.trainers.layout import DataLayout


LR_SCHEDULES = ("constant", "cosine")


class ValueFunctionModule(pl.LightningModule):
    """Base: masked MSE, Adam. Subclasses set `architecture`, build `net`, define `predict`."""

    architecture: ClassVar[str]
    net: nn.Module

    def __init__(self, layout: dict[str, Any], lr: float, lr_schedule: str = "constant") -> None:
        super().__init__()
        if lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {lr_schedule!r}")
        self.layout = DataLayout.from_dict(layout)
        self.lr = lr
        self.lr_schedule = lr_schedule
        self._window: Tensor | float = 0.0  # sum of squared errors since train_loss was last logged
        self._window_count = 0

    def predict(self, batch: PbsBatch) -> tuple[Tensor, Tensor, Tensor]:
        """(values, targets, mask), all [B, X] for the subclass's view X of the batch."""
        raise NotImplementedError

    def loss(self, batch: PbsBatch) -> tuple[Tensor, int]:
        """(MSE over real infostates, their number)."""
        values, targets, mask = self.predict(batch)
        count = int(mask.sum())
        return ((values - targets) ** 2)[mask].mean(), count

    def training_step(self, batch: PbsBatch, batch_idx: int) -> Tensor:
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

    def validation_step(self, batch: PbsBatch, batch_idx: int) -> None:
        loss, count = self.loss(batch)
        self.log("val_loss", loss, prog_bar=True, batch_size=count)

    def configure_optimizers(self) -> torch.optim.Optimizer | dict[str, Any]:
        """Adam at `lr` (the authors'), or with "cosine" annealed to 0 over trainer.max_steps."""
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        if self.lr_schedule == "constant":
            return optimizer
        steps = self.trainer.max_steps
        if steps is None or steps < 1:
            raise ValueError("lr_schedule 'cosine' needs trainer.max_steps")
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["pvf"] = value_function_meta(self.architecture, self.net, self.layout)


class PositionalModule(ValueFunctionModule):
    """`PositionalVF(public_dim=Fp, num_slots=K1max+K2max)` on the batch's slot view.

    Paper (app. F): 5 layers, hidden width 5 x input.
    """

    architecture = "positional"

    def __init__(
        self,
        layout: dict[str, Any],
        num_layers: int = 5,
        hidden_multiplier: float = 5.0,
        hidden_width: int | None = None,
        activation: str = "relu",
        lr: float = 1e-3,
        lr_schedule: str = "constant",
    ) -> None:
        super().__init__(layout, lr, lr_schedule)
        self.save_hyperparameters()
        self.net = PositionalVF(
            public_dim=self.layout.public_dim,
            num_slots=self.layout.num_slots,
            num_layers=num_layers,
            hidden_multiplier=hidden_multiplier,
            hidden_width=hidden_width,
            activation=activation,
        )

    def predict(self, batch: PbsBatch) -> tuple[Tensor, Tensor, Tensor]:
        values = self.net(batch["slot_beliefs"], batch["public"])
        return values, batch["slot_targets"], batch["slot_mask"]


class ParticleModule(ValueFunctionModule):
    """`ParticleVF(feature_dim=Fp+Fq+2, public_dim=Fp, basis_dim)` on the batch's particle view.

    basis_dim: K, width of the context; default K1max + K2max, the positional
        net's slot count (the authors' K; Theorem 4 needs at least that).
    Paper (app. F): change basis 3 layers of width 3 x input, regression as
    the positional net (5 layers, width 5 x input). The authors' run: change
    basis 4 layers, regression 3 layers of width 3K.
    """

    architecture = "particle"

    def __init__(
        self,
        layout: dict[str, Any],
        basis_dim: int | None = None,
        basis_layers: int = 3,
        basis_hidden_multiplier: float = 3.0,
        basis_hidden_width: int | None = None,
        regression_layers: int = 5,
        regression_hidden_multiplier: float = 5.0,
        regression_hidden_width: int | None = None,
        activation: str = "relu",
        output: str = "projection",
        lr: float = 1e-3,
        lr_schedule: str = "constant",
    ) -> None:
        super().__init__(layout, lr, lr_schedule)
        self.save_hyperparameters()
        self.net = ParticleVF(
            feature_dim=self.layout.feature_dim,
            public_dim=self.layout.public_dim,
            basis_dim=basis_dim if basis_dim is not None else self.layout.num_slots,
            basis_layers=basis_layers,
            basis_hidden_multiplier=basis_hidden_multiplier,
            basis_hidden_width=basis_hidden_width,
            regression_layers=regression_layers,
            regression_hidden_multiplier=regression_hidden_multiplier,
            regression_hidden_width=regression_hidden_width,
            activation=activation,
            output=output,
        )

    def predict(self, batch: PbsBatch) -> tuple[Tensor, Tensor, Tensor]:
        values = self.net(batch["beliefs"], batch["features"], batch["public"], batch["mask"])
        return values, batch["targets"], batch["mask"]
