"""Ensemble training: S independent value networks trained as one batched model.

Member s is the run `pvf train` would make with seed s_k (its own
initialisation, its own dataset file, its own batch order), and all S
members take each training step together:
  1. Init: under `torch.manual_seed(seed)` the member's
     `ValueFunctionModule` is built around its registered architecture
     (`pvf.valuefn.registry`: positional, particle, attention, ...); the
     nets' weights are stacked (`pvf.nets.stacked`: batched matmuls for
     nets of Linear and LayerNorm layers, all three registered ones; `vmap`
     for any other).
  2. Data: each member's training rows are its file's trunk split
     (`split_by_trunk`, seeded as `PbsDataModule`); its batch order is a
     `MemberSampler` (a seeded permutation per epoch, full batches only).
     One step gathers B rows from each of the S files and the architecture
     encodes all S·B samples at once (`Architecture.encode_batch`): a
     particle set is padded to the step's largest set, which changes no
     value (padding is masked). With `preload`, every member's training
     split is encoded once and kept on the device (`pvf.trainers.preloaded`:
     padded to the largest set of all files, repeated feature rows stored
     once), and a step is a gather: no encoding, no host-to-device copy of
     samples per step.
  3. Step: one batched forward of every member on its own batch, the sum
     of the members' masked MSEs, one backward, one Adam step on the
     stacked parameters. Members do not interact: the sum's gradient for
     member s is its own loss's gradient, and Adam is elementwise (its
     step count is shared, as all members step together), so this is S
     independent Adam runs. `separate_run` is the same training one member
     at a time, with the module's own loss: the reference of the tests.
     Both flush denormals to zero in the step (`pvf.trainers.denormals`).
     On CUDA (with `preload`) the whole step — gather, forward, backward,
     Adam — is by default captured once as a CUDA graph and replayed
     (`pvf.trainers.graph_step`; `cuda_graph=False` turns it off).
  4. Member losses are kept on the device (`[steps, S]`, no host sync in
     the step loop); `save_members` writes each member as the checkpoint
     `pvf train` writes (`load_checkpoint` and Lightning's
     `load_from_checkpoint` read it), and `state_dict` / `load_state_dict`
     hold the whole training state (weights, Adam, samplers, step) so a
     killed run can continue.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from torch import Tensor

from pvf.datasets.layout import DataLayout
from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError
from pvf.nets.stacked import StackedNets
from pvf.trainers.data import PbsTorchDataset, file_version, num_samples, split_by_trunk
from pvf.trainers.denormals import flush_denormals
from pvf.trainers.graph_step import GraphStep
from pvf.trainers.module import ValueFunctionModule
from pvf.trainers.preloaded import ENCODE_CHUNK, Preloaded, shared_samples, to_device
from pvf.valuefn.architecture import Batch
from pvf.valuefn.checkpoint import value_function_meta
from pvf.valuefn.encoding import PbsRows
from pvf.valuefn.registry import make_architecture


class MemberSampler:
    """One member's batch order: a seeded permutation of its rows per epoch, cut into full batches.

    num_rows: rows of the member's training set; batch_size: B (at most num_rows).
    `next()` returns the next batch's positions `[B]` in the training set.
    """

    def __init__(self, num_rows: int, batch_size: int, seed: int) -> None:
        if not 0 < batch_size <= num_rows:
            raise PvfError(
                f"batch size {batch_size} does not fit a member's {num_rows} training samples; "
                f"use a batch size from 1 to {num_rows}, or more data (e.g. more --trunks)"
            )
        self.num_rows = num_rows
        self.batch_size = batch_size
        self.generator = torch.Generator().manual_seed(seed)
        self.order = np.empty(0, dtype=np.int64)
        self.position = 0

    def next(self) -> np.ndarray:
        if self.position + self.batch_size > len(self.order):
            self.order = torch.randperm(self.num_rows, generator=self.generator).numpy()
            self.position = 0
        batch = self.order[self.position : self.position + self.batch_size]
        self.position += self.batch_size
        return batch

    def state_dict(self) -> dict[str, Any]:
        return {
            "generator": self.generator.get_state(),
            "order": torch.from_numpy(self.order.copy()),
            "position": self.position,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.generator.set_state(state["generator"].cpu())  # a CPU generator, wherever the state was loaded
        self.order = state["order"].cpu().numpy().copy()
        self.position = int(state["position"])


def concat_rows(parts: Sequence[PbsRows]) -> PbsRows:
    """Several members' `PbsRows` back to back (sample axis and infostate axis)."""
    return PbsRows(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]})


