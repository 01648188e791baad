"""An ensemble's whole training step as one CUDA graph: gather, forward, backward and Adam, replayed.

At the paper's sizes a GPU training step is launch-bound: a step of 10
members costs about what one member's step costs (docs/ensembles.md), most
of it the CPU launching a few hundred small kernels. A CUDA graph
(`torch.cuda.CUDAGraph`) records those kernels once and replays them with
one launch. A replay repeats fixed kernels on fixed addresses, so:
  1. the data is preloaded (`EnsembleTrainer(preload=True)`): every tensor
     of a step has the same shape at every step (particle sets padded to
     the widest set of all members' files), and the only per-step input is
     the row index `[S·B]`, copied into a static buffer before each replay;
  2. Adam is `capturable=True` with its learning rate a device tensor: its
     step count lives on the device, and a cosine schedule fills the
     learning-rate tensor between replays;
  3. capture follows torch's recipe: a few warm-up steps on a side stream
     (autograd and Adam allocate their buffers), gradients set to None,
     then one step recorded. The warm-up steps are real updates, so the
     weights and Adam's state are put back afterwards, copied in place (the
     graph keeps their addresses): the first replay is the run's first step.
The losses `[S]` land in a static buffer of the graph. The arithmetic is
`EnsembleTrainer.step`'s; `tests/trainers/test_ensemble.py` compares
float64 trajectories of both on CUDA.
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch import Tensor

from pvf.errors import PvfError
from pvf.trainers.preloaded import Preloaded
from pvf.valuefn.architecture import Batch

WARMUP = 3  # steps before capture (torch's examples use 3)


class StepOwner(Protocol):
    """What a graph step needs of its trainer (`pvf.trainers.ensemble.EnsembleTrainer` is one)."""

    device: torch.device
    preloaded: Preloaded | None
    optimizer: torch.optim.Optimizer

    def member_losses(self, batch: Batch) -> Tensor: ...


class GraphStep:
    """`step(index)`: index `[S·B]` (rows of the preloaded sets, on the device) -> losses `[S]`.

    The losses tensor is the graph's static output: read or copy it before
    the next call. `reset()` drops the graph (after the optimizer's state
    tensors were replaced, e.g. by `load_state_dict`); the next call
    captures again.
    """

    def __init__(self, trainer: StepOwner) -> None:
        if trainer.device.type != "cuda" or trainer.preloaded is None:
            raise PvfError(
                "a CUDA-graph training step needs a CUDA device and preloaded data; drop the CUDA-graph option"
            )
        self.trainer = trainer
        self.graph: torch.cuda.CUDAGraph | None = None
        self.index: Tensor | None = None
        self.losses: Tensor | None = None

    def reset(self) -> None:
        self.graph = None

    def __call__(self, index: Tensor) -> Tensor:
        if self.graph is None or self.index is None or self.index.shape != index.shape:
            self._capture(index)
        assert self.graph is not None and self.index is not None and self.losses is not None
        self.index.copy_(index)
        self.graph.replay()
        return self.losses

    def _body(self) -> Tensor:
        """The step on the static index: gather, member losses, backward, Adam; losses [S] (detached)."""
        trainer = self.trainer
        assert trainer.preloaded is not None and self.index is not None
        batch = trainer.preloaded.select(self.index)
        losses = trainer.member_losses(batch)
        losses.sum().backward()
        trainer.optimizer.step()
        return losses.detach()

    def _capture(self, index: Tensor) -> None:
        trainer, device = self.trainer, self.trainer.device
        optimizer = trainer.optimizer
        self.index = index.clone()
        params = [p for group in optimizer.param_groups for p in group["params"]]
        weights = [p.detach().clone() for p in params]
        saved = {p: {k: v.clone() for k, v in s.items()} for p, s in optimizer.state.items()}
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(WARMUP):
                optimizer.zero_grad(set_to_none=True)
                self._body()
        torch.cuda.current_stream(device).wait_stream(side)
        optimizer.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.losses = self._body()
        with torch.no_grad():  # undo the warm-up steps (capture itself ran nothing)
            for p, w in zip(params, weights):
                p.copy_(w)
            for p, state in optimizer.state.items():
                for key, value in state.items():
                    if p in saved:
                        value.copy_(saved[p][key])
                    else:  # created by the warm-up: a fresh Adam's state is zeros, step 0
                        value.zero_()
        self.graph = graph
