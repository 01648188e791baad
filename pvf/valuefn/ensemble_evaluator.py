"""An ensemble's members as leaf evaluators of one trunk, and their trunk exploitabilities at once.

1. `ensemble_evaluator` hands `StackedNets` (`pvf.nets.stacked`), one net
   over S·L rows, to `pvf.valuefn.evaluator.NetworkEvaluator` in place of
   a single net (the architecture's leaf encoder takes the net at each
   call): for a query of B = S problems the encoder already builds the
   network inputs as S·L rows, problem s's L leaf PBSs back to back, so
   row s of the reaches reaches member s, and every member evaluates its
   own leaves in one batched forward pass.
2. `ensemble_trunk_exploitability` solves the trunk for all S members in
   one batched CFR+ call (`pvf.solvers.batched_trunk`) and returns each
   member's exact trunk exploitability (warm-started LPs,
   `pvf.solvers.warm_exploitability`).
"""

from __future__ import annotations

from pvf.datasets.layout import DataLayout
from pvf.games.features import FeatureTables
from pvf.nets.stacked import StackedNets
from pvf.solvers.batched_trunk import evaluate_trunks, solve_trunks
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.trunk_exploitability import TrunkExploitability
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk
from pvf.solvers.warm_exploitability import TrunkExploitabilityLP
from pvf.valuefn.architecture import Architecture
from pvf.valuefn.evaluator import NetworkEvaluator


def ensemble_evaluator(
    trunk: Trunk, stacked: StackedNets, architecture: Architecture, layout: DataLayout, features: FeatureTables
) -> LeafEvaluator:
    """Leaf evaluator for queries of B = S problems: row s valued by member s."""
    evaluator = NetworkEvaluator(trunk, stacked, architecture, layout, features)

    def evaluate(reach1, reach2):  # type: ignore[no-untyped-def]
        if reach1.shape[0] != stacked.num_members:
            raise ValueError(f"an ensemble evaluator takes {stacked.num_members} problems, got {reach1.shape[0]}")
        return evaluator(reach1, reach2)

    return evaluate


def ensemble_trunk_exploitability(
    trunk: Trunk,
    stacked: StackedNets,
    architecture: Architecture,
    layout: DataLayout,
    features: FeatureTables,
    iterations: int = DEFAULT_ITERATIONS,
    lp: TrunkExploitabilityLP | None = None,
) -> list[TrunkExploitability]:
    """Each member's exact trunk exploitability, the S trunk solves in one batched CFR+ call.

    lp: the trunk's exploitability LPs, to reuse across measurements (built here when None).
    """
    was_training = stacked.training
    stacked.eval()
    try:
        evaluator = ensemble_evaluator(trunk, stacked, architecture, layout, features)
        strategies = solve_trunks(trunk, evaluator, stacked.num_members, iterations)
    finally:
        stacked.train(was_training)
    return evaluate_trunks(trunk, strategies, lp)
