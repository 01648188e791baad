"""What every solver shares: the leaf-evaluator callback, frozen infostates, the result type, leaf queries.

`cfr_plus` and `mmd` (and any solver `pvf.solvers.registry` names) take a
`SequenceGame`, root beliefs, per-player `Frozen` infostates and a
`LeafEvaluator` for depth-limited games, and return a `SolverResult`.
`LeafQueries` gathers a trunk's leaf reaches from the realization plans and
scatters the evaluator's values into the parent sequences; `check_beliefs`
validates root beliefs; `profile_root_values` values any behaviour profile
at the roots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.sequence_form import SequenceGame
from pvf.solvers.sequence_ops import expected_values, realization_plan


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
class SolverResult:
    """The outcome of a solver (`cfr_plus`, `mmd`): per player, strategies and root values.

    average_strategy: per player [B, S_n] behaviour strategy of the average profile.
    average_realization: per player [B, S_n] its realization plan (root rows = beliefs).
    root_values: per player [B, R_n] counterfactual values of the root
        infostates under the average profile.
    current_root_values: per player [B, R_n] the same under the last iterate.
    value: [B] player 1's expected utility of the average profile.
    iterations: number of iterations run.
    current_strategy: per player [B, S_n] behaviour strategy of the last iterate.
    (`pvf.solvers.mmd` returns this type with the last iterate in every field: its solution is its last iterate.)
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
    ) -> SolverResult:
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


def check_beliefs(
    game: SequenceGame, root_beliefs: tuple[np.ndarray, np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Validate root beliefs and return them as [R_n, B] arrays."""
    if root_beliefs is None:
        return tuple(np.ones((p.num_roots, 1)) for p in game.players)  # type: ignore[return-value]
    out = []
    batch = None
    for n, b in enumerate(root_beliefs):
        b = np.atleast_2d(np.asarray(b, dtype=np.float64))
        R = game.players[n].num_roots
        if b.shape[1] != R:
            raise PvfError(
                f"player {n + 1} beliefs have {b.shape[1]} entries; the root public state has {R} infostates"
            )
        if not np.all(np.isfinite(b)):
            raise PvfError(f"player {n + 1} beliefs contain NaN or infinite values; pass finite reach probabilities")
        if np.any(b < 0):
            raise PvfError(f"player {n + 1} beliefs contain negative values; reach probabilities are non-negative")
        if batch is not None and b.shape[0] != batch:
            raise PvfError(f"belief batches differ in size ({batch} vs {b.shape[0]})")
        batch = b.shape[0]
        out.append(np.ascontiguousarray(b.T))
    return out[0], out[1]


class LeafQueries:
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


def profile_root_values(
    game: SequenceGame,
    strategies: list[np.ndarray] | tuple[np.ndarray, np.ndarray],
    beliefs: tuple[np.ndarray, np.ndarray],
    leaves: LeafQueries | None = None,
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


class Solver(Protocol):
    """A solver with `cfr_plus`'s call signature (`pvf.solvers.registry`)."""

    def __call__(
        self,
        game: SequenceGame,
        iterations: int,
        root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
        frozen: tuple[Frozen | None, Frozen | None] = (None, None),
        leaf_evaluator: LeafEvaluator | None = None,
        callback: Callable[[int], None] | None = None,
    ) -> SolverResult: ...
