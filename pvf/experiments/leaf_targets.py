"""What a perfect value function would achieve: trunk exploitability with the targets themselves at the leaves.

A value function is trained to reproduce its dataset's targets, so the best
it can do is to play like an evaluator that computes those targets on
demand. For the trunk from move `root_move` (default 0, the initial state;
later, the chance node over the equilibrium's support histories at that
move, `pvf.solvers.sparse_trunks.sparse_setting`) to move `depth`:
  1. CFR+ (`iterations`, default 100) on the trunk with each leaf evaluator:
     - "exact": the LP oracle (`ExactEvaluator`), best-response values
       against an exact equilibrium;
     - "cfr_average", "cfr_current", "cfr_best_response": the leaf subgames
       solved by `cfr_iterations` CFR+ iterations from the queried beliefs,
       valued as the average profile, the last iterate (the authors'
       target), or by best responses, guarded where a belief is zero
       (`pvf.solvers.guarded_values`: what a trunk needs there);
     - "cfr_best_response_unguarded": best responses to the plain CFR+
       average (guard 0), which values zero-belief infostates by how well
       they exploit a strategy that never had to answer them;
     - "cfr_best_response_mixed": best responses to one mixture of the
       plain and the guarded averages at every infostate: an upper
       linearization of the leaf value, which the entry-wise guard is not;
     - "cfr_best_response_budget": the same with the guarded share lowered
       per query so that the mixture's slack stays within a budget
       (`RESPONSE_KINDS`' options);
     - "cfr_best_response_grouped": the budget's mixture, but the guarded
       plan alone in the public states where a player has no belief;
     - "cfr_best_response_local": the grouped mixture with the budget
       spent per public state, up to the guarded plan alone;
     - "constant": zero everywhere, the floor a value function must beat;
  2. the exact trunk exploitability (LP) of each average trunk strategy.
The gap between a trained network and "cfr_average" is what the network
failed to learn; the gap between "cfr_average" and "exact" is the price of
the target recipe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pvf.errors import PvfError, check_argument
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, PublicTree, build_public_tree
from pvf.solvers.evaluators import CFRTargetEvaluator, ConstantEvaluator, ExactEvaluator
from pvf.solvers.guarded_values import RESPONSE_KINDS
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.sparse_trunks import SparseSetting, sparse_setting
from pvf.solvers.trunk_solver import Trunk, build_trunk, solve_and_evaluate

# the evaluator of each kind of best-response targets (`RESPONSE_KINDS`)
RESPONSE_EVALUATORS = {kind: "cfr_best_response" + ("" if kind == "guarded" else f"_{kind}") for kind in RESPONSE_KINDS}


def _responses(kind: str) -> Callable[[Trunk, int], LeafEvaluator]:
    """The leaf evaluator of the best-response targets of `kind`, k CFR+ iterations per leaf solve."""
    return lambda trunk, k: CFRTargetEvaluator(trunk, k, "best_response", kind=RESPONSE_KINDS[kind])


EVALUATORS: dict[str, Callable[[Trunk, int], LeafEvaluator]] = {
    "exact": lambda trunk, k: ExactEvaluator(trunk),
    "cfr_average": lambda trunk, k: CFRTargetEvaluator(trunk, k, "average"),
    "cfr_current": lambda trunk, k: CFRTargetEvaluator(trunk, k, "current"),
    "cfr_best_response": _responses("guarded"),
    "cfr_best_response_unguarded": lambda trunk, k: CFRTargetEvaluator(trunk, k, "best_response", guard=0.0),
    **{RESPONSE_EVALUATORS[kind]: _responses(kind) for kind in RESPONSE_KINDS if kind != "guarded"},
    "constant": lambda trunk, k: ConstantEvaluator(0.0),
}


def leaf_targets_trunk(tree: PublicTree, depth: int, root_move: int = 0, support: SparseSetting | None = None) -> Trunk:
    """The trunk to `depth`: from the initial state, or from the equilibrium's support at `root_move` > 0.

    support: that support (`sparse_setting` at `root_move`, any depth), if already computed.
    """
    check_argument("root_move", root_move, int, minimum=0)
    if root_move == 0:
        return build_trunk(tree, depth)
    if depth <= root_move:
        raise PvfError(f"the trunk needs --root-move < --depth, got {root_move} and {depth}")
    if support is None:
        return sparse_setting(tree, root_move, depth).evaluation
    return build_trunk(tree, depth, root_histories=support.histories, root_weights=support.weights)


def run_leaf_targets(
    game: str | PublicTree,
    depth: int,
    cfr_iterations: int = 100,
    iterations: int = 100,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    max_histories: int = DEFAULT_MAX_HISTORIES,
    root_move: int = 0,
    evaluators: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per evaluator: {evaluator, trunk_exploitability (NashConv), openspiel, solve_seconds}.

    game: a game string or alias, or its public tree.
    on_result: called with each row as soon as it is computed (progress output).
    max_histories: the public tree's size cap (`pvf.games.public_tree`).
    root_move: the trunk's root move (`leaf_targets_trunk`).
    evaluators: the names of `EVALUATORS` to run (default: all).
    """
    tree = game if isinstance(game, PublicTree) else build_public_tree(game, max_histories=max_histories)
    trunk = leaf_targets_trunk(tree, depth, root_move)
    return evaluate_leaf_targets(trunk, cfr_iterations, iterations, on_result, evaluators)


def evaluate_leaf_targets(
    trunk: Trunk,
    cfr_iterations: int = 100,
    iterations: int = 100,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    evaluators: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """`run_leaf_targets`'s rows for a trunk already built."""
    rows = []
    for name in EVALUATORS if evaluators is None else evaluators:
        make = EVALUATORS[name]
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
