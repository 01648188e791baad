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
random rollout per leaf, the most visited action). With `greed=β` it
models the opponent as the greedier random player MMD search's blueprint
is (`pvf.games.rollouts.bid_tilt`: card c bid with probability ∝
exp(τ·c)): the resampler draws from that player's posterior
(`sample_hidden_bids(..., tilt)`, the pending bid ∝ exp(τ·c) among the
cards left) and the rollouts (`TiltedRolloutEvaluator`) bid that way for
both players; β = 0 is the uniform bot, game for game.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import GoofspielRules, rules_of
from pvf.games.goofspiel_posterior import infostate_of, sample_hidden_bids
from pvf.games.loading import LoadedGame
from pvf.games.rollouts import bid_tilt

UCT_C = 2.0  # the exploration constant of pvf play's IS-MCTS (OpenSpiel's examples use 2)


def tilted_probabilities(cards: np.ndarray, tilt: float) -> np.ndarray:
    """[A] probabilities ∝ exp(tilt·card) of the float `cards` [A] (shifted by their maximum before `exp`)."""
    weights = np.exp(tilt * (cards - cards.max()))
    return weights / weights.sum()


def tilted_draw(cards: list[int], tilt: float, rng: np.random.Generator) -> int:
    """One of `cards` with probability ∝ exp(tilt·card); uniformly (one `integers` draw) where `tilt` is 0."""
    if tilt == 0.0:
        return cards[int(rng.integers(len(cards)))]
    return cards[int(rng.choice(len(cards), p=tilted_probabilities(np.asarray(cards, dtype=np.float64), tilt)))]


class GoofspielResampler:
    """`resampler(state, player)`: a state drawn among those `player` cannot tell from `state`, uniformly
    (`tilt` 0) or from the posterior under an opponent who bids card c with probability ∝ exp(tilt·c)."""

    def __init__(self, rules: GoofspielRules, game: pyspiel.Game, seed: int = 0, tilt: float = 0.0):
        self.rules, self.game, self.tilt = rules, game, float(tilt)
        self.rng = np.random.default_rng(seed)

    def __call__(self, state: pyspiel.State, player: int) -> pyspiel.State:
        history = [int(a) for a in state.history()]
        own, outcomes = infostate_of(self.rules, history, player)
        hidden = sample_hidden_bids(self.rules, player, own, outcomes, self.rng, self.tilt)
        world = self.game.new_initial_state()
        for t in range(len(own)):
            pair = (own[t], hidden[t]) if player == 0 else (hidden[t], own[t])
            world.apply_action(pair[0])
            world.apply_action(pair[1])
        if len(history) % 2:  # player 2 acts: player 1's pending bid is any card it still holds
            free = sorted(set(range(self.rules.num_cards)) - set(hidden))
            world.apply_action(tilted_draw(free, self.tilt, self.rng))
        return world


class TiltedRolloutEvaluator:
    """An OpenSpiel MCTS evaluator: one rollout per leaf in which every bid is card c with probability ∝
    exp(tilt·c) among the legal ones (chance by its probabilities); a uniform prior, as OpenSpiel's
    `RandomRolloutEvaluator`."""

    def __init__(self, tilt: float, random_state: np.random.RandomState):
        self.tilt = float(tilt)
        self.random_state = random_state

    def evaluate(self, state: pyspiel.State) -> np.ndarray:
        """[players] the returns of one tilted playout from `state`."""
        working = state.clone()
        while not working.is_terminal():
            if working.is_chance_node():
                actions, probs = zip(*working.chance_outcomes())
                action = actions[self.random_state.choice(len(actions), p=probs)]
            else:
                legal = np.asarray(working.legal_actions(), dtype=np.float64)
                action = int(legal[self.random_state.choice(len(legal), p=tilted_probabilities(legal, self.tilt))])
            working.apply_action(action)
        return np.asarray(working.returns())

    def prior(self, state: pyspiel.State) -> list[tuple[int, float]]:
        """Uniform over the legal actions (chance: its outcomes)."""
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions(state.current_player())
        return [(action, 1.0 / len(legal)) for action in legal]


def ismcts_bot(loaded: LoadedGame, player: int, simulations: int, seed: int, greed: float = 0.0) -> pyspiel.Bot:
    """OpenSpiel's Python IS-MCTS bot for `player` with `GoofspielResampler`; `greed` β > 0 its opponent model
    and rollouts the greedier random player's (module docstring)."""
    from open_spiel.python.algorithms import ismcts, mcts

    rules = rules_of(loaded)
    if rules is None:
        raise PvfError(
            f"pvf's IS-MCTS opponent plays Goofspiel (points descending or ascending), not {loaded.game_string}"
        )
    if simulations < 1:
        raise PvfError(f"IS-MCTS needs at least one simulation per move, not {simulations}")
    if greed < 0:
        raise PvfError(f"IS-MCTS's greed is a β ≥ 0, not {greed}")
    random_state = np.random.RandomState(seed)
    tilt = bid_tilt(rules, greed)
    if greed == 0:
        evaluator = mcts.RandomRolloutEvaluator(1, random_state)
    else:
        evaluator = TiltedRolloutEvaluator(tilt, random_state)
    bot = ismcts.ISMCTSBot(
        game=loaded.sequential,
        evaluator=evaluator,
        uct_c=UCT_C,
        max_simulations=simulations,
        random_state=random_state,
    )
    bot.set_resampler(GoofspielResampler(rules, loaded.sequential, seed, tilt))
    return bot
