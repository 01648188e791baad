"""Denormal floats flushed to zero while training: left alone they slow CPU training many-fold late in a run.

A weight whose gradient stays zero (a dead ReLU's weights, an input feature
never set) keeps Adam moments that decay geometrically (β₁ = 0.9, β₂ =
0.999 a step) into the denormal range below 1.2e-38 (float32), where CPU
arithmetic is tens of times slower. Measured on Goofspiel-5's positional
nets at step 102,400 of a paper-scale run: 34% of Adam's state was
denormal and a fused Adam step of one member took 17.6 ms instead of 0.78
(`benchmarks/denormals.py` shows the effect on a synthetic state). With
flush-to-zero (FTZ/DAZ) such values count as 0, and no weight above 1e-25
in magnitude changes: Adam's update is lr·m̂/(√v̂ + ε) with ε = 1e-8,
below 1.2e-33 from a denormal m at lr 1e-3 (late in a run, where the bias
corrections are 1), and a denormal v moves √v̂ + ε by less than its float32
rounding.

The flag belongs to a thread (x86's MXCSR register; other CPUs have their
own), and a new thread copies its creator's:
- `flush_denormals()` turns it on in the calling thread for a block (each
  training step of `EnsembleTrainer`, `separate_run` and
  `ValueFunctionModule`) and off after, unless the process flushes anyway;
- `flush_denormals_in_process()` turns it on for good in the calling thread.
  The `pvf` command and its worker processes call it before torch starts its
  intra-op thread pool, so that the pool's threads flush too (a block's flag
  reaches only the calling thread: with 2 threads the other one's half of a
  step stays slow).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

flushing_in_process = False
_depth = threading.local()  # nesting depth of flush_denormals() in each thread


def flush_denormals_in_process() -> bool:
    """Flush denormals in this thread from now on (and in threads it starts); False where the CPU cannot."""
    global flushing_in_process
    flushing_in_process = torch.set_flush_denormal(True)
    return flushing_in_process


@contextlib.contextmanager
def flush_denormals() -> Iterator[None]:
    """Flush denormals in the calling thread within the block (a no-op where the CPU cannot)."""
    depth = getattr(_depth, "value", 0)
    if depth == 0 and not flushing_in_process:
        torch.set_flush_denormal(True)
    _depth.value = depth + 1
    try:
        yield
    finally:
        _depth.value = depth
        if depth == 0 and not flushing_in_process:
            torch.set_flush_denormal(False)
