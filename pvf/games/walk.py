"""Walking an OpenSpiel game one action at a time, in the turn-based form pvf solves.

A `Node` is one history: the state of the sequential game (OpenSpiel's
turn-based transform of a simultaneous game, or the game itself) and the
state of the original game, which in a simultaneous round waits for player
2's action while player 1's is `pending`. `root_node` and `child` step
through the game; `node_at` follows an action sequence from the root;
`public_observer` gives the original game's public-only observer, which
names the public state a history lies in. `pvf.games.public_tree`
enumerates the whole game with them, `pvf.games.particle_tree` the subgame
below a set of histories, and `pvf.games.history_sampling` samples
histories by a strategy; no other package steps OpenSpiel states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyspiel

from pvf.games.loading import LoadedGame


@dataclass(eq=False)
class Node:
    """One history: the sequential game's state and the original game's."""

    state: pyspiel.State  # state of the sequential (turn-based) game
    original: pyspiel.State  # state of the original game (the same object if sequential)
    pending: int  # player 1's bid waiting for player 2 in a simultaneous round, else -1


def root_node(loaded: LoadedGame) -> Node:
    state = loaded.sequential.new_initial_state()
    original = loaded.original.new_initial_state() if loaded.simultaneous else state
    return Node(state, original, -1)


def child(node: Node, action: int, simultaneous: bool) -> Node:
    state = node.state.child(action)
    if not simultaneous:
        return Node(state, state, -1)
    orig = node.original
    if orig.is_chance_node():
        return Node(state, orig.child(action), -1)
    if node.pending < 0:  # player 1 bid; the original state waits for player 2
        return Node(state, orig, action)
    nxt = orig.clone()
    nxt.apply_actions([node.pending, action])
    return Node(state, nxt, -1)


def public_observer(loaded: LoadedGame):
    """A perfect-recall public-only observer of the original game, or None."""
    from open_spiel.python.observation import make_observation

    try:
        obs = make_observation(
            loaded.original,
            pyspiel.IIGObservationType(
                perfect_recall=True, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
            ),
        )
        obs.string_from(loaded.original.new_initial_state(), 0)
        return obs
    except Exception:  # the game offers no such observer
        return None


def node_at(loaded: LoadedGame, actions: Sequence[int]) -> Node:
    """The history reached from the root by `actions` (sequential-game actions, chance's included)."""
    node = root_node(loaded)
    for a in actions:
        node = child(node, a, loaded.simultaneous)
    return node
