"""Training value networks on PBS dataset files with PyTorch Lightning.

`PbsDataModule` serves flat PBS rows of a file; `ValueFunctionModule` is
handed an architecture (`pvf.valuefn`), builds its net (`module.net`) for
the file's layout (`module.layout`) and lets the architecture encode the
rows; `pvf train` (`pvf.trainers.cli`) is the LightningCLI over the
composed configs (`pvf.trainers.configs`: `configs/train.yaml`, a data and
a model config), which `pvf reproduce` reads too. Trained nets
are read back by `pvf.valuefn.load_checkpoint`, weights only.
"""

from pvf.trainers.data import PbsCollate, PbsTorchDataset, split_by_trunk
from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.module import ValueFunctionModule

__all__ = ["PbsCollate", "PbsDataModule", "PbsTorchDataset", "ValueFunctionModule", "split_by_trunk"]
