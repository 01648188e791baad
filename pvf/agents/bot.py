"""The re-solving agents as OpenSpiel bots (`pyspiel.Bot`), so that `evaluate_bots` and OpenSpiel's other bots
can play against them: `ResolvingBot` (exact ranges on the public tree) and `ParticleBot` (particle beliefs).

At a state where its player acts the bot finds the state's history in the
public tree (by its actions from the root), asks its `Resolver` for the
decision at that history's public state (the solves along the public path
are made on first use and kept) and samples its infostate's action from its
own seeded generator. Its strategy is therefore a function of the public
path and its own infostate only, the same that `resolved_policy` assembles
for the whole game. The bot plays the game pvf enumerates (the turn-based
form of a simultaneous-move game).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from pvf.agents.particle_agent import ParticleResolver
from pvf.agents.resolving import Planner, Resolver
from pvf.errors import PvfError
from pvf.games.public_tree import PublicTree


class SeatBot(pyspiel.Bot):
    """A `pyspiel.Bot` of one seat whose strategy at a state is `action_probabilities`: the seat's turn checked,
    then `strategy_at`, which each bot defines (a function of the state's history alone, so there is nothing to
    reset or track); its actions drawn by its own generator."""

    def __init__(self, player: int, seed: int = 0):
        pyspiel.Bot.__init__(self)
        self.player = player
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        """Draw the actions from here on by a generator seeded by `seed` (a match does so per game)."""
        self.rng = np.random.default_rng(seed)

    def restart_at(self, state: pyspiel.State) -> None:
        """Nothing to reset: decisions depend on the history only (and are kept across games)."""

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to track: the bot reads the whole history at its next decision."""

    def provides_policy(self) -> bool:
        return True

    def step_with_policy(self, state: pyspiel.State) -> tuple[list[tuple[int, float]], int]:
        """The strategy at the state's infostate [(action, probability)] and an action sampled from it."""
        probs = self.action_probabilities(state)
        actions = list(probs)
        action = int(self.rng.choice(actions, p=np.array([probs[a] for a in actions]) / sum(probs.values())))
        return list(probs.items()), action

    def step(self, state: pyspiel.State) -> int:
        return self.step_with_policy(state)[1]

    def action_probabilities(self, state: pyspiel.State) -> dict[int, float]:
        """{action: probability} of the bot's strategy at the state (its player must be the one to act)."""
        if state.current_player() != self.player:
            raise PvfError(f"the bot plays player {self.player}, but player {state.current_player()} acts here")
        return self.strategy_at(state)

    def strategy_at(self, state: pyspiel.State) -> dict[int, float]:
        """{action: probability} of the bot's strategy at a state where its player acts."""
        raise NotImplementedError


class ResolvingBot(SeatBot):
    """A `pyspiel.Bot` playing `player` by continual re-solving with `planner` (module docstring)."""

    def __init__(self, tree: PublicTree, planner: Planner, player: int, seed: int = 0):
        SeatBot.__init__(self, player, seed)
        self.tree = tree
        self.resolver = Resolver(tree, planner, player if planner.gadget else None)

    def strategy_at(self, state: pyspiel.State) -> dict[int, float]:
        history = self.history_index(state)
        decision = self.resolver.decision_at(int(self.tree.public_state[history]))
        return decision.strategy[int(self.tree.infostate[history, self.player])]

    def history_index(self, state: pyspiel.State) -> int:
        """The public tree's history of an OpenSpiel state (of the game pvf enumerates), found by its actions."""
        history = np.array([0])
        for action in state.history():
            history = self.tree.children(history, np.array([action]))
            if history[0] < 0:
                raise PvfError(f"state {state.history_str()!r} is not in the game the bot plays")
        return int(history[0])


class ParticleBot(SeatBot):
    """A `pyspiel.Bot` playing `player` by re-solving on particle beliefs (`pvf.agents.particle_agent`): its
    strategy at a state is the `ParticleResolver`'s decision at its infostate, read from the state's history
    (its public observations and the player's own actions only)."""

    def __init__(self, resolver: ParticleResolver, seed: int = 0):
        SeatBot.__init__(self, resolver.seat, seed)
        self.resolver = resolver

    def strategy_at(self, state: pyspiel.State) -> dict[int, float]:
        return self.resolver.decide(tuple(state.history())).strategy
