"""The extension point: one `Architecture` object per kind of value network.

An architecture owns everything that differs between networks, and nothing
else does:
  1. `build(layout)`: the plain `torch.nn` network for a data layout
     (`pvf.datasets.layout.DataLayout`: feature widths, slots), from the
     data-independent hyper-parameters the architecture was constructed with;
  2. `encode_batch(rows, layout)`: PBS rows of a dataset file
     (`pvf.valuefn.encoding.PbsRows`) → the net's input tensors, targets
     and mask; `predict(net, batch)` → (values, targets, mask), all [B, X];
  3. `leaf_encoder(leaves, layout, device)`: the same encoding for the
     leaves of a trunk (`pvf.valuefn.leaves.TrunkLeaves`), built once per
     trunk, so a trained net can be the trunk's leaf evaluator
     (`pvf.valuefn.evaluator`); the encoder takes the net at each call
     (`encoder(net, flat)`), so any module with the net's call signature
     (e.g. several nets evaluated as one) can stand in;
  4. `check_layout(trained, other)`: whether a net built for one layout can
     read data of another.
The conventions all architectures share (belief normalisation, slot
offsets, infostate-row feature order) live in `pvf.valuefn.encoding`. The
registry (`pvf.valuefn.registry`) names the architectures; checkpoints
store that name and `net.config`, so they load without the architecture's
hyper-parameters.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Protocol

import numpy as np
from torch import Tensor, nn

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.games.loading import canonical_game_string
from pvf.nets.mlp import ConfigurableModule
from pvf.valuefn.encoding import PbsRows
from pvf.valuefn.leaves import TrunkLeaves

Batch = dict[str, Tensor]


class LeafEncoder(Protocol):
    """`encoder(net, flat [B, J1 + J2 + 1]) -> values [B, J1 + J2]` (float64, in the net's units)."""

    def __call__(self, net: nn.Module, flat: np.ndarray) -> np.ndarray: ...


class Architecture(ABC):
    """A value-network architecture: its net, and how PBSs become that net's tensors.

    Subclasses set `name` (the registry key, stored in checkpoints; its one-line help is the registry
    entry's) and `net_class` (a `ConfigurableModule`), and take the net's
    data-independent hyper-parameters as constructor arguments, all with
    defaults (so a LightningCLI config builds them,
    `model.init_args.architecture`, and `cls()` encodes for any net of the
    class: the encoding never depends on the hyper-parameters).
    """

    name: ClassVar[str]
    net_class: ClassVar[type[ConfigurableModule]]

    @abstractmethod
    def build(self, layout: DataLayout) -> ConfigurableModule:
        """An untrained net for data of `layout`."""

    @abstractmethod
    def encode_batch(self, rows: PbsRows, layout: DataLayout) -> Batch:
        """Tensors of a training batch: the net's inputs, "targets" and "mask" (True: a real infostate)."""

    @abstractmethod
    def predict(self, net: nn.Module, batch: Batch) -> tuple[Tensor, Tensor, Tensor]:
        """(values, targets, mask), all [B, X] in the architecture's view X of the batch."""

    @abstractmethod
    def leaf_encoder(self, leaves: TrunkLeaves, layout: DataLayout, device: Any) -> LeafEncoder:
        """The encoding of a trunk's leaves, built once; the net's tensors live on `device`."""

    def check_layout(self, trained: DataLayout, other: DataLayout) -> None:
        """Raise PvfError unless a net built for `trained` can read data of `other`.

        Every architecture needs the same game and feature widths; depth and
        target column may differ. Subclasses add their own needs (slots).
        """
        if canonical_game_string(other.game) != canonical_game_string(trained.game):
            raise PvfError(f"value function was trained on {trained.game!r}, not {other.game!r}")
        if (other.public_dim, other.private_dim) != (trained.public_dim, trained.private_dim):
            raise PvfError(
                f"value function expects features Fp={trained.public_dim}, Fq={trained.private_dim}; "
                f"the data has Fp={other.public_dim}, Fq={other.private_dim}"
            )


def tile(t: Tensor, times: int) -> Tensor:
    """`t` repeated `times` along its first axis (itself, uncopied, once): a trunk's fixed inputs for B problems."""
    return t if times == 1 else t.repeat(times, *([1] * (t.dim() - 1)))
