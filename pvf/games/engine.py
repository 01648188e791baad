"""One particle path, two engines: a game's native kernel where it has one, OpenSpiel's walk otherwise.

Everything the particle path asks of a game (`pvf.datasets.particle_tasks`,
`pvf.datasets.particle_children`, `pvf.experiments.particle_sweep`) is a
`ParticleEngine` method: play a strategy to a depth, draw K particles of a
public state, the one-move continuations of histories, the particle tree of
histories (and where they lie in it), the histories joining two sets of
infostates (the induced PBS), the features of a public state's infostates.
  - `OpenSpielEngine` (`pvf.games.openspiel_engine`) does it for every game by
    stepping OpenSpiel states.
  - A native kernel does it for one game with integer arrays
    (`pvf.games.goofspiel_kernel`: imperfect-information Goofspiel, points
    descending or ascending); `NATIVE` maps OpenSpiel's short game name to the
    module whose `native_engine` factory returns the kernel, or None for
    parameters it does not play. Kernels and the OpenSpiel walk are imported
    on first use, so the command line, which offers `ENGINES`, loads neither.
Both give the same results, draw for draw and bit for bit: the same
generator calls, trees numbered alike, strategies asked by the same
OpenSpiel strings (tests/games/test_goofspiel_kernel.py, and the same dataset
file from either, tests/datasets/test_particle_engines.py). So the engine is,
like the number of workers, how fast a file is made, never what is in it.
`particle_engine(game, "auto")` picks the native kernel where there is one;
"native" refuses a game without one, "openspiel" always walks OpenSpiel.
A Leduc or Liar's Dice kernel is one more module and one `NATIVE` entry.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from pvf.errors import PvfError
from pvf.games.history_sampling import Continuations, ParticleSample, Strategy
from pvf.games.induced_pbs import InducedHistories
from pvf.games.loading import LoadedGame, load_game
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, PublicTree

ENGINES = ("auto", "native", "openspiel")
NATIVE: dict[str, str] = {"goofspiel": "pvf.games.goofspiel_kernel"}


class ParticleEngine(Protocol):
    """What the particle path asks of a game. Histories are sequential-game action sequences.

    name: "native" or "openspiel"; loaded: the game.
    """

    name: str
    loaded: LoadedGame

    def play_to_depth(self, strategy: Strategy, depth: int, rng: np.random.Generator) -> tuple[int, ...]:
        """The strategy played to the first history at move ≥ depth (`pvf.games.history_sampling.play_to_depth`)."""
        ...

    def sample_particles(
        self,
        strategy: Strategy,
        public_history: Sequence[int],
        num_particles: int,
        rng: np.random.Generator,
        start: ParticleSample | None = None,
    ) -> ParticleSample:
        """K weighted particles of `public_history`'s public state (`pvf.games.history_sampling.sample_particles`),
        drawn from the initial state or continuing `start`'s particles of an earlier public state (filtering)."""
        ...

    def information_state_string(self, history: Sequence[int], player: int) -> str:
        """OpenSpiel's information-state string of `player` at a history (its edge: keys, checks, policies)."""
        ...

    def continuations(self, histories: np.ndarray, strategy: Strategy) -> Continuations:
        """Every one-move continuation of each of `histories` [P, L] (one public state's)."""
        ...

    def particle_tree(
        self,
        histories: Sequence[Sequence[int]] | np.ndarray,
        depth_limit: int | None = None,
        max_histories: int = DEFAULT_MAX_HISTORIES,
    ) -> tuple[PublicTree, np.ndarray]:
        """The particle tree of `histories` (`pvf.games.particle_tree.build_particle_tree`) and their [K] indices."""
        ...

    def induced_histories(self, tree: PublicTree, infostates: tuple[np.ndarray, np.ndarray]) -> InducedHistories:
        """Every history joining one of player 1's `infostates[0]` with one of player 2's `infostates[1]`
        (tree infostates of one public state; `pvf.games.induced_pbs.induced_histories`)."""
        ...

    def features(
        self, tree: PublicTree, public_state: int, infostates: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """([Fp] public features, per player [J_n, Fq] private features; `pvf.games.features.sample_features`)."""
        ...


def live_particles(
    game: ParticleEngine,
    strategy: Strategy,
    public_history: Sequence[int],
    num_particles: int,
    rng: np.random.Generator,
) -> ParticleSample:
    """K particles of `public_history`'s public state drawn from the initial state, drawn again from the same
    stream while every draw died (a sample needs one live particle; the unbiased draw rarely has none)."""
    sample = game.sample_particles(strategy, public_history, num_particles, rng)
    while not sample.particles:
        sample = game.sample_particles(strategy, public_history, num_particles, rng)
    return sample


def check_engine(engine: str) -> None:
    """PvfError (one line) unless `engine` is one of ENGINES."""
    if engine not in ENGINES:
        raise PvfError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")


def particle_engine(game: str | LoadedGame, engine: str = "auto") -> ParticleEngine:
    """The engine `engine` ("auto", "native" or "openspiel") of `game`, one per game and process (engines
    keep caches: a native engine the strategy probabilities of the infostates it has seen)."""
    check_engine(engine)
    loaded = game if isinstance(game, LoadedGame) else load_game(game)
    key = (loaded.game_string, engine)
    if key not in _ENGINES:
        native = None
        module = NATIVE.get(loaded.original.get_type().short_name) if engine != "openspiel" else None
        if module is not None:
            native = importlib.import_module(module).native_engine(loaded)
        if native is None and engine == "native":
            raise PvfError(
                f"{loaded.game_string} has no native engine (native kernels: imperfect-information Goofspiel, "
                "points descending or ascending); use --engine openspiel or auto"
            )
        if native is None:
            from pvf.games.openspiel_engine import OpenSpielEngine

            _ENGINES[key] = OpenSpielEngine(loaded)
        else:
            _ENGINES[key] = native
    return _ENGINES[key]


_ENGINES: dict[tuple[str, str], ParticleEngine] = {}
