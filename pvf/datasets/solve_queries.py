"""The leaf beliefs a trunk solve asks about, for data near them (`SamplingConfig.p_solve`).

A depth-limited CFR+ solve of the trunk from the game's root (100
iterations, as the trunk exploitability is measured) with the data's own
targets at its leaves (`CFRTargetEvaluator`: every leaf subgame solved from
the queried beliefs as the generator solves it, CFR+ of `cfr_iterations`)
queries its leaves with the reaches of its iterates, from uniform play to
near equilibrium. A network's own trunk solve asks near there, while random
trunk strategies rarely land there (docs/results/value-function-quality.md:
nets trained on them err more at their trunk's queries than on held-out
data); `pvf.datasets.sampling` step 4 mixes these queries into the data, as
ReBeL trains on the beliefs its search visits. The solve is deterministic,
so every worker computes the same queries, once per process.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pvf.games.public_tree import build_public_tree
from pvf.solvers.evaluators import CFRTargetEvaluator, RecordingEvaluator
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, build_trunk, solve_trunk


@lru_cache(maxsize=2)
def solve_queries(
    game: str, depth: int, cfr_iterations: int, target: str, max_histories: int, iterations: int = DEFAULT_ITERATIONS
) -> tuple[np.ndarray, np.ndarray]:
    """Per player [Q, J_n] the leaf reaches of every leaf query of the trunk solve, in the trunk's
    leaf-infostate order (that of `pvf.datasets.sampling.leaf_beliefs`); Q is 2 per iteration and 2 more."""
    tree = build_public_tree(game, max_histories=max_histories)
    trunk = build_trunk(tree, depth)
    recording = RecordingEvaluator(CFRTargetEvaluator(trunk, cfr_iterations, target))
    solve_trunk(trunk, recording, iterations)
    return recording.stacked(0), recording.stacked(1)
