"""`pvf play`: the continual re-solving agent (pvf.agents), judged exactly or played against other bots.

    pvf play exploitability --game G --agent SPEC [--save-policy F.json] [--json]
    pvf play --game G --agent SPEC --opponent SPEC [--games N] [--json]

`exploitability` walks every public state the agent can reach, records its
strategy at every infostate it can face in either seat, and judges the
assembled policy with OpenSpiel's `nash_conv` (pvf's exact best responses
check it); beside it, the trunk exploitability of the agent's first solve
(its trunk from the initial state, the same leaves and iterations). Without
the verb the agent plays N games against the opponent, seats swapped every
game, and the agent's mean return is printed with a 95% interval.

SPEC (pvf.agents.spec): LEAVES | resolve[:KEY=VALUE,...] with LEAVES one of
oracle, targets, zero or checkpoints PATH.ckpt[+PATH.ckpt...] (the mean of
their values) and KEY one of leaves, depth (the trunk leaves' move number;
default a checkpoint's depth, else the game's fig. 3 depth), iterations
(default 100), solver (default cfr+), gadget (on/off, default on: safe
re-solving) and replan (horizon/every). E.g. `--agent oracle`, `--agent
runs/x.ckpt`, `--agent resolve:leaves=oracle,depth=7,iterations=300,gadget=off`.
Or particles[:KEY=VALUE,...], the agent on particle beliefs (Goofspiel),
with k (particles, default 16), leaves (oracle, zero, rollout: uniform
play's value, or checkpoints), depth or horizon (the leaves this many moves
ahead of each solve; each solve then takes the nets trained at its leaves'
move), fallback (zero or rollout: the leaves at moves no net was trained
at), endgame (solves from this move on reach the end of
the game), iterations, solver (cfr+ or mmd: MMD search),
min_live, explore, engine and replan, e.g. `--agent
particles:k=16,leaves=rollout,horizon=1` (Goofspiel-13).
Or mmds[:KEY=VALUE,...], MMD search (Goofspiel; one MMD update of the
blueprint on action values from belief samples and rollouts, no subgame
solved), with k (belief samples, default 10), eta (default 50), alpha
(default 0.01), draws (rollouts per value, default 64) and greed (the
blueprint bids card c with probability ∝ exp(β·c), high cards on high
prizes; default 0: uniform), e.g. `--agent mmds:greed=0.5`.
An opponent is a SPEC, one of OpenSpiel's bots, `random` (uniform),
`ismcts` (information-set MCTS, 1,000 simulations, random rollouts;
`ismcts:sims=N` sets the simulations; in Goofspiel OpenSpiel's Python bot
with pvf's uniform resampler, `pvf.agents.ismcts`, elsewhere its C++ one;
`ismcts:greed=β` in Goofspiel: its resampler and rollouts model players who
bid card c with probability ∝ exp(β·c), as `mmds:greed=β`'s blueprint) or
`mcts` (OpenSpiel's MCTSBot, the same budget: it searches the true state,
so it sees the agent's private information, a cheating benchmark), or
`human`: you, at the terminal, shown what your player sees and asked for a
move (the final returns are printed after each game).
"""

from __future__ import annotations

import argparse
import json
import time

from pvf.commands import add_progress_argument, progress_wanted, require_positive
from pvf.errors import PvfError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "play",
        help="the continual re-solving agent: its exact exploitability, or matches against other bots",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "what", nargs="?", choices=("exploitability",), help="judge the agent exactly instead of playing matches"
    )
    p.add_argument("--game", required=True, help="OpenSpiel game string or alias (kuhn_poker, leduc, goofspiel5)")
    p.add_argument("--agent", required=True, metavar="SPEC", help="the agent (see above)")
    p.add_argument("--opponent", metavar="SPEC", help="matches: the opponent, a SPEC or random / ismcts / mcts / human")
    p.add_argument("--games", type=int, default=100, help="matches: games, seats swapped every game (default 100)")
    p.add_argument("--save-policy", metavar="F.json", help="exploitability: write the agent's assembled policy")
    p.add_argument("--seed", type=int, default=0, help="the bots' sampling seed (default 0)")
    add_progress_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pvf.agents.spec import AgentSpec, parse_agent, parse_ismcts
    from pvf.games.loading import load_game
    from pvf.games.public_tree import build_public_tree
    from pvf.outputs import check_output_file

    spec = parse_agent(args.agent)
    if args.what == "exploitability":
        if args.opponent is not None:
            raise PvfError("`pvf play exploitability` judges one agent; drop --opponent")
        if args.save_policy is not None:
            check_output_file(args.save_policy, "--save-policy")
    else:
        if args.opponent is None:
            raise PvfError(
                "matches need --opponent SPEC (or random, ismcts, mcts, human); or use `pvf play exploitability`"
            )
        if args.save_policy is not None:
            raise PvfError("--save-policy belongs to `pvf play exploitability`")
        require_positive(args, "games")
    from pvf.agents.matches import openspiel_bot_name

    bot_name = None if args.opponent is None else openspiel_bot_name(args.opponent)
    if bot_name == "ismcts":
        parse_ismcts(args.opponent)
    opponent = None if args.opponent is None or bot_name is not None else parse_agent(args.opponent)
    loaded = load_game(args.game)
    # The particle agent and MMD search need no public tree to play; judging them exactly, or an exact-range
    # agent, does.
    enumerate_tree = args.what == "exploitability" or isinstance(spec, AgentSpec) or isinstance(opponent, AgentSpec)
    tree = build_public_tree(args.game) if enumerate_tree else None
    if args.what == "exploitability":
        out = _exploitability(tree, spec, args)
        if args.json:
            print(json.dumps(out))
        else:
            first = out.get("first_solve_trunk_exploitability")
            print(
                f"{out['game']} {out['agent']}: NashConv {out['nash_conv']:.5f} (OpenSpiel; pvf "
                f"{out['pvf_nash_conv']:.5f})"
                + ("" if first is None else f", first solve's trunk exploitability {first:.5f}")
                + f"; {out['solves']} solves, {out['seconds']:.1f} s"
            )
        return 0
    out = _matches(loaded, tree, spec, opponent, args)
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"{out['game']} {out['agent']} vs {out['opponent']}: mean return {out['mean_return']:+.4f} "
            f"± {out['ci95']:.4f} (95%, {out['games']} games, seats swapped; {out['seconds_per_move']:.3f} s a move)"
        )
    return 0


