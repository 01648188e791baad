"""One trunk solved for B sets of leaf values at once (e.g. the B members of an ensemble).

The trunk (its game, root and beliefs) is the same for every problem; only
the leaf evaluator's values differ by row. So:
  1. `solve_trunks` runs one batched CFR+ (`pvf.solvers.cfr_plus`, batch
     dimension B) from B copies of the trunk's root beliefs; every
     iteration queries the evaluator once with reaches `[B, J_n]`, and an
     evaluator that sends row b to problem b's values (an ensemble
     evaluator: row b to member b) solves B different depth-limited
     problems in one call. Rows never mix: each row's iterates are those
     of `solve_trunk` with row b's evaluator.
  2. `evaluate_trunks` computes each row's exact trunk exploitability with
     one pair of warm-started LPs for all rows
     (`pvf.solvers.warm_exploitability`; the same LP as `evaluate_trunk`,
     certified the same way).
"""

from __future__ import annotations

import numpy as np

from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.trunk_exploitability import TrunkExploitability
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk
from pvf.solvers.warm_exploitability import TrunkExploitabilityLP


def solve_trunks(
    trunk: Trunk, evaluator: LeafEvaluator, batch: int, iterations: int = DEFAULT_ITERATIONS
) -> tuple[np.ndarray, np.ndarray]:
    """CFR+ on `trunk` for `batch` problems at once; per player [B, S_n] average strategies.

    evaluator: `(reach1 [B, J1], reach2 [B, J2]) -> (cfv1 [B, J1], cfv2 [B, J2])`,
        row b answering for problem b.
    """
    beliefs = tuple(np.repeat(b[None], batch, axis=0) for b in trunk.root_beliefs)
    result = cfr_plus(trunk.game, iterations, root_beliefs=beliefs, leaf_evaluator=evaluator)
    return result.average_strategy


def evaluate_trunks(
    trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray], lp: TrunkExploitabilityLP | None = None
) -> list[TrunkExploitability]:
    """Exact trunk exploitability of each row of `strategies` (per player [B, S_n]).

    lp: the trunk's LPs, to reuse across calls (built here when None).
    """
    return (lp if lp is not None else TrunkExploitabilityLP(trunk)).many(strategies)
