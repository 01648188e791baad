"""OpenSpiel's IS-MCTS bot in Goofspiel, with the resampler the game lacks.

IS-MCTS searches from a world (a history) drawn afresh in every simulation
among those consistent with the searcher's infostate. OpenSpiel's bots get
the world from `State.ResampleFromInfostate`, which its Goofspiel (and the
turn-based wrapper pvf plays) does not implement, so neither the C++ nor
the Python `ISMCTSBot` runs there as shipped. The Python bot
(`open_spiel.python.algorithms.ismcts`) takes a resampler callback
(`set_resampler`); `GoofspielResampler` is that callback: the opponent's
bids in the completed rounds drawn uniformly among those consistent with
the infostate (`pvf.games.goofspiel_posterior`, the uniform prior over the
hidden information, as OpenSpiel's implementations for other games draw
it); where player 2 acts, player 1's pending bid of the current round is
any card it still holds.
`ismcts_bot` builds the bot with pvf play's settings (UCT constant 2, one
random rollout per leaf, the most visited action).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import GoofspielRules, rules_of
from pvf.games.goofspiel_posterior import infostate_of, sample_hidden_bids
from pvf.games.loading import LoadedGame

UCT_C = 2.0  # the exploration constant of pvf play's IS-MCTS (OpenSpiel's examples use 2)


class GoofspielResampler:
    """`resampler(state, player)`: a state drawn uniformly among those `player` cannot tell from `state`."""

    def __init__(self, rules: GoofspielRules, game: pyspiel.Game, seed: int = 0):
        self.rules, self.game = rules, game
        self.rng = np.random.default_rng(seed)

    def __call__(self, state: pyspiel.State, player: int) -> pyspiel.State:
        history = [int(a) for a in state.history()]
        own, outcomes = infostate_of(self.rules, history, player)
        hidden = sample_hidden_bids(self.rules, player, own, outcomes, self.rng)
        world = self.game.new_initial_state()
        for t in range(len(own)):
            pair = (own[t], hidden[t]) if player == 0 else (hidden[t], own[t])
            world.apply_action(pair[0])
            world.apply_action(pair[1])
        if len(history) % 2:  # player 2 acts: player 1's pending bid is any card it still holds
            free = sorted(set(range(self.rules.num_cards)) - set(hidden))
            world.apply_action(free[int(self.rng.integers(len(free)))])
        return world


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
