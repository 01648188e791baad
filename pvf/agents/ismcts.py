"""OpenSpiel's IS-MCTS bot in Goofspiel, with the resampler the game lacks.

IS-MCTS searches from a world (a history) drawn afresh in every simulation
among those consistent with the searcher's infostate. OpenSpiel's bots get
the world from `State.ResampleFromInfostate`, which its Goofspiel (and the
turn-based wrapper pvf plays) does not implement, so neither the C++ nor
the Python `ISMCTSBot` runs there as shipped. The Python bot
(`open_spiel.python.algorithms.ismcts`) takes a resampler callback
(`set_resampler`); `GoofspielResampler` is that callback:
  - An infostate of player p is p's own bids and each completed round's
    outcome (who bid higher); the opponent's bids are hidden. Every
    opponent bid sequence consistent with them is equally likely under
    `ResampleFromInfostate`'s convention (the uniform prior over the
    hidden information, as OpenSpiel's implementations for other games
    draw it).
  - Uniform sampling: the number of consistent completions from round t
    with the opponent's used cards S, N(t, S) = Σ_c N(t + 1, S ∪ {c}) over
    the cards c ∉ S with the round's outcome (N(T, S) = 1), memoised per
    infostate; round t's card is drawn with probability N(t + 1, S ∪ {c}) /
    N(t, S), which makes the whole sequence uniform. Where player 2 acts,
    player 1's pending bid of the current round is any card it still holds.
`ismcts_bot` builds the bot with pvf play's settings (UCT constant 2, one
random rollout per leaf, the most visited action).
"""

from __future__ import annotations

import functools

import numpy as np
import pyspiel

from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import DRAW, P1_WINS, P2_WINS, GoofspielRules, replay, rules_of
from pvf.games.loading import LoadedGame

UCT_C = 2.0  # the exploration constant of pvf play's IS-MCTS (OpenSpiel's examples use 2)


class GoofspielResampler:
    """`resampler(state, player)`: a state drawn uniformly among those `player` cannot tell from `state`."""

    def __init__(self, rules: GoofspielRules, game: pyspiel.Game, seed: int = 0):
        self.rules, self.game = rules, game
        self.rng = np.random.default_rng(seed)

    def __call__(self, state: pyspiel.State, player: int) -> pyspiel.State:
        history = [int(a) for a in state.history()]
        rounds = len(history) // 2
        own = tuple(history[player::2][:rounds])
        outcomes = tuple(replay(self.rules, history[: 2 * rounds]).outcomes)
        counts = _completions(self.rules.num_cards, player, own, outcomes)
        used, hidden = 0, []
        for t in range(rounds):
            cards = _candidates(self.rules.num_cards, player, own[t], outcomes[t], used)
            weights = np.array([counts(t + 1, used | (1 << c)) for c in cards], dtype=np.float64)
            c = cards[int(np.searchsorted(np.cumsum(weights), self.rng.random() * weights.sum(), side="right"))]
            hidden.append(c)
            used |= 1 << c
        world = self.game.new_initial_state()
        for t in range(rounds):
            pair = (own[t], hidden[t]) if player == 0 else (hidden[t], own[t])
            world.apply_action(pair[0])
            world.apply_action(pair[1])
        if len(history) % 2:  # player 2 acts: player 1's pending bid is any card it still holds
            free = [c for c in range(self.rules.num_cards) if not used >> c & 1]
            world.apply_action(free[int(self.rng.integers(len(free)))])
        return world


def _candidates(num_cards: int, player: int, own: int, outcome: int, used: int) -> list[int]:
    """The opponent's cards not in `used` that give round outcome `outcome` against `player`'s bid `own`."""
    out = []
    for c in range(num_cards):
        if used >> c & 1:
            continue
        first, second = (own, c) if player == 0 else (c, own)
        code = P1_WINS if first > second else P2_WINS if second > first else DRAW
        if code == outcome:
            out.append(c)
    return out


@functools.lru_cache(maxsize=256)
def _completions(num_cards: int, player: int, own: tuple[int, ...], outcomes: tuple[int, ...]):
    """N(t, S) of the module docstring for one infostate (memoised)."""

    @functools.cache
    def count(t: int, used: int) -> int:
        if t == len(own):
            return 1
        return sum(count(t + 1, used | (1 << c)) for c in _candidates(num_cards, player, own[t], outcomes[t], used))

    return count


def ismcts_bot(loaded: LoadedGame, player: int, simulations: int, seed: int) -> pyspiel.Bot:
    """OpenSpiel's Python IS-MCTS bot for `player` with `GoofspielResampler` (module docstring)."""
    from open_spiel.python.algorithms import ismcts, mcts

    rules = rules_of(loaded)
    if rules is None:
        raise PvfError(
            f"pvf's IS-MCTS opponent plays Goofspiel (points descending or ascending), not {loaded.game_string}"
        )
    if simulations < 1:
        raise PvfError(f"IS-MCTS needs at least one simulation per move, not {simulations}")
    random_state = np.random.RandomState(seed)
    bot = ismcts.ISMCTSBot(
        game=loaded.sequential,
        evaluator=mcts.RandomRolloutEvaluator(1, random_state),
        uct_c=UCT_C,
        max_simulations=simulations,
        random_state=random_state,
    )
    bot.set_resampler(GoofspielResampler(rules, loaded.sequential, seed))
    return bot
