"""The two kinds of dataset behind one driver, chosen by the spec: enumerated PBSs or particles.

A `GenerationSpec` without a particle part makes an enumerated dataset
(`pvf.datasets.pbs_tasks`: every leaf public state of a trunk per trunk
id), one with it a particle dataset (`pvf.datasets.particle_tasks`: one
public state and K histories of it per sample id). Both split their ids
into the same tasks (`pvf.datasets.task_plan`). This module is the only
place that looks at which kind a spec is:
  - `run_task(spec, task)`: what a worker runs (`pvf.datasets.backends`),
    the task's shard.
  - `dataset_kind(spec)`: what the resumable driver (`pvf.datasets.generate`)
    needs of a kind, built once per run before anything is written (so a
    bad game, depth or size is refused first): samples per id, a bound on
    the disk the data needs, whether a finished shard can be kept on resume
    (`pvf.datasets.writer`: the task's, shaped right, valid values), and how
    the shards join into the final file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pvf.datasets import schema
from pvf.datasets.particle_tasks import run_particle_task, solve_sample
from pvf.datasets.pbs_tasks import context, run_pbs_task
from pvf.datasets.sample_networks import NO_NETWORKS, SampleNetworks
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.task_plan import SampleColumns, Task
from pvf.datasets.writer import join_particle_shards, join_shards, particle_shard_matches, shard_matches
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES


def run_task(
    spec: GenerationSpec,
    task: Task,
    max_histories: int = DEFAULT_MAX_HISTORIES,
    engine: str = "auto",
    networks: SampleNetworks = NO_NETWORKS,
) -> SampleColumns:
    """The shard of one task of `spec`: `ShardArrays` (enumerated) or `ParticleShard` (particles).

    max_histories: the public tree's cap (enumerated data; a particle spec carries its own).
    engine: the particle engine (`pvf.games.engine`; the same shard from each).
    networks: the nets at a particle spec's query and target solves' leaves, where it records them."""
    if spec.particles is None:
        return run_pbs_task(spec, task, max_histories)
    return run_particle_task(spec, task, engine, networks)


TaskOptions = tuple[int, str, SampleNetworks]  # what run_task takes beside spec and task: cap, engine, nets
MIN_PARTICLE_SAMPLE_BYTES = 16  # a sample stores at least its record and one infostate row, 8 bytes each at least


class DatasetKind(Protocol):
    """What the driver needs of one kind of dataset, for one spec.

    samples_per_trunk: samples each trunk (sample) id gives.
    disk_bound: bytes the shards and the final file need, `disk_bound_is` "at most" (uncompressed) or "at least"
        (where a sample's size is known only once it is solved).
    """

    samples_per_trunk: int
    disk_bound: int
    disk_bound_is: str

    def shard_matches(self, path: Path, task: Task) -> bool:
        """Whether the finished shard at `path` is this task's, with valid values (else it is recomputed)."""
        ...

    def join(self, out: Path, shards: Sequence[Path]) -> None:
        """Write the final file `out` from the tasks' shards, in task order (atomically)."""
        ...


class EnumeratedKind:
    """Every leaf public state of a trunk per trunk id: the tree, trunk, leaf solver and feature tables built here."""

    def __init__(self, spec: GenerationSpec, max_histories: int):
        self.spec = spec
        self.context = context(spec.game, spec.depth, spec.cfr_iterations, spec.solver, max_histories)
        self.features = build_feature_tables(self.context.tree)  # before any solving: a game too large fails now
        layout = self.context.layout
        self.samples_per_trunk = len(layout.public_states)
        row_bytes = sum(dtype.itemsize for _, dtype in schema.ROW_DATASETS.values())
        sample_bytes = sum(dtype.itemsize for _, dtype in schema.SAMPLE_DATASETS.values())
        per_trunk = len(layout.player) * row_bytes + len(layout.public_states) * sample_bytes
        self.disk_bound = 2 * spec.num_trunks * per_trunk
        self.disk_bound_is = "at most"

    def shard_matches(self, path: Path, task: Task) -> bool:
        return shard_matches(path, task, self.context.layout)

    def join(self, out: Path, shards: Sequence[Path]) -> None:
        join_shards(out, shards, self.spec, self.context.layout.public_states, self.features)


class ParticleKind:
    """One public state and K histories of it per sample id; sample 0 is solved here to check the spec."""

    samples_per_trunk = 1
    disk_bound_is = "at least"

    def __init__(self, spec: GenerationSpec, engine: str = "auto", networks: SampleNetworks = NO_NETWORKS):
        self.spec = spec
        self.disk_bound = 2 * spec.num_trunks * MIN_PARTICLE_SAMPLE_BYTES  # refuses absurd counts, never a fit
        solve_sample(spec, 0, engine, networks)  # checks game, observers, depth, subgame size before any writing

    def shard_matches(self, path: Path, task: Task) -> bool:
        return particle_shard_matches(path, task)

    def join(self, out: Path, shards: Sequence[Path]) -> None:
        join_particle_shards(out, shards, self.spec)


def dataset_kind(
    spec: GenerationSpec,
    max_histories: int = DEFAULT_MAX_HISTORIES,
    engine: str = "auto",
    networks: SampleNetworks = NO_NETWORKS,
) -> DatasetKind:
    """The kind of `spec`'s dataset, checked against the game (PvfError before any work)."""
    if spec.particles is None:
        return EnumeratedKind(spec, max_histories)
    return ParticleKind(spec, engine, networks)
