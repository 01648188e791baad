"""Leaf evaluators of a trunk: counterfactual values of the leaf infostates from their reaches.

Every evaluator implements `pvf.solvers.cfr_plus.LeafEvaluator`:
`evaluator(reach1 [B, J1], reach2 [B, J2]) -> (cfv1 [B, J1], cfv2 [B, J2])`
over all leaf public states of the trunk at once (the tree's enumeration
per leaf public state, concatenated). Values are counterfactual values
(docs/architecture.md): chance and opponent reach included, own reach excluded, in the trunk payoff's scale.

- `ConstantEvaluator`: the same value (default 0) everywhere; the baseline
  a value function has to beat.
- `ExactEvaluator`: the oracle. The leaf subgames are solved exactly at the
  queried beliefs, all at once:
    1. At construction, one sequence game is built over all leaf histories,
       rooted at a chance node whose weights are the histories' weights in
       the trunk (chance reach, times the root's weight for sparse trunks).
       Leaf public states share no infostate, so this game is the disjoint
       union of the leaf subgames; its root sequences are the leaf
       infostates that have a history in the trunk.
    2. Per query, the leaf reaches become its root beliefs and one
       sequence-form LP (HiGHS) gives player 1's maximin realization plan
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
  response): how well a network that learned its targets perfectly would
  do (`pvf experiment leaf-targets`).
A trained network is a leaf evaluator too, built outside this numpy-only
package: `pvf.valuefn.evaluator.NetworkEvaluator`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from pvf.errors import PvfError
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import SequenceGame, build_sequence_game
from pvf.solvers.sequence_ops import best_response_values
from pvf.solvers.trunk_exploitability import sequence_constraints
from pvf.solvers.trunk_solver import Trunk


class ConstantEvaluator:
    """Every leaf infostate valued `value` (default 0)."""

    def __init__(self, value: float = 0.0):
        self.value = float(value)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full_like(reach1, self.value), np.full_like(reach2, self.value)


class _LeafSubgames:
    """The union of a trunk's leaf subgames as one sequence game, for the solving evaluators.

    leaf_game: rooted at a chance node over the leaf histories, each weighted
        by its weight in the trunk; its root sequences are the leaf
        infostates that have a history in the trunk.
    root_position: per player [R_n] position of each of its root infostates among the
        trunk's leaf infostates (those without a history in the trunk get value 0).
    """

    def __init__(self, trunk: Trunk):
        game = trunk.game
        if not game.has_leaves:
            raise PvfError("this trunk reaches the end of the game: it has no leaves to evaluate")
        self.num_leaf_infostates = (len(game.leaf_infostates[0]), len(game.leaf_infostates[1]))
        leaves = trunk.leaf_histories()
        self.leaf_game = build_sequence_game(trunk.tree, root_histories=leaves, root_weights=trunk.history_weights(leaves))
        self.root_position = []
        for n in (0, 1):
            present = np.flatnonzero(game.leaf_parent[n] >= 0)
            order = present[np.argsort(game.leaf_infostates[n][present])]
            roots = self.leaf_game.players[n].root_infostates
            self.root_position.append(order[np.searchsorted(game.leaf_infostates[n][order], roots)])

    def root_beliefs(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The leaf game's root beliefs ([B, R1], [B, R2]) from the trunk's leaf reaches."""
        return reach1[:, self.root_position[0]], reach2[:, self.root_position[1]]

    def scatter(self, v1: np.ndarray, v2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Root values ([B, R1], [B, R2]) as leaf-infostate values ([B, J1], [B, J2])."""
        out = (np.zeros((v1.shape[0], self.num_leaf_infostates[0])), np.zeros((v2.shape[0], self.num_leaf_infostates[1])))
        out[0][:, self.root_position[0]] = v1
        out[1][:, self.root_position[1]] = v2
        return out

    def best_response_root_values(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each player's best-response root values against the other's realization plan.

        x: [S1, B], y: [S2, B] -> ([B, R1], [B, R2]).
        """
        g = self.leaf_game
        q1, _ = best_response_values(g.players[0], g.payoff @ y)
        q2, _ = best_response_values(g.players[1], -(g.payoff_t @ x))
        return q1[: g.players[0].num_roots].T, q2[: g.players[1].num_roots].T


class ExactEvaluator:
    """The oracle: leaf subgames solved exactly, by one LP per query and problem."""

    def __init__(self, trunk: Trunk):
        self.leaves = _LeafSubgames(trunk)
        self.lp = _MaximinLP(self.leaves.leaf_game)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b1, b2 = self.leaves.root_beliefs(reach1, reach2)
        plans = [self.lp.solve(b1[b], b2[b]) for b in range(b1.shape[0])]
        x = np.stack([p[0] for p in plans], axis=1)  # [S1, B]
        y = np.stack([p[1] for p in plans], axis=1)  # [S2, B]
        return self.leaves.scatter(*self.leaves.best_response_root_values(x, y))


class CFRTargetEvaluator:
    """The leaf subgames solved as the dataset's targets are: CFR+ from the queried beliefs.

    All problems of a query in one batched `cfr_plus` call of `iterations`
    iterations; `target` picks the values: "average" (the average profile,
    pvf's training target), "current" (the last iterate, the authors') or
    "best_response" (each player's best response to the other's average).
    A perfect network trained on that target would play like this evaluator.
    """

    TARGETS = ("average", "current", "best_response")

    def __init__(self, trunk: Trunk, iterations: int = 100, target: str = "average"):
        if target not in self.TARGETS:
            raise PvfError(f"unknown target {target!r}; use one of {', '.join(self.TARGETS)}")
        self.leaves = _LeafSubgames(trunk)
        self.iterations = iterations
        self.target = target

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        result = cfr_plus(self.leaves.leaf_game, self.iterations, root_beliefs=self.leaves.root_beliefs(reach1, reach2))
        if self.target == "average":
            values = result.root_values
        elif self.target == "current":
            values = result.current_root_values
        else:
            x, y = result.average_realization
            values = self.leaves.best_response_root_values(x.T, y.T)
        return self.leaves.scatter(*values)


class _MaximinLP:
    """Equilibrium realization plans of a sequence game by one LP (von Stengel 1996).

    Variables: player 1's realization plan x [S1] ≥ 0 and free duals v [R2 + I2]
    of player 2's sequence constraints F·y = f (f = player 2's root beliefs).
    Maximise fᵀv subject to E·x = e (e = player 1's root beliefs) and
    Fᵀv ≤ Aᵀx. The multipliers of the inequalities are player 2's minimax
    realization plan y. The constraint matrices are built once; a solve only
    changes e and f.
    """

    def __init__(self, game: SequenceGame):
        p1, p2 = game.players
        E, F = sequence_constraints(p1), sequence_constraints(p2)
        self.sizes = (p1.num_sequences, F.shape[0], p1.num_roots, p2.num_roots)
        self.a_eq = sp.hstack([E, sp.csr_matrix((E.shape[0], F.shape[0]))]).tocsr()
        self.a_ub = sp.hstack([-game.payoff.T, F.T]).tocsr()
        self.b_ub = np.zeros(p2.num_sequences)
        self.bounds = np.zeros((p1.num_sequences + F.shape[0], 2))
        self.bounds[:, 1] = np.inf
        self.bounds[p1.num_sequences :, 0] = -np.inf

    def solve(self, b1: np.ndarray, b2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x [S1], y [S2]) equilibrium realization plans for root beliefs b1 [R1], b2 [R2]."""
        S1, V, R1, R2 = self.sizes
        b_eq = np.zeros(self.a_eq.shape[0])
        b_eq[:R1] = b1
        c = np.zeros(S1 + V)
        c[S1 : S1 + R2] = -b2
        res = linprog(c, A_ub=self.a_ub, b_ub=self.b_ub, A_eq=self.a_eq, b_eq=b_eq, bounds=self.bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"leaf subgame LP failed: {res.message}")
        return np.maximum(res.x[:S1], 0.0), np.maximum(-res.ineqlin.marginals, 0.0)
