"""Batched CFR+ in sequence form, on a full game, a subgame or a depth-limited trunk.

Variant (Tammelin 2014, as in OpenSpiel's CFRPlusSolver): regret matching+,
alternating updates, linear averaging. One iteration t = 1, 2, ...:
  1. Player 1's strategy is regret matching+ on its clipped regrets; its
     realization plan x goes top-down, one gather per level.
  2. Player 1's immediate sequence values are A·y plus the leaf evaluator's
     counterfactual values scattered into their parent sequences; they are
     propagated bottom-up (one `reduceat` per level) while the regrets take
     q(I,a) − v(I) and are clipped at zero. x is added to the average
     realization plan with weight t.
  3. The same for player 2 against player 1's *updated* strategy, with
     values −Aᵀ·x.
Infostates frozen to a given strategy keep it. The average strategy is the
behaviour strategy of the weighted average realization plan.

Everything carries a batch dimension B: B pairs of root beliefs over the
same (sub)game are solved at once, and a depth-limited trunk queries its
leaf evaluator for all leaf public states and all B problems in one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.sequence_form import SequenceGame
from pvf.solvers.sequence_ops import (
    behaviour_from_realization,
    expected_values,
    realization_plan,
    regret_matching_plus,
    uniform_strategy,
)


class LeafEvaluator(Protocol):
    """Counterfactual values at a trunk's leaves.

    reach1: [B, J1] player 1's reach of each leaf infostate (the tree's per
        public state enumeration, concatenated over `game.leaf_public_states`).
    reach2: [B, J2] likewise for player 2.
    Returns (cfv1 [B, J1], cfv2 [B, J2]) in docs/architecture.md's convention (chance
    and opponent reach included, own reach excluded).
    """

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class Frozen:
    """Infostates of one player held to a fixed strategy.

    mask: [I] True where the decision infostate is frozen.
    strategy: [S] or [B, S] behaviour probabilities (read only where frozen).
    """

    mask: np.ndarray
    strategy: np.ndarray


@dataclass(frozen=True)
class CFRResult:
    """The outcome of `cfr_plus`.

    average_strategy: per player [B, S_n] behaviour strategy of the average profile.
    average_realization: per player [B, S_n] its realization plan (root rows = beliefs).
    root_values: per player [B, R_n] counterfactual values of the root
        infostates under the average profile.
    current_root_values: per player [B, R_n] the same under the last iterate.
    value: [B] player 1's expected utility of the average profile.
    iterations: number of iterations run.
    current_strategy: per player [B, S_n] behaviour strategy of the last iterate.
    (`pvf.solvers.mmd` returns this type with the last iterate in every field.)
    """

    average_strategy: tuple[np.ndarray, np.ndarray]
    average_realization: tuple[np.ndarray, np.ndarray]
    root_values: tuple[np.ndarray, np.ndarray]
    current_root_values: tuple[np.ndarray, np.ndarray]
    value: np.ndarray
    iterations: int
    current_strategy: tuple[np.ndarray, np.ndarray]

    @classmethod
    def from_columns(
        cls,
        average: Sequence[np.ndarray],
        realization: Sequence[np.ndarray],
        current: Sequence[np.ndarray],
        root_values: tuple[np.ndarray, np.ndarray],
        current_root_values: tuple[np.ndarray, np.ndarray],
        value: np.ndarray,
        iterations: int,
    ) -> CFRResult:
        """The result from the solvers' working layout: strategies and realizations per player [S_n, B]."""
        return cls(
            average_strategy=_rows(average),
            average_realization=_rows(realization),
            root_values=root_values,
            current_root_values=current_root_values,
            value=value,
            iterations=iterations,
            current_strategy=_rows(current),
        )


