"""Leaf evaluators of a trunk: counterfactual values of the leaf infostates from their reaches.

Every evaluator implements `pvf.solvers.interface.LeafEvaluator`:
`evaluator(reach1 [B, J1], reach2 [B, J2]) -> (cfv1 [B, J1], cfv2 [B, J2])`
over all leaf public states of the trunk at once (the tree's enumeration
per leaf public state, concatenated). Values are counterfactual values
(docs/architecture.md): chance and opponent reach included, own reach excluded, in the trunk payoff's scale.

- `ConstantEvaluator`: the same value (default 0) everywhere; the baseline
  a value function has to beat.
- `MeanEvaluator`: the mean of several evaluators' values (e.g. networks
  trained with different seeds: the trunk solve exploits each one's own
  errors, and the mean has less of them where the errors are independent);
  `mean_of` gives one evaluator itself and several their mean.
- `ExactEvaluator`: the oracle. The leaf subgames are solved exactly at the
  queried beliefs, all at once:
    1. At construction, one sequence game is built over all leaf histories,
       rooted at a chance node whose weights are the histories' weights in
       the trunk (chance reach, times the root's weight for sparse trunks).
       Leaf public states share no infostate, so this game is the disjoint
       union of the leaf subgames; its root sequences are the leaf
       infostates that have a history in the trunk.
    2. Per query, the leaf reaches become its root beliefs and one
       sequence-form LP (`pvf.solvers.maximin_lp`, HiGHS) gives player 1's maximin realization plan
       x*; its dual multipliers are player 2's minimax plan y*.
    3. Player 1's values are its best-response counterfactual values
       against y*, player 2's against x*. They are the equilibrium values
       wherever a belief is positive (then Σ b₁·v₁ + Σ b₂·v₂ = 0), and the
       value of the best continuation where a player's own reach is zero,
       which is what that player's trunk regrets need.
  This is exact (no iteration count to tune) and cheaper than running
  CFR+ to convergence in every query: about 60 ms for all 54 leaf public
  states of the Leduc depth-7 trunk, so 100 trunk iterations take ~12 s.
- `CFRTargetEvaluator`: the same leaf game solved the way the dataset's
  targets are made (batched CFR+, average profile / last iterate / best
  responses, guarded where a belief is zero, `pvf.solvers.guarded_values`):
  how well a network that learned its targets perfectly would do
  (`pvf experiment leaf-targets`).
- `HistoryValueEvaluator`: a fixed player-1 value u(h) per leaf history
  (e.g. of uniform random play from h, `pvf.games.rollouts`), whatever the
  beliefs: cfv₁(s₁) = Σ_{h∈s₁} w(h)·ρ₂(h)·u(h) and cfv₂(s₂) =
  −Σ_{h∈s₂} w(h)·ρ₁(h)·u(h), with w(h) the history's weight in the trunk.
  Two sparse products per query; no subgame below the leaves is needed,
  so it runs on trunks whose tree stops at the depth limit.
- `RecordingEvaluator`: any evaluator, with every query's reaches and
  answers kept (the beliefs a trunk solve asks about).
A trained network is a leaf evaluator too, built outside this numpy-only
package: `pvf.valuefn.evaluator.NetworkEvaluator`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from pvf.errors import PvfError
from pvf.solvers.best_response import best_response_root_values
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.guarded_values import (
    DEFAULT_GUARD,
    RESPONSE_KINDS,
    RESPONSE_TARGETS,
    TARGETS,
    ResponseKind,
    best_response_targets,
)
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.leaf_subgames import LeafSubgames
from pvf.solvers.maximin_lp import MaximinLP
from pvf.solvers.positions import Positions
from pvf.solvers.trunk_solver import Trunk


class ConstantEvaluator:
    """Every leaf infostate valued `value` (default 0)."""

    def __init__(self, value: float = 0.0):
        self.value = float(value)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full_like(reach1, self.value), np.full_like(reach2, self.value)


class MeanEvaluator:
    """The mean of `evaluators`' values, infostate by infostate."""

    def __init__(self, evaluators: list):
        if not evaluators:
            raise PvfError("the mean of no leaf evaluators is undefined; give at least one")
        self.evaluators = list(evaluators)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values = [e(reach1, reach2) for e in self.evaluators]
        return np.mean([v[0] for v in values], axis=0), np.mean([v[1] for v in values], axis=0)


def mean_of(evaluators: list[LeafEvaluator]) -> LeafEvaluator:
    """One evaluator itself, or the mean of several (`MeanEvaluator`: an ensemble at the leaves)."""
    return evaluators[0] if len(evaluators) == 1 else MeanEvaluator(evaluators)


def _leaf_subgames(trunk: Trunk) -> LeafSubgames:
    """The trunk's leaf subgames, columns in the trunk's leaf-infostate order."""
    game = trunk.game
    if not game.has_leaves:
        raise PvfError("this trunk reaches the end of the game: it has no leaves to evaluate")
    leaves = trunk.leaf_histories()
    return LeafSubgames(trunk.tree, leaves, trunk.history_weights(leaves), game.leaf_infostates)


