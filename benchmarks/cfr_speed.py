"""Time pvf's CFR+ against OpenSpiel's C++ CFRPlusSolver in the same run.

1. Full-game CFR+: ms per iteration of pvf and of pyspiel.CFRPlusSolver on
   Leduc and Goofspiel-5, with the ratio and both NashConv figures.
2. Batched subgames: subgames solved per second at Leduc's depth-7 public
   states for B = 1, 64 and 1024 root-belief pairs per batch (100 iterations).

Run: .venv/bin/python benchmarks/cfr_speed.py [--quick]
"""

from __future__ import annotations

import time

import numpy as np
import pyspiel
from _common import quick_args, timed

from pvf.games.public_tree import build_public_tree
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game

GAMES = {
    "leduc_poker": (1000, 20),
    "goofspiel(num_cards=5,imp_info=True,points_order=descending)": (300, 5),
}


def full_game(game_string: str, ours_iters: int, theirs_iters: int) -> dict:
    tree = build_public_tree(game_string)
    game = build_sequence_game(tree)
    result, ours_ms = timed(lambda: cfr_plus(game, ours_iters), ours_iters)
    nc = nash_conv(game, (result.average_strategy[0][0], result.average_strategy[1][0]))[0]
    solver = pyspiel.CFRPlusSolver(tree.loaded.sequential)

    def run():
        for _ in range(theirs_iters):
            solver.evaluate_and_update_policy()

    _, theirs_ms = timed(run, theirs_iters)
    return {
        "game": game_string,
        "pvf_ms": ours_ms,
        "openspiel_ms": theirs_ms,
        "ratio": theirs_ms / ours_ms,
        "pvf_iterations": ours_iters,
        "pvf_nash_conv": nc,
    }


def batched_subgames(batches: list[int], iterations: int = 100) -> dict[int, float]:
    tree = build_public_tree("leduc_poker")
    leaves = tree.public_states_at_depth(7)
    games = [build_sequence_game(tree, root_public_state=int(ps)) for ps in leaves]
    rng = np.random.default_rng(0)
    rates = {}
    for B in batches:
        solved, start = 0, time.perf_counter()
        for g in games:
            b = (rng.random((B, g.players[0].num_roots)), rng.random((B, g.players[1].num_roots)))
            cfr_plus(g, iterations, root_beliefs=b)
            solved += B
            if B == 1 and solved >= 54:
                break
        rates[B] = solved / (time.perf_counter() - start)
    return rates


def main() -> None:
    args = quick_args(__doc__)
    for game_string, (ours, theirs) in GAMES.items():
        if args.quick:
            ours, theirs = max(ours // 10, 10), 2
        r = full_game(game_string, ours, theirs)
        print(
            f"{r['game']}: pvf {r['pvf_ms']:.3f} ms/iter, OpenSpiel C++ CFR+ {r['openspiel_ms']:.2f} ms/iter, "
            f"ratio {r['ratio']:.1f}x (pvf NashConv {r['pvf_nash_conv']:.3g} after {r['pvf_iterations']} iterations)"
        )
    rates = batched_subgames([1, 64] if args.quick else [1, 64, 1024])
    base = rates[1]
    for B, rate in rates.items():
        print(f"Leduc depth-7 subgames, 100 CFR+ iterations, B={B}: {rate:,.0f} subgames/s ({rate / base:.0f}x B=1)")


if __name__ == "__main__":
    main()
