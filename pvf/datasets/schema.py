"""Names, types and storage settings of the PBS file format (docs/hdf5_schema.md).

The writer and the reader both take their names from here, so that the
format is spelled out once. A file is schema `pvf.pbs` version 2 (version 1
files, which lack only the particle entries below, are still read):
  1. Root attributes: provenance (`ATTRS`, name → Python type).
  2. Per-sample datasets under /samples and per-infostate datasets under
     /infostates (`SAMPLE_DATASETS`, `ROW_DATASETS`); ragged data is flat
     with offsets, never variable-length.
  3. Feature tables under /features, one row per public state / infostate
     of the game's public tree.
  4. Particle files (`pvf generate --particles K`) add the root attributes
     `PARTICLE_ATTRS` and the datasets `PARTICLE_DATASETS`; their feature
     tables have one row per sample / per infostate row.
Large datasets are chunked and gzip-compressed (with the shuffle filter),
which every HDF5 reader can decode.
"""

from __future__ import annotations

import numpy as np

SCHEMA = "pvf.pbs"
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)

# Root attributes: name -> Python type of the stored value.
ATTRS: dict[str, type] = {
    "schema": str,
    "schema_version": int,
    "game": str,
    "depth": int,
    "cfr_iterations": int,
    "seed": int,
    "num_trunks": int,
    "sampling": str,
    "target": str,
    "task_size": int,
    "features": str,
    "pvf_version": str,
    "created": str,
    "complete": bool,
}
# Root attributes added after version 1 was fixed: name -> (type, value when absent).
OPTIONAL_ATTRS: dict[str, tuple[type, object]] = {
    "solver": (str, "cfr+"),  # the leaf solver of the targets; older files are CFR+
}

# Root attributes of particle files only (version 2).
PARTICLE_ATTRS: dict[str, type] = {
    "particles": int,
    "max_histories": int,
    "positional_infostates": int,
    "subgame": str,  # "induced" or "drawn" (ParticleSpec); files without it are "drawn"
    "rows": str,  # "particles" or "children" (ParticleSpec); files without it are "particles"
    "solve_network": str,  # SHA-256 of the net at the query solves' leaves (--solve-network); absent: the targets
    "solve_group": int,  # p_solve samples sharing one query solve (--solve-group); absent: 128
    "public_states": str,  # "undecided": parents only where the trunk matters (--public-states); absent: "all"
    "target_network": str,  # SHA-256 of the net at the target solves' leaves (--target-network); absent: to the end
    "rollout_input": float,  # β of the rollout values in /infostates/cf_rollout (--rollout-input); absent: no column
}

LEAF_PUBLIC_STATES = "leaf_public_states"
FEATURES_PUBLIC = "features/public"
FEATURES_PRIVATE = ("features/private/0", "features/private/1")

# name in ShardArrays -> (path in the file, dtype); one entry per sample ([N], offset [N + 1]).
SAMPLE_DATASETS: dict[str, tuple[str, np.dtype]] = {
    "trunk": ("samples/trunk", np.dtype(np.int64)),
    "public_state": ("samples/public_state", np.dtype(np.int64)),
    "offset": ("samples/offset", np.dtype(np.int64)),
}
# name in ShardArrays -> (path in the file, dtype); one entry per infostate row ([M]).
ROW_DATASETS: dict[str, tuple[str, np.dtype]] = {
    "player": ("infostates/player", np.dtype(np.int8)),
    "index": ("infostates/index", np.dtype(np.int64)),
    "slot": ("infostates/slot", np.dtype(np.int32)),
    "belief": ("infostates/belief", np.dtype(np.float64)),
    "target": ("infostates/target", np.dtype(np.float64)),
    "target_current": ("infostates/target_current", np.dtype(np.float64)),
}

# Datasets of particle files only: name in ParticleShard -> (path, dtype).
PARTICLE_DATASETS: dict[str, tuple[str, np.dtype]] = {
    "mass": ("infostates/mass", np.dtype(np.float64)),
    "cf_reach": ("infostates/cf_reach", np.dtype(np.float64)),
    "cf_opponent": ("infostates/cf_opponent", np.dtype(np.float32)),
    "cf_rollout": ("infostates/cf_rollout", np.dtype(np.float64)),  # with the spec's rollout_input only
    "particles": ("samples/particles", np.dtype(np.int64)),
    "dead": ("samples/dead_draws", np.dtype(np.int64)),
    "histories": ("samples/subgame_histories", np.dtype(np.int64)),
}

CHUNK_ROWS = 1 << 16


def storage(shape: tuple[int, ...]) -> dict:
    """h5py keyword arguments for a dataset of this shape: chunked and gzip-compressed."""
    if 0 in shape:
        return {}
    chunks = (min(shape[0], CHUNK_ROWS),) + tuple(shape[1:])
    return {"chunks": chunks, "compression": "gzip", "compression_opts": 4, "shuffle": True}
