"""Train one value function from Python, with trunk exploitability logged (for `pvf reproduce`).

The same pieces as `pvf train fit --config configs/data/<game>.yaml --config configs/model/<name>.yaml`:
  1. `PbsDataModule` over the PBS file (validation split by trunk, seeded);
  2. `ValueFunctionModule` handed the architecture by name
     (`pvf.valuefn.registry`) with the paper's sizes (app. F) unless
     overridden (`pvf reproduce` passes a model config's arguments and the
     training defaults', `pvf.trainers.configs`), its net built for the file's layout;
  3. a Lightning `Trainer` for `max_steps` optimizer steps, seeded, with
     `TrunkExploitabilityCallback` measuring every `every_n_steps` steps;
  4. the final weights saved as a `pvf train` checkpoint (loadable by
     `pvf.valuefn.checkpoint.load_checkpoint` and `pvf evaluate`).
With `every_n_steps=None` (particle data: its game has no public tree to
solve a trunk in) the callback is `ValidationHistory` instead: a row per
validation and, saved at the end, the weights of the lowest validation loss
(early stopping without stopping).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch

from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.exploitability_callback import TrunkExploitabilityCallback
from pvf.trainers.lightning_warnings import ignore_lightning_warnings
from pvf.trainers.module import ValueFunctionModule
from pvf.valuefn.registry import make_architecture


@dataclass(frozen=True)
class TrainingRun:
    """A finished training run: its checkpoint and the callback's measurements (dict rows)."""

    checkpoint: str
    history: list[dict[str, Any]]


class ValidationHistory(pl.Callback):
    """A row (step, epoch, val_loss) per validation; the best weights are restored when training ends."""

    def __init__(self) -> None:
        self.history: list[dict[str, Any]] = []
        self._best: tuple[float, dict[str, torch.Tensor]] | None = None

    def on_validation_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        val = trainer.callback_metrics.get("val_loss")
        if trainer.sanity_checking or not isinstance(val, torch.Tensor):
            return
        loss = float(val)
        self.history.append({"step": int(trainer.global_step), "epoch": int(trainer.current_epoch), "val_loss": loss})
        if self._best is None or loss < self._best[0]:
            self._best = (loss, {k: v.detach().clone() for k, v in pl_module.state_dict().items()})

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self._best is not None:
            pl_module.load_state_dict(self._best[1])


def train_value_function(
    data: str | Path,
    architecture: str,
    checkpoint: str | Path,
    seed: int,
    max_steps: int,
    every_n_steps: int | None,
    iterations: int = 100,
    batch_size: int = 64,
    progress: bool = False,
    accelerator: str = "cpu",
    target: str | None = None,
    val_fraction: float = 0.1,
    **model_args: Any,
) -> TrainingRun:
    """Train `architecture` on `data` for `max_steps` steps and save it to `checkpoint`.

    every_n_steps: trunk exploitability every so many steps; None: `ValidationHistory`.
    accelerator: Lightning's ("cpu", "gpu", "auto"); the trunk solves of the
        callback run the net where it is and CFR+ on the CPU.
    target: what is trained on, a name of `pvf.solvers.guarded_values.TARGETS`; None: the file's target column
        (PbsDataModule).
    val_fraction: share of trunk strategies held out for validation (PbsDataModule).
    model_args: the architecture's hyper-parameters (e.g. num_layers, basis_layers)
        and the module's (lr, lr_schedule).
    """
    pl.seed_everything(seed, verbose=False)
    datamodule = PbsDataModule(
        str(data), batch_size=batch_size, val_fraction=val_fraction, split_seed=seed, target=target
    )
    module_args = {k: model_args.pop(k) for k in ("lr", "lr_schedule") if k in model_args}
    net = make_architecture(architecture, **model_args)
    module = ValueFunctionModule(net, layout=datamodule.layout.to_dict(), **module_args)
    callback: TrunkExploitabilityCallback | ValidationHistory = (
        ValidationHistory()
        if every_n_steps is None
        else TrunkExploitabilityCallback(every_n_steps=every_n_steps, iterations=iterations)
    )
    with _quiet_lightning(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        ignore_lightning_warnings()
        trainer = pl.Trainer(
            max_steps=max_steps,
            accelerator=accelerator,
            devices=1,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=progress,
            enable_model_summary=False,
            callbacks=[callback],
            num_sanity_val_steps=0,
        )
        try:
            trainer.fit(module, datamodule=datamodule)
        except SystemExit:
            if trainer.interrupted:  # Lightning turns Ctrl-C (and pvf's SIGTERM) into sys.exit(1): an interrupt again
                raise KeyboardInterrupt from None
            raise
    trainer.save_checkpoint(
        str(checkpoint), weights_only=False
    )  # full Lightning checkpoint (its default), said explicitly
    return TrainingRun(str(checkpoint), callback.history)


@contextlib.contextmanager
def _quiet_lightning() -> Iterator[None]:
    """Lightning's notices of every run (devices found, a logging tip, `max_steps` reached) held back:
    `pvf reproduce --separate-runs` trains twenty runs; its warnings and errors still show."""
    log = logging.getLogger("pytorch_lightning.utilities.rank_zero")
    level = log.level
    log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        log.setLevel(level)
