"""Time pvf's MMD against OpenSpiel's Python MMDDilatedEnt, and against pvf's CFR+, in the same run.

1. Full-game MMD with a fixed alpha (the update both implement): ms per
   iteration of pvf's `mmd` and of `MMDDilatedEnt.update_sequences` on Kuhn
   and Leduc, the ratio, and the largest policy difference after the
   OpenSpiel iterations (both run the same number of iterations).
2. pvf's MMD (default schedule) and pvf's CFR+ per iteration on Leduc and
   Goofspiel-5, with each one's NashConv after the same iterations.

Run: .venv/bin/python benchmarks/mmd_speed.py [--quick]
"""

from __future__ import annotations

from _common import quick_args, timed
from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt

from pvf.games.public_tree import build_public_tree
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.mmd import make_schedule, mmd
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.tabular import to_tabular

ALPHA = 0.05


def against_openspiel(game_string: str, ours_iters: int, theirs_iters: int) -> dict:
    tree = build_public_tree(game_string)
    game = build_sequence_game(tree)
    schedule = make_schedule("fixed", alpha=ALPHA)
    _, ours_ms = timed(lambda: mmd(game, ours_iters, schedule=schedule), ours_iters)
    solver = MMDDilatedEnt(tree.loaded.sequential, alpha=ALPHA)

    def run():
        for _ in range(theirs_iters):
            solver.update_sequences()

    _, theirs_ms = timed(run, theirs_iters)
    same = mmd(game, theirs_iters, schedule=schedule)
    policy = solver.get_policies()
    diff = 0.0
    for name, probs in to_tabular(game, (same.average_strategy[0][0], same.average_strategy[1][0])).items():
        row = policy.policy_for_key(name)
        diff = max(diff, max(abs(p - row[a]) for a, p in probs.items()))
    return {"pvf_ms": ours_ms, "openspiel_ms": theirs_ms, "ratio": theirs_ms / ours_ms, "max_policy_diff": diff}


def against_cfr_plus(game_string: str, iterations: int) -> dict:
    game = build_sequence_game(build_public_tree(game_string))
    out = {}
    for name, solve in (("mmd", mmd), ("cfr+", cfr_plus)):
        result, ms = timed(lambda solve=solve: solve(game, iterations), iterations)
        nc = nash_conv(game, (result.average_strategy[0][0], result.average_strategy[1][0]))[0]
        out[name] = (ms, nc)
    return out


def main() -> None:
    args = quick_args(__doc__)
    for game_string, ours, theirs in (("kuhn_poker", 2000, 50), ("leduc_poker", 1000, 10)):
        if args.quick:
            ours, theirs = ours // 10, 2
        r = against_openspiel(game_string, ours, theirs)
        print(
            f"{game_string}, fixed alpha {ALPHA}: pvf MMD {r['pvf_ms']:.3f} ms/iter, OpenSpiel MMDDilatedEnt "
            f"{r['openspiel_ms']:.1f} ms/iter, ratio {r['ratio']:.0f}x (policies differ by {r['max_policy_diff']:.1e})"
        )
    for game_string, iterations in (
        ("leduc_poker", 1000),
        ("goofspiel(num_cards=5,imp_info=True,points_order=descending)", 300),
    ):
        if args.quick:
            iterations //= 10
        r = against_cfr_plus(game_string, iterations)
        (m_ms, m_nc), (c_ms, c_nc) = r["mmd"], r["cfr+"]
        print(
            f"{game_string}, {iterations} iterations: pvf MMD {m_ms:.3f} ms/iter (NashConv {m_nc:.3g}), "
            f"pvf CFR+ {c_ms:.3f} ms/iter (NashConv {c_nc:.3g}), MMD/CFR+ time {m_ms / c_ms:.2f}"
        )


if __name__ == "__main__":
    main()
