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
     place; `join_particle_shards` does the same for particle shards
     (schema version 2), where each sample gets its own row of
     /features/public (its public state id is its sample index) and each
     row its own row of /features/private/n, so readers of enumerated files
     (the particle network's data loader) read the file unchanged. Both
     stream: every dataset is appended to a whole chunk at a time
     (`ChunkAppender`), so memory stays at a few chunks (the particle join
     once concatenated every shard in memory, which 300,000 Goofspiel-13
     children samples, 30 GB of shards, could not survive on 24 GB).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import MISSING
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
    """The shard at `path` if it is a readable shard of exactly this task with every dataset of `kind` that has no
    default (those with one, columns added later, take it where the shard lacks them), else None."""
    try:
        with h5py.File(path, "r") as f:
            ok = (int(f.attrs["task_index"]), int(f.attrs["trunk_lo"]), int(f.attrs["trunk_hi"])) == (
                task.index,
                task.trunk_lo,
                task.trunk_hi,
            )
            fields = kind.__dataclass_fields__.values()
            required = [x.name for x in fields if x.default is MISSING and x.default_factory is MISSING]
            if not ok or not all(name in f for name in required):
                return None
            return kind(**{x.name: f[x.name][()] for x in fields if x.name in f})
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
        and len(shard.cf_rollout) in (0, m)
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
        columns = {}
        for name, (path, dtype) in {**schema.SAMPLE_DATASETS, **schema.ROW_DATASETS}.items():
            shape = (lengths.get(name, M),)
            columns[name] = ChunkAppender.create(f, path, shape, dtype)
        columns["offset"].add(np.zeros(1, dtype=np.int64))
        m0 = 0  # rows before this shard
        for path, (_, m) in zip(shards, sizes):
            with h5py.File(path, "r") as s:
                for name, column in columns.items():
                    column.add(s["offset"][1:] + m0 if name == "offset" else s[name][()])
            m0 += m
        for column in columns.values():
            column.close()
        f.attrs.update(
            schema=schema.SCHEMA,
            schema_version=schema.SCHEMA_VERSION,
            features=json.dumps(features.describe(), sort_keys=True),
            pvf_version=pvf.__version__,
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            complete=True,
            **spec.to_attrs(),
        )


class ChunkAppender:
    """Rows appended in order to a dataset created at its full size, written a whole chunk at a time.

    A compressed chunk written in parts is read, decompressed and compressed again for every part;
    whole chunks are compressed once. Holds at most one chunk and one appended block."""

    def __init__(self, dataset: h5py.Dataset):
        self.dataset, self.at, self.held = dataset, 0, 0
        self.parts: list[np.ndarray] = []
        self.chunk = dataset.chunks[0] if dataset.chunks else 1

    @classmethod
    def create(cls, f: h5py.File, path: str, shape: tuple[int, ...], dtype: np.dtype) -> ChunkAppender:
        """An appender to a new dataset of `f` at `path`, created at its full `shape` (chunked, gzip)."""
        return cls(f.create_dataset(path, shape=shape, dtype=dtype, **schema.storage(shape)))

    def add(self, values: np.ndarray) -> None:
        self.parts.append(values)
        self.held += len(values)
        if self.held >= self.chunk:
            self._write(self.held - self.held % self.chunk)

    def close(self) -> None:
        if self.held:
            self._write(self.held)
        if self.at != len(self.dataset):
            raise RuntimeError(f"{self.dataset.name}: {self.at} rows written of {len(self.dataset)}")

    def _write(self, count: int) -> None:
        block = np.concatenate(self.parts) if len(self.parts) > 1 else self.parts[0]
        self.dataset[self.at : self.at + count] = block[:count]
        self.at += count
        rest = block[count:]
        self.parts, self.held = ([rest] if len(rest) else []), len(rest)


def join_particle_shards(out: Path, shards: Sequence[Path], spec: GenerationSpec) -> None:
    """Write the final particle file `out` from the task shards, in the given (task) order.

    Streamed: the sizes are read first, every dataset is created at its full size and the shards are
    copied in one at a time (`ChunkAppender`), so memory stays at a few chunks whatever the file's size
    (300,000 Goofspiel-13 children samples are 30 GB of shards)."""
    with h5py.File(shards[0], "r") as f:  # every shard's feature tables have the same width and type
        public_dtype, private_dtype = f["public_features"].dtype, f["private_features"].dtype
        Fp, Fq = f["public_features"].shape[1], f["private_features"].shape[1]
    sizes = []  # per shard: samples, rows of player 0, rows of player 1 (older shards have no size attributes)
    for path in shards:
        with h5py.File(path, "r") as f:
            player = f["player"][()]
            sizes.append((len(f["trunk"]), int(np.sum(player == 0)), int(np.sum(player == 1))))
    N = sum(n for n, _, _ in sizes)
    counts = (sum(m for _, m, _ in sizes), sum(m for _, _, m in sizes))
    M = sum(counts)
    public_fields, private_fields = feature_fields(spec.game)
    shapes = [(N, Fp), counts[:1] + (Fq,), counts[1:] + (Fq,)]  # tables with no data: their sizes only
    empty = [np.broadcast_to(np.float32(0), shape) for shape in shapes]
    tables = FeatureTables(
        spec.game,
        empty[0],
        (empty[1], empty[2]),
        public_fields,
        private_fields,
        OBSERVER,
        OBSERVER,
    )
    features = {**tables.describe(), "per_sample": True}
    # raw bytes: per row its columns, mass and cf_reach, cf_opponent and private features (float32 each);
    # per sample its public features and six int64 columns
    row_bytes = sum(d.itemsize for _, d in schema.ROW_DATASETS.values()) + 16 + 8 * Fq
    raw = M * row_bytes + N * (4 * Fp + 48)
    with atomic_h5(out, in_memory=raw <= IN_MEMORY_BYTES) as f:
        f.create_dataset(schema.LEAF_PUBLIC_STATES, data=np.arange(N, dtype=np.int64))
        public = ChunkAppender.create(f, schema.FEATURES_PUBLIC, (N, Fp), public_dtype)
        private = [
            ChunkAppender.create(f, path, shape, private_dtype)
            for path, shape in zip(schema.FEATURES_PRIVATE, shapes[1:])
        ]
        lengths = {"trunk": N, "public_state": N, "offset": N + 1}
        columns = {
            name: ChunkAppender.create(f, path, (lengths.get(name, M),), dtype)
            for name, (path, dtype) in {**schema.SAMPLE_DATASETS, **schema.ROW_DATASETS}.items()
        }
        particle_sizes = {"particles": N, "dead": N, "histories": N}
        for name, (path, dtype) in schema.PARTICLE_DATASETS.items():
            if name == "cf_rollout" and spec.particles.rollout_input is None:
                continue
            shape = (particle_sizes.get(name, M),) + ((Fq,) if name == "cf_opponent" else ())
            columns[name] = ChunkAppender.create(f, path, shape, dtype)
        columns["offset"].add(np.zeros(1, dtype=np.int64))
        columns["public_state"].add(np.arange(N, dtype=np.int64))
        m0 = 0  # rows before this shard
        seen = [0, 0]  # rows of each player before this shard
        for path in shards:
            with h5py.File(path, "r") as s:
                shard = {name: s[name][()] for name in ParticleShard.__dataclass_fields__ if name in s}
            player = shard["player"]
            index = np.zeros(len(player), dtype=np.int64)
            for n in (0, 1):
                mine = np.flatnonzero(player == n)
                index[mine] = seen[n] + np.arange(len(mine))
                private[n].add(shard["private_features"][mine])
                seen[n] += len(mine)
            public.add(shard["public_features"])
            shard["offset"] = shard["offset"][1:] + m0
            shard["index"] = index
            for name, column in columns.items():
                if name != "public_state":
                    column.add(shard[name].astype(column.dataset.dtype, copy=False))
            m0 += len(player)
        for column in [public, *private, *columns.values()]:
            column.close()
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
