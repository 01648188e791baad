"""Particle subgames: the public tree of K histories only, never the whole game.

A particle is a history given as its action sequence in the sequential
(turn-based) game, as `history_actions` writes it. `build_particle_tree`:
  1. Replays every particle from the initial state, checking each action is
     legal (a chance outcome at chance nodes); the chance probability of
     each edge is read from the state's `chance_outcomes()`, so chance reach
     is the game's own along the particle's path.
  2. Walks the whole subtree below each particle, to the end of the game or,
     with a depth limit d, down to the first histories at move number ≥ d
     (which stay as childless leaves, as `build_sequence_game` cuts them).
  3. Numbers the union of the particles' paths and subtrees depth first
     (children in action order), so parents precede children, and streams
     the records to `tree_from_records` (only the current path's OpenSpiel
     states are alive): public states come from the public observer
     (keyed by level and public observation, as in the full tree),
     augmented infostates from the information-state strings.
The result is a `PublicTree`, so `build_sequence_game(tree, root_histories=
find_histories(tree, particles), root_weights=w)`, CFR+, best responses,
the trunk solver, the exploitability LP and `build_feature_tables` run on
it unchanged. It holds exactly the infostates the particles induce: a
public state's infostates are those with at least one particle history
below (or at) it, and the root belief of an infostate at a chance-node
root is the sum of its particles' weights (the paper, sec. 5.1). Where the
game can be enumerated, the sequence form over the particles is the full
tree's over the same root histories, up to the order of sequences.

Games without a perfect-recall public observer are refused: without one,
public states could only be found by closing over the infostates of the
whole game, which is what particles avoid.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from pvf.errors import PvfError, TooManyHistories
from pvf.games.loading import LoadedGame, load_game
from pvf.games.public_tree import (
    DEFAULT_MAX_HISTORIES,
    PublicTree,
    tree_from_records,
)
from pvf.games.walk import Node, child, public_observer, root_node


def build_particle_tree(
    game: str | LoadedGame,
    histories: Sequence[Sequence[int]],
    depth_limit: int | None = None,
    max_histories: int = DEFAULT_MAX_HISTORIES,
) -> PublicTree:
    """The PublicTree of the particles' paths and the subgame below them (module docstring).

    histories: K distinct non-terminal histories, each a list of sequential-game actions.
    depth_limit: move number d of the original game where the subgame stops (None: the end).
    max_histories: refuse (PvfError) a subgame with more histories than this.
    """
    loaded = game if isinstance(game, LoadedGame) else load_game(game)
    observer = public_observer(loaded)
    if observer is None:
        raise PvfError(f"{loaded.game_string} has no public observer; particle subgames need one to name public states")
    if len(histories) == 0:
        raise PvfError("a particle subgame needs at least one particle history")
    paths = [tuple(int(a) for a in h) for h in histories]
    if len(set(paths)) != len(paths):
        raise PvfError("particle histories must be distinct")
    particles = set(paths)
    toward: dict[tuple[int, ...], set[int]] = {}
    for path in paths:
        for k in range(len(path)):
            toward.setdefault(path[:k], set()).add(path[k])
    records = _walk(loaded, particles, toward, depth_limit, max_histories)
    return tree_from_records(loaded, records, observer)


def _walk(
    loaded: LoadedGame,
    particles: set[tuple[int, ...]],
    toward: dict[tuple[int, ...], set[int]],
    depth_limit: int | None,
    max_histories: int,
) -> Iterator[tuple[int, int, Node, float]]:
    """(parent, action, node, chance_prob) depth first, children in action order (steps 1–2).

    Only the states on the current path are alive, so memory does not grow
    with the subgame. Above the particles a node has the children leading to
    particles; at and below a particle, all of them (down to the depth limit).
    """
    stack: list[tuple[int, int, tuple[int, ...], Node, float, bool]] = [
        (-1, -1, (), root_node(loaded), 1.0, () in particles)
    ]
    count = 0
    while stack:
        parent, action, path, node, prob, below = stack.pop()
        yield parent, action, node, prob
        me = count
        count += 1
        if count > max_histories:
            raise TooManyHistories(
                f"the particle subgame of {loaded.game_string} has more than {max_histories:,} histories; "
                f"choose a later depth or fewer particles"
            )
        state = node.state
        if path in particles:
            if state.is_terminal():
                raise PvfError(
                    f"particle {list(path)} is a terminal history of {loaded.game_string}; particles must be "
                    "non-terminal"
                )
            if depth_limit is not None and node.original.move_number() >= depth_limit:
                raise PvfError(
                    f"particle {list(path)} is at move {node.original.move_number()}, not above the depth "
                    f"limit {depth_limit}"
                )
        children: list[tuple[int, float]] = []
        if below:
            stop = depth_limit is not None and path not in particles and node.original.move_number() >= depth_limit
            if not state.is_terminal() and not stop:
                children = (
                    state.chance_outcomes() if state.is_chance_node() else [(a, 1.0) for a in state.legal_actions()]
                )
        if path in toward:  # particles lie below: the edges toward them (all of them when below a particle already)
            known = {a for a, _ in children}
            children += [
                (a, _edge_probability(node, a, loaded.game_string, path))
                for a in sorted(toward[path])
                if a not in known
            ]
        for a, p in sorted(children, reverse=True):
            child_path = path + (a,)
            stack.append(
                (me, a, child_path, child(node, a, loaded.simultaneous), float(p), below or child_path in particles)
            )


def _edge_probability(node: Node, action: int, game_string: str, path: tuple[int, ...]) -> float:
    """Chance probability of `action` at `node` (1 at a player's node); PvfError if it is not playable."""
    state = node.state
    path = path + (action,)
    if state.is_terminal():
        raise PvfError(f"particle {list(path)} continues past a terminal history of {game_string}")
    if state.is_chance_node():
        prob = dict(state.chance_outcomes()).get(action, 0.0)
        if prob <= 0.0:
            raise PvfError(f"particle {list(path)}: {action} is not a chance outcome of {game_string} there")
        return float(prob)
    if action not in state.legal_actions():
        raise PvfError(f"particle {list(path)}: {action} is not a legal action of {game_string} there")
    return 1.0


def history_actions(tree: PublicTree, history: int) -> list[int]:
    """The sequential-game action sequence of a tree history (a particle as this module takes it)."""
    path = []
    h = int(history)
    while tree.parent[h] >= 0:
        path.append(int(tree.action[h]))
        h = int(tree.parent[h])
    return path[::-1]


def history_paths(tree: PublicTree, histories: np.ndarray) -> np.ndarray:
    """[k, L] the action sequences of k tree histories of one level L (`history_actions` of each)."""
    h = np.asarray(histories, dtype=np.int64)
    if len(h) == 0:
        return np.zeros((0, 0), dtype=np.int64)
    levels = tree.level[h]
    if np.any(levels != levels[0]):
        raise PvfError("history_paths takes histories of one level")
    out = np.empty((len(h), int(levels[0])), dtype=np.int64)
    for col in range(out.shape[1] - 1, -1, -1):
        out[:, col] = tree.action[h]
        h = tree.parent[h]
    return out


def padded_paths(histories: Sequence[Sequence[int]] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([K, L] int64 action sequences padded with -1, [K] their lengths) of K histories."""
    if isinstance(histories, np.ndarray) and histories.ndim == 2:
        return histories.astype(np.int64, copy=False), np.full(len(histories), histories.shape[1], dtype=np.int64)
    rows = [np.asarray(h, dtype=np.int64).ravel() for h in histories]
    lengths = np.array([len(h) for h in rows], dtype=np.int64)
    paths = np.full((len(rows), int(lengths.max()) if len(rows) else 0), -1, dtype=np.int64)
    for k, h in enumerate(rows):
        paths[k, : len(h)] = h
    return paths, lengths


def find_histories(tree: PublicTree, histories: Sequence[Sequence[int]] | np.ndarray) -> np.ndarray:
    """[K] tree indices of histories given as action sequences; PvfError for one the tree lacks.

    One child lookup per level for all K at once (`PublicTree.children`)."""
    paths, lengths = padded_paths(histories)
    out = np.zeros(len(paths), dtype=np.int64)
    missing = np.zeros(len(paths), dtype=bool)
    for col in range(paths.shape[1]):
        active = np.flatnonzero((col < lengths) & ~missing)
        step = tree.children(out[active], paths[active, col])
        missing[active[step < 0]] = True
        out[active] = np.maximum(step, 0)
    if missing.any():
        k = int(np.argmax(missing))
        raise PvfError(f"history {[int(a) for a in paths[k, : lengths[k]]]} is not in this tree of {tree.game_string}")
    return out
