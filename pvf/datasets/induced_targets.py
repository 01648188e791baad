"""A perfect particle network at a sparse trunk's leaves: the induced PBS solved as the datasets' targets are.

A particle file's target (`pvf.datasets.particle_tasks`, subgame "induced")
is CFR+ on the PBS the particles induce: every history joining two
infostates that carry belief (`pvf.games.induced_pbs`). At the leaves of a
particle trunk (`pvf.experiments.particle_sweep`) a particle value function
is asked exactly that for each leaf public state, with the beliefs the trunk
iterate gives its leaf infostates. `induced_pbs_evaluator` answers by solving
those PBSs with `CFRTargetEvaluator`, handed these leaf subgames instead of
the trunk's own:
  1. Once per trunk (`pvf.datasets.particle_children.induced_subgames`,
     which children-row samples use too): for each leaf public state, the
     histories joining two of its leaf infostates; one tree of all of them
     (the engine's `particle_tree`), a chance node over them weighing their chance
     reach π_c(h), and the trunk's leaf infostates found in it through one
     history each.
  2. Per query: one batched CFR+ call (`iterations`) with the queried
     beliefs at its roots; the values of `target`'s profile.
With a `network` (a `LeafNetwork` for the move below the trunk's leaves,
`pvf experiment particle-trunks --target-network`) step 1 builds the
leaf PBSs to that move only and step 2's CFR+ has the net at their
leaves: the bootstrapped targets `pvf generate --target-network` makes
(`pvf.datasets.particle_children`), what a perfect net trained on them
would answer.
It works in the game-root convention of a network (beliefs σ_n·ρ_n, values
the counterfactual values of the training targets), so the sweep wraps it in
`ScaledEvaluator` as it does a network. Where the particles cover every
joined history this is `CFRTargetEvaluator` on the trunk's own leaves;
elsewhere it sees histories the trunk lacks, as a network does.
"""

from __future__ import annotations

from pvf.datasets.particle_children import induced_subgames
from pvf.datasets.sample_networks import LeafNetwork
from pvf.games.engine import particle_engine
from pvf.games.loading import LoadedGame
from pvf.solvers.evaluators import CFRTargetEvaluator
from pvf.solvers.guarded_values import ResponseKind
from pvf.solvers.trunk_solver import Trunk


def induced_pbs_evaluator(
    game: LoadedGame,
    trunk: Trunk,
    iterations: int = 100,
    target: str = "average",
    engine: str = "auto",
    network: LeafNetwork | None = None,
    kind: ResponseKind | None = None,
) -> CFRTargetEvaluator:
    """CFR+ (`iterations`, `target`'s values) on the PBS each leaf public state's beliefs induce (module docstring).

    engine: the particle engine that joins and builds the leaf PBSs' histories (`pvf.games.engine`).
    network: the net one move below the trunk's leaves (bootstrapped targets), None: solved to the end;
    kind: with "best_response", what the best responses answer (`pvf.solvers.guarded_values`)."""
    depth = None if network is None else trunk.depth + 1
    leaves = induced_subgames(
        particle_engine(game, engine), trunk.tree, trunk.game.leaf_infostates, depth=depth
    )  # step 1; columns: the trunk's leaf infostates
    below = None if network is None or not leaves.game.has_leaves else network(leaves.trunk)
    return CFRTargetEvaluator(trunk, iterations, target, leaves=leaves, leaf_evaluator=below, kind=kind)