@dataclass(frozen=True)
class MemberData:
    """One member's training data: the file, its training rows and their dataset."""

    path: str
    rows: np.ndarray
    dataset: PbsTorchDataset


def member_data(path: str | Path, seed: int, val_fraction: float = 0.1, target: str = "average") -> MemberData:
    """The training split `PbsDataModule(path, split_seed=seed)` would use."""
    with PBSDataset(path) as ds:
        trunk = ds.trunk
    train_rows, _ = split_by_trunk(trunk, val_fraction, seed)
    return MemberData(str(path), train_rows, PbsTorchDataset(path, train_rows, target))


def build_member(
    architecture: str,
    layout: DataLayout,
    seed: int,
    lr: float = 1e-3,
    lr_schedule: str = "constant",
    **hyper_parameters: Any,
) -> ValueFunctionModule:
    """Member `seed`'s module, initialised as `pvf train` with that seed initialises it.

    hyper_parameters: the architecture's (`pvf.valuefn.registry.architecture`).
    """
    encoding = make_architecture(architecture, **hyper_parameters)
    torch.manual_seed(seed)
    return ValueFunctionModule(encoding, layout=layout.to_dict(), lr=lr, lr_schedule=lr_schedule)


class EnsembleTrainer:
    """S members of one architecture trained together (see the module docstring).

    modules: one module per member (same class and hyper-parameters).
    data: per member its `MemberData`; seeds: per member its seed (batch order).
    batch_size: B samples per member and step.
    max_steps: length of the run (sizes the loss buffer and a cosine schedule).
    device, dtype: where and in what precision the members train.
    backend: of `StackedNets` ("auto", "bmm", "vmap").
    preload: keep all training samples encoded on the device (see the module docstring).
    cuda_graph: run each step as a replayed CUDA graph (`pvf.trainers.graph_step`; needs CUDA and
        preload); None: wherever it can. Steps then go through `train_step`, not `step`.
    """

    def __init__(
        self,
        modules: Sequence[ValueFunctionModule],
        data: Sequence[MemberData],
        seeds: Sequence[int],
        batch_size: int,
        max_steps: int,
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float32,
        backend: str = "auto",
        preload: bool = True,
        cuda_graph: bool | None = None,
    ) -> None:
        if not (len(modules) == len(data) == len(seeds)):
            raise ValueError("one module, one dataset and one seed per member")
        first = modules[0]
        for m in modules[1:]:
            if type(m) is not type(first) or dict(m.hparams) != dict(first.hparams):
                raise PvfError("ensemble members must share architecture, hyper-parameters and data layout")
        self.modules = list(modules)
        self.data = list(data)
        self.seeds = [int(s) for s in seeds]
        self.members = len(modules)
        self.batch_size = batch_size
        self.max_steps = max_steps
        self.device = torch.device(device)
        self.dtype = dtype
        self.architecture = first.architecture  # encodes batches; its `predict` runs the stacked nets
        self.layout = first.layout
        self.nets = StackedNets([m.net.to(dtype) for m in modules], backend).to(self.device)
        self.samplers = [MemberSampler(len(d.rows), batch_size, s) for d, s in zip(self.data, self.seeds)]
        self.preloaded = self._preload() if preload else None
        on_cuda = self.device.type == "cuda"
        if cuda_graph is None:
            cuda_graph = on_cuda and preload
        if cuda_graph:
            # capturable: step count and learning rate (a device tensor) live on the device
            lr: float | Tensor = torch.tensor(first.lr, device=self.device)
            self.optimizer = torch.optim.Adam(self.nets.parameters(), lr=lr, capturable=True)
        else:
            # fused: one kernel for all stacked tensors (still elementwise, so per-member exact);
            # on a CPU 5-7x faster than the default per-tensor loop (Goofspiel-5: 6 vs 40 ms a step)
            self.optimizer = torch.optim.Adam(self.nets.parameters(), lr=first.lr, fused=True)
        self._options = [{k: v for k, v in g.items() if k != "params"} for g in self.optimizer.param_groups]
        self.scheduler = (
            torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=max_steps)
            if first.lr_schedule == "cosine"
            else None
        )
        self.step_count = 0
        self.losses = torch.full((max_steps, self.members), math.nan, dtype=torch.float64, device=self.device)
        self.graph_step = GraphStep(self) if cuda_graph else None

    @classmethod
    def from_files(
        cls,
        paths: Sequence[str | Path],
        architecture: str,
        seeds: Sequence[int],
        max_steps: int,
        batch_size: int = 64,
        val_fraction: float = 0.1,
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float32,
        backend: str = "auto",
        preload: bool = True,
        cuda_graph: bool | None = None,
        target: str = "average",
        **model_args: Any,
    ) -> EnsembleTrainer:
        """Member k trains on `paths[k]` with `seeds[k]`; every file must have one layout.

        target: what is trained on (a name of `pvf.solvers.guarded_values.TARGETS`, as `PbsDataModule`).
        model_args: lr, lr_schedule and the architecture's hyper-parameters (`build_member`).
        """
        layouts = [DataLayout.from_file(p, target) for p in paths]
        if any(lay != layouts[0] for lay in layouts[1:]):
            raise PvfError("the members' dataset files differ in game, depth or layout; an ensemble needs one layout")
        data = [member_data(p, s, val_fraction, target) for p, s in zip(paths, seeds)]
        modules = [build_member(architecture, layouts[0], s, **model_args) for s in seeds]
        return cls(modules, data, seeds, batch_size, max_steps, device, dtype, backend, preload, cuda_graph)

    def _preload(self) -> Preloaded:
        """The members' training sets as rows of their files' samples, shared with the process's other trainers.

        Each distinct (file, target) is encoded whole, once, in chunks of `ENCODE_CHUNK` samples; member k's
        training sample i is its file's row `data[k].rows[i]`.
        """
        sources = list(dict.fromkeys((d.path, d.dataset.target) for d in self.data))  # distinct, in member order
        datasets = [PbsTorchDataset(path, np.arange(num_samples(path)), target) for path, target in sources]
        versions = tuple((*file_version(path), target) for path, target in sources)
        key = (versions, type(self.architecture).__name__, repr(dict(self.modules[0].hparams)), str(self.device))
        samples = shared_samples(
            (*key, self.dtype, ENCODE_CHUNK),
            lambda: (
                (
                    self.encode(d.__getitems__(np.arange(start, min(start + ENCODE_CHUNK, len(d)))))
                    for start in range(0, len(d), ENCODE_CHUNK)
                )
                for d in datasets
            ),
            self.device,
            self.dtype,
        )
        offsets = dict(zip(sources, samples.offsets))
        lookups = [offsets[(d.path, d.dataset.target)] + d.rows for d in self.data]
        return Preloaded(samples, lookups, self.device)

    def encode(self, rows: PbsRows) -> Batch:
        """PBS rows as the architecture's tensors (on the CPU)."""
        return self.architecture.encode_batch(rows, self.layout)

    def next_batch(self) -> Batch:
        """The next step's batches of all members, `[S·B, ...]` (member s's B samples back to back) on the device."""
        positions = [sampler.next() for sampler in self.samplers]
        if self.preloaded is not None:
            return self.preloaded.gather(positions)
        rows = concat_rows([d.dataset.__getitems__(p) for d, p in zip(self.data, positions)])
        return to_device(self.encode(rows), self.device, self.dtype)

    def member_losses(self, batch: Batch) -> Tensor:
        """[S] each member's masked MSE over the real infostates of its own batch (with gradients)."""
        values, targets, mask = self.nets.apply_rows(self.architecture.predict, batch)
        squared = torch.where(mask, (values - targets) ** 2, 0.0).reshape(self.members, -1)
        return squared.sum(dim=1) / mask.reshape(self.members, -1).sum(dim=1)

    def train_step(self) -> Tensor:
        """One training step of all members on their next batches; returns their losses [S] (detached)."""
        if self.graph_step is None:
            return self.step(self.next_batch())
        assert self.preloaded is not None
        losses = self.graph_step(self.preloaded.index([sampler.next() for sampler in self.samplers]))
        return self._record(losses)

    def step(self, batch: Batch) -> Tensor:
        """One training step of all members on `batch` (`[S·B, ...]`); returns their losses [S] (detached)."""
        if self.graph_step is not None:
            raise RuntimeError("this trainer steps by CUDA graph: call train_step()")
        with flush_denormals():
            losses = self.member_losses(batch)
            self.optimizer.zero_grad(set_to_none=True)
            losses.sum().backward()
            self.optimizer.step()
        return self._record(losses.detach())

    def _record(self, losses: Tensor) -> Tensor:
        """After a step: the schedule's next learning rate, the losses [S] kept, the step counted."""
        if self.scheduler is not None:
            self.scheduler.step()
        self.losses[self.step_count] = losses
        self.step_count += 1
        return self.losses[self.step_count - 1]

    def fit(self, callback: Callable[[EnsembleTrainer], None] | None = None, every_n_steps: int = 0) -> None:
        """Train up to `max_steps`; `callback(self)` before the first step and after every `every_n_steps` steps."""
        if callback is not None and self.step_count == 0:
            callback(self)
        while self.step_count < self.max_steps:
            self.train_step()
            if callback is not None and every_n_steps and self.step_count % every_n_steps == 0:
                callback(self)

    def member_net(self, s: int) -> torch.nn.Module:
        """Member s's net (a copy, on the trainer's device, in the module's class)."""
        return self.nets.member(s, self.modules[s].net)

    def save_members(self, paths: Sequence[str | Path]) -> None:
        """Member k as a `pvf train` checkpoint at `paths[k]` (float32, CPU)."""
        for s, path in enumerate(paths):
            self.save_member(s, path)

    def save_member(self, s: int, path: str | Path) -> None:
        """Member s's current weights as a `pvf train` checkpoint at `path` (float32, CPU; written beside it, then
        renamed, so that an interrupted save leaves the previous file)."""
        module = self.modules[s]
        self.nets.member(s, module.net)
        module.net.to(device="cpu", dtype=torch.float32)
        checkpoint = {
            "epoch": 0,
            "global_step": self.step_count,
            "pytorch-lightning_version": pl.__version__,
            "state_dict": {k: v.detach().clone() for k, v in module.state_dict().items()},
            "hyper_parameters": dict(module.hparams),
            "pvf": value_function_meta(module.architecture.name, module.net, module.layout),
        }
        tmp = Path(f"{path}.tmp")
        torch.save(checkpoint, str(tmp))
        os.replace(tmp, path)

    def state_dict(self) -> dict[str, Any]:
        """The whole training state: weights, Adam, schedule, samplers, step, losses."""
        return {
            "nets": self.nets.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            "samplers": [s.state_dict() for s in self.samplers],
            "step": self.step_count,
            "losses": self.losses.cpu(),
            "seeds": list(self.seeds),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if list(state["seeds"]) != self.seeds:
            raise PvfError(f"saved ensemble state has seeds {list(state['seeds'])}, not {self.seeds}")
        self.nets.load_state_dict(state["nets"])
        self.optimizer.load_state_dict(state["optimizer"])
        self._keep_optimizer_options()
        if self.graph_step is not None:
            self.graph_step.reset()  # Adam's state tensors are new: capture again
        if self.scheduler is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        for sampler, s in zip(self.samplers, state["samplers"]):
            sampler.load_state_dict(s)
        self.step_count = int(state["step"])
        self.losses.copy_(state["losses"].to(self.device))

    def _keep_optimizer_options(self) -> None:
        """After loading Adam's state (saved with or without CUDA graphs): this trainer's options again.

        The saved learning rate is kept (a schedule moved it), in this trainer's
        form (a float, or filled into its device tensor); a capturable Adam's
        step counts move to the device.
        """
        for group, options in zip(self.optimizer.param_groups, self._options):
            lr = float(group["lr"])
            group.update(options)
            if isinstance(options["lr"], Tensor):
                options["lr"].fill_(lr)
            else:
                group["lr"] = lr
            on_device = options.get("capturable") or options.get("fused")  # else Adam keeps `step` on the CPU
            for p in group["params"]:
                state = self.optimizer.state.get(p, {})
                if "step" in state:
                    state["step"] = state["step"].to(device=p.device if on_device else "cpu", dtype=torch.float32)


def separate_run(
    module: ValueFunctionModule,
    data: MemberData,
    seed: int,
    batch_size: int,
    steps: int,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """One member trained alone, as `EnsembleTrainer` trains it: losses [steps] (the reference)."""
    module = module.to(device=device, dtype=dtype)
    sampler = MemberSampler(len(data.rows), batch_size, seed)
    optimizer = torch.optim.Adam(module.parameters(), lr=module.lr)
    scheduler = (
        torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps) if module.lr_schedule == "cosine" else None
    )
    losses = torch.zeros(steps, dtype=torch.float64, device=device)
    for step in range(steps):
        rows = data.dataset.__getitems__(sampler.next())
        batch = to_device(module.architecture.encode_batch(rows, module.layout), device, dtype)
        with flush_denormals():
            loss, _ = module.loss(batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if scheduler is not None:
            scheduler.step()
        losses[step] = loss.detach()
    return losses
