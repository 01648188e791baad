"""Train one value function from Python, with trunk exploitability logged (for `pvf reproduce`).

The same pieces as `pvf train fit --config configs/<game>_<architecture>.yaml`:
  1. `PbsDataModule` over the PBS file (validation split by trunk, seeded);
  2. `ValueFunctionModule` handed the architecture by name
     (`pvf.valuefn.registry`) with the paper's sizes (app. F) unless
     overridden, its net built for the file's layout;
  3. a Lightning `Trainer` for `max_steps` optimizer steps, seeded, with
     `TrunkExploitabilityCallback` measuring every `every_n_steps` steps;
  4. the final weights saved as a `pvf train` checkpoint (loadable by
     `pvf.valuefn.checkpoint.load_value_function` and `pvf evaluate`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytorch_lightning as pl

from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.exploitability_callback import TrunkExploitabilityCallback
from pvf.trainers.module import ValueFunctionModule
from pvf.valuefn.registry import architecture as make_architecture


@dataclass(frozen=True)
class TrainingRun:
    """A finished training run: its checkpoint and the callback's measurements (dict rows)."""

    checkpoint: str
    history: list[dict[str, Any]]


def train_value_function(
    data: str | Path,
    architecture: str,
    checkpoint: str | Path,
    seed: int,
    max_steps: int,
    every_n_steps: int,
    iterations: int = 100,
    batch_size: int = 64,
    progress: bool = False,
    accelerator: str = "cpu",
    target: str = "average",
    **model_args: Any,
) -> TrainingRun:
    """Train `architecture` on `data` for `max_steps` steps and save it to `checkpoint`.

    accelerator: Lightning's ("cpu", "gpu", "auto"); the trunk solves of the
        callback run the net where it is and CFR+ on the CPU.
    target: the profile whose values are trained on, "average" or "current" (PbsDataModule).
    model_args: the architecture's hyper-parameters (e.g. num_layers, basis_layers)
        and the module's (lr, lr_schedule).
    """
    pl.seed_everything(seed, verbose=False)
    datamodule = PbsDataModule(str(data), batch_size=batch_size, split_seed=seed, target=target)
    module_args = {k: model_args.pop(k) for k in ("lr", "lr_schedule") if k in model_args}
    net = make_architecture(architecture, **model_args)
    module = ValueFunctionModule(net, layout=datamodule.layout.to_dict(), **module_args)
    callback = TrunkExploitabilityCallback(every_n_steps=every_n_steps, iterations=iterations)
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
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        warnings.filterwarnings("ignore", message=".*overridden `on_before_batch_transfer`.*")  # the module encodes: intended
        trainer.fit(module, datamodule=datamodule)
    trainer.save_checkpoint(str(checkpoint), weights_only=False)  # full Lightning checkpoint (its default), said explicitly
    return TrainingRun(str(checkpoint), callback.history)
