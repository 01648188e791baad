"""pvf's public API: a few calls that cover the pipeline (re-exported lazily by `pvf`).

    import pvf
    solution = pvf.solve("kuhn_poker", iterations=1000)          # full game, CFR+
    trunk = pvf.build_trunk("leduc", depth=7)                     # depth-limited game
    result = pvf.solve_trunk(trunk, pvf.ExactEvaluator(trunk))    # CFR+ in the trunk + exact trunk exploitability
    pvf.generate_dataset("leduc", depth=7, trunks=100, out="leduc.h5")
    pvf.train_value_function("leduc.h5", "particle", "vf.ckpt", seed=0, max_steps=1000, every_n_steps=500)
    network = pvf.load_value_function("vf.ckpt")                 # any registered architecture
    result = pvf.solve_trunk(trunk, network.evaluator(trunk))

Figures follow pvf's conventions (docs/architecture.md): NashConv is the sum of both
players' best-response gains; OpenSpiel's exploitability is half of it.
Games are OpenSpiel game strings or the aliases of `pvf.games.paper`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pvf import API_NAMES
from pvf.datasets.generate import GenerationReport, generate
from pvf.datasets.spec import GenerationSpec
from pvf.errors import PvfTypeError, check_argument
from pvf.games.public_tree import build_public_tree
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.evaluators import ConstantEvaluator, ExactEvaluator  # noqa: F401 (re-exported: API_NAMES)
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.tabular import TabularPolicy, to_tabular
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk, TrunkResult, build_trunk, solve_and_evaluate  # noqa: F401 (build_trunk re-exported)

__all__ = list(API_NAMES)  # the names `pvf` re-exports, listed once in pvf/__init__.py


@dataclass(frozen=True)
class Solution:
    """A game solved by CFR+ (`solve`).

    game: the canonical game string. iterations: CFR+ iterations.
    nash_conv: NashConv of the average policy; exploitability = nash_conv / 2 (OpenSpiel's).
    value: player 1's expected payoff under it (its own payoff, also in a constant-sum game).
    seconds: wall time of CFR+.
    policy: {infostate string: {action: probability}} (OpenSpiel's strings, `pvf.solvers.tabular`).
    """

    game: str
    iterations: int
    nash_conv: float
    exploitability: float
    value: float
    seconds: float
    policy: TabularPolicy


def solve(game: str, iterations: int = 1000) -> Solution:
    """Solve a two-player zero-sum game with CFR+ (what `pvf solve` does)."""
    check_argument("game", game, str)
    check_argument("iterations", iterations, int, minimum=1)
    tree = build_public_tree(game)
    sequence_game = build_sequence_game(tree)
    start = time.perf_counter()
    result = cfr_plus(sequence_game, iterations)
    seconds = time.perf_counter() - start
    strategies = (result.average_strategy[0][0], result.average_strategy[1][0])
    nc = float(nash_conv(sequence_game, strategies)[0])
    return Solution(
        tree.game_string,
        iterations,
        nc,
        nc / 2,
        float(result.value[0]) + tree.utility_sum / 2,
        seconds,
        to_tabular(sequence_game, strategies),
    )


def solve_trunk(
    trunk: Trunk, evaluator: LeafEvaluator | None = None, iterations: int = DEFAULT_ITERATIONS
) -> TrunkResult:
    """CFR+ in the trunk with `evaluator` at its leaves, and the result's exact trunk exploitability.

    evaluator: any `evaluator(reach1 [B, J1], reach2 [B, J2]) -> (cfv1, cfv2)`:
        `ExactEvaluator(trunk)`, `ConstantEvaluator()`, a loaded network's
        `evaluator(trunk)`; None only for a trunk that reaches the end of the game.
    """
    check_argument("trunk", trunk, Trunk)
    if evaluator is not None and not callable(evaluator):
        raise PvfTypeError(f"evaluator must be a leaf evaluator (a callable) or None, got {type(evaluator).__name__}")
    check_argument("iterations", iterations, int, minimum=1)
    return solve_and_evaluate(trunk, evaluator, iterations)


def generate_dataset(
    game: str,
    depth: int,
    trunks: int,
    out: str | Path,
    cfr_iterations: int = 100,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    target: str = "best_response",
) -> GenerationReport:
    """A PBS dataset with CFR+ targets in HDF5 (what `pvf generate` does; resumable).

    target: what the file's target column holds, "best_response" (`pvf generate`'s default, the training
        recipe's), "grouped", "local", "average" (the paper's) or "current".
    """
    check_argument("game", game, str)
    check_argument("depth", depth, int, minimum=0)
    check_argument("trunks", trunks, int, minimum=1)
    check_argument("out", out, (str, os.PathLike))
    check_argument("cfr_iterations", cfr_iterations, int, minimum=1)
    check_argument("seed", seed, int, minimum=0)
    check_argument("workers", workers, int, minimum=1)
    check_argument("progress", progress, bool)
    check_argument("target", target, str)
    spec = GenerationSpec(
        game=game, depth=depth, num_trunks=trunks, cfr_iterations=cfr_iterations, seed=seed, target=target
    )
    return generate(spec, out, workers=workers, progress=progress)


def train_value_function(
    data: str | Path,
    architecture: str,
    checkpoint: str | Path,
    seed: int = 0,
    max_steps: int = 1000,
    every_n_steps: int = 250,
    **options: Any,
):
    """Train a registered architecture on a dataset file, with trunk exploitability every
    `every_n_steps` steps (`pvf.trainers.training.train_value_function`; imports torch)."""
    check_argument("data", data, (str, os.PathLike))
    check_argument("architecture", architecture, str)
    check_argument("checkpoint", checkpoint, (str, os.PathLike))
    check_argument("seed", seed, int, minimum=0)
    check_argument("max_steps", max_steps, int, minimum=1)
    check_argument("every_n_steps", every_n_steps, int, minimum=1, optional=True)
    from pvf.trainers.training import train_value_function as train

    return train(data, architecture, checkpoint, seed, max_steps, every_n_steps, **options)


def load_value_function(path: str | Path, game: str | None = None, depth: int | None = None):
    """A trained value function (`pvf.valuefn.network.Network`; imports torch): `.net`,
    `.meta` (architecture, layout) and `.evaluator(trunk)` for `solve_trunk`."""
    check_argument("path", path, (str, os.PathLike))
    check_argument("game", game, str, optional=True)
    check_argument("depth", depth, int, minimum=0, optional=True)
    from pvf.valuefn.network import load_value_function as load

    return load(path, game, depth)
