"""Seconds per move of pvf's agents beside OpenSpiel's IS-MCTS, timed in one run: what "equal time" means.

A match table (`pvf.experiments.match_table`) records only the first-named agent's seconds per move, each
pairing in its own run, often beside other jobs. This times every player named (pvf agent SPECs and OpenSpiel
bots, as `pvf play --opponent` takes them) on the same games against the uniform random bot, interleaved game
by game (game i: each player in seat i mod 2, the same seeds), so a load that comes and goes touches all of
them alike. It prints each player's decisions, seconds per move and its time as a multiple of the baseline's
(the first player named unless `--baseline`); IS-MCTS's simulations for a given time can be read off it.

Run:
    .venv/bin/python benchmarks/bot_speed.py                   # Goofspiel-13, the players of its match table
    .venv/bin/python benchmarks/bot_speed.py --games 2 --players "ismcts;mmds" --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform

os.environ.setdefault("OMP_NUM_THREADS", "1")

from pvf.agents.matches import opponent_bots, play_games  # noqa: E402
from pvf.games.loading import load_game  # noqa: E402

A = "particles:k=16,leaves=rollout,horizon=1"
PLAYERS = f"ismcts;ismcts:sims=200;ismcts:sims=100;ismcts:sims=20;ismcts:greed=0.5;{A};mmds;mmds:greed=0.5"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="goofspiel13")
    parser.add_argument("--players", default=PLAYERS, help="players separated by ';' (default: %(default)s)")
    parser.add_argument("--baseline", default=None, help="the player the ratios divide by (default: the first)")
    parser.add_argument("--games", type=int, default=4, help="games per player, seats alternating (default 4)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON line")
    args = parser.parse_args()
    players = [p for p in args.players.split(";") if p]
    baseline = args.baseline or players[0]
    if baseline not in players:
        raise SystemExit(f"--baseline {baseline!r} is not one of --players")
    if args.games < 1:
        raise SystemExit("--games must be at least 1")
    loaded = load_game(args.game)
    bots = {p: opponent_bots(p, loaded, args.seed) for p in players}
    random_bot = opponent_bots("random", loaded, args.seed + 7)
    moves = dict.fromkeys(players, 0)
    seconds = dict.fromkeys(players, 0.0)
    for i in range(args.games):
        for p in players:
            (result,) = play_games(loaded, bots[p](i), random_bot, [i], args.seed)
            moves[p] += result.moves
            seconds[p] += result.seconds
    per_move = {p: seconds[p] / moves[p] for p in players}
    rows = [
        {"player": p, "moves": moves[p], "seconds_per_move": per_move[p], "ratio": per_move[p] / per_move[baseline]}
        for p in players
    ]
    out = {"game": loaded.game_string, "games": args.games, "baseline": baseline, "machine": platform.machine()}
    if args.json:
        print(json.dumps({**out, "players": rows}))
        return
    print(f"{out['game']}, {args.games} games each against the uniform random bot, machine {out['machine']}")
    print(f"{'player':48s} {'moves':>6s} {'s/move':>9s} {'÷ ' + baseline[:20]:>24s}")
    for r in rows:
        print(f"{r['player'][:48]:48s} {r['moves']:6d} {r['seconds_per_move']:9.4f} {r['ratio']:24.3f}")


if __name__ == "__main__":
    main()