def _exploitability(tree, spec, args: argparse.Namespace) -> dict:
    import pyspiel

    from pvf.agents.mmd_search import search_policy
    from pvf.agents.particle_agent import particle_policy
    from pvf.agents.resolving import agent_policy
    from pvf.agents.spec import AgentSpec, MMDSearchSpec, make_mmd_search, make_particle_planner, make_planner
    from pvf.outputs import disk_errors
    from pvf.solvers.best_response import nash_conv
    from pvf.solvers.sequence_form import build_sequence_game
    from pvf.solvers.tabular import from_tabular, save_policy, to_openspiel
    from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate

    start = time.perf_counter()
    extra: dict = {}
    depth = None
    if isinstance(spec, AgentSpec):
        planner = make_planner(spec, tree)
        policy, solves = agent_policy(tree, planner)
        depth = planner.depth
    elif isinstance(spec, MMDSearchSpec):
        policy = search_policy(tree, make_mmd_search(spec, tree.loaded, args.seed))
        solves = 0
    else:
        planner = make_particle_planner(spec, tree.loaded)
        policy, counts = particle_policy(tree, planner, args.seed)
        solves, depth = counts["solves"], planner.depth
        extra = {"regenerations": counts["regenerations"], "decisions": counts["decisions"]}
    seconds = time.perf_counter() - start
    openspiel = float(pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(policy)))
    game = build_sequence_game(tree)
    ours = float(nash_conv(game, from_tabular(game, policy, default_uniform=True))[0])
    first = None
    if isinstance(spec, AgentSpec):
        trunk = build_trunk(tree, planner.depth)
        evaluator = planner.evaluator(trunk) if trunk.game.leaf_public_states.size else None
        first = solve_and_evaluate(trunk, evaluator, planner.iterations, solver=planner.solver)
        extra["first_solve_trunk_exploitability"] = first.exploitability.exploitability
    if args.save_policy:
        with disk_errors(args.save_policy):
            save_policy(policy, args.save_policy)
    return {
        "game": tree.game_string,
        "agent": spec.label,
        "depth": depth,
        "nash_conv": openspiel,
        "exploitability": openspiel / 2.0,
        "pvf_nash_conv": ours,
        **extra,
        "solves": solves,
        "infostates": len(policy),
        "seconds": seconds,
        "seconds_per_solve": seconds / max(solves, 1),
        "convention": "NashConv (OpenSpiel's exploitability is half)",
    }


def _matches(loaded, tree, spec, opponent, args: argparse.Namespace) -> dict:
    from tqdm import tqdm

    from pvf.agents.matches import agent_bots, opponent_bots, play_games, summary

    agents = agent_bots(spec, loaded, args.seed, tree)
    opponents = opponent_bots(args.opponent, loaded, args.seed, tree)
    results = []
    games = play_games(loaded, agents, opponents, range(args.games), args.seed)
    for result in tqdm(games, total=args.games, desc="pvf play", unit="game", disable=not progress_wanted(args)):
        results.append(result)
        if args.opponent == "human":
            print(f"Game {result.index + 1}: you {-result.agent_return:+g}, the agent {result.agent_return:+g}.")
    return {"game": loaded.game_string, "agent": spec.label, "opponent": args.opponent, **summary(results)}
