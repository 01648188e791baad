"""Rollout leaves: a value function that needs no training, the value of random play from each leaf.

A sparse trunk's leaf histories are valued by `pvf.games.rollouts` (both
players bid at random to the end of the game, uniformly or, with a greed
β > 0, high cards on high prizes more often; `ROLLOUT_DRAWS`
pairs of bid orders per distinct hands-and-score, drawn from a generator
seeded by nothing but the trunk, so the same subgame gets the same values),
and `HistoryValueEvaluator` turns them into counterfactual values at the
leaf infostates, in the trunk's own convention (as the exact oracle; not a
trained network's game-root one). The particle agent's `leaves=rollout`
(`pvf.agents.spec`) and the particle-trunk sweep's `--rollouts` row
(`pvf experiment particle-trunks`) are this one factory.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pvf.errors import PvfError
from pvf.games.loading import LoadedGame
from pvf.games.rollouts import history_paths, play_values, rollout_rules
from pvf.solvers.evaluators import HistoryValueEvaluator
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.sparse_trunks import LeafFactory, SparseSetting
from pvf.solvers.trunk_solver import Trunk

ROLLOUT_DRAWS = 64  # bid orders per leaf history: standard error at most 1/8 of a win-loss return


def rollout_draws(text: str) -> int | None:
    """A number of bid orders per leaf history as a command line gives it: a positive integer, or "exact" (None)."""
    if text == "exact":
        return None
    if not text.isdigit() or int(text) < 1:
        raise PvfError(f"rollout draws are a positive number of bid orders per history or 'exact', got {text!r}")
    return int(text)


def rollout_leaves(
    loaded: LoadedGame, draws: int | None = ROLLOUT_DRAWS, depth: int | None = None, greed: float = 0.0
) -> LeafFactory:
    """Leaves valued by `draws` random plays from each leaf history (None: the exact expectation, at most
    `pvf.games.rollouts.EXACT_CARDS` cards left, checked here against the leaves' move `depth` where given),
    uniform or with the policy's `greed` β (`pvf.games.rollouts`); Goofspiel (points descending or ascending)
    only, else a PvfError."""
    exact_at = depth if draws is None else None
    rules = rollout_rules(loaded, exact_at, "rollout leaves", "; give a number of draws instead")

    def leaves(setting: SparseSetting) -> Callable[[Trunk], LeafEvaluator]:
        def evaluator(trunk: Trunk) -> LeafEvaluator:
            paths = history_paths(setting.tree, trunk.leaf_histories())
            return HistoryValueEvaluator(trunk, play_values(rules, paths, draws, np.random.default_rng(0), greed))

        return evaluator

    return leaves
