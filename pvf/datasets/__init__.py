"""PBS datasets: random trunk strategies, batched CFR+ targets, the HDF5 file (docs/hdf5_schema.md).

Modules, one job each: `sampling` (trunk strategies and beliefs), `targets`
(CFR+ on the leaf subgames), `tasks` (one block of trunks → one shard),
`backends` (local pool or Ray), `schema`, `writer`, `reader`, `layout`
(the sizes a network built for a file depends on), `spec` and `generate`
(resumable orchestration behind `pvf generate`; its entry point is
`pvf.datasets.generate.generate(spec, out, workers=..., backend=...)`).

The names below are imported on first use, so that reading a file
(`pvf.datasets.reader`) does not load the CFR+ stack.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "GenerationReport": "pvf.datasets.generate",
    "GenerationSpec": "pvf.datasets.spec",
    "PBSDataset": "pvf.datasets.reader",
    "SamplingConfig": "pvf.datasets.sampling",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pvf.datasets' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
