"""The parameters that determine a particle PBS dataset, bit for bit.

A particle dataset (`pvf generate --particles K`) has one sample per sample
id: one public state at move number `depth`, drawn by playing random trunk
strategy `id`, and K particles of it (`pvf.datasets.particle_sampling`).
`ParticleSpec` carries the same provenance attributes as `GenerationSpec`
(so version-1 readers find them) plus `particles` and `max_histories`;
`num_trunks` is the number of samples. `subgame` says which subgame the
targets solve: "induced" (default), the PBS the particles induce (every
history joining two particle infostates, `pvf.games.induced_pbs`), or
"drawn", the K drawn histories only (what files written before the
attribute existed hold; they read as "drawn"). `rows` says what a sample
shows: "particles" (default), the particles' infostates at move `depth`, or
"children", every infostate one move below K particles at move `depth` − 1,
zero beliefs included: the shape of a particle trunk's leaf queries
(`pvf.datasets.particle_children`; files without the attribute read as
"particles"). Workers and backend are not part of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.spec import DEFAULT_TASK_SIZE, TARGET_PROFILES
from pvf.errors import PvfError
from pvf.games.loading import canonical_game_string

DEFAULT_MAX_SUBGAME_HISTORIES = 200_000
SUBGAMES = ("induced", "drawn")
ROWS = ("particles", "children")


@dataclass(frozen=True)
class ParticleSpec:
    """What `pvf generate --particles K` makes; equal specs give bit-identical samples.

    game, depth, cfr_iterations, seed, sampling, target, task_size: as in `GenerationSpec`.
    num_trunks: number of samples (sample i plays random trunk strategy i).
    particles: K, particle draws per sample.
    max_histories: refuse a sample whose particle subgame has more histories (the depth is too early).
    subgame: "induced" (targets on the PBS the particles induce) or "drawn" (on the drawn histories only).
    rows: "particles" (the particles' infostates) or "children" (every infostate one move below particles at depth − 1).
    """

    game: str
    depth: int
    num_trunks: int
    particles: int
    cfr_iterations: int
    seed: int = 0
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    target: str = "average"
    task_size: int = DEFAULT_TASK_SIZE
    max_histories: int = DEFAULT_MAX_SUBGAME_HISTORIES
    subgame: str = "induced"
    rows: str = "particles"

    def __post_init__(self) -> None:
        object.__setattr__(self, "game", canonical_game_string(self.game))
        checks = [
            (self.depth > 0, f"depth must be a positive move number, got {self.depth}"),
            (self.num_trunks >= 1, f"the number of samples (--trunks) must be at least 1, got {self.num_trunks}"),
            (self.particles >= 1, f"--particles must be at least 1, got {self.particles}"),
            (self.cfr_iterations >= 1, f"CFR+ iterations must be at least 1, got {self.cfr_iterations}"),
            (self.seed >= 0, f"the seed must be a non-negative integer, got {self.seed}"),
            (self.target in TARGET_PROFILES, f"target must be one of {', '.join(TARGET_PROFILES)}, got {self.target!r}"),
            (self.task_size >= 1, f"the task size must be at least 1, got {self.task_size}"),
            (self.max_histories >= 1, f"the history cap must be at least 1, got {self.max_histories}"),
            (self.subgame in SUBGAMES, f"the particle subgame must be one of {', '.join(SUBGAMES)}, got {self.subgame!r}"),
            (self.rows in ROWS, f"particle rows must be one of {', '.join(ROWS)}, got {self.rows!r}"),
            (self.rows == "particles" or self.subgame == "induced", "children rows are solved on the PBS they induce; use subgame 'induced'"),
            (self.rows == "particles" or self.depth >= 2, f"children rows need particles at move depth - 1 >= 1, got --depth {self.depth}"),
        ]
        for ok, message in checks:
            if not ok:
                raise PvfError(message)

    def to_attrs(self) -> dict[str, Any]:
        """The spec as HDF5 root attributes / manifest entries."""
        return {
            "game": self.game,
            "depth": self.depth,
            "num_trunks": self.num_trunks,
            "particles": self.particles,
            "cfr_iterations": self.cfr_iterations,
            "seed": self.seed,
            "sampling": self.sampling.to_json(),
            "target": self.target,
            "task_size": self.task_size,
            "max_histories": self.max_histories,
            "subgame": self.subgame,
            "rows": self.rows,
        }

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any]) -> ParticleSpec:
        try:
            return cls(
                game=str(attrs["game"]),
                depth=int(attrs["depth"]),
                num_trunks=int(attrs["num_trunks"]),
                particles=int(attrs["particles"]),
                cfr_iterations=int(attrs["cfr_iterations"]),
                seed=int(attrs["seed"]),
                sampling=SamplingConfig.from_json(str(attrs["sampling"])),
                target=str(attrs["target"]),
                task_size=int(attrs["task_size"]),
                max_histories=int(attrs["max_histories"]),
                subgame=str(attrs.get("subgame", "drawn")),
                rows=str(attrs.get("rows", "particles")),
            )
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
            raise PvfError(f"unreadable particle generation parameters ({type(exc).__name__}: {exc})") from None

    def differences(self, other: ParticleSpec) -> list[str]:
        mine, theirs = self.to_attrs(), other.to_attrs()
        return [f"{k}: {theirs[k]!r} there, {mine[k]!r} asked" for k in mine if mine[k] != theirs[k]]

