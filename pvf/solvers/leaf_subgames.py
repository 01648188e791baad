"""The subgames rooted at a set of leaf public states, as one sequence game.

Leaf public states share no infostate, so the subgames rooted at them are
disjoint. One sequence game holds them all:
  1. it is rooted at a chance node over the given root histories (every
     history of the leaf public states), each weighted by its weight
     (its chance reach; for a sparse trunk, times the root's weight);
  2. its root sequences are the leaf infostates that have a root history,
     in sorted order;
  3. the caller's columns (per player [J_n] leaf infostates, in the caller's
     order) map onto them: `root_beliefs` gathers a batch of beliefs into
     root order, `scatter` puts root values back in column order (columns
     without a root history get value 0).
One batch column of beliefs then holds a PBS at every leaf public state,
and one solve (CFR+: `pvf.datasets.targets`, CFR+ or LP:
`pvf.solvers.evaluators`) handles them all.

With a `depth` the subgames stop at that move and have leaves of their
own (bootstrapped targets: a value net one move deeper values them); the
game is then the depth-limited trunk over the root histories (`trunk`),
which is what a net's evaluator is built on.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from pvf.games.public_tree import PublicTree
from pvf.solvers.counterfactual_reach import CounterfactualReach
from pvf.solvers.positions import Positions
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.trunk_solver import Trunk, build_trunk


class LeafSubgames:
    """The union of the subgames at `root_histories` of `tree`.

    tree, root_histories [R], root_weights [R], columns: as given; columns: per player [J_n]
        the callers' infostates of `tree` (e.g. a trunk's leaf infostates).
    depth: the move of the subgames' own leaves, None: to the end of the game (the tree's).
    game: the sequence game (rooted at a chance node over `root_histories`).
    trunk: with a depth, the depth-limited trunk whose game `game` is; else None.
    root_position: per player [R_n] column of each of the game's root infostates.
    reach: the counterfactual reach of the columns, root weights as chance reach
        (`reach(b1 [B, J1], b2 [B, J2])`, beliefs in column order).
    """

    def __init__(
        self,
        tree: PublicTree,
        root_histories: np.ndarray,
        root_weights: np.ndarray,
        columns: tuple[np.ndarray, np.ndarray],
        depth: int | None = None,
    ):
        self.tree, self.root_histories, self.columns = tree, root_histories, columns
        self.trunk: Trunk | None = None
        if depth is None:
            self.game = build_sequence_game(tree, root_histories=root_histories, root_weights=root_weights)
        else:
            self.trunk = build_trunk(tree, depth, root_histories=root_histories, root_weights=root_weights)
            self.game = self.trunk.game
        self.num_columns = (len(columns[0]), len(columns[1]))
        self.root_position = []
        for n in (0, 1):
            self.root_position.append(Positions(columns[n])(self.game.players[n].root_infostates))
        self.root_weights = root_weights

    @cached_property
    def reach(self) -> CounterfactualReach:
        """Built on first use: only particle datasets ask for it, not every leaf solve."""
        history_columns = tuple(
            self.root_position[n][
                np.searchsorted(self.game.players[n].root_infostates, self.tree.infostate[self.root_histories, n])
            ]
            for n in (0, 1)
        )
        return CounterfactualReach(history_columns, self.root_weights, self.num_columns)

    def root_beliefs(self, b1: np.ndarray, b2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The game's root beliefs ([B, R1], [B, R2]) from beliefs in column order ([B, J1], [B, J2])."""
        return b1[:, self.root_position[0]], b2[:, self.root_position[1]]

    def scatter(self, v1: np.ndarray, v2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Root values ([B, R1], [B, R2]) in column order ([B, J1], [B, J2]); 0 where no root."""
        out = (np.zeros((v1.shape[0], self.num_columns[0])), np.zeros((v2.shape[0], self.num_columns[1])))
        out[0][:, self.root_position[0]] = v1
        out[1][:, self.root_position[1]] = v2
        return out

    @cached_property
    def root_public_states(self) -> tuple[np.ndarray, np.ndarray]:
        """Per player [R_n] the public state of each of the game's root infostates (the guard's groups)."""
        return tuple(self.tree.infostate_public_state[n][self.game.players[n].root_infostates] for n in (0, 1))
