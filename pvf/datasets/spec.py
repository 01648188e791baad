"""The parameters that determine a PBS dataset, bit for bit.

A `GenerationSpec` is everything the samples depend on: game, depth,
number of trunks, CFR+ iterations, seed, sampling mix, which profile the
`target` dataset holds, the task size (the fixed grouping of trunks into
CFR+ batches) and the leaf solver (CFR+ or MMD). Workers, backend and wall
time are not part of it: they change how fast a file is made, never what is
in it. The spec is written as the work directory's manifest and as the
file's root attributes, and a rerun is accepted only against the same spec.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError
from pvf.games.loading import canonical_game_string
from pvf.solvers.registry import DEFAULT_SOLVER, SOLVER_NAMES

TARGET_PROFILES = ("average", "current")
DEFAULT_TASK_SIZE = 50
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class GenerationSpec:
    """What `pvf generate` makes; equal specs give bit-identical samples.

    game: OpenSpiel game string (aliases resolved).
    depth: move number of the trunk's leaf public states.
    num_trunks: number of random trunk strategies.
    cfr_iterations: solver iterations per leaf subgame (CFR+'s, or MMD's with solver "mmd").
    seed: generation seed (non-negative).
    sampling: the trunk-strategy mix.
    target: profile whose values `/infostates/target` holds: average or current.
    task_size: trunks per task; a task's PBSs at one public state are one CFR+ batch.
    solver: "cfr+" or "mmd" (its default schedule; both targets are then its last
        iterate). Files written before this attribute existed are "cfr+".
    """

    game: str
    depth: int
    num_trunks: int
    cfr_iterations: int
    seed: int = 0
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    target: str = "average"
    task_size: int = DEFAULT_TASK_SIZE
    solver: str = DEFAULT_SOLVER

    def __post_init__(self) -> None:
        object.__setattr__(self, "game", canonical_game_string(self.game))
        if self.depth <= 0:
            raise PvfError(f"depth must be a positive move number, got {self.depth}")
        if self.num_trunks < 1:
            raise PvfError(f"the number of trunks must be at least 1, got {self.num_trunks}")
        if self.cfr_iterations < 1:
            raise PvfError(f"CFR+ iterations must be at least 1, got {self.cfr_iterations}")
        if self.seed < 0:
            raise PvfError(f"the seed must be a non-negative integer, got {self.seed}")
        if self.target not in TARGET_PROFILES:
            raise PvfError(f"target must be one of {', '.join(TARGET_PROFILES)}, got {self.target!r}")
        if self.task_size < 1:
            raise PvfError(f"the task size must be at least 1, got {self.task_size}")
        for name in ("depth", "num_trunks", "cfr_iterations", "seed", "task_size"):
            if getattr(self, name) > _INT64_MAX:  # stored as HDF5 int64 attributes
                raise PvfError(f"{name} {getattr(self, name)} is too large (at most {_INT64_MAX})")
        if self.solver not in SOLVER_NAMES:
            raise PvfError(f"solver must be one of {', '.join(SOLVER_NAMES)}, got {self.solver!r}")

    def to_attrs(self) -> dict[str, Any]:
        """The spec as HDF5 root attributes / manifest entries (scalars and strings)."""
        return {
            "game": self.game,
            "depth": self.depth,
            "num_trunks": self.num_trunks,
            "cfr_iterations": self.cfr_iterations,
            "seed": self.seed,
            "sampling": self.sampling.to_json(),
            "target": self.target,
            "task_size": self.task_size,
            "solver": self.solver,
        }

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any]) -> GenerationSpec:
        """Inverse of `to_attrs` (accepts numpy scalars as read by h5py)."""
        try:
            return cls(
                game=str(attrs["game"]),
                depth=int(attrs["depth"]),
                num_trunks=int(attrs["num_trunks"]),
                cfr_iterations=int(attrs["cfr_iterations"]),
                seed=int(attrs["seed"]),
                sampling=SamplingConfig.from_json(str(attrs["sampling"])),
                target=str(attrs["target"]),
                task_size=int(attrs["task_size"]),
                solver=str(attrs.get("solver", DEFAULT_SOLVER)),
            )
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
            raise PvfError(f"unreadable generation parameters ({type(exc).__name__}: {exc})") from None

    def differences(self, other: GenerationSpec) -> list[str]:
        """Human-readable `name: mine vs other` for every parameter that differs."""
        mine, theirs = self.to_attrs(), other.to_attrs()
        return [f"{k}: {theirs[k]!r} there, {mine[k]!r} asked" for k in mine if mine[k] != theirs[k]]
