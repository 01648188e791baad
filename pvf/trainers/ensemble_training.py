"""Train S seeds of one value function as an ensemble, trunk exploitability logged, resumable.

The ensemble counterpart of `train_value_function` (pvf.trainers.training),
for `pvf reproduce`; member k is the run with `seeds[k]` on `data[k]`:
  1. `MemberGroups` (pvf.trainers.member_groups) trains the members in
     groups, each group an `EnsembleTrainer` (one batched step for its
     members per training step): on a GPU one group of all, on a CPU groups
     whose training state fits the caches, each taking a block of steps (up
     to the next measurement or multiple of `block_steps`) before the next
     group starts.
  2. Before the first step and every `every_n_steps` steps, all members'
     trunks are solved in one batched CFR+ call and their exact trunk
     exploitabilities computed (`ensemble_trunk_exploitability`); each member
     gets a row like `TrunkExploitabilityCallback`'s: step, epoch, its mean
     training loss since the previous row, its latest validation loss
     (computed once per epoch of its data, as Lightning validates; with
     `chosen`, at every measurement), and both exploitability figures.
     With `chosen`, member k's weights go to `chosen[k]` whenever its
     validation loss is the lowest so far (checkpoint selection by held-out
     loss; the earliest of equal losses).
  3. After a block, at most every `save_every_s` seconds (and at the end),
     the whole training state and the rows so far go to `state` (written to
     a temporary file, then renamed); a rerun with the same arguments
     continues from there, also where measurements are rare (fig. 4
     measures only before and after training).
  4. At the end each member is saved as a `pvf train` checkpoint.
With `progress`, a bar on stderr counts the steps of all members (a group
of n of S members moves it n/S of a step; a rerun starts it where the saved
state stopped) and shows the members' mean trunk exploitability
at the last measurement.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from pvf.datasets.reader import PBSDataset
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.solvers.trunk_solver import build_trunk
from pvf.solvers.warm_exploitability import TrunkExploitabilityLP
from pvf.trainers.data import PbsTorchDataset, split_by_trunk
from pvf.trainers.member_groups import BLOCK_STEPS, MemberGroups
from pvf.trainers.preloaded import to_device
from pvf.trainers.training import TrainingRun
from pvf.valuefn.architecture import Batch
from pvf.valuefn.ensemble_evaluator import ensemble_trunk_exploitability
from pvf.valuefn.evaluator import check_features

VALIDATION_CHUNK = 1024  # samples per validation forward pass


def train_ensemble(
    data: Sequence[str | Path],
    architecture: str,
    checkpoints: Sequence[str | Path],
    seeds: Sequence[int],
    max_steps: int,
    every_n_steps: int,
    iterations: int = 100,
    batch_size: int = 64,
    device: str = "cpu",
    state: str | Path | None = None,
    save_every_s: float = 60.0,
    target: str = "average",
    val_fraction: float = 0.1,
    cuda_graph: bool | None = None,
    group_size: int | None = None,
    progress: bool = False,
    position: int = 0,
    block_steps: int = BLOCK_STEPS,
    chosen: Sequence[str | Path] | None = None,
    **model_args: Any,
) -> list[TrainingRun]:
    """Train member k on `data[k]` with `seeds[k]`, save it to `checkpoints[k]`; one `TrainingRun` each.

    device: "cpu" or "cuda" (trunk solves run CFR+ on the CPU, the nets where they are).
    state: file of the resumable training state (None: not saved).
    target: what is trained on, a name of `pvf.solvers.guarded_values.TARGETS` (as `train_value_function`).
    val_fraction: share of each member's trunk strategies held out for validation (as `train_value_function`).
    cuda_graph: each step one replayed CUDA graph (`EnsembleTrainer`; None: on CUDA).
    group_size: members trained together (`MemberGroups`; None: `auto_group_size`).
    progress: a step bar on stderr; position: its line (one per ensemble trained at once).
    block_steps: steps between two chances to save the state (`MemberGroups.fit`).
    chosen: where member k's weights at its lowest validation loss go (validated at every measurement).
    model_args: lr, lr_schedule and the architecture's hyper-parameters (e.g. num_layers).
    """
    trainer = MemberGroups.from_files(
        data,
        architecture,
        seeds,
        max_steps,
        batch_size,
        group_size,
        device=device,
        target=target,
        val_fraction=val_fraction,
        cuda_graph=cuda_graph,
        **model_args,
    )
    layout = trainer.layout
    tree = build_public_tree(layout.game)
    trunk = build_trunk(tree, layout.depth)
    features = build_feature_tables(tree)
    check_features(features, layout)
    lp = TrunkExploitabilityLP(trunk)
    validation = [_validation_set(path, seed, target, val_fraction) for path, seed in zip(data, seeds)]
    encoded: dict[int, list[Batch]] = {}  # member -> its validation chunks, encoded once
    histories: list[list[dict[str, Any]]] = [[] for _ in seeds]
    val_loss = [math.nan] * len(seeds)
    val_epoch = [0] * len(seeds)  # Lightning first validates at the end of epoch 0
    if state is not None and Path(state).exists():
        saved = torch.load(state, map_location="cpu", weights_only=True)  # load_state_dict moves to the device
        trainer.load_state_dict(saved["trainer"])
        histories, val_loss, val_epoch = saved["histories"], saved["val_loss"], saved["val_epoch"]
    last_save = time.monotonic()
    logged = histories[0][-1]["step"] if histories[0] else -1
    bar = tqdm(
        total=max_steps,
        initial=trainer.step_count,
        desc=f"{architecture} x{len(seeds)}",
        unit="step",
        disable=not progress,
        position=position,
        dynamic_ncols=True,
    )
    member_steps = trainer.step_count * trainer.members

    def count(members: int) -> None:
        nonlocal member_steps
        member_steps += members
        bar.update(member_steps // trainer.members - bar.n)

    def measure(tr: MemberGroups) -> None:
        nonlocal logged
        step = tr.step_count
        if step == logged:
            return
        results = ensemble_trunk_exploitability(trunk, tr.nets(), tr.architecture, layout, features, iterations, lp)
        window = tr.loss_window(max(logged, 0), step).double().cpu()  # one host sync per measurement
        for k, result in enumerate(results):
            epoch = step * batch_size // len(tr.data[k].rows)
            if chosen is not None:
                best = min((r["val_loss"] for r in histories[k]), default=math.inf)
                val_loss[k], val_epoch[k] = _validation_loss(tr, k, validation[k], encoded), epoch
                if val_loss[k] < best:
                    tr.save_member(k, chosen[k])
            elif epoch > val_epoch[k]:  # Lightning validates once per epoch
                val_loss[k], val_epoch[k] = _validation_loss(tr, k, validation[k], encoded), epoch
            histories[k].append(
                {
                    "step": step,
                    "epoch": epoch,
                    "train_loss": float(window[:, k].mean()) if len(window) else math.nan,
                    "val_loss": val_loss[k],
                    "trunk_exploitability": result.exploitability,
                    "trunk_exploitability_openspiel": result.openspiel_convention,
                }
            )
        logged = step
        bar.update(step - bar.n)
        bar.set_postfix(trunk_exploitability=f"{np.mean([r.exploitability for r in results]):.4f}")

    def save(tr: MemberGroups, final: bool = False) -> None:
        """Between blocks when `save_every_s` has passed; the finished state once, with `final`."""
        nonlocal last_save
        due = tr.step_count < tr.max_steps and time.monotonic() - last_save >= save_every_s
        if state is not None and (final or due):
            _save_state(
                state,
                {"trainer": tr.state_dict(), "histories": histories, "val_loss": val_loss, "val_epoch": val_epoch},
            )
            last_save = time.monotonic()

    with bar:
        trainer.fit(measure, every_n_steps, count if progress else None, on_block=save, block_steps=block_steps)
        measure(trainer)  # the last step, when every_n_steps does not divide max_steps
        save(trainer, final=True)  # a crash while the members are written resumes here
    trainer.save_members(checkpoints)
    return [TrainingRun(str(path), history) for path, history in zip(checkpoints, histories)]


def _validation_set(path: str | Path, seed: int, target: str, val_fraction: float = 0.1) -> PbsTorchDataset:
    """The validation split `PbsDataModule(path, split_seed=seed, target=target)` holds out."""
    with PBSDataset(path) as ds:
        trunk = ds.trunk
    return PbsTorchDataset(path, split_by_trunk(trunk, val_fraction, seed)[1], target)


@torch.no_grad()
def _validation_loss(trainer: MemberGroups, k: int, dataset: PbsTorchDataset, encoded: dict[int, list[Batch]]) -> float:
    """Member k's MSE over the real infostates of its whole validation set.

    encoded: member -> its validation set's encoded chunks, filled on first use (encoded once, not per measurement).
    """
    if k not in encoded:
        chunks = [
            list(range(a, min(a + VALIDATION_CHUNK, len(dataset)))) for a in range(0, len(dataset), VALIDATION_CHUNK)
        ]
        encoded[k] = [trainer.encode(dataset.__getitems__(rows)) for rows in chunks]
    net = trainer.member_net(k).to(trainer.device)
    total, count = 0.0, 0
    for chunk in encoded[k]:
        batch = to_device(chunk, trainer.device, trainer.dtype)
        values, targets, mask = trainer.architecture.predict(net, batch)
        total += float(torch.where(mask, (values - targets) ** 2, 0.0).sum())
        count += int(mask.sum())
    return total / count if count else math.nan


def _save_state(path: str | Path, state: dict[str, Any]) -> None:
    """Write `state` to a temporary file beside `path`, then rename it over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)
