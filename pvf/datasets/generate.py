"""Generate a dataset file of either kind, resumably: shards in a work directory, then one atomic join.

`generate(spec, out, ...)` makes enumerated and particle datasets alike
(`pvf.datasets.tasks` says what the spec's kind computes, checks and
joins); for output F.h5 and work directory F.h5.parts/:
  0. F.h5 must be a writable file path (checked before anything else), and
     the run holds an exclusive lock on F.h5.lock (pvf.outputs) until it
     returns: a second generator of the same output is refused at once.
  1. If F.h5 exists: with the same spec it is complete (return at once);
     with another spec, or unreadable, it is refused unless `overwrite`
     (then removed).
  2. The spec's kind is checked against the game before anything is
     written: the tree and trunk are built (enumerated; this validates game
     and depth), or sample 0 is solved (particles: a game without the
     observers features need, a depth beyond the game, or a particle
     subgame over its cap stops here).
  3. F.h5.parts/ holds `manifest.json` (the spec). An existing work
     directory of another spec is refused unless `overwrite` (then
     removed); one of the same spec is resumed.
  4. Tasks (blocks of `task_size` trunk ids) whose shard
     `shard-NNNNNN.h5` is present, is the task's (enumerated: its layout;
     particles: its sample ids and row offsets) and holds valid values
     (finite, beliefs in [0, 1]) are skipped; the others run on the chosen
     backend and each finished shard is checked the same way and written
     atomically (temporary name, fsync, rename). A tqdm bar on stderr
     counts samples.
  5. The shards are joined in task order into F.h5.tmp, which is renamed to
     F.h5; then the work directory is removed. The feature tables are built
     before any task runs. A full disk is a one-line error that leaves the
     finished shards in place for a rerun.
A SIGKILL at any point loses at most the shards in flight: rerunning the
same command finishes the same file, sample for sample, as an uninterrupted
run, because a task's samples depend only on (spec, task).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from pvf import interrupts
from pvf.datasets.backends import check_backend, run_tasks
from pvf.datasets.reader import PBSDataset
from pvf.datasets.sample_networks import NO_NETWORKS, SampleNetworks
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.task_plan import Task, plan_tasks
from pvf.datasets.tasks import TaskOptions, dataset_kind
from pvf.datasets.writer import shard_values_valid, write_shard
from pvf.errors import PvfError
from pvf.games.engine import check_engine
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES
from pvf.outputs import check_output_file, disk_errors, output_lock

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class GenerationReport:
    """What a `generate` call did.

    status: "complete" (the file was already there) or "generated".
    num_samples: samples in the file.
    num_tasks: tasks of the spec; tasks_resumed of them were found finished, tasks_run were run now.
    seconds: wall time of this call; samples_per_second: samples made by this call per second.
    """

    path: str
    status: str
    spec: GenerationSpec
    num_samples: int
    num_tasks: int
    tasks_resumed: int
    tasks_run: int
    seconds: float
    samples_per_second: float

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "spec"}
        out["spec"] = self.spec.to_attrs()
        return out


def work_dir(out: Path) -> Path:
    """The shard directory of output `out`: `out`.parts next to it."""
    return out.with_name(out.name + ".parts")


def shard_path(parts: Path, task: Task) -> Path:
    return parts / f"shard-{task.index:06d}.h5"


def generate(
    spec: GenerationSpec,
    out: str | Path,
    workers: int = 1,
    backend: str = "local",
    overwrite: bool = False,
    progress: bool = True,
    max_histories: int = DEFAULT_MAX_HISTORIES,
    engine: str = "auto",
    networks: SampleNetworks = NO_NETWORKS,
) -> GenerationReport:
    """Make (or finish) the dataset file `out` for `spec`, either kind; see the module docstring.

    max_histories: the public tree's size cap for enumerated data (not part of the file's identity);
    a particle spec carries its own cap. engine: the particle path's engine ("auto", "native" or
    "openspiel", `pvf.games.engine`), like `workers` not part of the file's identity: the same file from each.
    networks: the nets at the leaves of the query and target solves where the spec records them
    (`ParticleOptions.solve_network`, `target_network`)."""
    start = time.perf_counter()
    check_backend(workers, backend)
    check_engine(engine)
    out = check_output_file(out, "--out")
    with output_lock(out):
        return _generate(spec, out, workers, backend, overwrite, progress, (max_histories, engine, networks), start)


def _generate(
    spec: GenerationSpec,
    out: Path,
    workers: int,
    backend: str,
    overwrite: bool,
    progress: bool,
    options: TaskOptions,
    start: float,
) -> GenerationReport:
    parts = work_dir(out)
    num_tasks = -(-spec.num_trunks // spec.task_size)
    if _existing_file_is_complete(out, parts, spec, overwrite):
        with PBSDataset(out) as ds:
            n = ds.num_samples
        seconds = time.perf_counter() - start
        return GenerationReport(str(out), "complete", spec, n, num_tasks, num_tasks, 0, seconds, 0.0)
    kind = dataset_kind(spec, *options)
    _check_dataset_fits(out, spec, kind.disk_bound, kind.disk_bound_is)
    tasks = plan_tasks(spec.num_trunks, spec.task_size)  # after the size check: a huge --trunks is refused, not listed
    per_trunk = kind.samples_per_trunk
    resume = f"finished shards are kept in {parts}; free some space and rerun the same command to resume"
    with disk_errors(parts, resume):
        _prepare_work_dir(parts, spec, overwrite)
    todo = [t for t in tasks if not kind.shard_matches(shard_path(parts, t), t)]
    done_samples = per_trunk * (spec.num_trunks - sum(t.num_trunks for t in todo))
    made = 0
    with tqdm(
        total=per_trunk * spec.num_trunks,
        initial=done_samples,
        unit="PBS",
        desc=f"pvf generate {out.name}",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for task, arrays in run_tasks(spec, todo, workers, backend, *options):
            if not shard_values_valid(arrays):
                raise PvfError(
                    f"task {task.index} (trunks {task.trunk_lo}-{task.trunk_hi - 1}) produced non-finite "
                    f"or out-of-range values; try more --cfr-iterations or another game"
                )
            with disk_errors(parts, resume):
                write_shard(shard_path(parts, task), task, arrays)
            bar.update(arrays.num_samples)
            interrupts.check()
            made += arrays.num_samples
    shards = [shard_path(parts, t) for t in tasks]
    _check_free_space(out, shards, resume)
    with disk_errors(out, resume):
        kind.join(out, shards)
    shutil.rmtree(parts)
    seconds = time.perf_counter() - start
    return GenerationReport(
        str(out),
        "generated",
        spec,
        per_trunk * spec.num_trunks,
        len(tasks),
        len(tasks) - len(todo),
        len(todo),
        seconds,
        made / seconds if seconds > 0 else 0.0,
    )


def _check_dataset_fits(out: Path, spec: GenerationSpec, need: int, bound: str) -> None:
    """PvfError before any work if the shards and the final file (`need` bytes, `bound` "at most" or
    "at least") exceed the free disk space."""
    free = shutil.disk_usage(out.parent).free
    if need > free:
        raise PvfError(
            f"{spec.num_trunks:,} trunks need {'up to' if bound == 'at most' else 'at least'} {need / 1e9:,.1f} GB "
            f"(shards and {out.name}), "
            f"{free / 1e9:,.1f} GB are free next to {out}; use fewer --trunks or another --out"
        )


def _check_free_space(out: Path, shards: list[Path], resume: str) -> None:
    """PvfError if the joined file (about the shards' size) cannot fit on the output's disk."""
    need = sum(p.stat().st_size for p in shards)
    free = shutil.disk_usage(out.parent).free
    if free < need:
        raise PvfError(f"cannot write {out}: about {need / 1e6:.1f} MB needed, {free / 1e6:.1f} MB free; {resume}")


def _existing_file_is_complete(out: Path, parts: Path, spec: GenerationSpec, overwrite: bool) -> bool:
    """True if `out` is a finished file of `spec`; removes or refuses a file of anything else."""
    if not out.exists():
        return False
    try:
        with PBSDataset(out) as ds:
            found = GenerationSpec.from_attrs(ds.attrs)
        problem = "; ".join(spec.differences(found))
    except PvfError as exc:
        problem = str(exc)
    if not problem:
        if parts.is_dir() and _manifest_spec(parts) == spec:
            shutil.rmtree(parts)  # left over by a run killed after its final rename
        return True
    if not overwrite:
        raise PvfError(f"{out} exists and was not made by this command ({problem}); pass --overwrite to replace it")
    out.unlink()
    return False


def _manifest_spec(parts: Path) -> GenerationSpec | None:
    """The spec in a work directory's manifest, or None if there is none or it is unreadable."""
    try:
        return GenerationSpec.from_attrs(json.loads((parts / MANIFEST).read_text()))
    except (OSError, ValueError, PvfError):
        return None


def _prepare_work_dir(parts: Path, spec: GenerationSpec, overwrite: bool) -> None:
    """Resume a work directory of `spec`, or start an empty one; refuse others unless `overwrite`."""
    if parts.exists():
        found = _manifest_spec(parts) if parts.is_dir() else None
        # A directory holding only temporary files was left by a kill before its manifest was written.
        fresh = parts.is_dir() and all(p.name.endswith(".tmp") for p in parts.iterdir())
        if found != spec and not (found is None and fresh):
            why = "; ".join(spec.differences(found)) if found is not None else "no readable manifest"
            if not overwrite:
                raise PvfError(
                    f"work directory {parts} belongs to another generation ({why}); pass --overwrite to discard it"
                )
            if parts.is_dir():
                shutil.rmtree(parts)
            else:
                parts.unlink()
    parts.mkdir(exist_ok=True)
    for stale in parts.glob("*.tmp"):
        stale.unlink()
    if _manifest_spec(parts) is None:
        tmp = parts / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(spec.to_attrs(), indent=2, sort_keys=True))
        os.replace(tmp, parts / MANIFEST)
