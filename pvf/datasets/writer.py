"""Writing PBS files, both kinds: task shards, their checks on resume, and the final file joined from them.

Every file is built in memory (HDF5 can crash on a failed disk write; plain
I/O raises an OSError) unless its raw data exceed 1 GiB, written under a
temporary name, flushed to disk and then renamed over its final name (`os.replace`, atomic on POSIX), so a reader or
a resumed run sees either the whole file or none of it:
  1. `write_shard` stores one task's shard (`ShardArrays` or `ParticleShard`:
     plain datasets, its task and sizes as attributes) as its own small
     HDF5 file.
  2. A resumed run keeps a shard only if it is one of exactly its task
     (`read_shard`), shaped as the task's samples must be, and its values
     are valid (`shard_values_valid`: beliefs finite and in [0, 1], targets
     finite): `shard_matches` for enumerated shards (their structure is the
     trunk's layout), `particle_shard_matches` for particle shards.
  3. `join_shards` creates the final file's datasets at their full size
     (chunked, gzip), copies the shards into them in task order, shifting
     each shard's offsets by the rows before it, adds the feature tables and
     the provenance attributes with `complete = True`, and renames it into
     place. `join_particle_shards` does the same for particle shards
     (schema version 2): each sample gets its own row of /features/public
     (its public state id is its sample index) and each row its own row of
     /features/private/n, so readers of enumerated files (the particle
     network's data loader) read the file unchanged.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import h5py
import numpy as np

import pvf
from pvf.datasets import schema
from pvf.datasets.particle_tasks import ParticleShard
from pvf.datasets.pbs_tasks import SampleLayout, ShardArrays
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.task_plan import SampleColumns, Task
from pvf.games.depths import positional_inputs
from pvf.games.features import OBSERVER, FeatureTables, feature_fields

IN_MEMORY_BYTES = 1 << 30  # final files up to this raw size are built in memory


@contextmanager
def atomic_h5(path: Path, in_memory: bool = True) -> Iterator[h5py.File]:
    """An HDF5 file written at `path`.tmp, synced and renamed to `path`.

    in_memory: build it in memory and write it with plain I/O, so HDF5 never writes to disk (a
    failed write inside HDF5, on a full disk or past a file-size limit, can crash the process; a
    failed plain write is an OSError). Otherwise HDF5 writes `path`.tmp itself (for files too
    large for memory; the caller checks the free space first)."""
    tmp = path.with_name(path.name + ".tmp")
    buffer = io.BytesIO()
    try:
        with h5py.File(buffer if in_memory else tmp, "w") as f:
            yield f
        if in_memory:
            with open(tmp, "wb") as out:
                out.write(buffer.getbuffer())
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_shard(path: Path, task: Task, arrays: SampleColumns) -> None:
    """Store one task's samples at `path` (atomically)."""
    with atomic_h5(path) as f:
        for name, values in arrays.as_dict().items():
            f.create_dataset(name, data=values)
        f.attrs.update(
            task_index=task.index,
            trunk_lo=task.trunk_lo,
            trunk_hi=task.trunk_hi,
            num_samples=arrays.num_samples,
            num_rows=len(arrays.belief),
        )


def read_shard(path: Path, task: Task, kind: type[SampleColumns]) -> SampleColumns | None:
    """The shard at `path` if it is a readable shard of exactly this task with every dataset of `kind`, else None."""
    try:
        with h5py.File(path, "r") as f:
            ok = (int(f.attrs["task_index"]), int(f.attrs["trunk_lo"]), int(f.attrs["trunk_hi"])) == (
                task.index,
                task.trunk_lo,
                task.trunk_hi,
            )
            if not ok or not all(name in f for name in kind.__dataclass_fields__):
                return None
            return kind(**{name: f[name][()] for name in kind.__dataclass_fields__})
    except (OSError, KeyError, ValueError):
        return None


def shard_matches(path: Path, task: Task, layout: SampleLayout) -> bool:
    """Whether `path` is a readable shard of exactly this task: its attributes, its structure
    (trunk, public state, offsets, player, index, slot) equal to the layout's, its values valid."""
    arrays = read_shard(path, task, ShardArrays)
    if arrays is None:
        return False
    expected = layout.structure(np.arange(task.trunk_lo, task.trunk_hi))
    same = all(np.array_equal(getattr(arrays, name), value) for name, value in expected.items())
    return same and shard_values_valid(arrays)


def particle_shard_matches(path: Path, task: Task) -> bool:
    """Whether `path` is a readable particle shard of exactly this task: its sample ids, row offsets from 0
    to its rows, every row and sample column of its length, its values valid."""
    shard = read_shard(path, task, ParticleShard)
    if shard is None:
        return False
    n, offset = task.num_trunks, shard.offset
    m = int(offset[-1]) if len(offset) else -1
    per_sample = ("public_features", "particles", "dead", "histories")
    per_row = (
        "private_features",
        "player",
        "slot",
        "belief",
        "target",
        "target_current",
        "mass",
        "cf_reach",
        "cf_opponent",
    )
    same = (
        np.array_equal(shard.trunk, np.arange(task.trunk_lo, task.trunk_hi))
        and len(offset) == n + 1
        and offset[0] == 0
        and bool(np.all(np.diff(offset) >= 0))
        and all(len(getattr(shard, name)) == n for name in per_sample)
        and all(len(getattr(shard, name)) == m for name in per_row)
    )
    return same and shard_values_valid(shard)


