"""Long runs in spawned worker processes that stop when their parent stops.

`pvf reproduce --jobs N` trains networks in N worker processes, each
holding the locks of what it trains and saving its training state at
measurements. A plain `ProcessPoolExecutor` would keep training after its
parent is interrupted (Ctrl-C reaches the whole process group, but a
SIGTERM only the parent, which would then wait hours for its workers) or
killed. `run_in_processes` instead:
  1. starts each worker with the parent's torch thread count, denormals
     flushed as in the parent (`pvf.trainers.denormals`), and a watchdog
     that ends it when the parent is gone (SIGKILL);
  2. in a task, handles SIGTERM as Ctrl-C (`pvf.interrupts`: locks released
     while unwinding) and ends the worker right after the task has unwound,
     so that it cannot start another; an idle worker ends at once, quietly,
     on SIGTERM or Ctrl-C (no traceback of the pool's queue);
  3. on the first failure or interrupt in the parent, cancels the tasks not
     started and sends SIGTERM to the workers, then re-raises; a worker
     still alive `STOP_GRACE` seconds later (stuck in a long call that
     defers the signal) is killed, so the parent never waits on it (its
     `flock`s go with it).
The work a stopped run did since its last saved state is lost; a rerun
continues from that state.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from types import FrameType
from typing import Any, TypeVar

import torch
from tqdm import tqdm

from pvf import interrupts
from pvf.datasets.backends import exit_with_parent
from pvf.trainers.denormals import flush_denormals_in_process

T = TypeVar("T")
INTERRUPTED_EXIT = 130  # a worker's exit status after an interrupted task
STOP_GRACE = 30.0  # seconds a stopped worker has to unwind before it is killed


def run_in_processes(
    fn: Callable[..., T], calls: Sequence[tuple[Any, ...]], jobs: int, bar: str | None = None
) -> list[T]:
    """`[fn(*call) for call in calls]` in `jobs` spawned processes (started in this order), results in order.

    bar: description of a progress bar counting finished calls (None: no bar).
    The first exception (or interrupt) stops every worker and is raised here.
    """
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        min(jobs, len(calls)),
        mp_context=context,
        initializer=_start_worker,
        initargs=(torch.get_num_threads(), os.getpid()),
    ) as pool:
        futures = [pool.submit(_stop_after_interrupt, fn, *call) for call in calls]
        try:
            for future in tqdm(
                as_completed(futures), total=len(futures), desc=bar, disable=bar is None, dynamic_ncols=True
            ):
                future.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            children = multiprocessing.active_children()
            for child in children:
                child.terminate()
            deadline = time.monotonic() + STOP_GRACE
            for child in children:
                child.join(max(0.0, deadline - time.monotonic()))
                if child.is_alive():
                    child.kill()
            raise
        return [future.result() for future in futures]


def _start_worker(threads: int, parent: int) -> None:
    """Worker initializer: denormals flushed and torch threads as the parent's; idle, a signal ends it;
    it ends with the parent."""
    flush_denormals_in_process()  # first: the thread pool torch starts later copies the flag
    torch.set_num_threads(threads)
    # The worker's bars need no lock shared with other processes; tqdm's default one is a multiprocessing
    # semaphore, which a worker ended by a signal leaves behind for the resource tracker to warn about.
    tqdm.set_lock(threading.RLock())
    _idle()
    exit_with_parent(parent)


def _stop_after_interrupt(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` with SIGTERM and Ctrl-C as KeyboardInterrupt; after one has unwound it (locks released),
    end this worker at once."""
    interrupts.install()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return fn(*args)
    except KeyboardInterrupt:  # (an interrupted Lightning fit is one again: `train_value_function`)
        os._exit(INTERRUPTED_EXIT)
    finally:
        _idle()


def _idle() -> None:
    """Between tasks nothing needs cleaning up: SIGTERM and Ctrl-C end the worker at once."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_now)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    os._exit(INTERRUPTED_EXIT)
