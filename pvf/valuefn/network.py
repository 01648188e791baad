"""Trained value functions as leaf evaluators of a trunk.

1. `load_value_function(path, game, depth)` loads a checkpoint written by `pvf train`
   (`pvf.valuefn.checkpoint`) and checks it against the game and depth asked
   for: game and depth default to the checkpoint's, a mismatch is a PvfError.
2. `Network.evaluator(trunk, features)` wraps the net for the trunk's leaves
   with its architecture's encoding (`pvf.valuefn.evaluator.NetworkEvaluator`).
   The feature tables are the tree's (`build_feature_tables`), which are the
   ones the dataset stored; their widths are checked against the net's layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from torch import nn

from pvf.errors import PvfError
from pvf.games.features import FeatureTables, build_feature_tables
from pvf.games.loading import canonical_game_string
from pvf.solvers.trunk_solver import Trunk
from pvf.valuefn.checkpoint import ValueFunctionMeta, load_checkpoint
from pvf.valuefn.evaluator import NetworkEvaluator


@dataclass(frozen=True, eq=False)
class Network:
    """A loaded value function: the net (eval mode, CPU), what it was trained on, where it came from."""

    net: nn.Module
    meta: ValueFunctionMeta
    path: str

    @property
    def architecture(self) -> str:
        return self.meta.architecture

    def evaluator(
        self, trunk: Trunk, features: FeatureTables | None = None, slots: tuple[np.ndarray, np.ndarray] | None = None
    ) -> NetworkEvaluator:
        """The net at the trunk's leaves (`features`: the trunk's tree's tables, built if not given;
        `slots`: per player [J_n] leaf slots if not the trunk tree's, `pvf.experiments.positional_slots`)."""
        features = features if features is not None else build_feature_tables(trunk.tree)
        return NetworkEvaluator(trunk, self.net, self.meta.encoding, self.meta.layout, features, slots)


def load_value_function(path: str | Path, game: str | None = None, depth: int | None = None) -> Network:
    """Load a checkpoint; `game` / `depth`, when given, must be the ones it was trained on."""
    net, meta = load_checkpoint(path)
    if game is not None and canonical_game_string(game) != canonical_game_string(meta.game):
        raise PvfError(
            f"{path} was trained on {meta.game!r}, not {canonical_game_string(game)!r}; drop --game or pass that game"
        )
    if depth is not None and depth != meta.layout.depth:
        raise PvfError(
            f"{path} was trained at depth {meta.layout.depth}, not {depth}; drop --depth or pass {meta.layout.depth}"
        )
    return Network(net, meta, str(path))
