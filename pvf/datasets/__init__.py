"""PBS datasets, one pipeline for both kinds: enumerated PBSs and particles (the HDF5 file: docs/hdf5_schema.md).

A `GenerationSpec` (`spec`) says what a file holds; with its particle part
(`ParticleOptions`) it is a particle dataset. The pipeline, one job per
module: `sampling` and `lazy_strategy` (random trunk strategies, for an
enumerated trunk at once or one infostate at a time), `task_plan` (trunk
ids in fixed blocks, a shard's columns), the two kinds of task, `pbs_tasks`
(a block of trunks → every leaf PBS, CFR+ targets on the leaf subgames,
`targets`) and `particle_tasks` (a block of sample ids → one public state
and K histories each, asked of `pvf.games.history_sampling`; `rows =
"children"` samples in `particle_children`), `tasks` (the one place that
dispatches on the spec's kind), `backends` (local pool or Ray), `writer`
(shards, their checks on resume, the final file), `generate` (the
resumable driver behind `pvf generate`: `generate(spec, out, workers=...,
backend=...)` for either kind), `schema`, `reader`, `layout` (the sizes a
network built for a file depends on). No module here steps OpenSpiel
states: histories come from `pvf.games`.

The names below are imported on first use, so that reading a file
(`pvf.datasets.reader`) does not load the CFR+ stack.
"""

from __future__ import annotations

from pvf.exports import lazy_attributes

_EXPORTS = {
    "GenerationReport": "pvf.datasets.generate",
    "GenerationSpec": "pvf.datasets.spec",
    "PBSDataset": "pvf.datasets.reader",
    "ParticleOptions": "pvf.datasets.spec",
    "ParticleSpec": "pvf.datasets.spec",
    "SamplingConfig": "pvf.datasets.sampling",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_attributes(__name__, _EXPORTS)
