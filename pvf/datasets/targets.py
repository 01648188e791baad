"""Counterfactual-value targets of PBSs: batched CFR+ (or MMD) on the leaf subgames.

The leaf subgames of a trunk (the value-solving games rooted at its leaf
public states) are disjoint, so they are solved together as one game:
  1. `pvf.solvers.leaf_subgames.LeafSubgames` roots one sequence game at a
     chance node over every history of every leaf public state, each
     weighted by its own chance reach: the disjoint union of the leaf
     subgames. Its root sequences are all the leaf infostates, so one batch
     column holds one trunk's beliefs at every leaf public state: L PBSs.
  2. CFR+ runs `iterations` iterations on a batch of B trunks at once. Regret
     matching, averaging and value propagation act per infostate, and no
     infostate spans two subgames, so each subgame follows exactly the
     iterates it would follow alone: one call solves B × L PBSs.
  3. The targets are the root counterfactual values of both players under
     the average profile, and under the last iterate (the authors' choice).
     They carry chance and opponent reach (docs/architecture.md), so for each PBS
     Σ b₁·v₁ + Σ b₂·v₂ = 0.
  4. On request, best-response targets (`pvf.solvers.guarded_values`):
     "best_response": each player's best response to the other's average,
     and where the player's belief is zero, to the other's average in a
     second solve of the same batch with every belief guarded (the values a
     trunk needs there); Σ b₁·v₁ + Σ b₂·v₂ ≥ 0 is then the average
     profile's subgame NashConv. "grouped" and "local": best responses to
     one mixed plan of the two solves (`RESPONSE_TARGETS`).
With solver "mmd" the average and current targets are MMD's last iterate
(it has no average), and the best responses answer its last iterates.
The batch is the speed: one sparse × dense product per iteration and player
serves all B × L PBSs. Which trunks share a batch is fixed by the caller
(`pvf.datasets.task_plan`), so results are reproducible to the bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvf.errors import PvfError
from pvf.games.public_tree import TERMINAL, PublicTree
from pvf.solvers.guarded_values import RESPONSE_KINDS, RESPONSE_TARGETS, best_response_targets
from pvf.solvers.leaf_subgames import LeafSubgames
from pvf.solvers.registry import DEFAULT_SOLVER, get_solver
from pvf.solvers.sequence_form import SequenceGame


@dataclass(frozen=True)
class PBSTargets:
    """Counterfactual values of every leaf infostate for a batch of B trunks.

    average: per player [B, J_n] under the average CFR+ profile.
    current: per player [B, J_n] under the last CFR+ iterate.
    best_response: per player [B, J_n] best-response targets (step 4) of the kind `response`, or None.
    response: the name of those targets (of `RESPONSE_TARGETS`), None if not asked for.
    Columns follow `LeafSolver.infostates[n]`.
    """

    average: tuple[np.ndarray, np.ndarray]
    current: tuple[np.ndarray, np.ndarray]
    best_response: tuple[np.ndarray, np.ndarray] | None = None
    response: str | None = None

    def of(self, target: str) -> tuple[np.ndarray, np.ndarray]:
        """The values of a target kind (`pvf.solvers.guarded_values.TARGETS`)."""
        if target in RESPONSE_TARGETS:
            if self.response != target:
                raise PvfError(f"these targets were solved without {target!r} values")
            return self.best_response
        return {"average": self.average, "current": self.current}[target]


class LeafSolver:
    """Solves the PBSs at a set of public states of one tree, all in one CFR+ call.

    public_states: [L] the public states (leaf public states of a trunk).
    infostates: per player [J_n] their infostates, public state by public
        state in the tree's fixed enumeration (`tree.public_state_infostates`),
        the column order of beliefs and targets.
    """

    def __init__(self, tree: PublicTree, public_states: np.ndarray, iterations: int, solver: str = DEFAULT_SOLVER):
        self.tree = tree
        self.iterations = iterations
        self.solver = get_solver(solver)
        self.public_states = np.asarray(public_states, dtype=np.int64)
        roots = np.flatnonzero(np.isin(tree.public_state, self.public_states) & (tree.player != TERMINAL))
        self.infostates = tuple(
            np.concatenate([tree.public_state_infostates[n][p] for p in self.public_states]) for n in (0, 1)
        )
        self.subgames = LeafSubgames(tree, roots, tree.chance_reach[roots], self.infostates)

    @property
    def game(self) -> SequenceGame:
        """The sequence game of all the subgames."""
        return self.subgames.game

    def solve(self, beliefs: tuple[np.ndarray, np.ndarray], response: str | None = None) -> PBSTargets:
        """Targets of B trunks' PBSs from their leaf beliefs (b1 [B, J1], b2 [B, J2]).

        response: also step 4's targets of this name (of `RESPONSE_TARGETS`; a second solve), None: not.
        """
        roots = self.subgames.root_beliefs(*beliefs)
        result = self.solver(self.game, self.iterations, root_beliefs=roots)
        responses = None
        if response is not None:
            kind = RESPONSE_KINDS[RESPONSE_TARGETS[response]]
            groups = self.subgames.root_public_states
            values = best_response_targets(
                self.game, self.solver, self.iterations, roots, groups, solved=result, kind=kind
            )
            responses = self.subgames.scatter(*values)
        return PBSTargets(
            average=self.subgames.scatter(*result.root_values),
            current=self.subgames.scatter(*result.current_root_values),
            best_response=responses,
            response=response,
        )
