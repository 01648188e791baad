"""Training value networks on PBS dataset files with PyTorch Lightning.

`PbsDataModule` serves batches that both networks read; `PositionalModule`
and `ParticleModule` wrap the plain `pvf.nets` networks (`module.net`,
built for `module.layout`); `pvf train` (`pvf.trainers.cli`) is the
LightningCLI; `load_value_function` reads a trained net back, weights only.
"""

from pvf.trainers.checkpoint import ValueFunctionMeta, load_value_function
from pvf.trainers.data import PbsBatch, PbsCollate, PbsTorchDataset, split_by_trunk
from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.layout import DataLayout
from pvf.trainers.module import ParticleModule, PositionalModule, ValueFunctionModule

__all__ = [
    "DataLayout",
    "ParticleModule",
    "PbsBatch",
    "PbsCollate",
    "PbsDataModule",
    "PbsTorchDataset",
    "PositionalModule",
    "ValueFunctionMeta",
    "ValueFunctionModule",
    "load_value_function",
    "split_by_trunk",
]
