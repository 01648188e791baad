"""An ensemble trained in groups of members, one group after another in blocks of steps.

Members never interact, so the S members of an ensemble may train in any
grouping and order as long as each takes its own steps in order. On a GPU
one group of all S is fastest (one batched step fills it). On a CPU it is
not for large nets: a member's training state (weights, gradients, Adam's
two moments) that stays in the caches from one step to the next is worth
more than batching members' matrix products. Measured on the 2-core
development machine (docs/ensembles.md), 10 members, ms per step of all
ten: Goofspiel-5 positional (940k parameters) 65 in one group against 47 in
ten groups of one, particle (1.07M) 115 against 97; Leduc's nets (84–126k)
are 1.2–2.8x faster in one group than in ten.

`MemberGroups` holds one `EnsembleTrainer` per group (consecutive members)
and trains in blocks that end at every measurement and every 1,024 steps
(`BLOCK_STEPS`): in a block each group takes all its steps before the next
group starts, and after a block, with all groups at one step, the state
can be saved. The default group size follows from a
member's training-state bytes (`auto_group_size`). Grouping changes only
floating-point rounding (a batched product of 1 member may round differently
from one of 10); a group size fixes the run. Its state is the ensemble's
state (`EnsembleTrainer.state_dict` of all S members, merged), so a saved
run resumes under any grouping and loads into a plain `EnsembleTrainer`.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.nets.stacked import StackedNets
from pvf.trainers.ensemble import EnsembleTrainer, MemberData, build_member

# Steps a group takes in a row before the next group's turn: long enough that switching costs nothing
# (a member's state is back in the caches after a few steps), short enough to save the state this often
# (`fit`'s on_block) when measurements are rarer, as in fig. 4 (measured only before and after training).
BLOCK_STEPS = 1024

# Most training-state bytes (weights, gradients, Adam's two moments) of one CPU group. Set between the
# measured sizes: Leduc's 10-member ensembles (13–20 MB) are fastest as one group, Goofspiel-5's
# positional and particle nets (15–17 MB a member) one member at a time; docs/ensembles.md has the table.
GROUP_STATE_BYTES = 24 * 2**20


def auto_group_size(members: int, parameters: int, device: torch.device, dtype: torch.dtype = torch.float32) -> int:
    """Members per group: all on a GPU; on a CPU as many as fit GROUP_STATE_BYTES (at least one)."""
    if device.type != "cpu":
        return members
    per_member = 4 * parameters * torch.empty((), dtype=dtype).element_size()
    return max(1, min(members, GROUP_STATE_BYTES // per_member))


def group_bounds(members: int, group_size: int) -> list[tuple[int, int]]:
    """[start, stop) of each group: ceil(members / group_size) groups as equal in size as possible."""
    count = math.ceil(members / group_size)
    base, extra = divmod(members, count)
    bounds, start = [], 0
    for g in range(count):
        stop = start + base + (g < extra)
        bounds.append((start, stop))
        start = stop
    return bounds


class MemberGroups:
    """S members of one architecture trained group by group (see the module docstring).

    groups: one `EnsembleTrainer` per group of consecutive members, same max_steps and options.
    """

    def __init__(self, groups: Sequence[EnsembleTrainer]) -> None:
        if not groups:
            raise ValueError("at least one group")
        self.groups = list(groups)
        first = self.groups[0]
        self.architecture, self.layout = first.architecture, first.layout
        self.device, self.dtype, self.max_steps = first.device, first.dtype, first.max_steps
        self.seeds = [s for g in self.groups for s in g.seeds]
        self.members = len(self.seeds)
        self._where = [(g, k) for g in self.groups for k in range(g.members)]  # member -> (its group, index there)
        stops = list(itertools.accumulate(g.members for g in self.groups))
        self.bounds = list(zip([0, *stops[:-1]], stops))  # [start, stop) of each group's members

    @classmethod
    def from_files(
        cls,
        paths: Sequence[str | Path],
        architecture: str,
        seeds: Sequence[int],
        max_steps: int,
        batch_size: int = 64,
        group_size: int | None = None,
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float32,
        **options: Any,
    ) -> MemberGroups:
        """`EnsembleTrainer.from_files` per group; group_size None: `auto_group_size`.

        options: the rest of `EnsembleTrainer.from_files`'s arguments (target, cuda_graph, lr, the
        architecture's hyper-parameters, ...).
        """
        seeds = list(seeds)
        if group_size is None:
            model_args = {k: v for k, v in options.items() if k not in _TRAINER_OPTIONS}
            layout = DataLayout.from_file(paths[0], options.get("target", "average"))
            probe = build_member(architecture, layout, seeds[0], **model_args)
            parameters = sum(p.numel() for p in probe.parameters())
            group_size = auto_group_size(len(seeds), parameters, torch.device(device), dtype)
        elif group_size < 1:
            raise PvfError(f"an ensemble's group size must be positive, got {group_size}")
        groups = [
            EnsembleTrainer.from_files(
                paths[a:b], architecture, seeds[a:b], max_steps, batch_size, device=device, dtype=dtype, **options
            )
            for a, b in group_bounds(len(seeds), group_size)
        ]
        return cls(groups)

    @property
    def step_count(self) -> int:
        """Steps every member has taken (all groups agree between `fit`'s blocks)."""
        return min(g.step_count for g in self.groups)

    @property
    def data(self) -> list[MemberData]:
        """Member k's `MemberData`."""
        return [d for g in self.groups for d in g.data]

    def encode(self, rows: Any) -> dict[str, Tensor]:
        """PBS rows as the architecture's tensors (on the CPU)."""
        return self.groups[0].encode(rows)

    def loss_window(self, start: int, stop: int) -> Tensor:
        """[stop − start, S] every member's training losses of steps start ... stop − 1."""
        return torch.cat([g.losses[start:stop] for g in self.groups], dim=1)

    def member_net(self, k: int) -> torch.nn.Module:
        """Member k's net (a copy, on the device, in the module's class)."""
        group, index = self._where[k]
        return group.member_net(index)

    def nets(self) -> StackedNets:
        """All S members stacked, for a batched trunk solve (a group's own nets when there is one group)."""
        if len(self.groups) == 1:
            return self.groups[0].nets
        return StackedNets([self.member_net(k) for k in range(self.members)], self.groups[0].nets.backend)

    def fit(
        self,
        callback: Callable[[MemberGroups], None] | None = None,
        every_n_steps: int = 0,
        on_steps: Callable[[int], None] | None = None,
        on_block: Callable[[MemberGroups], None] | None = None,
        block_steps: int = BLOCK_STEPS,
    ) -> None:
        """Train up to `max_steps`; `callback(self)` before the first step and at every multiple of `every_n_steps`.

        The steps go in blocks that end at every multiple of `block_steps` and of `every_n_steps`;
        in a block each group trains all its steps before the next group starts.
        on_steps(n): after every step of a group, with its member count n (for a progress bar).
        on_block(self): after every block (after the callback where both fall), where all groups have
            taken the same steps: where the state may be saved.
        """
        if callback is not None and self.step_count == 0:
            callback(self)
        while self.step_count < self.max_steps:
            step = self.step_count
            target = min(self.max_steps, (step // block_steps + 1) * block_steps)
            if every_n_steps:
                target = min(target, (step // every_n_steps + 1) * every_n_steps)
            for group in self.groups:
                while group.step_count < target:
                    group.train_step()
                    if on_steps is not None:
                        on_steps(group.members)
            if callback is not None and every_n_steps and target % every_n_steps == 0:
                callback(self)
            if on_block is not None:
                on_block(self)

    def save_members(self, paths: Sequence[str | Path]) -> None:
        """Member k as a `pvf train` checkpoint at `paths[k]`."""
        for group, (a, b) in zip(self.groups, self.bounds):
            group.save_members(paths[a:b])

    def save_member(self, k: int, path: str | Path) -> None:
        """Member k's current weights as a `pvf train` checkpoint at `path`."""
        group, index = self._where[k]
        group.save_member(index, path)

    def state_dict(self) -> dict[str, Any]:
        """The groups' states merged into one S-member `EnsembleTrainer.state_dict` (all groups at one step)."""
        states = [g.state_dict() for g in self.groups]
        if len({s["step"] for s in states}) != 1:
            raise RuntimeError("member groups are saved only where all have taken the same steps")
        if len(states) == 1:
            return states[0]
        first = states[0]
        return {
            "nets": {k: torch.cat([s["nets"][k] for s in states]) for k in first["nets"]},
            "optimizer": {
                "state": {
                    i: {
                        k: torch.cat([s["optimizer"]["state"][i][k] for s in states]) if v.dim() else v
                        for k, v in entry.items()
                    }
                    for i, entry in first["optimizer"]["state"].items()
                },
                "param_groups": first["optimizer"]["param_groups"],
            },
            "scheduler": first["scheduler"],
            "samplers": [sampler for s in states for sampler in s["samplers"]],
            "step": first["step"],
            "losses": torch.cat([s["losses"] for s in states], dim=1),
            "seeds": list(self.seeds),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Load an S-member ensemble state (saved under any grouping) into the groups."""
        if list(state["seeds"]) != self.seeds:
            raise PvfError(f"saved ensemble state has seeds {list(state['seeds'])}, not {self.seeds}")
        for group, (a, b) in zip(self.groups, self.bounds):
            group.load_state_dict(_members_state(state, a, b))


# EnsembleTrainer.from_files's own parameters; the other keywords are the member's (`build_member`)
_TRAINER_OPTIONS = set(inspect.signature(EnsembleTrainer.from_files).parameters)


def _members_state(state: dict[str, Any], a: int, b: int) -> dict[str, Any]:
    """Members a ... b − 1 of an `EnsembleTrainer.state_dict` (every stacked tensor sliced on its member axis)."""
    optimizer = state["optimizer"]
    return {
        "nets": {k: v[a:b].clone() for k, v in state["nets"].items()},
        "optimizer": {
            # cloned: each group's Adam updates its step counts and moments in place
            "state": {
                i: {k: (v[a:b] if v.dim() else v).clone() for k, v in entry.items()}
                for i, entry in optimizer["state"].items()
            },
            "param_groups": optimizer["param_groups"],
        },
        "scheduler": state["scheduler"],
        "samplers": state["samplers"][a:b],
        "step": state["step"],
        "losses": state["losses"][:, a:b],
        "seeds": list(state["seeds"][a:b]),
    }
