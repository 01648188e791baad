"""The particle path's OpenSpiel engine: any game, by walking OpenSpiel states.

`OpenSpielEngine` is `pvf.games.engine.ParticleEngine` over the modules that
step OpenSpiel states: `pvf.games.history_sampling` (play to a depth, K
particles, one-move continuations), `pvf.games.particle_tree` (the subgame
below particles), `pvf.games.induced_pbs` (joins by replaying each player's
own moves) and `pvf.games.features` (the observers' tensors). Every game
pvf loads has it; a game with a native kernel (`pvf.games.goofspiel_kernel`)
gets the same results from integer arrays, checked against this engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pvf.games.features import checked_game, sample_features
from pvf.games.history_sampling import (
    Continuations,
    ParticleSample,
    Strategy,
    batch_continuations,
    play_to_depth,
    sample_particles,
)
from pvf.games.induced_pbs import InducedHistories, induced_histories
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import build_particle_tree, find_histories
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, PublicTree
from pvf.games.walk import node_at


class OpenSpielEngine:
    """`pvf.games.engine.ParticleEngine` by OpenSpiel's states (module docstring)."""

    name = "openspiel"

    def __init__(self, loaded: LoadedGame):
        self.loaded = loaded

    def play_to_depth(self, strategy: Strategy, depth: int, rng: np.random.Generator) -> tuple[int, ...]:
        return play_to_depth(self.loaded, strategy, depth, rng)

    def sample_particles(
        self,
        strategy: Strategy,
        public_history: Sequence[int],
        num_particles: int,
        rng: np.random.Generator,
        start: ParticleSample | None = None,
    ) -> ParticleSample:
        return sample_particles(self.loaded, strategy, tuple(public_history), num_particles, rng, start)

    def information_state_string(self, history: Sequence[int], player: int) -> str:
        return node_at(self.loaded, [int(a) for a in history]).state.information_state_string(player)

    def continuations(self, histories: np.ndarray, strategy: Strategy) -> Continuations:
        return batch_continuations(self.loaded, histories, strategy)

    def particle_tree(
        self,
        histories: Sequence[Sequence[int]] | np.ndarray,
        depth_limit: int | None = None,
        max_histories: int = DEFAULT_MAX_HISTORIES,
    ) -> tuple[PublicTree, np.ndarray]:
        tree = build_particle_tree(self.loaded, histories, depth_limit, max_histories)
        return tree, find_histories(tree, histories)

    def induced_histories(self, tree: PublicTree, infostates: tuple[np.ndarray, np.ndarray]) -> InducedHistories:
        return induced_histories(self.loaded, tree, infostates)

    def features(
        self, tree: PublicTree, public_state: int, infostates: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        _, observers = checked_game(self.loaded.game_string)
        return sample_features(tree, observers, public_state, infostates)
