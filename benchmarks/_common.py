"""What the solver benchmarks share: the `--quick` command line with the machine line, and a timer.

Imported by the scripts beside it (`python benchmarks/cfr_speed.py` puts this folder on sys.path).
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any


def quick_args(doc: str) -> argparse.Namespace:
    """Parse `--quick` (a smoke run) for the script documented by `doc`, then print the machine line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {platform.system()}, python "
        f"{platform.python_version()}"
    )
    return args


def timed(fn: Callable[[], Any], iterations: int) -> tuple[Any, float]:
    """(fn(), milliseconds per iteration of the `iterations` it ran)."""
    start = time.perf_counter()
    out = fn()
    return out, 1000 * (time.perf_counter() - start) / iterations
