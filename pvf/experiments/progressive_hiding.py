"""Section 6 of "Learning in Games with Progressive Hiding": CFR against progressive hiding on team games.

For each game of `PROTOCOLS` and each learner (information map, penalty):
  1. `runs` independent runs of `pvf.solvers.progressive_hiding` (the game's
     local learner, regret matching or FTRL, full-width iterations or
     sampled episodes, all runs batched), seeded by `seed`; the learner
     "CFR" is the original map with penalty 0 (plain CFR on the team game;
     with FTRL, CFR whose local learner is FTRL), the others learn under the
     "cheated" or "recall" map.
  2. The learning outcome after each iteration is E_{gamma^t}[r], the payoff
     of the projected, implementable policy (the paper's y-axis).
  3. Per learner and iteration: the mean over runs, the 10% quantile, the
     share of runs above the game's success threshold, and the best-so-far
     outcome of a run (its mean, 10% quantile, median, largest, and the
     share of runs above the threshold) make progressive_hiding.csv;
     progressive_hiding.png plots mean (full) and 10% quantile (dashed)
     against iterations, one panel per game.

Cooperative Matching Pennies follows the paper's section 6.2: penalty
0.05, success = an outcome above 0.95 after 400 iterations ("episodes").
The paper ran "a Monte-Carlo version of CFR" there: `cmp_sampled` and
`cmp_sampled_cf` are the same two learners on one sampled episode per
iteration (outcome sampling with OS-MCCFR's exploration 0.6, from uniform
policies: the episodes break the symmetry), their regrets weighted as the
paper's conditional expectations or as OS-MCCFR's counterfactual regrets
(`pvf.solvers.progressive_hiding`).
Trade Comm (m, n) = (2, 2) is OpenSpiel's `trade_comm(num_items=2)` (n
items, as many utterances), from uniformly random initial policies as the
paper's fig. 1, with its learner, FTRL with entropic regularisation; the
paper gives neither penalty nor step size, `TRADE_COMM_PENALTY` and
`TRADE_COMM_STEP` are ours. Trade Comm (m, n) = (3, 2), the paper's fig. 1
right (3 messages, 2 items), is not an OpenSpiel game (its utterances are as
many as its items): `pvf.games.team_tree.trade_comm_efg` writes it; its
learners, penalty, step and iterations are (2, 2)'s. Abstracted Tiny
Bridge is OpenSpiel's `tiny_bridge_2p`, 50 runs of 75 iterations (the
paper's 50 trainings of 75 episodes), judged as its fig. 3 by the best
outcome along a run; success = above 20.32, the best payoff without
coordination (Sokota et al. 2021). The paper steered a dynamic penalty;
`TINY_BRIDGE_PENALTY` is a constant of ours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from pvf.errors import PvfError
from pvf.games.team_tree import build_team_tree
from pvf.solvers.progressive_hiding import progressive_hiding

CMP_PENALTY = 0.05
TRADE_COMM_PENALTY = 1.0
TRADE_COMM_STEP = 1.0
TINY_BRIDGE_PENALTY = 30.0


@dataclass(frozen=True)
class Protocol:
    """One game's experiment: its game string (`pvf.games.team_tree.load_team_game`), title, learners as
    name -> (information map, penalty), iterations, success threshold on the outcome, the initial policies'
    `perturbation`, the local learner every learner runs, "rm" or "ftrl" with step size `step`, and its
    iterations, full-width or sampled episodes with regrets weighted by `weight` (see
    `pvf.solvers.progressive_hiding`)."""

    game: str
    title: str
    learners: dict[str, tuple[str, float]]
    iterations: int
    success: float
    perturbation: float
    local_learner: str = "rm"
    step: float = 1.0
    sampling: str = "full"
    weight: str = "conditional"


def cfr_and_hiding(penalty: float, maps: tuple[str, ...] = ("recall", "cheated")) -> dict[str, tuple[str, float]]:
    """The learners of every game: CFR (the original map, no penalty) and progressive hiding under each of `maps`
    (default the recall and the cheated map) with `penalty`."""
    return {"CFR": ("original", 0.0)} | {f"PH {info_map}": (info_map, penalty) for info_map in maps}


def trade_comm_protocol(game: str, title: str) -> Protocol:
    """Trade Comm's protocol (fig. 1 of the paper): 1,000 iterations from uniformly random policies, success = an
    outcome above 0.99, FTRL with `TRADE_COMM_STEP`, penalty `TRADE_COMM_PENALTY`."""
    return Protocol(game, title, cfr_and_hiding(TRADE_COMM_PENALTY), 1000, 0.99, 1.0, "ftrl", TRADE_COMM_STEP)


def sampled_cmp_protocol(weight: str) -> Protocol:
    """Cooperative Matching Pennies on sampled episodes (module docstring), regrets weighted by `weight`: CFR and
    progressive hiding under the recall map (the cheated map is the same here), from uniform policies."""
    title = f"CMP, sampled episodes, {weight} regrets"
    learners = cfr_and_hiding(CMP_PENALTY, maps=("recall",))
    return Protocol("cmp", title, learners, 400, 0.95, 0.0, sampling="outcome", weight=weight)


PROTOCOLS = {
    "cmp": Protocol(
        "cmp",
        "Cooperative Matching Pennies",
        cfr_and_hiding(CMP_PENALTY),
        400,
        0.95,
        0.05,
    ),
    "cmp_sampled": sampled_cmp_protocol("conditional"),
    "cmp_sampled_cf": sampled_cmp_protocol("counterfactual"),
    "trade_comm": trade_comm_protocol("trade_comm(num_items=2)", "Trade Comm (m, n) = (2, 2)"),
    "trade_comm_3_2": trade_comm_protocol("trade_comm_mn(messages=3,items=2)", "Trade Comm (m, n) = (3, 2)"),
    "tiny_bridge": Protocol(
        "tiny_bridge_2p",
        "Abstracted Tiny Bridge",
        cfr_and_hiding(TINY_BRIDGE_PENALTY),
        75,
        20.32,
        1.0,
    ),
}
DEFAULT_RUNS = {
    "cmp": 1000,
    "cmp_sampled": 1000,
    "cmp_sampled_cf": 1000,
    "trade_comm": 100,
    "trade_comm_3_2": 100,
    "tiny_bridge": 50,
}
QUICK_RUNS, QUICK_ITERATIONS = 4, 10


def parse_games(text: str) -> list[str]:
    """`--games cmp,trade_comm,tiny_bridge` (names of `PROTOCOLS`) as a list; a one-line PvfError for another."""
    names = [g.strip() for g in text.split(",") if g.strip()]
    if not names or any(g not in PROTOCOLS for g in names):
        raise PvfError(f"--games takes a comma-separated subset of {', '.join(PROTOCOLS)}, got {text!r}")
    return list(dict.fromkeys(names))


def run_game(
    name: str,
    runs: int,
    seed: int,
    iterations: int | None = None,
    on_learner: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every learner of game `name` (steps 1-3 of the module docstring): one row per learner and iteration."""
    protocol = PROTOCOLS[name]
    tree = build_team_tree(protocol.game)
    horizon = iterations or protocol.iterations
    step = protocol.step if protocol.local_learner == "ftrl" else None  # regret matching has none
    rows = []
    for learner, (info_map, penalty) in protocol.learners.items():
        trace = progressive_hiding(
            tree,
            info_map,
            penalty,
            horizon,
            runs,
            seed,
            protocol.perturbation,
            protocol.local_learner,
            protocol.step,
            protocol.sampling,
            weight=protocol.weight,
        )
        best = np.maximum.accumulate(trace.outcome, axis=1)
        for t in range(horizon):
            outcome = trace.outcome[:, t]
            rows.append(
                {
                    "game": name,
                    "learner": learner,
                    "map": info_map,
                    "penalty": penalty,
                    "local_learner": protocol.local_learner,
                    "step": step,
                    "sampling": protocol.sampling,
                    "weight": protocol.weight if protocol.sampling != "full" else None,
                    "runs": runs,
                    "iteration": t + 1,
                    "mean": float(outcome.mean()),
                    "q10": float(np.quantile(outcome, 0.1)),
                    "success": float(np.mean(outcome > protocol.success)),
                    "best_mean": float(best[:, t].mean()),
                    "best_q10": float(np.quantile(best[:, t], 0.1)),
                    "best_median": float(np.median(best[:, t])),
                    "best_max": float(best[:, t].max()),
                    "best_success": float(np.mean(best[:, t] > protocol.success)),
                    "relaxed_mean": float(trace.relaxed[:, t].mean()),
                }
            )
        if on_learner is not None:
            on_learner(rows[-1])
    return rows


