"""`pvf solve GAME`: full-game CFR+ (or any registered solver), the smallest end-to-end check.

Prints NashConv (exact best responses), OpenSpiel's exploitability
(NashConv / 2), player 1's value of the solver's solution (CFR+: the
average profile; `--solver mmd`: the last iterate; pvf.solvers.registry) and the time per
iteration; optionally writes that policy as JSON keyed by OpenSpiel
information-state strings. A sampled solver (`--solver abcs`) draws from
`--seed`.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from pvf.commands import require_positive, resolve_max_histories
from pvf.commands.solver_options import add_solver_arguments, solver_from_args
from pvf.outputs import check_output_file, disk_errors
from pvf.solvers.registry import SOLVERS

DEFAULT_ITERATIONS = 1000


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "solve", help="solve a whole game (CFR+, MMD, ...) and report NashConv", description=__doc__
    )
    p.add_argument(
        "game",
        help="OpenSpiel game string, e.g. leduc_poker or "
        "'goofspiel(num_cards=4,imp_info=True,points_order=descending)'",
    )
    own = ", ".join(f"{name} {spec.default_iterations:,}" for name, spec in SOLVERS.items() if spec.default_iterations)
    p.add_argument(
        "--iterations",
        type=int,
        default=None,
        help=f"solver iterations (default {DEFAULT_ITERATIONS:,}" + (f"; {own}" if own else "") + ")",
    )
    add_solver_arguments(p)
    p.add_argument("--save-policy", metavar="F.json", help="write the solution policy {infostate: {action: prob}}")
    p.add_argument(
        "--max-histories",
        type=int,
        default=None,
        help="game-size cap: refuse games with more histories (default 2,000,000)",
    )
    sampled = ", ".join(name for name, spec in SOLVERS.items() if spec.seeded) or "none"
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help=f"the sampling seed of a sampled solver ({sampled}); the others are deterministic (default 0)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, build_public_tree
    from pvf.solvers.best_response import nash_conv
    from pvf.solvers.sequence_form import build_sequence_game
    from pvf.solvers.tabular import save_policy, to_tabular

    solver = solver_from_args(args)
    if args.iterations is None:
        args.iterations = SOLVERS[args.solver].default_iterations or DEFAULT_ITERATIONS
    require_positive(args, "iterations")
    resolve_max_histories(args, DEFAULT_MAX_HISTORIES)
    if args.save_policy is not None:
        check_output_file(args.save_policy, "--save-policy")
    tree = build_public_tree(args.game, max_histories=args.max_histories)
    game = build_sequence_game(tree)
    start = time.perf_counter()
    result = solver(game, args.iterations)
    elapsed = time.perf_counter() - start
    strategies = (result.average_strategy[0][0], result.average_strategy[1][0])
    nc = float(nash_conv(game, strategies)[0])
    out = {
        "game": tree.game_string,
        "solver": args.solver,
        "iterations": args.iterations,
        "nash_conv": nc,
        "exploitability": nc / 2.0,
        "value": float(result.value[0]) + tree.utility_sum / 2.0,
        "ms_per_iteration": 1000.0 * elapsed / args.iterations,
    }
    if tree.utility_sum:
        out["payoff_sum"] = tree.utility_sum  # constant-sum: the players' payoffs add up to this at every end
    if args.save_policy:
        with disk_errors(args.save_policy):
            save_policy(to_tabular(game, strategies), args.save_policy)
        out["policy"] = args.save_policy
    if args.json:
        print(json.dumps(out))
    else:
        print(f"game                 {out['game']}")
        print(f"solver               {args.solver} ({SOLVERS[args.solver].solution})")
        print(f"iterations           {args.iterations}")
        print(f"NashConv             {nc:.6g}   (sum of both best-response gains)")
        print(f"exploitability       {nc / 2:.6g}   (OpenSpiel convention: NashConv / 2)")
        print(f"value (player 1)     {out['value']:.9f}")
        if tree.utility_sum:
            print(
                f"payoff sum           {tree.utility_sum:g}   (constant-sum: player 2's value is the sum less "
                "player 1's)"
            )
        print(f"ms per iteration     {out['ms_per_iteration']:.3f}")
        if args.save_policy:
            print(f"policy               {args.save_policy}")
    return 0 if np.isfinite(nc) else 1
