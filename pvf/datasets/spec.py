"""The parameters that determine a PBS dataset, bit for bit: one `GenerationSpec` for both kinds of data.

A `GenerationSpec` is everything the samples depend on: game, depth,
number of trunks, CFR+ iterations, seed, sampling mix, which profile the
`target` dataset holds, the task size (the fixed grouping of trunks into
CFR+ batches) and the leaf solver (CFR+ or MMD). Workers, backend and wall
time are not part of it: they change how fast a file is made, never what is
in it. The spec is written as the work directory's manifest and as the
file's root attributes, and a rerun is accepted only against the same spec.

Its optional particle part (`particles=ParticleOptions(...)`, `pvf generate
--particles K`) makes a particle dataset instead of an enumerated one: one
sample per sample id, one public state at move `depth` drawn by playing
random trunk strategy `id`, and K particles of it
(`pvf.games.history_sampling`); `num_trunks` is then the number of samples.
`subgame` says which subgame the targets solve: "induced" (default), the
PBS the particles induce (every history joining two particle infostates,
`pvf.games.induced_pbs`), or "drawn", the K drawn histories only (what
files written before the attribute existed hold; they read as "drawn").
`rows` says what a sample shows: "particles" (default), the particles'
infostates at move `depth`, or "children", every infostate one move below K
particles at move `depth` − 1, zero beliefs included: the shape of a
particle trunk's leaf queries (`pvf.datasets.particle_children`; files
without the attribute read as "particles"). `solve_network`, with
`--p-solve` and children rows, is the SHA-256 of the value net at the
leaves of the trunk solves whose queries the samples take
(`pvf.datasets.particle_solve_queries`; "" for the data's own targets, and
files without the attribute); `solve_group` the samples sharing one such
solve (128 where absent). `public_states` = "undecided" draws children
samples only at public states where the trunk matters
(`pvf.datasets.particle_draws`; "all" where absent). `target_network` is
the SHA-256 of the net at the leaves of children rows' target solves (of
an ensemble, its members' joined by "+", as for `solve_network`),
which then stop at move `depth` + 1 (bootstrapped targets,
`pvf.datasets.particle_children`; "" where absent: solved to the end).
`rollout_input` = β adds each children row's exact rollout value under a
greed-β random policy (`pvf.games.rollouts`), in the targets' convention,
as the column `/infostates/cf_rollout` (None where absent). A particle spec's
attributes are the enumerated ones less `solver` (particle targets are
CFR+'s) plus `particles`, `max_histories`, `subgame` and `rows` (and the
last three where they are not their defaults), as files and work
directories written before the two kinds shared a spec hold them.
`ParticleSpec(...)` builds a particle spec from the flat arguments of that
earlier type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError
from pvf.games.loading import canonical_game_string
from pvf.solvers.guarded_values import TARGETS
from pvf.solvers.registry import DEFAULT_SOLVER, SOLVER_NAMES

DEFAULT_TASK_SIZE = 50
DEFAULT_MAX_SUBGAME_HISTORIES = 200_000
DEFAULT_SOLVE_GROUP = 128  # p_solve samples sharing one trunk solve (and its particles); files without the attribute
SUBGAMES = ("induced", "drawn")
ROWS = ("particles", "children")
PUBLIC_STATES = ("all", "undecided")
_INT64_MAX = 2**63 - 1


def _digests(text: str) -> bool:
    """Whether `text` is one SHA-256 in hex or several joined by "+" (an ensemble's members)."""
    hexdigits = set("0123456789abcdef")
    return all(len(d) == 64 and set(d) <= hexdigits for d in text.split("+"))


@dataclass(frozen=True)
class ParticleOptions:
    """The particle part of a spec.

    count: K, particle draws per sample.
    max_histories: refuse a sample whose particle subgame has more histories (the depth is too early).
    subgame: "induced" (targets on the PBS the particles induce) or "drawn" (on the drawn histories only).
    rows: "particles" (the particles' infostates) or "children" (every infostate one move below particles at depth − 1).
    solve_network: SHA-256 (hex) of the net at the query solves' leaves, "" for the data's targets; an ensemble
        (the mean of its members' values) is its members' SHA-256s joined by "+".
    target_network: SHA-256 (hex) of the net (or ensemble, as `solve_network`) at the target solves' leaves
        (children rows: each PBS solved to move depth + 1 only, the net valuing the PBSs there;
        `pvf.datasets.particle_children`), "" for targets solved to the end of the game.
    solve_group: consecutive samples sharing one query solve and its particles (`--solve-group`).
    public_states: "all" (the public state trunk strategy i reaches) or "undecided" (children rows: trunk
        strategy i replayed, same stream, until its public state is one where the trunk matters, as the
        particle-trunk sweep draws its roots; `pvf.solvers.particle_settings.trunk_matters`).
    rollout_input: children rows: β of the rollout policy whose exact values the file adds per row
        (`/infostates/cf_rollout`, an input of particle nets); None: no such column.
    """

    count: int
    max_histories: int = DEFAULT_MAX_SUBGAME_HISTORIES
    subgame: str = "induced"
    rows: str = "particles"
    solve_network: str = ""
    solve_group: int = DEFAULT_SOLVE_GROUP
    public_states: str = "all"
    target_network: str = ""
    rollout_input: float | None = None

    def __post_init__(self) -> None:
        checks = [
            (self.count >= 1, f"--particles must be at least 1, got {self.count}"),
            (self.max_histories >= 1, f"the history cap must be at least 1, got {self.max_histories}"),
            (
                self.subgame in SUBGAMES,
                f"the particle subgame must be one of {', '.join(SUBGAMES)}, got {self.subgame!r}",
            ),
            (self.rows in ROWS, f"particle rows must be one of {', '.join(ROWS)}, got {self.rows!r}"),
            (
                self.rows == "particles" or self.subgame == "induced",
                "children rows are solved on the PBS they induce; use subgame 'induced'",
            ),
            (
                self.solve_network == "" or _digests(self.solve_network),
                f"solve_network must be a SHA-256 in hex (several joined by '+'), got {self.solve_network!r}",
            ),
            (
                self.target_network == "" or _digests(self.target_network),
                f"target_network must be a SHA-256 in hex (several joined by '+'), got {self.target_network!r}",
            ),
            (
                self.target_network == "" or self.rows == "children",
                "--target-network sets the leaves of children rows' target solves; add --rows children",
            ),
            (self.solve_group >= 1, f"--solve-group must be at least 1, got {self.solve_group}"),
            (
                self.public_states in PUBLIC_STATES,
                f"--public-states must be one of {', '.join(PUBLIC_STATES)}, got {self.public_states!r}",
            ),
            (
                self.public_states == "all" or self.rows == "children",
                "--public-states undecided draws the parents of children rows; add --rows children",
            ),
            (
                self.rollout_input is None or self.rollout_input >= 0,
                f"--rollout-input is the rollout policy's greed, a number β >= 0, got {self.rollout_input}",
            ),
            (
                self.rollout_input is None or self.rows == "children",
                "--rollout-input adds a column to children rows; add --rows children",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise PvfError(message)


@dataclass(frozen=True)
class GenerationSpec:
    """What `pvf generate` makes; equal specs give bit-identical samples.

    game: OpenSpiel game string (aliases resolved).
    depth: move number of the trunk's leaf public states (of the samples' public states with particles).
    num_trunks: number of random trunk strategies (with particles: of samples; sample i plays strategy i).
    cfr_iterations: solver iterations per leaf subgame (CFR+'s, or MMD's with solver "mmd").
    seed: generation seed (non-negative).
    sampling: the trunk-strategy mix.
    target: what `/infostates/target` holds: the average profile's values, the last iterate's ("current") or
        best responses, guarded where a belief is zero ("best_response"), or best responses to one mixed plan
        ("grouped", "local"; all `pvf.solvers.guarded_values.RESPONSE_TARGETS`).
    task_size: trunks (samples) per task; a task's PBSs at one public state are one CFR+ batch.
    solver: "cfr+" or "mmd" (its default schedule; both targets are then its last
        iterate). Files written before this attribute existed are "cfr+". Particle datasets are CFR+'s.
    particles: None for an enumerated dataset, else the particle dataset's options.
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
    particles: ParticleOptions | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "game", canonical_game_string(self.game))
        count = "the number of trunks" if self.particles is None else "the number of samples (--trunks)"
        checks = [
            (self.depth > 0, f"depth must be a positive move number, got {self.depth}"),
            (self.num_trunks >= 1, f"{count} must be at least 1, got {self.num_trunks}"),
            (self.cfr_iterations >= 1, f"CFR+ iterations must be at least 1, got {self.cfr_iterations}"),
            (self.seed >= 0, f"the seed must be a non-negative integer, got {self.seed}"),
            (
                self.target in TARGETS,
                f"target must be one of {', '.join(TARGETS)}, got {self.target!r}",
            ),
            (self.task_size >= 1, f"the task size must be at least 1, got {self.task_size}"),
        ]
        checks += [
            (value <= _INT64_MAX, f"{name} {value} is too large (at most {_INT64_MAX})")  # HDF5 int64 attributes
            for name, value in self.to_attrs().items()
            if isinstance(value, int)
        ]
        checks.append(
            (self.solver in SOLVER_NAMES, f"solver must be one of {', '.join(SOLVER_NAMES)}, got {self.solver!r}")
        )
        if self.particles is not None:
            checks += [
                (
                    self.solver == DEFAULT_SOLVER,
                    f"particle datasets are solved with {DEFAULT_SOLVER} only, got {self.solver!r}",
                ),
                (
                    self.particles.rows == "particles" or self.depth >= 2,
                    f"children rows need particles at move depth - 1 >= 1, got --depth {self.depth}",
                ),
                (
                    self.sampling.p_solve == 0 or self.particles.rows == "children",
                    "--p-solve mixes a trunk solve's leaf queries into enumerated and children-row datasets only; "
                    "use --rows children or drop it",
                ),
                (
                    not self.particles.solve_network or self.sampling.p_solve > 0,
                    "--solve-network sets the leaves of the query solves; add --p-solve P > 0",
                ),
                (
                    self.particles.solve_group == DEFAULT_SOLVE_GROUP or self.sampling.p_solve > 0,
                    "--solve-group sizes the groups of query samples; add --p-solve P > 0",
                ),
            ]
        for ok, message in checks:
            if not ok:
                raise PvfError(message)

    def to_attrs(self) -> dict[str, Any]:
        """The spec as HDF5 root attributes / manifest entries (scalars and strings)."""
        head = {"game": self.game, "depth": self.depth, "num_trunks": self.num_trunks}
        common = {
            "cfr_iterations": self.cfr_iterations,
            "seed": self.seed,
            "sampling": self.sampling.to_json(),
            "target": self.target,
            "task_size": self.task_size,
        }
        if self.particles is None:
            return {**head, **common, "solver": self.solver}
        p = self.particles
        return {
            **head,
            "particles": p.count,
            **common,
            "max_histories": p.max_histories,
            "subgame": p.subgame,
            "rows": p.rows,
            **({"solve_network": p.solve_network} if p.solve_network else {}),
            **({"solve_group": p.solve_group} if p.solve_group != DEFAULT_SOLVE_GROUP else {}),
            **({"public_states": p.public_states} if p.public_states != "all" else {}),
            **({"target_network": p.target_network} if p.target_network else {}),
            **({"rollout_input": p.rollout_input} if p.rollout_input is not None else {}),
        }

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any]) -> GenerationSpec:
        """Inverse of `to_attrs` (accepts numpy scalars as read by h5py); a particle spec where `particles` is set."""
        particle = int(attrs.get("particles", 0)) > 0
        try:
            options = None
            if particle:
                options = ParticleOptions(
                    count=int(attrs["particles"]),
                    max_histories=int(attrs["max_histories"]),
                    subgame=str(attrs.get("subgame", "drawn")),
                    rows=str(attrs.get("rows", "particles")),
                    solve_network=str(attrs.get("solve_network", "")),
                    solve_group=int(attrs.get("solve_group", DEFAULT_SOLVE_GROUP)),
                    public_states=str(attrs.get("public_states", "all")),
                    target_network=str(attrs.get("target_network", "")),
                    rollout_input=float(attrs["rollout_input"]) if "rollout_input" in attrs else None,
                )
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
                particles=options,
            )
        except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
            kind = "particle generation" if particle else "generation"
            raise PvfError(f"unreadable {kind} parameters ({type(exc).__name__}: {exc})") from None

    def differences(self, other: GenerationSpec) -> list[str]:
        """Human-readable `name: mine vs other` for every parameter that differs (or the other kind of dataset)."""
        if other.particles is not None and self.particles is None:
            return [f"a particle dataset ({other.particles.count} particles per sample), not an enumerated one"]
        if other.particles is None and self.particles is not None:
            return ["an enumerated dataset, not a particle one"]
        mine, theirs = self.to_attrs(), other.to_attrs()
        keys = [*mine, *(k for k in theirs if k not in mine)]  # an optional attribute only one of them has
        return [
            f"{k}: {theirs.get(k, '')!r} there, {mine.get(k, '')!r} asked"
            for k in keys
            if mine.get(k, "") != theirs.get(k, "")
        ]


def ParticleSpec(  # noqa: N802 (the name of the earlier particle spec type, kept for users' scripts)
    game: str,
    depth: int,
    num_trunks: int,
    particles: int,
    cfr_iterations: int,
    seed: int = 0,
    sampling: SamplingConfig | None = None,
    target: str = "average",
    task_size: int = DEFAULT_TASK_SIZE,
    max_histories: int = DEFAULT_MAX_SUBGAME_HISTORIES,
    subgame: str = "induced",
    rows: str = "particles",
    solve_network: str = "",
    solve_group: int = DEFAULT_SOLVE_GROUP,
    public_states: str = "all",
    target_network: str = "",
    rollout_input: float | None = None,
) -> GenerationSpec:
    """A particle dataset's `GenerationSpec` from the flat arguments (`particles` is K)."""
    return GenerationSpec(
        game=game,
        depth=depth,
        num_trunks=num_trunks,
        cfr_iterations=cfr_iterations,
        seed=seed,
        sampling=SamplingConfig() if sampling is None else sampling,
        target=target,
        task_size=task_size,
        particles=ParticleOptions(
            count=particles,
            max_histories=max_histories,
            subgame=subgame,
            rows=rows,
            solve_network=solve_network,
            solve_group=solve_group,
            public_states=public_states,
            target_network=target_network,
            rollout_input=rollout_input,
        ),
    )
