"""`pvf evaluate`: a trained value function's trunk exploitability next to its baselines.

For the trunk from the initial state to the net's training depth:
  1. CFR+ (default 100 iterations; or another solver of `pvf.solvers.get_solver`,
     e.g. MMD, whose last iterate is then the trunk strategy) with the network at the leaves;
  2. the same with the exact oracle (`ExactEvaluator`) and with the constant
     zero evaluator, the baselines a value function sits between;
  3. each solution strategy's exact trunk exploitability (LP), reported in
     the NashConv convention with OpenSpiel's / the authors' half beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.evaluators import ConstantEvaluator, ExactEvaluator
from pvf.solvers.interface import Solver
from pvf.solvers.tabular import TabularPolicy
from pvf.solvers.trunk_solver import (
    DEFAULT_ITERATIONS,
    Trunk,
    TrunkResult,
    build_trunk,
    solve_and_evaluate,
    trunk_policy,
)
from pvf.valuefn.network import Network

CONVENTION = (
    "NashConv: -V1 - V2, the sum of both players' gains; OpenSpiel's exploitability (the authors' figures) is half"
)


@dataclass(frozen=True, eq=False)
class TrunkReport:
    """Trunk exploitability of a network's trunk strategy and of the baselines.

    network, oracle, constant: each evaluator's solved trunk (oracle None if skipped).
    """

    trunk: Trunk
    iterations: int
    source: Network
    network: TrunkResult
    oracle: TrunkResult | None
    constant: TrunkResult

    def policy(self) -> TabularPolicy:
        """The network's trunk strategy keyed by OpenSpiel information-state strings."""
        return trunk_policy(self.trunk, self.network.strategies)

    def as_dict(self) -> dict[str, Any]:
        """The figures as plain JSON-serialisable data (`pvf evaluate --json`)."""
        out: dict[str, Any] = {
            "game": self.trunk.tree.game_string,
            "depth": self.trunk.depth,
            "iterations": self.iterations,
            "checkpoint": self.source.path,
            "architecture": self.source.architecture,
            "convention": CONVENTION,
        }
        for name, result in (("", self.network), ("oracle_", self.oracle), ("constant_", self.constant)):
            if result is None:
                continue
            out[f"{name}trunk_exploitability"] = result.exploitability.exploitability
            out[f"{name}trunk_exploitability_openspiel"] = result.exploitability.openspiel_convention
            out[f"{name}solve_seconds"] = result.solve_seconds
        return out


def evaluate_network(
    network: Network, iterations: int = DEFAULT_ITERATIONS, oracle: bool = True, solver: Solver = cfr_plus
) -> TrunkReport:
    """Solve the network's trunk (initial state to its training depth) and the baselines, all with `solver`."""
    layout = network.meta.layout
    tree = build_public_tree(layout.game)
    trunk = build_trunk(tree, layout.depth)
    evaluator = network.evaluator(trunk, build_feature_tables(tree))
    return TrunkReport(
        trunk=trunk,
        iterations=iterations,
        source=network,
        network=solve_and_evaluate(trunk, evaluator, iterations, solver),
        oracle=solve_and_evaluate(trunk, ExactEvaluator(trunk), iterations, solver) if oracle else None,
        constant=solve_and_evaluate(trunk, ConstantEvaluator(), iterations, solver),
    )
