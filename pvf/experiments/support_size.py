"""The support of Goofspiel-5's equilibrium at fig. 4's root move, against CFR+ iterations and the threshold.

    python -m pvf.experiments.support_size [--iterations 1000,2000,16000,64000] \
        [--thresholds 1e-2,1e-3,1e-4] [--openspiel] [--json]

Fig. 4's root histories are π*'s support after two rounds of Goofspiel-5
(400 histories). CFR+'s average strategy never reaches exact zeros, so an
action played with probability below a threshold counts as not played
(`pvf.solvers.sparse_trunks`, default 1e-3) and the count depends on the
iteration count and the threshold. For each pair this prints the count of
`sparse_setting` (pvf's CFR+), and with `--openspiel` the count of an
independent walk of OpenSpiel's game under OpenSpiel's C++ CFRPlusSolver's
average policy (about 30 s per 1,000 iterations). The authors report 60.
"""

from __future__ import annotations

import argparse
import json

import pyspiel

from pvf.experiments.reproduce import GAMES
from pvf.games.paper import PAPER_GAMES
from pvf.games.public_tree import build_public_tree
from pvf.solvers.sparse_trunks import sparse_setting

GAME = "goofspiel5"


def pvf_counts(iterations: list[int], thresholds: list[float]) -> dict[int, dict[float, int]]:
    """{iterations: {threshold: support histories}} of `sparse_setting`."""
    paper = PAPER_GAMES[GAME]
    tree = build_public_tree(GAMES[GAME])
    return {
        n: {t: sparse_setting(tree, paper.sparse_root_move, paper.sparse_depth, n, t).num_histories for t in thresholds}
        for n in iterations
    }


def openspiel_counts(iterations: list[int], thresholds: list[float]) -> dict[int, dict[float, int]]:
    """The same counts from OpenSpiel's CFRPlusSolver on the turn-based game: histories after the root move's
    2·root_move actions whose every action has average probability ≥ the threshold."""
    game = pyspiel.load_game_as_turn_based(PAPER_GAMES[GAME].game)
    actions = 2 * PAPER_GAMES[GAME].sparse_root_move  # two per round; points in descending order: no chance
    solver = pyspiel.CFRPlusSolver(game)
    done, counts = 0, {}
    for n in sorted(iterations):
        for _ in range(n - done):
            solver.evaluate_and_update_policy()
        done = n
        policy = solver.average_policy()
        counts[n] = {t: _count(game.new_initial_state(), actions, policy, t) for t in thresholds}
    return counts


def _count(state: pyspiel.State, actions_left: int, policy: pyspiel.TabularPolicy, threshold: float) -> int:
    if actions_left == 0:
        return 1
    return sum(
        _count(state.child(a), actions_left - 1, policy, threshold)
        for a, p in policy.get_state_policy(state)
        if p >= threshold
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", default="1000,2000,16000,64000")
    parser.add_argument("--thresholds", default="1e-2,1e-3,1e-4")
    parser.add_argument("--openspiel", action="store_true", help="also count under OpenSpiel's CFRPlusSolver")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    iterations = [int(x) for x in args.iterations.split(",")]
    thresholds = [float(x) for x in args.thresholds.split(",")]
    result = {"pvf": pvf_counts(iterations, thresholds)}
    if args.openspiel:
        result["openspiel"] = openspiel_counts(iterations, thresholds)
    if args.json:
        print(
            json.dumps(
                {k: {str(n): {str(t): c for t, c in row.items()} for n, row in v.items()} for k, v in result.items()}
            )
        )
        return
    print(f"{GAME}: support histories at move {PAPER_GAMES[GAME].sparse_root_move} (of 400), by threshold")
    print("solver     iterations  " + "  ".join(f"{t:>7g}" for t in thresholds))
    for solver, table in result.items():
        for n in iterations:
            print(f"{solver:<10} {n:>10}  " + "  ".join(f"{table[n][t]:>7}" for t in thresholds))


if __name__ == "__main__":
    main()