def shard_values_valid(arrays: SampleColumns) -> bool:
    """Whether beliefs are finite and in [0, 1] and both targets finite."""
    b = arrays.belief
    return bool(
        np.isfinite(b).all()
        and (b >= 0).all()
        and (b <= 1).all()
        and np.isfinite(arrays.target).all()
        and np.isfinite(arrays.target_current).all()
    )


def join_shards(
    out: Path,
    shards: Sequence[Path],
    spec: GenerationSpec,
    leaf_public_states: np.ndarray,
    features: FeatureTables,
) -> None:
    """Write the final file `out` from the task shards, in the given (task) order."""
    sizes = []
    for path in shards:
        with h5py.File(path, "r") as f:
            sizes.append((int(f.attrs["num_samples"]), int(f.attrs["num_rows"])))
    N = sum(n for n, _ in sizes)
    M = sum(m for _, m in sizes)
    raw = sum(d.itemsize for _, d in schema.ROW_DATASETS.values()) * M + 24 * N
    with atomic_h5(out, in_memory=raw <= IN_MEMORY_BYTES) as f:
        f.create_dataset(schema.LEAF_PUBLIC_STATES, data=np.asarray(leaf_public_states, dtype=np.int64))
        f.create_dataset(schema.FEATURES_PUBLIC, data=features.public, **schema.storage(features.public.shape))
        for n, path in enumerate(schema.FEATURES_PRIVATE):
            f.create_dataset(path, data=features.private[n], **schema.storage(features.private[n].shape))
        lengths = {"trunk": N, "public_state": N, "offset": N + 1}
        dsets = {}
        for name, (path, dtype) in {**schema.SAMPLE_DATASETS, **schema.ROW_DATASETS}.items():
            shape = (lengths.get(name, M),)
            dsets[name] = f.create_dataset(path, shape=shape, dtype=dtype, **schema.storage(shape))
        dsets["offset"][0] = 0
        n0 = m0 = 0
        for path, (n, m) in zip(shards, sizes):
            with h5py.File(path, "r") as s:
                for name in schema.SAMPLE_DATASETS:
                    if name != "offset":
                        dsets[name][n0 : n0 + n] = s[name][()]
                dsets["offset"][n0 + 1 : n0 + n + 1] = s["offset"][1:] + m0
                for name in schema.ROW_DATASETS:
                    dsets[name][m0 : m0 + m] = s[name][()]
            n0, m0 = n0 + n, m0 + m
        f.attrs.update(
            schema=schema.SCHEMA,
            schema_version=schema.SCHEMA_VERSION,
            features=json.dumps(features.describe(), sort_keys=True),
            pvf_version=pvf.__version__,
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            complete=True,
            **spec.to_attrs(),
        )


def join_particle_shards(out: Path, shards: Sequence[Path], spec: GenerationSpec) -> None:
    """Write the final particle file `out` from the task shards, in the given (task) order."""
    data: dict[str, list[np.ndarray]] = {name: [] for name in ParticleShard.__dataclass_fields__}
    for path in shards:
        with h5py.File(path, "r") as f:
            for name in data:
                data[name].append(f[name][()])
    offsets = [0]
    for off in data["offset"]:
        offsets.extend((off[1:] + offsets[-1]).tolist())
    cat = {
        name: np.concatenate(v) if name != "offset" else np.asarray(offsets, dtype=np.int64) for name, v in data.items()
    }
    N, player = len(cat["trunk"]), cat["player"]
    index = np.zeros(len(player), dtype=np.int64)
    for n in (0, 1):
        index[player == n] = np.arange(int(np.sum(player == n)))
    rows = {
        "player": player,
        "index": index,
        "slot": cat["slot"],
        "belief": cat["belief"],
        "target": cat["target"],
        "target_current": cat["target_current"],
    }
    public, private = cat["public_features"], cat["private_features"]
    public_fields, private_fields = feature_fields(spec.game)
    tables = FeatureTables(
        spec.game,
        public,
        (private[player == 0], private[player == 1]),
        public_fields,
        private_fields,
        OBSERVER,
        OBSERVER,
    )
    features = {**tables.describe(), "per_sample": True}
    with atomic_h5(out) as f:
        f.create_dataset(schema.LEAF_PUBLIC_STATES, data=np.arange(N, dtype=np.int64))
        f.create_dataset(schema.FEATURES_PUBLIC, data=public, **schema.storage(public.shape))
        for n, path in enumerate(schema.FEATURES_PRIVATE):
            f.create_dataset(path, data=tables.private[n], **schema.storage(tables.private[n].shape))
        samples = {"trunk": cat["trunk"], "public_state": np.arange(N, dtype=np.int64), "offset": cat["offset"]}
        for name, (path, dtype) in schema.SAMPLE_DATASETS.items():
            f.create_dataset(path, data=samples[name].astype(dtype), **schema.storage((len(samples[name]),)))
        for name, (path, dtype) in schema.ROW_DATASETS.items():
            f.create_dataset(path, data=rows[name].astype(dtype), **schema.storage((len(rows[name]),)))
        for name, (path, dtype) in schema.PARTICLE_DATASETS.items():
            f.create_dataset(path, data=cat[name].astype(dtype), **schema.storage(cat[name].shape))
        f.attrs.update(
            schema=schema.SCHEMA,
            schema_version=schema.SCHEMA_VERSION,
            features=json.dumps(features, sort_keys=True),
            pvf_version=pvf.__version__,
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            complete=True,
            positional_infostates=positional_inputs(spec.game, spec.depth),
            **spec.to_attrs(),
        )
