"""Figure 1 (b)-(d) of "Easy as ABCs": NashConv against iterations and wall time, weighted RPS, Kuhn, Leduc.

For each game, seed and learner (`LEARNERS`):
  1. The learner runs `iterations` iterations with its paper's hyper-parameters
     (table 1 and 2 of its appendix E): ABCs and MAX-CFR and BQL of
     `pvf.solvers.abcs` on the public tree, OpenSpiel's Python ES-MCCFR
     (external sampling, regret matching, simple averaging) and OS-MCCFR
     (outcome sampling, ε = 0.6 exploration: OpenSpiel's fixed value and
     the paper's) on the same sequential game.
  2. At `checkpoints` iterations (log-spaced, the last one included) its
     average policy, keyed by OpenSpiel's information-state strings, is judged
     by OpenSpiel's `pyspiel.nash_conv` (NashConv: both players' best-response
     gains; the paper plots exploitability = NashConv / 2 for the poker games
     and NashConv for weighted RPS). The wall time is the learner's own, the
     evaluations excluded.
  3. Rows (game, learner, seed, iteration, seconds, nash_conv, nodes_touched)
     make abcs.csv; per game and learner the last checkpoint's mean over
     seeds with a 95% Student-t interval makes abcs-final.csv; abcs.png plots
     the mean and its 95% band against iterations (top) and seconds (bottom).
One ABCs / MAX-CFR / BQL iteration is one traversal per player; ES-MCCFR's
one per player too, OS-MCCFR's one sampled trajectory per player, so equal
iterations are not equal work: the time axis compares cost (the paper's
x-axis, "nodes touched", is the pvf learners' `nodes_touched` column).
Seeds: the pvf learners take the seed; OpenSpiel's MCCFR draws from numpy's
global generator, seeded before each run.

Weighted RPS (the paper's appendix E: rock-paper-scissors where winning
with Rock pays 2) is not among OpenSpiel's games (`matrix_rps` is
unweighted, `matrix_brps` weighs differently); it is loaded as an NFG file
through `nfg_game(filename=...)`, and pvf solves it, as every simultaneous
game, through OpenSpiel's turn-based transform.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from matplotlib.figure import Figure
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import external_sampling_mccfr, outcome_sampling_mccfr
from scipy.stats import t as student_t

from pvf.errors import PvfError
from pvf.games.public_tree import build_public_tree
from pvf.solvers.abcs import ABCS, MAX_CFR, ABCsLearner, BQLLearner
from pvf.solvers.sequence_form import SequenceGame, build_sequence_game
from pvf.solvers.tabular import to_openspiel, to_tabular

# Player 1's payoff, rows and columns rock, paper, scissors: winning with rock pays 2.
WEIGHTED_RPS = ((0, -1, 2), (1, 0, -1), (-2, 1, 0))
GAMES = {"rps": "weighted rock-paper-scissors", "kuhn": "kuhn_poker", "leduc": "leduc_poker"}
TITLES = {"rps": "(b) weighted rock-paper-scissors", "kuhn": "(c) Kuhn poker", "leduc": "(d) Leduc poker"}
DEFAULT_ITERATIONS = {"rps": 20_000, "kuhn": 20_000, "leduc": 10_000}
QUICK_ITERATIONS = 60
CHECKPOINTS = 16
QUICK_CHECKPOINTS = 3


class Learner:
    """One run: `step()` is one iteration, `policy()` the average policy for `pyspiel.nash_conv`."""

    nodes_touched: int | None = None

    def step(self) -> None:
        raise NotImplementedError

    def policy(self) -> Any:
        raise NotImplementedError


class PvfLearner(Learner):
    """ABCs, MAX-CFR or BQL of `pvf.solvers.abcs`."""

    def __init__(self, learner: ABCsLearner | BQLLearner):
        self.learner = learner

    def step(self) -> None:
        self.learner.iterate()
        self.nodes_touched = self.learner.nodes_touched

    def policy(self) -> Any:
        return to_openspiel(to_tabular(self.learner.game, self.learner.average_strategy()))


class OpenSpielLearner(Learner):
    """An OpenSpiel Python MCCFR solver (`iteration()`, `average_policy()`) on `game`."""

    def __init__(self, game: pyspiel.Game, solver: Any):
        self.game = game
        self.solver = solver

    def step(self) -> None:
        self.solver.iteration()

    def policy(self) -> Any:
        tabular = openspiel_policy.tabular_policy_from_callable(self.game, self.solver.average_policy())
        return openspiel_policy.python_policy_to_pyspiel_policy(tabular)


def _seeded_numpy(seed: int, make: Callable[[], Any]) -> Any:
    np.random.seed(seed)  # OpenSpiel's Python MCCFR samples from numpy's global generator
    return make()


LEARNERS: dict[str, Callable[[SequenceGame, pyspiel.Game, int], Learner]] = {
    "ABCs": lambda game, _, seed: PvfLearner(ABCsLearner(game, seed, ABCS)),
    "MAX-CFR": lambda game, _, seed: PvfLearner(ABCsLearner(game, seed, MAX_CFR)),
    "BQL": lambda game, _, seed: PvfLearner(BQLLearner(game, seed)),
    "ES-MCCFR": lambda _, game, seed: OpenSpielLearner(
        game, _seeded_numpy(seed, lambda: external_sampling_mccfr.ExternalSamplingSolver(game))
    ),
    "OS-MCCFR": lambda _, game, seed: OpenSpielLearner(
        game, _seeded_numpy(seed, lambda: outcome_sampling_mccfr.OutcomeSamplingSolver(game))
    ),
}


@dataclass(frozen=True)
class Row:
    """One checkpoint of one run: NashConv (OpenSpiel's) of the average policy after `iteration` iterations."""

    game: str
    learner: str
    seed: int
    iteration: int
    seconds: float
    nash_conv: float
    nodes_touched: int | None


def parse_games(text: str) -> list[str]:
    """`--games rps,kuhn,leduc` as a list; a one-line PvfError for a name not in `GAMES`."""
    names = [g.strip() for g in text.split(",") if g.strip()]
    unknown = [g for g in names if g not in GAMES]
    if not names or unknown:
        raise PvfError(f"--games takes a comma-separated subset of {', '.join(GAMES)}, got {text!r}")
    return list(dict.fromkeys(names))


def checkpoints(iterations: int, count: int) -> list[int]:
    """About `count` log-spaced iteration numbers from 1 to `iterations`, both included."""
    return sorted({int(round(x)) for x in np.geomspace(1, iterations, count)} | {iterations})


@contextmanager
def game_string(name: str) -> Iterator[str]:
    """The OpenSpiel game string of a `GAMES` name; weighted RPS as an NFG file that lives while the block runs."""
    if name != "rps":
        yield GAMES[name]
        return
    payoffs = " ".join(f"{WEIGHTED_RPS[r][c]} {-WEIGHTED_RPS[r][c]}" for c in range(3) for r in range(3))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "weighted_rps.nfg"
        path.write_text(f'NFG 1 R "Weighted Rock-Paper-Scissors" {{ "Player 1" "Player 2" }} {{ 3 3 }}\n\n{payoffs}\n')
        yield f"nfg_game(filename={path})"


def run_game(
    name: str,
    iterations: int,
    seeds: Sequence[int],
    count: int = CHECKPOINTS,
    learners: Sequence[str] = tuple(LEARNERS),
    on_run: Callable[[list[Row]], None] | None = None,
) -> list[Row]:
    """Every learner and seed on game `name` (step 1-2 of the module docstring); `on_run` sees each run's rows."""
    with game_string(name) as string:
        tree = build_public_tree(string)
        sequence_game = build_sequence_game(tree)
        game = tree.loaded.sequential
        marks = checkpoints(iterations, count)
        rows: list[Row] = []
        for learner_name in learners:
            for seed in seeds:
                learner = LEARNERS[learner_name](sequence_game, game, seed)
                run, elapsed, done = [], 0.0, 0
                for mark in marks:
                    start = time.perf_counter()
                    for _ in range(mark - done):
                        learner.step()
                    elapsed += time.perf_counter() - start
                    done = mark
                    nc = float(pyspiel.nash_conv(game, learner.policy()))
                    run.append(Row(name, learner_name, seed, mark, elapsed, nc, learner.nodes_touched))
                rows.extend(run)
                if on_run is not None:
                    on_run(run)
    return rows


def summarize(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Per game and learner, the last checkpoint over seeds: mean NashConv, its 95% Student-t half-width
    (NaN with one seed), mean seconds, mean nodes touched (None for OpenSpiel's learners)."""
    out = []
    for game in dict.fromkeys(r.game for r in rows):
        for learner in dict.fromkeys(r.learner for r in rows if r.game == game):
            mine = [r for r in rows if r.game == game and r.learner == learner]
            last = max(r.iteration for r in mine)
            final = [r for r in mine if r.iteration == last]
            values = np.array([r.nash_conv for r in final])
            nodes = [r.nodes_touched for r in final if r.nodes_touched is not None]
            out.append(
                {
                    "game": game,
                    "learner": learner,
                    "seeds": len(final),
                    "iterations": last,
                    "nash_conv": float(values.mean()),
                    "ci95": _half_width(values),
                    "seconds": float(np.mean([r.seconds for r in final])),
                    "nodes_touched": float(np.mean(nodes)) if nodes else None,
                }
            )
    return out


def _half_width(values: np.ndarray) -> float:
    if len(values) < 2:
        return float("nan")
    return float(student_t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))


def plot(rows: Sequence[Row], path: str | Path) -> None:
    """NashConv (log) against iterations (top row) and seconds (bottom row), one column per game:
    the mean over seeds and its 95% band, per learner; the y-axis spans the means (bands may leave it)."""
    games = list(dict.fromkeys(r.game for r in rows))
    fig = Figure(figsize=(4.2 * len(games), 7), layout="constrained")
    axes = fig.subplots(2, len(games), squeeze=False)
    for col, game in enumerate(games):
        means = []
        for i, learner in enumerate(dict.fromkeys(r.learner for r in rows if r.game == game)):
            mine = [r for r in rows if r.game == game and r.learner == learner]
            marks = sorted({r.iteration for r in mine})
            at = [[r for r in mine if r.iteration == m] for m in marks]
            mean = np.array([np.mean([r.nash_conv for r in rs]) for rs in at])
            half = np.array([_half_width(np.array([r.nash_conv for r in rs])) for rs in at])
            seconds = np.array([np.mean([r.seconds for r in rs]) for rs in at])
            means.append(mean)
            for ax, x in ((axes[0, col], np.array(marks, dtype=float)), (axes[1, col], seconds)):
                ax.plot(x, mean, label=learner, color=f"C{i}")
                if np.all(np.isfinite(half)):
                    ax.fill_between(x, np.maximum(mean - half, 1e-6), mean + half, alpha=0.2, color=f"C{i}")
        axes[0, col].set_title(TITLES[game])
        axes[0, col].set_xlabel("iterations")
        axes[1, col].set_xlabel("seconds (this learner's own)")
        low, high = min(float(m.min()) for m in means), max(float(m.max()) for m in means)
        for ax in axes[:, col]:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylim(low / 2, high * 2)  # the means' range: a band below it includes values near 0
            ax.set_ylabel("NashConv (OpenSpiel)")
            ax.grid(True, which="both", alpha=0.3)
    axes[0, 0].legend()
    fig.savefig(path, dpi=110)