def _rows(per_player: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """[S_n, B] per player as fresh [B, S_n] arrays."""
    return per_player[0].T.copy(), per_player[1].T.copy()


def check_beliefs(game: SequenceGame, root_beliefs: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """Validate root beliefs and return them as [R_n, B] arrays."""
    if root_beliefs is None:
        return tuple(np.ones((p.num_roots, 1)) for p in game.players)  # type: ignore[return-value]
    out = []
    batch = None
    for n, b in enumerate(root_beliefs):
        b = np.atleast_2d(np.asarray(b, dtype=np.float64))
        R = game.players[n].num_roots
        if b.shape[1] != R:
            raise PvfError(f"player {n + 1} beliefs have {b.shape[1]} entries; the root public state has {R} infostates")
        if not np.all(np.isfinite(b)):
            raise PvfError(f"player {n + 1} beliefs contain NaN or infinite values; pass finite reach probabilities")
        if np.any(b < 0):
            raise PvfError(f"player {n + 1} beliefs contain negative values; reach probabilities are non-negative")
        if batch is not None and b.shape[0] != batch:
            raise PvfError(f"belief batches differ in size ({batch} vs {b.shape[0]})")
        batch = b.shape[0]
        out.append(np.ascontiguousarray(b.T))
    return out[0], out[1]


def _frozen_rows(game: SequenceGame, n: int, frozen: Frozen | None, batch: int):
    """(row indices [K], fixed strategy [K, B]) of frozen sequences, or None."""
    if frozen is None or not np.any(frozen.mask):
        return None
    seqs = game.players[n]
    R = seqs.num_roots
    rows = R + np.flatnonzero(np.asarray(frozen.mask)[seqs.seq_info[R:]])
    strat = np.asarray(frozen.strategy, dtype=np.float64)
    fixed = strat[rows][:, None] * np.ones((1, batch)) if strat.ndim == 1 else strat[:, rows].T.copy()
    return rows, fixed


class _Leaves:
    """Leaf queries of a trunk: gathers leaf reaches, scatters leaf values."""

    def __init__(self, game: SequenceGame, evaluator: LeafEvaluator | None):
        if game.has_leaves and evaluator is None:
            raise PvfError("this trunk is depth-limited; pass a leaf evaluator (network, oracle or constant)")
        self.game = game
        self.evaluator = evaluator if game.has_leaves else None

    def values(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Leaf cfvs scattered into parent sequences: ([S1, B], [S2, B]), or None without leaves."""
        if self.evaluator is None:
            return None
        g = self.game
        r1 = np.where(g.leaf_parent[0][:, None] >= 0, x[g.leaf_parent[0]], 0.0).T
        r2 = np.where(g.leaf_parent[1][:, None] >= 0, y[g.leaf_parent[1]], 0.0).T
        v1, v2 = self.evaluator(np.ascontiguousarray(r1), np.ascontiguousarray(r2))
        return g.leaf_matrix[0] @ np.asarray(v1).T, g.leaf_matrix[1] @ np.asarray(v2).T


def cfr_plus(
    game: SequenceGame,
    iterations: int,
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
    frozen: tuple[Frozen | None, Frozen | None] = (None, None),
    leaf_evaluator: LeafEvaluator | None = None,
    callback: Callable[[int], None] | None = None,
) -> CFRResult:
    """Run `iterations` of CFR+ on `game` for a batch of root beliefs.

    root_beliefs: (b1 [B, R1], b2 [B, R2]) reaches of the root infostates in the
        root public state's enumeration; None for the full game (R = 1, B = 1).
    frozen: per player, infostates held to a fixed strategy.
    leaf_evaluator: required when the game is depth-limited.
    callback: called with the iteration number after each iteration.
    """
    if iterations < 1:
        raise PvfError(f"iterations must be at least 1, got {iterations}")
    b1, b2 = check_beliefs(game, root_beliefs)
    B = b1.shape[1]
    p1, p2 = game.players
    leaves = _Leaves(game, leaf_evaluator)
    fixed = [_frozen_rows(game, n, frozen[n], B) for n in (0, 1)]
    regrets = [np.zeros((p.num_sequences, B)) for p in game.players]
    avg = [np.zeros((p.num_sequences, B)) for p in game.players]
    strat = [_apply_frozen(uniform_strategy(p, B), f) for p, f in zip(game.players, fixed)]
    x = realization_plan(p1, strat[0], b1)
    y = realization_plan(p2, strat[1], b2)
    for t in range(1, iterations + 1):
        # Player 1 against the current y.
        leaf = leaves.values(x, y)
        q1 = game.payoff @ y
        if leaf is not None:
            q1 += leaf[0]
        expected_values(p1, strat[0], q1, regrets[0])
        avg[0] += t * x
        strat[0] = _apply_frozen(regret_matching_plus(p1, regrets[0]), fixed[0])
        x = realization_plan(p1, strat[0], b1)
        # Player 2 against the updated x.
        leaf = leaves.values(x, y)
        q2 = -(game.payoff_t @ x)
        if leaf is not None:
            q2 += leaf[1]
        expected_values(p2, strat[1], q2, regrets[1])
        avg[1] += t * y
        strat[1] = _apply_frozen(regret_matching_plus(p2, regrets[1]), fixed[1])
        y = realization_plan(p2, strat[1], b2)
        if callback is not None:
            callback(t)
    norm = iterations * (iterations + 1) / 2.0
    avg_x, avg_y = avg[0] / norm, avg[1] / norm
    avg_strat = [behaviour_from_realization(p, a) for p, a in zip(game.players, (avg_x, avg_y))]
    # Frozen infostates may be unreached: report their fixed strategy, not uniform.
    avg_strat = [_apply_frozen(s, f) for s, f in zip(avg_strat, fixed)]
    root_avg, value = profile_root_values(game, avg_strat, (b1, b2), leaves)
    root_cur, _ = profile_root_values(game, strat, (b1, b2), leaves)
    return CFRResult.from_columns(avg_strat, (avg_x, avg_y), strat, root_avg, root_cur, value, iterations)


def _apply_frozen(strat: np.ndarray, fixed) -> np.ndarray:
    if fixed is not None:
        rows, values = fixed
        strat[rows] = values
    return strat


def profile_root_values(
    game: SequenceGame,
    strategies: list[np.ndarray] | tuple[np.ndarray, np.ndarray],
    beliefs: tuple[np.ndarray, np.ndarray],
    leaves: _Leaves | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Root counterfactual values and player-1 value of a behaviour profile.

    strategies: per player [S_n, B]; beliefs: per player [R_n, B].
    Returns ((cfv1 [B, R1], cfv2 [B, R2]), value [B]).
    """
    p1, p2 = game.players
    x = realization_plan(p1, strategies[0], beliefs[0])
    y = realization_plan(p2, strategies[1], beliefs[1])
    q1 = game.payoff @ y
    q2 = -(game.payoff_t @ x)
    leaf = leaves.values(x, y) if leaves is not None else None
    if leaf is not None:
        q1 += leaf[0]
        q2 += leaf[1]
    expected_values(p1, strategies[0], q1)
    expected_values(p2, strategies[1], q2)
    cfv1 = q1[: p1.num_roots]
    cfv2 = q2[: p2.num_roots]
    value = np.sum(beliefs[0] * cfv1, axis=0)
    return (cfv1.T.copy(), cfv2.T.copy()), value
