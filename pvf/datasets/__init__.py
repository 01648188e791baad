"""PBS datasets: random trunk strategies, batched CFR+ targets, the HDF5 file (docs/hdf5_schema.md).

Modules, one job each: `sampling` (trunk strategies and beliefs), `targets`
(CFR+ on the leaf subgames), `tasks` (one block of trunks → one shard),
`backends` (local pool or Ray), `schema`, `writer`, `reader`, `spec` and
`generate` (resumable orchestration behind `pvf generate`; its entry point
is `pvf.datasets.generate.generate(spec, out, workers=..., backend=...)`).
"""

from pvf.datasets.generate import GenerationReport
from pvf.datasets.reader import PBSDataset
from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.spec import GenerationSpec

__all__ = ["GenerationReport", "GenerationSpec", "PBSDataset", "SamplingConfig"]
