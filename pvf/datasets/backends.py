"""Where tasks run: in this process, in a spawn-context process pool, or on Ray.

Every backend runs the same function (`tasks.run_task`, either kind of
dataset) on the same tasks and yields (task, shard) pairs as tasks finish,
in any order; the caller writes each shard. Workers only compute: they never touch the output, so a
worker that outlives a killed parent cannot corrupt anything.
  - local, 1 worker: tasks run here, in order.
  - local, W > 1: `multiprocessing.get_context("spawn").Pool(W)`; each worker
    builds the game once (`pbs_tasks.context` is cached per process) and exits
    on its own if its parent dies (a watchdog thread polls the parent pid).
  - ray: the tasks as Ray remote functions, on the cluster named by
    `RAY_ADDRESS`, or on a local instance with W CPUs when it is unset.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence

from pvf.datasets.sample_networks import NO_NETWORKS, SampleNetworks
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.task_plan import SampleColumns, Task
from pvf.datasets.tasks import TaskOptions, run_task
from pvf.errors import PvfError
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES

BACKENDS = ("local", "ray")
_PARENT_POLL_SECONDS = 1.0
_WORKERS_PER_CPU = 4  # more only costs memory (every worker builds the game) and time


def run_tasks(
    spec: GenerationSpec,
    tasks: Sequence[Task],
    workers: int,
    backend: str = "local",
    max_histories: int = DEFAULT_MAX_HISTORIES,
    engine: str = "auto",
    networks: SampleNetworks = NO_NETWORKS,
) -> Iterator[tuple[Task, SampleColumns]]:
    """Run `tasks` with `workers` workers on `backend`; yield (task, shard) as each finishes.

    max_histories: the game-size cap each worker builds its tree with; engine: the particle engine;
    networks: the nets at the query and target solves' leaves (`run_task`)."""
    check_backend(workers, backend)
    if not tasks:
        return iter(())
    job = (max_histories, engine, networks)
    if backend == "ray":
        return _run_ray(spec, tasks, workers, job)
    if workers == 1 or len(tasks) == 1:
        return ((task, run_task(spec, task, *job)) for task in tasks)
    return _run_pool(spec, tasks, min(workers, len(tasks)), job)


def check_backend(workers: int, backend: str) -> None:
    """PvfError unless `workers` ≥ 1 and `backend` is known."""
    if workers < 1:
        raise PvfError(f"the number of workers must be at least 1, got {workers}")
    limit = _WORKERS_PER_CPU * (os.cpu_count() or 1)
    if backend == "local" and workers > limit:
        raise PvfError(
            f"{workers} local workers on {os.cpu_count()} CPUs: each worker holds the game in memory; "
            f"use at most {limit} (or --backend ray on a cluster)"
        )
    if backend not in BACKENDS:
        raise PvfError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "ray":
        check_ray_address(os.environ.get("RAY_ADDRESS", ""))


def check_ray_address(address: str, timeout: float = 5.0) -> None:
    """PvfError (one line, before any work) if RAY_ADDRESS names a head node nothing answers at.

    `ray.init` would retry such an address for about 14 minutes before a long traceback. "" (a local
    instance) and "auto"/"local" (Ray looks for one itself) are not checked.
    """
    if address in ("", "auto", "local"):
        return
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            pass
    except ValueError:
        raise PvfError(
            f"RAY_ADDRESS={address!r} is not host:port; fix it, or unset it to start a local instance"
        ) from None
    except OSError as exc:
        raise PvfError(
            f"no Ray cluster answers at RAY_ADDRESS={address} ({exc.strerror or exc}); start it, fix "
            "RAY_ADDRESS, or unset it to start a local instance"
        ) from None


def _run_one(job: tuple[GenerationSpec, Task, TaskOptions]) -> tuple[Task, SampleColumns]:
    spec, task, options = job
    return task, run_task(spec, task, *options)


def exit_with_parent(parent_pid: int) -> None:
    """Pool initializer: end this worker when its parent is gone (e.g. SIGKILLed)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _run_pool(
    spec: GenerationSpec, tasks: Sequence[Task], workers: int, options: TaskOptions
) -> Iterator[tuple[Task, SampleColumns]]:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers, initializer=exit_with_parent, initargs=(os.getpid(),)) as pool:
        yield from pool.imap_unordered(_run_one, [(spec, task, options) for task in tasks])


def _run_ray(
    spec: GenerationSpec, tasks: Sequence[Task], workers: int, options: TaskOptions
) -> Iterator[tuple[Task, SampleColumns]]:
    try:
        import ray
    except ImportError:
        raise PvfError("--backend ray needs Ray: pip install 'pvf[ray]' (or 'ray>=2.9')") from None
    started = not ray.is_initialized()
    if started:
        if os.environ.get("RAY_ADDRESS"):
            ray.init()
        else:
            ray.init(num_cpus=workers, include_dashboard=False)
    try:
        remote = ray.remote(num_cpus=1)(_run_one)
        pending = [remote.remote((spec, task, options)) for task in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()
