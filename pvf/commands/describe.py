"""`pvf describe GAME`: how large each depth of a game is, to choose `pvf generate --depth`.

For every move number with a non-terminal public state: the public states
(PBSs per trunk strategy, i.e. samples per trunk), each player's infostates
in them (in total and at most per public state: the network's slots) and
their histories; a warning for a depth before which no player acts, where
every trunk gives the same beliefs and all samples of a public state are
identical (pvf.games.depths).
"""

from __future__ import annotations

import argparse
import json

from pvf.commands import resolve_max_histories


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "describe",
        help="sizes of a game at each depth, to choose --depth",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("game", help="OpenSpiel game string or alias (leduc, goofspiel5, ...)")
    p.add_argument("--max-histories", type=int, default=None, help="game-size cap (default 2,000,000 histories)")
    p.add_argument("--seed", type=int, default=0, help="unused (deterministic); accepted for uniformity")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pvf.games.depths import depth_sizes
    from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, build_public_tree

    resolve_max_histories(args, DEFAULT_MAX_HISTORIES)
    tree = build_public_tree(args.game, max_histories=args.max_histories)
    sizes = depth_sizes(tree)
    warnings = [w for w in (s.warning() for s in sizes) if w]
    if args.json:
        print(
            json.dumps(
                {
                    "game": tree.game_string,
                    "histories": tree.num_histories,
                    "public_states": tree.num_public_states,
                    "infostates": [tree.num_infostates(0), tree.num_infostates(1)],
                    "depths": [s.as_dict() for s in sizes],
                    "warnings": warnings,
                }
            )
        )
        return 0
    print(
        f"game       {tree.game_string}: {tree.num_histories:,} histories, {tree.num_public_states:,} public states, "
        f"{tree.num_infostates(0):,} + {tree.num_infostates(1):,} infostates"
    )
    print(
        f"{'move':>4} {'public states':>14} {'infostates P1 (max/PS)':>23} {'infostates P2 (max/PS)':>23} "
        f"{'histories':>10}"
    )
    for s in sizes:
        mark = "" if s.decisions_before else "  (no decision before)"
        print(
            f"{s.depth:>4} {s.public_states:>14,} {s.infostates[0]:>14,} ({s.max_infostates[0]:>6,}) "
            f"{s.infostates[1]:>14,} ({s.max_infostates[1]:>6,}) {s.histories:>10,}{mark}"
        )
    if not sizes:
        print("no move after the first has a non-terminal public state: there is no depth to generate at")
    for w in warnings:
        print(f"warning: {w}")
    return 0
