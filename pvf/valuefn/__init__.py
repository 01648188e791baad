"""Value functions: one `Architecture` object per kind of network, and what uses it.

- `architecture`: the extension point (`Architecture`: build the net for a
  data layout, encode training batches, encode a trunk's leaves).
- `encoding`: the conventions every architecture shares (belief
  normalisation, slots, infostate-row features, `PbsRows`).
- `positional`, `particle`, `attention`: the architectures; `registry` names them.
- `leaves`: a trunk's leaves as PBSs; `evaluator`: a net as the trunk's leaf
  evaluator (the callback `pvf.solvers` takes).
- `checkpoint`: `load_checkpoint`, weights only.
"""

from pvf.valuefn.architecture import Architecture
from pvf.valuefn.checkpoint import ValueFunctionMeta, load_checkpoint
from pvf.valuefn.evaluator import NetworkEvaluator
from pvf.valuefn.registry import ARCHITECTURES, architecture, architecture_class

__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "NetworkEvaluator",
    "ValueFunctionMeta",
    "architecture",
    "architecture_class",
    "load_checkpoint",
]
