"""Generate a particle PBS dataset file, resumably (schema version 2, docs/hdf5_schema.md).

`generate_particles(spec, out, ...)` follows `pvf.datasets.generate`:
  1. A complete file of the same spec is left alone; another is refused
     unless `overwrite`.
  2. Sample 0 is solved first, before anything is written: a game without
     the observers features need, a depth beyond the game, or a particle
     subgame over `max_histories` stops here with a one-line PvfError.
  3. Tasks (blocks of `task_size` sample ids) run on the chosen backend
     (`pvf.datasets.backends`, local pool or Ray); each finished task is a
     shard in out.parts/ written atomically, and a rerun skips the shards
     present. A sample depends on (spec, sample id) only, so the file is
     the same for any --workers and after any kill.
  4. The shards are joined in task order. Each sample gets its own row of
     /features/public (its public state id is its sample index) and each
     row its own row of /features/private/n, so readers of enumerated files
     (the particle network's data loader) read the file unchanged.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np
from tqdm import tqdm

import pvf
from pvf.datasets import schema
from pvf.datasets.backends import check_backend, run_tasks
from pvf.datasets.generate import GenerationReport, shard_path, work_dir
from pvf.datasets.particle_spec import ParticleSpec
from pvf.datasets.particle_tasks import ParticleShard, solve_sample
from pvf.games.features import feature_fields
from pvf.datasets.reader import PBSDataset
from pvf.datasets.tasks import Task, plan_tasks
from pvf.datasets.writer import atomic_h5
from pvf import interrupts
from pvf.errors import PvfError
from pvf.games.features import OBSERVER, FeatureTables

MANIFEST = "manifest.json"


def positional_inputs(game: str, depth: int) -> int:
    """A lower bound on the infostates of the largest public state at move `depth` (0 if unknown).

    Imperfect-information Goofspiel with N cards: 2·√X(k), X(k) = N!(N−1)!/((N−k)!(N−1−k)!·2^k)
    (the paper, app. A, lemma 2). A positional value function needs an input and an output per infostate.
    """
    if not game.startswith("goofspiel(") or "imp_info=True" not in game:
        return 0
    try:
        n = int(game.split("num_cards=", 1)[1].split(",", 1)[0].split(")", 1)[0])
    except (IndexError, ValueError):
        return 0
    k = depth
    if k >= n:
        return 0
    x = math.factorial(n) * math.factorial(n - 1) / (math.factorial(n - k) * math.factorial(n - 1 - k) * 2**k)
    return int(math.ceil(2 * math.sqrt(x)))


def generate_particles(
    spec: ParticleSpec, out: str | Path, workers: int = 1, backend: str = "local", overwrite: bool = False, progress: bool = True
) -> GenerationReport:
    """Make (or finish) the particle dataset `out` for `spec`; see the module docstring."""
    start = time.perf_counter()
    check_backend(workers, backend)
    out = Path(out)
    parts = work_dir(out)
    tasks = plan_tasks(spec.num_trunks, spec.task_size)
    if _complete(out, spec, overwrite):
        return GenerationReport(str(out), "complete", spec, spec.num_trunks, len(tasks), len(tasks), 0, time.perf_counter() - start, 0.0)
    if not out.parent.is_dir():
        raise PvfError(f"directory {out.parent} does not exist; create it or choose another --out")
    solve_sample(spec, 0)  # validates game, observers, depth and subgame size before anything is written
    _prepare(parts, spec, overwrite)
    todo = [t for t in tasks if not _shard_ok(shard_path(parts, t), t)]
    made = 0
    with tqdm(total=spec.num_trunks, initial=spec.num_trunks - sum(t.num_trunks for t in todo), unit="PBS",
              desc=f"pvf generate {out.name}", file=sys.stderr, disable=not progress, dynamic_ncols=True) as bar:
        for task, shard in run_tasks(spec, todo, workers, backend):
            _write_shard(shard_path(parts, task), task, shard)
            bar.update(shard.num_samples)
            made += shard.num_samples
            interrupts.check()
    _join(out, [shard_path(parts, t) for t in tasks], spec)
    shutil.rmtree(parts)
    seconds = time.perf_counter() - start
    return GenerationReport(str(out), "generated", spec, spec.num_trunks, len(tasks), len(tasks) - len(todo), len(todo),
                            seconds, made / seconds if seconds > 0 else 0.0)


def _complete(out: Path, spec: ParticleSpec, overwrite: bool) -> bool:
    if not out.exists():
        return False
    try:
        with PBSDataset(out) as ds:
            problem = "; ".join(spec.differences(ParticleSpec.from_attrs(ds.attrs)))
    except PvfError as exc:
        problem = str(exc)
    if not problem:
        return True
    if not overwrite:
        raise PvfError(f"{out} exists and was not made by this command ({problem}); pass --overwrite to replace it")
    out.unlink()
    return False


def _manifest(parts: Path) -> ParticleSpec | None:
    try:
        return ParticleSpec.from_attrs(json.loads((parts / MANIFEST).read_text()))
    except (OSError, ValueError, PvfError):
        return None


def _prepare(parts: Path, spec: ParticleSpec, overwrite: bool) -> None:
    if parts.exists() and _manifest(parts) != spec:
        fresh = parts.is_dir() and all(p.name.endswith(".tmp") for p in parts.iterdir())
        if not fresh:
            if not overwrite:
                raise PvfError(f"work directory {parts} belongs to another generation; pass --overwrite to discard it")
            shutil.rmtree(parts) if parts.is_dir() else parts.unlink()
    parts.mkdir(exist_ok=True)
    for stale in parts.glob("*.tmp"):
        stale.unlink()
    if _manifest(parts) is None:
        tmp = parts / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(spec.to_attrs(), indent=2, sort_keys=True))
        os.replace(tmp, parts / MANIFEST)


def _write_shard(path: Path, task: Task, shard: ParticleShard) -> None:
    with atomic_h5(path) as f:
        for name, values in shard.as_dict().items():
            f.create_dataset(name, data=values)
        f.attrs.update(task_index=task.index, trunk_lo=task.trunk_lo, trunk_hi=task.trunk_hi)


def _shard_ok(path: Path, task: Task) -> bool:
    try:
        with h5py.File(path, "r") as f:
            same = (int(f.attrs["task_index"]), int(f.attrs["trunk_lo"]), int(f.attrs["trunk_hi"])) == (task.index, task.trunk_lo, task.trunk_hi)
            return same and all(name in f for name in ParticleShard.__dataclass_fields__)
    except (OSError, KeyError, ValueError):
        return False


def _join(out: Path, shards: list[Path], spec: ParticleSpec) -> None:
    data: dict[str, list[np.ndarray]] = {name: [] for name in ParticleShard.__dataclass_fields__}
    for path in shards:
        with h5py.File(path, "r") as f:
            for name in data:
                data[name].append(f[name][()])
    offsets = [0]
    for off in data["offset"]:
        offsets.extend((off[1:] + offsets[-1]).tolist())
    cat = {name: np.concatenate(v) if name != "offset" else np.asarray(offsets, dtype=np.int64) for name, v in data.items()}
    N, player = len(cat["trunk"]), cat["player"]
    index = np.zeros(len(player), dtype=np.int64)
    for n in (0, 1):
        index[player == n] = np.arange(int(np.sum(player == n)))
    rows = {"player": player, "index": index, "slot": cat["slot"], "belief": cat["belief"], "target": cat["target"],
            "target_current": cat["target_current"]}
    public, private = cat["public_features"], cat["private_features"]
    public_fields, private_fields = feature_fields(spec.game)
    tables = FeatureTables(spec.game, public, (private[player == 0], private[player == 1]), public_fields, private_fields, OBSERVER, OBSERVER)
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
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            complete=True,
            positional_infostates=positional_inputs(spec.game, spec.depth),
            **spec.to_attrs(),
        )
