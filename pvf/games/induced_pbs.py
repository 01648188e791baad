"""The PBS that particles induce (the paper, sec. 5.1), as histories to build a subgame from.

K particles of one public state give each player a set of infostates (those
with a particle) and a belief on each: the player's own reach σ_n(s), zero
on every other infostate. That PBS holds every history of the public state
whose two infostates both carry belief, weighted σ₁(s₁)·σ₂(s₂)·π_c(h): in
general many more histories than were drawn (Goofspiel-8 at move 5, K = 32:
about 27 distinct particles, 180 joined histories). A value function that
sees only (σ, features) per infostate can only learn the values of this
PBS, so these are the histories particle targets are computed on.

`induced_histories(game, tree, infostates)` finds them without the public
tree by walking OpenSpiel states (a native engine joins them in closed
form instead, `pvf.games.goofspiel_kernel`): for each pair (s₁, s₂) of the given
infostates it replays the game from the initial state, each player moving as on the particle history of
their own infostate, every chance outcome tried, and keeps the paths on
which OpenSpiel's information-state strings are s₁'s for player 1 and s₂'s
for player 2 (checked at every player's node, so wrong chance branches end
at once). It assumes, as in Kuhn, Leduc and Goofspiel, that the histories
of one public state have the same length and the same player to move at
each level. `induced_roots` gives, for particles and their own reaches,
the induced PBS's histories (by either engine's join) and their reaches.

The induced PBS grows like K² histories, and its cost with it (measured on
one core, Goofspiel-13 children samples at move 10, OpenSpiel's walk: K = 16
about 0.4 s, 64 about 4 s, 256 over 60 s; the native kernel: 0.035 s, 0.17 s,
about 2 s), so `check_particle_count` refuses K above `MAX_PARTICLES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvf.errors import PvfError
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import history_actions
from pvf.games.public_tree import PublicTree

MAX_PARTICLES = 1024  # about K² = 10⁶ joined histories a sample: many minutes; 10⁸ would run for days


def check_particle_count(k: int, option: str) -> None:
    """PvfError (one line, what a K costs) unless 1 <= k <= MAX_PARTICLES."""
    if k < 1:
        raise PvfError(f"{option} must be at least 1, got {k}")
    if k > MAX_PARTICLES:
        raise PvfError(
            f"{option} {k:,}: the PBS K particles induce holds up to K² histories (one core, a Goofspiel-13 "
            f"sample: K = 16 about 0.04 s, 64 about 0.2 s, 256 about 2 s with the native kernel, 0.4 s, 4 s and "
            f"over 60 s with OpenSpiel's); pvf takes K up to {MAX_PARTICLES:,}"
        )


@dataclass(frozen=True)
class InducedHistories:
    """The histories of the induced PBS and the infostate pair each joins.

    paths: [H, L] int64 action sequences (sequential game), in (s₁, s₂, chance outcomes) order.
    pairs: [H, 2] int64 positions of each path's infostates in the given `infostates` arrays.
    """

    paths: np.ndarray
    pairs: np.ndarray


def induced_histories(
    game: LoadedGame, tree: PublicTree, infostates: tuple[np.ndarray, np.ndarray]
) -> InducedHistories:
    """Every history joining one of player 1's `infostates[0]` with one of player 2's `infostates[1]`.

    tree: a tree holding a history of each given infostate (a particle tree).
    infostates: ([J₁] player-1, [J₂] player-2) infostate indices of `tree`, all in one public state.
    """
    own = [[_own_path(game, tree, n, int(s)) for s in infostates[n]] for n in (0, 1)]
    paths, pairs = [], []
    for a, (actions1, strings1) in enumerate(own[0]):
        for b, (actions2, strings2) in enumerate(own[1]):
            if len(actions1) != len(actions2):
                continue
            for path in _join(game, (actions1, actions2), (strings1, strings2)):
                paths.append(path)
                pairs.append((a, b))
    length = len(paths[0]) if paths else 0
    return InducedHistories(
        np.array(paths, dtype=np.int64).reshape(len(paths), length), np.array(pairs, dtype=np.int64).reshape(-1, 2)
    )


Join = Callable[[PublicTree, tuple[np.ndarray, np.ndarray]], InducedHistories]


def induced_roots(
    join: Join, tree: PublicTree, particles: np.ndarray, own_reach: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The PBS that particles of one public state induce: its histories and their own reaches.

    join: `induced_histories` of an engine (`join(tree, infostates)`).
    particles: [k] distinct tree histories; own_reach: [k, 2] each player's own reach σ_n of each
    (the same for every particle of an infostate, by perfect recall).
    Returns the histories joining two particle infostates ([H, L] action sequences, `induced_histories`
    order) and [H, 2] their own reaches (σ₁(s₁), σ₂(s₂)); a history weighs π_c(h)·σ₁(s₁)·σ₂(s₂).
    """
    infostates = tuple(np.unique(tree.infostate[particles, n]) for n in (0, 1))
    sigma = [np.zeros(tree.num_infostates(n)) for n in (0, 1)]
    for n in (0, 1):
        sigma[n][tree.infostate[particles, n]] = own_reach[:, n]
    joined = join(tree, infostates)
    own = np.stack([sigma[n][infostates[n][joined.pairs[:, n]]] for n in (0, 1)], axis=1)
    return joined.paths, own


def _own_path(game: LoadedGame, tree: PublicTree, player: int, infostate: int) -> tuple[list[int], list[str | None]]:
    """(actions of a history of the infostate, the player's information-state string at each level; None at chance)."""
    actions = history_actions(tree, int(tree.infostate_history[player][infostate]))
    state = game.sequential.new_initial_state()
    strings: list[str | None] = []
    for action in actions:
        strings.append(None if state.is_chance_node() else state.information_state_string(player))
        state.apply_action(action)
    strings.append(None if state.is_chance_node() else state.information_state_string(player))
    return actions, strings


def _join(game: LoadedGame, actions: tuple[list[int], list[int]], strings: tuple[list, list]) -> list[tuple[int, ...]]:
    """The paths on which player n moves as in actions[n] and sees strings[n].

    Depth first, chance outcomes in order.
    """
    length = len(actions[0])
    found = []
    stack = [(game.sequential.new_initial_state(), ())]
    while stack:
        state, path = stack.pop()
        level = len(path)
        if not state.is_chance_node() and any(
            strings[n][level] is not None and state.information_state_string(n) != strings[n][level] for n in (0, 1)
        ):
            continue
        if level == length:
            found.append(path)
            continue
        if state.is_chance_node():
            moves = [a for a, p in state.chance_outcomes() if p > 0]
        else:
            mover = state.current_player()
            if actions[mover][level] not in state.legal_actions():
                continue
            moves = [actions[mover][level]]
        for action in reversed(moves):
            stack.append((state.child(action), path + (action,)))
    return found
