"""Training value networks on PBS dataset files with PyTorch Lightning.

`PbsDataModule` serves flat PBS rows of a file; `ValueFunctionModule` is
handed an architecture (`pvf.valuefn`), builds its net (`module.net`) for
the file's layout (`module.layout`) and lets the architecture encode the
rows; `pvf train` (`pvf.trainers.cli`) is the LightningCLI over the
composed configs (`pvf.trainers.configs`: `configs/train.yaml`, a data and
a model config), which `pvf reproduce` reads too. Trained nets
are read back by `pvf.valuefn.load_checkpoint`, weights only.
"""

from __future__ import annotations

from pvf.exports import lazy_attributes

# name -> module; resolved on first use, so that importing a submodule (e.g. the registry the `pvf`
# command reads) does not load torch
_EXPORTS = {
    "PbsCollate": "pvf.trainers.data",
    "PbsDataModule": "pvf.trainers.datamodule",
    "PbsTorchDataset": "pvf.trainers.data",
    "ValueFunctionModule": "pvf.trainers.module",
    "split_by_trunk": "pvf.trainers.data",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_attributes(__name__, _EXPORTS)