def final_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last iteration's row of every game and learner."""
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        last[row["game"], row["learner"]] = row
    return list(last.values())


def plot(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Mean outcome (full) and its 10% quantile (dashed) against iterations, one panel per game."""
    games = list(dict.fromkeys(r["game"] for r in rows))
    columns = min(3, len(games))
    lines = -(-len(games) // columns)
    fig = Figure(figsize=(5 * columns, 4 * lines), layout="constrained")
    axes = fig.subplots(lines, columns, squeeze=False).ravel()
    for ax in axes[len(games) :]:
        ax.set_visible(False)
    for ax, game in zip(axes, games):
        for i, learner in enumerate(dict.fromkeys(r["learner"] for r in rows if r["game"] == game)):
            mine = [r for r in rows if r["game"] == game and r["learner"] == learner]
            x = [r["iteration"] for r in mine]
            ax.plot(x, [r["mean"] for r in mine], color=f"C{i}", label=f"{learner} (mean)")
            ax.plot(x, [r["q10"] for r in mine], color=f"C{i}", linestyle="--", label=f"{learner} (10% quantile)")
        ax.set_title(f"{PROTOCOLS[game].title}, {mine[0]['runs']} runs")
        ax.set_xlabel("iterations")
        ax.set_ylabel("payoff of the projected policy")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.savefig(path, dpi=110)
