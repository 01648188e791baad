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

from __future__ import annotations

from pvf.exports import lazy_attributes

# name -> module; resolved on first use, so that importing a submodule (e.g. the registry the `pvf`
# command reads) does not load torch
_EXPORTS = {
    "ARCHITECTURES": "pvf.valuefn.registry",
    "Architecture": "pvf.valuefn.architecture",
    "NetworkEvaluator": "pvf.valuefn.evaluator",
    "ValueFunctionMeta": "pvf.valuefn.checkpoint",
    "make_architecture": "pvf.valuefn.registry",
    "architecture_class": "pvf.valuefn.registry",
    "load_checkpoint": "pvf.valuefn.checkpoint",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_attributes(__name__, _EXPORTS)
