"""The value of uniform random play from given histories: a leaf evaluator that needs no training.

Below a depth limit both players bid uniformly at random until the end of
the game. In Goofspiel a uniformly random play of the m cards left in a
hand is a uniformly random permutation of them over the m rounds left, the
two players' independent, so player 1's expected return from a history at
a round's start is E[u₁] over pairs of permutations:
  - `draws=None`: exactly, over all (m!)² pairs (small m only: tests and
    small games);
  - `draws=R`: the mean over R pairs drawn from `rng` (standard error at
    most 1/√R for win-loss returns), all histories at once as arrays
    `[H, R, m]`: a permutation is the argsort of uniform keys.
The agent's "rollout" leaves (`pvf.agents.spec`) value each leaf history
of its trunk this way; `pvf.solvers.evaluators.HistoryValueEvaluator` turns
the values into counterfactual values at the leaf infostates.
"""

from __future__ import annotations

import itertools

import numpy as np

from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import GoofspielRules, replay
from pvf.games.public_tree import PublicTree

EXACT_CARDS = 6  # exact values enumerate (m!)² bid orders: at most 518,400 per history


def history_paths(tree: PublicTree, histories: np.ndarray) -> np.ndarray:
    """[H, L] the action paths from the tree's root of `histories` [H], all at one level L."""
    histories = np.asarray(histories, dtype=np.int64)
    levels = np.unique(tree.level[histories])
    if len(levels) > 1:
        raise PvfError(f"histories at several levels ({levels.tolist()}) have no common path length")
    length = int(levels[0]) if len(levels) else 0
    paths = np.empty((len(histories), length), dtype=np.int64)
    h = histories.copy()
    for column in range(length - 1, -1, -1):
        paths[:, column] = tree.action[h]
        h = tree.parent[h]
    return paths


def uniform_play_values(
    rules: GoofspielRules, paths: np.ndarray, draws: int | None, rng: np.random.Generator | None = None
) -> np.ndarray:
    """[H] player 1's expected return (zero-sum: (r₁ − r₂)/2) of uniform random play from each path [H, L].

    paths: turn-based action paths, all at one round's start (L even, below 2·rounds).
    draws: bid orders drawn per history, or None for the exact expectation (at most `EXACT_CARDS` cards left).
    """
    paths = np.asarray(paths, dtype=np.int64).reshape(len(paths), -1)
    length = paths.shape[1]
    if length % 2 or length >= 2 * rules.rounds:
        raise PvfError(
            f"uniform-play values start at a round's start before the last round, not after {length} actions"
        )
    m = rules.num_cards - length // 2
    if draws is None and m > EXACT_CARDS:
        raise PvfError(f"exact uniform-play values enumerate ({m}!)² bid orders; give a number of draws instead")
    if draws is not None and (draws < 1 or rng is None):
        raise PvfError("sampled uniform-play values need at least one draw and a generator")
    hands = np.empty((2, len(paths), m), dtype=np.int64)
    points = np.empty((2, len(paths)), dtype=np.int64)
    for k, path in enumerate(paths.tolist()):
        state = replay(rules, path)
        for n in (0, 1):
            hands[n, k] = state.hand(n, rules.num_cards)
            points[n, k] = state.points[n]
    worth = rules.point_values[length // 2 :]  # [m] the rounds left
    if draws is None:
        orders = np.array(list(itertools.permutations(range(m))), dtype=np.int64)  # [m!, m]
        first = np.repeat(orders, len(orders), axis=0)[None]  # [1, m!², m]
        second = np.tile(orders, (len(orders), 1))[None]
        orders0 = np.broadcast_to(first, (len(paths), *first.shape[1:]))
        orders1 = np.broadcast_to(second, (len(paths), *second.shape[1:]))
    else:
        orders0 = np.argsort(rng.random((len(paths), draws, m)), axis=2)
        orders1 = np.argsort(rng.random((len(paths), draws, m)), axis=2)
    bids0 = np.take_along_axis(hands[0][:, None, :], orders0, axis=2)  # [H, R, m]
    bids1 = np.take_along_axis(hands[1][:, None, :], orders1, axis=2)
    gained0 = points[0][:, None] + ((bids0 > bids1) * worth).sum(axis=2)
    gained1 = points[1][:, None] + ((bids1 > bids0) * worth).sum(axis=2)
    if rules.returns == "win_loss":
        r0 = np.sign(gained0 - gained1).astype(np.float64)
    else:
        r0 = (gained0 - gained1) / 2.0  # r₀ = p₀ − (p₀ + p₁)/2
    return r0.mean(axis=1)
