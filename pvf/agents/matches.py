"""Matches of a pvf agent against an opponent: seats swapped every game, every game reproducible on its own.

Game i seats the agent as player i mod 2 and is played by OpenSpiel's
`evaluate_bots` with seed `seed·1,000,003 + i`; an OpenSpiel opponent
(`random`, `ismcts[:sims=N,greed=β]`, `mcts`) is built afresh for each game from
that game's seed, and a pvf agent's decisions are functions of its
infostates (seeded by them, `pvf.agents.particle_agent`,
`pvf.agents.resolving`) and its draws from them are reseeded per game
(`SeatBot.reseed`, from the game's seed), so game i's result does not depend on the games
played before it in the process: a match can be cut into pieces, resumed
or extended (`pvf.experiments.match_table`) and gives the same games.
The agent's seconds per move are its own decisions' wall time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyspiel

from pvf.agents.bot import SeatBot
from pvf.agents.spec import OPENSPIEL_BOTS, parse_ismcts
from pvf.errors import PvfError
from pvf.games.loading import LoadedGame
from pvf.games.public_tree import PublicTree, build_public_tree

if TYPE_CHECKING:
    from pvf.agents.spec import AgentSpec, MMDSearchSpec, ParticleAgentSpec

MCTS_SIMULATIONS = 1000


@dataclass(frozen=True)
class GameResult:
    """Game `index`: the agent's seat, its return, its decisions and their wall time."""

    index: int
    seat: int
    agent_return: float
    moves: int
    seconds: float


def openspiel_bot_name(text: str) -> str | None:
    """The OpenSpiel bot an opponent SPEC names (`ismcts:sims=N,greed=β` too), or None for a pvf agent SPEC."""
    name = text.partition(":")[0]
    return name if name in OPENSPIEL_BOTS and (name == "ismcts" or ":" not in text) else None


def openspiel_bot(text: str, loaded: LoadedGame, player: int, seed: int) -> pyspiel.Bot:
    """The OpenSpiel opponent `text` names, for `player`, seeded by `seed`."""
    from pvf.agents.human import HumanBot
    from pvf.agents.ismcts import UCT_C, ismcts_bot
    from pvf.games.goofspiel_kernel import rules_of

    name = openspiel_bot_name(text)
    if name == "human":
        return HumanBot(player)
    if name == "random":
        return pyspiel.make_uniform_random_bot(player, seed)
    if name == "ismcts":
        options = parse_ismcts(text)
        if rules_of(loaded) is not None:  # Goofspiel lacks ResampleFromInfostate: pvf's resampler
            return ismcts_bot(loaded, player, options.sims, seed, options.greed)
        if options.greed:
            raise PvfError(f"opponent {text!r}: greed models a Goofspiel player; {loaded.game_string} is not Goofspiel")
        return pyspiel.ISMCTSBot(seed, pyspiel.RandomRolloutEvaluator(1, seed), UCT_C, options.sims)
    if name == "mcts":
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        return pyspiel.MCTSBot(loaded.sequential, evaluator, UCT_C, MCTS_SIMULATIONS, 1000, False, seed, False)
    raise PvfError(f"{text!r} is not an OpenSpiel opponent ({', '.join(OPENSPIEL_BOTS)})")


def agent_bots(
    spec: AgentSpec | ParticleAgentSpec | MMDSearchSpec, loaded: LoadedGame, seed: int, tree: PublicTree | None = None
) -> list:
    """The pvf agent a SPEC names as a `pyspiel.Bot` of each seat, both on one planner (a checkpoint loaded
    once); an exact-range agent needs the public tree (built here where `tree` is None)."""
    from pvf.agents.bot import ParticleBot, ResolvingBot
    from pvf.agents.mmd_search import MMDSearchBot
    from pvf.agents.particle_agent import ParticleResolver
    from pvf.agents.spec import AgentSpec, MMDSearchSpec, make_mmd_search, make_particle_planner, make_planner

    if isinstance(spec, MMDSearchSpec):
        return [MMDSearchBot(make_mmd_search(spec, loaded, seed), player, seed) for player in (0, 1)]

    if isinstance(spec, AgentSpec):
        tree = build_public_tree(loaded.game_string) if tree is None else tree
        planner = make_planner(spec, tree)
        return [ResolvingBot(tree, planner, player, seed) for player in (0, 1)]
    planner = make_particle_planner(spec, loaded)
    return [ParticleBot(ParticleResolver(loaded, planner, player, seed), seed) for player in (0, 1)]


def opponent_bots(
    text: str, loaded: LoadedGame, seed: int, tree: PublicTree | None = None
) -> Callable[[int], Sequence[pyspiel.Bot]]:
    """Game index -> the opponent `text` names, per seat: an OpenSpiel bot built for each game from its seed, or
    a pvf agent (SPEC) built once (seeded by `seed + 1`; its decisions are functions of its infostates)."""
    from pvf.agents.spec import parse_agent

    if openspiel_bot_name(text) is not None:
        return lambda i: [openspiel_bot(text, loaded, p, game_seed(seed, i) + 1) for p in (0, 1)]
    shared = agent_bots(parse_agent(text), loaded, seed + 1, tree)
    return lambda i: shared


def game_seed(seed: int, index: int) -> int:
    """`evaluate_bots`' seed of game `index` of a match seeded by `seed`."""
    return seed * 1_000_003 + index


def play_games(
    loaded: LoadedGame,
    agents: Sequence[pyspiel.Bot],
    opponents: Callable[[int], Sequence[pyspiel.Bot]],
    indices: Iterable[int],
    seed: int,
) -> Iterator[GameResult]:
    """Games `indices` of the match (module docstring), one result as each ends.

    agents: the agent's bot per seat; opponents: game index -> the opponent's bot per seat.
    """
    for i in indices:
        seat = i % 2
        timed = _Timed(agents[seat])
        others = opponents(i)
        for k, bot in enumerate((agents[seat], *others)):
            if isinstance(bot, SeatBot):
                bot.reseed(game_seed(seed, i) * 3 + k)
        bots = [timed, others[1]] if seat == 0 else [others[0], timed]
        result = pyspiel.evaluate_bots(loaded.sequential.new_initial_state(), bots, game_seed(seed, i))
        yield GameResult(i, seat, float(result[seat]), timed.moves, timed.seconds)


def summary(results: Sequence[GameResult]) -> dict:
    """Mean return with a 95% interval (normal, 1.96 standard errors), per seat, and seconds per move."""
    values = np.array([r.agent_return for r in results])
    half = 1.96 * values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else math.inf
    seats = [values[[r.seat == s for r in results]] for s in (0, 1)]
    return {
        "games": len(values),
        "mean_return": float(values.mean()),
        "ci95": float(half),
        "returns_by_seat": [float(v.mean()) if len(v) else None for v in seats],
        "seconds_per_move": sum(r.seconds for r in results) / max(sum(r.moves for r in results), 1),
    }


class _Timed(pyspiel.Bot):
    """`bot` with its decisions counted and timed."""

    def __init__(self, bot: pyspiel.Bot):
        pyspiel.Bot.__init__(self)
        self.bot, self.moves, self.seconds = bot, 0, 0.0

    def restart_at(self, state):
        self.bot.restart_at(state)

    def inform_action(self, state, player_id, action):
        self.bot.inform_action(state, player_id, action)

    def provides_policy(self):
        return False

    def step(self, state):
        start = time.perf_counter()
        action = self.bot.step(state)
        self.moves, self.seconds = self.moves + 1, self.seconds + time.perf_counter() - start
        return action
