"""A trained value network as a trunk's leaf evaluator (the callback `pvf.solvers` asks for).

`NetworkEvaluator(trunk, net, architecture, layout, features)` implements
`pvf.solvers.interface.LeafEvaluator`:
`evaluator(reach1 [B, J1], reach2 [B, J2]) -> (cfv1 [B, J1], cfv2 [B, J2])`.
Per query:
  1. the reaches become one row per problem (`TrunkLeaves.flat`),
     normalised per leaf public state and player if the net was trained so;
  2. the architecture's leaf encoder (built once per trunk) gathers them
     into its inputs, runs one forward pass over every leaf PBS of every
     problem, and reads the outputs back in leaf-infostate order;
  3. values are multiplied back by the opponent's mass (normalised nets)
     and split per player.
Beliefs are the reaches cfr_plus passes (own reach from the trunk's root)
and outputs are used as they are: for a trunk rooted at the initial state
that is exactly the training convention. Trunks rooted elsewhere convert
around the evaluator (`pvf.solvers.sparse_trunks.ScaledEvaluator`). The
net runs without gradients, single-threaded (leaf batches are small).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.games.features import FeatureTables
from pvf.nets.mlp import single_thread
from pvf.solvers.trunk_solver import Trunk
from pvf.valuefn.architecture import Architecture
from pvf.valuefn.leaves import TrunkLeaves


class NetworkEvaluator:
    """`net` (of `architecture`, trained on data of `layout`) at the trunk's leaves."""

    def __init__(
        self,
        trunk: Trunk,
        net: nn.Module,
        architecture: Architecture,
        layout: DataLayout,
        features: FeatureTables,
        slots: tuple[np.ndarray, np.ndarray] | None = None,
    ):
        """slots: per player [J_n] leaf infostates' slots, if not the trunk tree's own (`TrunkLeaves`)."""
        check_features(features, layout)
        self.net = net
        self.leaves = TrunkLeaves(trunk, features, layout.normalize, slots)
        self.encoder = architecture.leaf_encoder(self.leaves, layout, _device(net))

    @torch.inference_mode()
    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with single_thread():
            flat, scale = self.leaves.flat(reach1, reach2)
            values = self.encoder(self.net, flat)
            if scale is not None:
                values *= scale
            return self.leaves.split(values)


def check_features(features: FeatureTables, layout: DataLayout) -> None:
    """Raise PvfError unless the feature tables have the widths the net was trained on."""
    if (features.public_dim, features.private_dim) != (layout.public_dim, layout.private_dim):
        raise PvfError(
            f"the net expects features Fp={layout.public_dim}, Fq={layout.private_dim}; "
            f"this pvf builds Fp={features.public_dim}, Fq={features.private_dim} for {features.game}"
        )


def _device(net: nn.Module) -> torch.device:
    """The device of the network's parameters (CPU for a parameterless stand-in)."""
    param = next(net.parameters(), None)
    return param.device if param is not None else torch.device("cpu")