class ExactEvaluator:
    """The oracle: leaf subgames solved exactly, by one LP per query and problem."""

    def __init__(self, trunk: Trunk, leaves: LeafSubgames | None = None):
        """leaves: the subgames to solve, columns in the trunk's leaf-infostate order (default: the trunk's own)."""
        self.leaves = _leaf_subgames(trunk) if leaves is None else leaves
        self.lp = MaximinLP(self.leaves.game, 0)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b1, b2 = self.leaves.root_beliefs(reach1, reach2)
        plans = [self.lp.solve(b1[b], b2[b]) for b in range(b1.shape[0])]
        x = np.stack([p[1] for p in plans], axis=1)  # [S1, B]
        y = np.stack([p[2] for p in plans], axis=1)  # [S2, B]
        return self.leaves.scatter(*best_response_root_values(self.leaves.game, x, y))


class CFRTargetEvaluator:
    """The leaf subgames solved as the dataset's targets are: CFR+ from the queried beliefs.

    All problems of a query in one batched `cfr_plus` call of `iterations`
    iterations; `target` picks the values: "average" (the average profile,
    pvf's first training target), "current" (the last iterate, the authors'),
    "best_response" (each player's best response to the other's average,
    to its guarded average where the player's belief is zero,
    `pvf.solvers.guarded_values`; `guard` 0: to the plain average everywhere;
    `kind`: another `ResponseKind`, e.g. one mixture of the two averages
    everywhere), or another name of `RESPONSE_TARGETS` ("best_response"
    with that kind, as a dataset stores it).
    A perfect network trained on that target would play like this evaluator.
    """

    def __init__(
        self,
        trunk: Trunk,
        iterations: int = 100,
        target: str = "average",
        leaves: LeafSubgames | None = None,
        guard: float = DEFAULT_GUARD,
        leaf_evaluator: LeafEvaluator | None = None,
        kind: ResponseKind | None = None,
    ):
        """leaves: the subgames to solve, columns in the trunk's leaf-infostate order (default: the trunk's own);
        leaf_evaluator: where they are depth-limited (`LeafSubgames.trunk`), what values their own leaves;
        kind: with "best_response", what the best responses answer (default the entry-wise guard)."""
        if target not in TARGETS:
            raise PvfError(f"unknown target {target!r}; use one of {', '.join(TARGETS)}")
        if target in RESPONSE_TARGETS and target != "best_response":  # a stored kind: its options are fixed
            if kind is not None:
                raise PvfError(f"the {target!r} target fixes its kind; pass a kind with 'best_response'")
            target, kind = "best_response", RESPONSE_KINDS[RESPONSE_TARGETS[target]]
        self.leaves = _leaf_subgames(trunk) if leaves is None else leaves
        self.iterations = iterations
        self.target = target
        self.guard = guard
        self.leaf_evaluator = leaf_evaluator
        self.kind = RESPONSE_KINDS["guarded"] if kind is None else kind

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        beliefs = self.leaves.root_beliefs(reach1, reach2)
        game, groups = self.leaves.game, self.leaves.root_public_states
        if self.target == "best_response":
            values = best_response_targets(
                game,
                cfr_plus,
                self.iterations,
                beliefs,
                groups,
                self.guard,
                leaf_evaluator=self.leaf_evaluator,
                kind=self.kind,
            )
            return self.leaves.scatter(*values)
        result = cfr_plus(game, self.iterations, root_beliefs=beliefs, leaf_evaluator=self.leaf_evaluator)
        values = result.root_values if self.target == "average" else result.current_root_values
        return self.leaves.scatter(*values)


class HistoryValueEvaluator:
    """Counterfactual leaf values from a fixed player-1 value per leaf history (module docstring).

    values: [H_L] player 1's (zero-sum) value of each of `trunk.leaf_histories()`.
    """

    def __init__(self, trunk: Trunk, values: np.ndarray):
        game, tree = trunk.game, trunk.tree
        if not game.has_leaves:
            raise PvfError("this trunk reaches the end of the game: it has no leaves to evaluate")
        leaves = trunk.leaf_histories()
        values = np.asarray(values, dtype=np.float64)
        if values.shape != leaves.shape:
            raise PvfError(f"{len(leaves)} leaf histories need as many values, got shape {values.shape}")
        columns = []
        for n in (0, 1):
            columns.append(Positions(game.leaf_infostates[n])(tree.infostate[leaves, n]))
        shape = (len(game.leaf_infostates[0]), len(game.leaf_infostates[1]))
        self.payoff = sp.csr_matrix((trunk.history_weights(leaves) * values, (columns[0], columns[1])), shape=shape)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cfv1 = np.asarray(self.payoff @ reach2.T).T  # [B, J1]
        cfv2 = -np.asarray(self.payoff.T @ reach1.T).T  # [B, J2]
        return cfv1, cfv2


class RecordingEvaluator:
    """A leaf evaluator that answers as `inner` does and keeps every query's reaches and answers."""

    def __init__(self, inner: LeafEvaluator) -> None:
        self.inner = inner
        self.queries: list[tuple[np.ndarray, ...]] = []  # (reach1, reach2, cfv1, cfv2) per query

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cfv1, cfv2 = self.inner(reach1, reach2)
        self.queries.append((reach1.copy(), reach2.copy(), cfv1.copy(), cfv2.copy()))
        return cfv1, cfv2

    def stacked(self, column: int) -> np.ndarray:
        """Column 0-3 of every query stacked: reach1 [Q, J1], reach2 [Q, J2], cfv1 [Q, J1] or cfv2 [Q, J2]."""
        return np.concatenate([q[column] for q in self.queries])
