"""A perfect particle network at a sparse trunk's leaves: the induced PBS solved as the datasets' targets are.

A particle file's target (`pvf.datasets.particle_tasks`, subgame "induced")
is CFR+ on the PBS the particles induce: every history joining two
infostates that carry belief (`pvf.games.induced_pbs`). At the leaves of a
particle trunk (`pvf.evaluation.particle_sweep`) a particle value function
is asked exactly that for each leaf public state, with the beliefs the trunk
iterate gives its leaf infostates. `induced_pbs_evaluator` answers by solving
those PBSs with `CFRTargetEvaluator`, handed these leaf subgames instead of
the trunk's own:
  1. Once per trunk: for each leaf public state, the histories joining two
     of its leaf infostates; one tree of all of them (`build_particle_tree`),
     a chance node over them weighing their chance reach π_c(h), and the
     trunk's leaf infostates found in it by information-state string.
  2. Per query: one batched CFR+ call (`iterations`) with the queried
     beliefs at its roots; the values of `target`'s profile.
It works in the game-root convention of a network (beliefs σ_n·ρ_n, values
the counterfactual values of the training targets), so the sweep wraps it in
`ScaledEvaluator` as it does a network. Where the particles cover every
joined history this is `CFRTargetEvaluator` on the trunk's own leaves;
elsewhere it sees histories the trunk lacks, as a network does.
"""

from __future__ import annotations

import numpy as np

from pvf.games.induced_pbs import induced_histories
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import build_particle_tree, find_histories
from pvf.solvers.evaluators import CFRTargetEvaluator
from pvf.solvers.leaf_subgames import LeafSubgames
from pvf.solvers.trunk_solver import Trunk


def induced_pbs_evaluator(game: LoadedGame, trunk: Trunk, iterations: int = 100, target: str = "average") -> CFRTargetEvaluator:
    """CFR+ (`iterations`, `target`'s values) on the PBS each leaf public state's beliefs induce (module docstring)."""
    return CFRTargetEvaluator(trunk, iterations, target, leaves=induced_leaf_subgames(game, trunk))


def induced_leaf_subgames(game: LoadedGame, trunk: Trunk) -> LeafSubgames:
    """Step 1: one chance node over every history joining two leaf infostates of one leaf public state.

    Columns are the trunk's leaf infostates (`trunk.game.leaf_infostates`), found in the new tree by string.
    """
    tree = trunk.tree
    leaf = trunk.game.leaf_infostates
    public = [tree.public_state[tree.infostate_history[n][leaf[n]]] for n in (0, 1)]
    paths = []
    for state in np.unique(public[0]):
        paths += induced_histories(game, tree, (leaf[0][public[0] == state], leaf[1][public[1] == state])).paths
    induced = build_particle_tree(game, paths)
    roots = find_histories(induced, paths)
    columns = []
    for n in (0, 1):
        index = {s: i for i, s in enumerate(induced.infostate_strings[n])}
        columns.append(np.array([index[tree.infostate_strings[n][j]] for j in leaf[n]], dtype=np.int64))
    return LeafSubgames(induced, roots, induced.chance_reach[roots], (columns[0], columns[1]))
