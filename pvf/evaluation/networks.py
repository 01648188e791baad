"""Trained value functions as leaf evaluators of a trunk.

1. `load_network(path, game, depth)` loads a checkpoint written by `pvf train`
   (`pvf.trainers.checkpoint`) and checks it against the game and depth asked
   for: game and depth default to the checkpoint's, a mismatch is a PvfError.
2. `network_evaluator(trunk, net, meta, features)` wraps the net for the
   trunk's leaves: `PositionalEvaluator` with the training data's slots
   (player 2's slot k at K1max + k) or `ParticleEvaluator`. The feature
   tables are the tree's (`build_feature_tables`), which are the ones the
   dataset stored; their widths are checked against the net's layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from torch import nn

from pvf.errors import PvfError
from pvf.games.features import FeatureTables
from pvf.games.loading import canonical_game_string
from pvf.solvers.cfr_plus import LeafEvaluator
from pvf.solvers.evaluators import ParticleEvaluator, PositionalEvaluator
from pvf.solvers.trunk_solver import Trunk
from pvf.trainers.checkpoint import ValueFunctionMeta, load_value_function
from pvf.trainers.layout import DataLayout


@dataclass(frozen=True, eq=False)
class Network:
    """A loaded value function: the net (eval mode, CPU), what it was trained on, where it came from."""

    net: nn.Module
    meta: ValueFunctionMeta
    path: str

    @property
    def architecture(self) -> str:
        return self.meta.architecture


def load_network(path: str | Path, game: str | None = None, depth: int | None = None) -> Network:
    """Load a checkpoint; `game` / `depth`, when given, must be the ones it was trained on."""
    net, meta = load_value_function(path)
    if game is not None and canonical_game_string(game) != canonical_game_string(meta.game):
        raise PvfError(f"{path} was trained on {meta.game!r}, not {canonical_game_string(game)!r}; drop --game or pass that game")
    if depth is not None and depth != meta.layout.depth:
        raise PvfError(f"{path} was trained at depth {meta.layout.depth}, not {depth}; drop --depth or pass {meta.layout.depth}")
    return Network(net, meta, str(path))


def check_features(features: FeatureTables, layout: DataLayout) -> None:
    """Raise PvfError unless the feature tables have the widths the net was trained on."""
    if (features.public_dim, features.private_dim) != (layout.public_dim, layout.private_dim):
        raise PvfError(
            f"the net expects features Fp={layout.public_dim}, Fq={layout.private_dim}; "
            f"this pvf builds Fp={features.public_dim}, Fq={features.private_dim} for {features.game}"
        )


def network_evaluator(trunk: Trunk, net: nn.Module, architecture: str, layout: DataLayout, features: FeatureTables) -> LeafEvaluator:
    """The leaf evaluator of `net` (trained on data of `layout`) on the trunk's leaves."""
    check_features(features, layout)
    if architecture == "positional":
        return PositionalEvaluator(trunk, net, features, layout.max_slots, layout.normalize)
    if architecture == "particle":
        return ParticleEvaluator(trunk, net, features, layout.normalize)
    raise PvfError(f"unknown value-function architecture {architecture!r}")
