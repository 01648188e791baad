"""Sparse trunks over K particles, on a particle tree instead of the enumerated game.

`pvf.solvers.sparse_trunks` finds its root histories in the full public
tree (π*'s support at the root move). Here they are given: K particles
(tree indices of a `pvf.games.particle_tree` tree, or of any PublicTree),
each with its weight w = π_c·π₁·π₂ under a stated reference profile and
each player's own reach π_n under it. `particle_setting` makes the same
`SparseSetting` from them, so `select_histories`, `solve_sparse_trunk`,
`leaf_scales` and `uniform_exploitability` run unchanged: the evaluation
trunk is the chance node over all K particles (made common knowledge, as
fig. 4 does) down to the end of the game the tree holds, and trunk
exploitability is measured in that particle-restricted game.
"""

from __future__ import annotations

import numpy as np

from pvf.errors import PvfError
from pvf.games.public_tree import TERMINAL, PublicTree
from pvf.solvers.sparse_trunks import SparseSetting
from pvf.solvers.trunk_exploitability import trunk_infostate_mask
from pvf.solvers.trunk_solver import build_trunk


def particle_setting(
    tree: PublicTree,
    particles: np.ndarray,
    weights: np.ndarray,
    own_reach: np.ndarray,
    root_move: int,
    depth: int,
) -> SparseSetting:
    """The sparse setting of K given particles.

    particles: [K] distinct non-terminal tree histories at move number `root_move`.
    weights: [K] positive weights π_c·π₁·π₂ (not renormalised).
    own_reach: [K, 2] each player's own reach π_n of each particle (the leaf-scale σ_n).
    depth: move number of the trunk's leaves.
    """
    particles = np.asarray(particles, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    own_reach = np.asarray(own_reach, dtype=np.float64)
    K = len(particles)
    if K == 0 or weights.shape != (K,) or own_reach.shape != (K, 2):
        raise PvfError(f"particles ({K}), weights {weights.shape} and own reach {own_reach.shape} do not match")
    if np.any(tree.depth[particles] != root_move) or np.any(tree.player[particles] == TERMINAL):
        raise PvfError(f"every particle must be a non-terminal history at move {root_move}")
    if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise PvfError("particle weights must be finite and positive")
    order = np.argsort(particles)
    particles, weights, own_reach = particles[order], weights[order], own_reach[order]
    evaluation = build_trunk(tree, depth, root_histories=particles, root_weights=weights)
    return SparseSetting(
        tree=tree,
        root_move=root_move,
        depth=depth,
        histories=particles,
        weights=weights,
        own_reach=own_reach,
        player_node=tree.player[particles] >= 0,
        evaluation=evaluation,
        root_masks=trunk_infostate_mask(evaluation.full, root_move + 1),
        num_root_histories=K,
    )
