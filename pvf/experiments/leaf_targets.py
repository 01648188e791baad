"""What a perfect value function would achieve: trunk exploitability with the targets themselves at the leaves.

A value function is trained to reproduce its dataset's targets, so the best
it can do is to play like an evaluator that computes those targets on
demand. For the trunk from the initial state to move `depth`:
  1. CFR+ (`iterations`, default 100) on the trunk with each leaf evaluator:
     - "exact": the LP oracle (`ExactEvaluator`), best-response values
       against an exact equilibrium;
     - "cfr_average", "cfr_current", "cfr_best_response": the leaf subgames
       solved by `cfr_iterations` CFR+ iterations from the queried beliefs,
       valued as pvf's default target (average profile), the authors'
       (last iterate), or by best responses to the average profile, which
       is what a player with zero reach at an infostate would need;
     - "constant": zero everywhere, the floor a value function must beat;
  2. the exact trunk exploitability (LP) of each average trunk strategy.
The gap between a trained network and "cfr_average" is what the network
failed to learn; the gap between "cfr_average" and "exact" is the price of
the target recipe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, build_public_tree
from pvf.solvers.evaluators import CFRTargetEvaluator, ConstantEvaluator, ExactEvaluator
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.trunk_solver import Trunk, build_trunk, solve_and_evaluate

EVALUATORS: dict[str, Callable[[Trunk, int], LeafEvaluator]] = {
    "exact": lambda trunk, k: ExactEvaluator(trunk),
    "cfr_average": lambda trunk, k: CFRTargetEvaluator(trunk, k, "average"),
    "cfr_current": lambda trunk, k: CFRTargetEvaluator(trunk, k, "current"),
    "cfr_best_response": lambda trunk, k: CFRTargetEvaluator(trunk, k, "best_response"),
    "constant": lambda trunk, k: ConstantEvaluator(0.0),
}


def run_leaf_targets(
    game: str,
    depth: int,
    cfr_iterations: int = 100,
    iterations: int = 100,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    max_histories: int = DEFAULT_MAX_HISTORIES,
) -> list[dict[str, Any]]:
    """One row per evaluator: {evaluator, trunk_exploitability (NashConv), openspiel, solve_seconds}.

    on_result: called with each row as soon as it is computed (progress output).
    max_histories: the public tree's size cap (`pvf.games.public_tree`).
    """
    trunk = build_trunk(build_public_tree(game, max_histories=max_histories), depth)
    rows = []
    for name, make in EVALUATORS.items():
        result = solve_and_evaluate(trunk, make(trunk, cfr_iterations), iterations)
        row = {
            "evaluator": name,
            "trunk_exploitability": result.exploitability.exploitability,
            "openspiel": result.exploitability.openspiel_convention,
            "solve_seconds": result.solve_seconds,
        }
        rows.append(row)
        if on_result is not None:
            on_result(row)
    return rows
