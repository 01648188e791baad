"""Particle samples shaped like a particle trunk's leaf queries (`rows="children"`).

A sparse particle trunk (`pvf.experiments.particle_sweep`) asks its network,
at each leaf public state one move below the root particles, about every
leaf infostate that has a history in the trunk, with beliefs from the trunk
iterate: mostly infostates the iterate does not play into (belief 0, about
70% of the rows measured on Goofspiel-8), whose values drive the regrets of
the actions not played. A `rows="particles"` sample shows the network only
the particles' own infostates, every one with positive belief. This module
builds samples the way the trunk builds its leaves, with the random trunk
strategy in place of the iterate:
  1. K particles of a public state at move D − 1 (drawn as for any particle
     sample, `pvf.games.history_sampling`) and the PBS they induce
     (`pvf.games.induced_pbs.induced_roots`): the parents, with each
     player's own reach σ_n.
  2. Every one-move continuation of every parent (a Goofspiel round is both
     bids, `pvf.games.history_sampling.continuations`), each player's belief in the child σ_n(parent)·π_n(own action),
     zero where the trunk strategy does not play the action. The children
     fall into a few public states (Goofspiel: who won the round); one is
     drawn uniformly among those where both players have belief mass, as
     the trunk asks about every leaf public state however likely (none:
     `NoLiveChildren`, and the sample plays its trunk strategy again,
     `pvf.datasets.particle_tasks`).
  3. The rows are all children's infostates of that public state, zero
     beliefs included. Their targets are CFR+ on the PBS those infostates
     induce (every history joining two of them, `induced_subgames`), with
     the beliefs at its roots (`pvf.solvers.leaf_subgames.LeafSubgames`,
     as the sweep's "targets" column solves leaves,
     `pvf.datasets.induced_targets`): counterfactual values, own reach
     excluded, so a zero-belief infostate's target is its value against the
     opponent's belief (what its player's trunk regrets need). This module
     poses that game (`pose_children`); `pvf.datasets.particle_tasks` solves
     a task's games as one (`pvf.solvers.disjoint_games`) and hands each
     its root values back (`PosedRows.solved`).
  4. `cf_reach` is each row's counterfactual reach in that PBS; `mass`
     is the importance-weighted estimate of each infostate's reach, Σ over
     drawn particles k and their continuations c into it of w_k·p(c);
     with `rollout_input` (`pvf generate --rollout-input β`) `cf_rollout`
     is the row's value in that PBS if both players played at random to
     the end (greed β, exact: `pvf.games.rollouts`), in the targets'
     convention (Σ over its histories of π_c·b_{−n}·u_n; what rollout
     leaves give the row; `pvf.datasets.particle_tasks` computes it).
Bootstrapped targets (`bootstrap=True`, `pvf generate --target-network`,
ReBeL's recursion): step 3's PBS is built to move `depth` + 1 only, and a
value net for that move values the PBSs at its leaves in every CFR+
iteration (the beliefs there are the iterate's; `PosedRows.trunk` is what
the net's evaluator is built on). The average and last-iterate targets are
the root values of those profiles with the net's values at their leaf
beliefs; best responses hold the net's values at the average profile's
leaves fixed (`pvf.solvers.best_response.best_response_root_values`).
With the exact oracle at those leaves a PBS's value is the to-the-end
solve's to CFR+'s accuracy, and its rows' targets are the to-the-end ones
to the last bit where nothing is left to decide below (tested). The PBS
stays one move deep at any depth, so the data of early moves, whose PBSs
are far too large to solve whole, comes from the net of the move after;
each CFR+ iteration asks the net, though, so where the whole PBS is small
solving it is far cheaper (Goofspiel-8 at move 5: 1.5 s a sample against
0.04 s, docs/results/particles.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.errors import PvfError
from pvf.games.engine import ParticleEngine
from pvf.games.history_sampling import ParticleSample
from pvf.games.induced_pbs import induced_roots
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, PublicTree
from pvf.solvers.counterfactual_reach import CounterfactualReach
from pvf.solvers.guarded_values import RESPONSE_TARGETS
from pvf.solvers.leaf_subgames import LeafSubgames
from pvf.solvers.sequence_form import SequenceGame
from pvf.solvers.trunk_solver import Trunk

RootValues = tuple[np.ndarray, np.ndarray]  # per player [1, R_n] values of a sequence game's root infostates


class NoLiveChildren(PvfError):
    """The parents' continuations hold no public state at move `depth` where both players have belief."""


@dataclass(frozen=True, eq=False)
class SolvedRows:
    """One PBS's rows, solved.

    tree: a tree holding the PBS's histories; public_state: its index there.
    infostates: per player [J_n] tree infostates of the rows (player 1's, then player 2's).
    belief, target, target_current, mass: per player [J_n].
    reach: the PBS's `CounterfactualReach` over the rows' columns (the rows' reach and mean opponent features).
    histories: [H] the tree histories `reach` weighs, in its order (the PBS's roots).
    target_best_response: per player [J_n] best-response targets of the generation's kind
        (`pvf.solvers.guarded_values.RESPONSE_TARGETS`), or None where not asked for.
    """

    tree: PublicTree
    public_state: int
    infostates: tuple[np.ndarray, np.ndarray]
    belief: tuple[np.ndarray, np.ndarray]
    target: tuple[np.ndarray, np.ndarray]
    target_current: tuple[np.ndarray, np.ndarray]
    mass: tuple[np.ndarray, np.ndarray]
    reach: CounterfactualReach
    histories: np.ndarray
    target_best_response: tuple[np.ndarray, np.ndarray] | None = None

    def of(self, target: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows' values of a target kind (`pvf.solvers.guarded_values.TARGETS`; a best-response name reads
        the generation's best responses)."""
        values = self.target_best_response if target in RESPONSE_TARGETS else None
        values = {"average": self.target, "current": self.target_current}.get(target, values)
        if values is None:
            raise PvfError(f"these rows were solved without {target!r} values")
        return values


@dataclass(frozen=True, eq=False)
class PosedRows:
    """One PBS's rows up to the solve: the sequence game whose root values are their targets.

    game: the PBS's sequence game, solved to the end (rooted at a chance node over its histories).
    root_beliefs: per player [1, R_n] the game's root beliefs.
    guard_groups: per player [R_n] the public state of each root infostate: best-response targets are guarded
        there (`pvf.solvers.guarded_values`); None where every root has belief, and the targets are plain best
        responses to the average profile (its realization plan).
    histories: the size of the PBS's tree.
    trunk: with bootstrapped targets, the depth-limited trunk `game` is (a net's evaluator is built on it);
        None where the game is solved to the end.
    solved: the rows from the game's per player [1, R_n] root values of the average profile, of the last
        iterate and best-response root values (or None).
    """

    game: SequenceGame
    root_beliefs: tuple[np.ndarray, np.ndarray]
    guard_groups: tuple[np.ndarray, np.ndarray] | None
    histories: int
    solved: Callable[[RootValues, RootValues, RootValues | None], SolvedRows]
    trunk: Trunk | None = None


def induced_subgames(
    engine: ParticleEngine,
    tree: PublicTree,
    infostates: tuple[np.ndarray, np.ndarray],
    max_histories: int = DEFAULT_MAX_HISTORIES,
    depth: int | None = None,
) -> LeafSubgames:
    """The PBSs that `infostates` (per player [J_n] infostates of `tree`) induce, one per public state, as one game.

    Every history joining two of the given infostates of one public state (the engine's
    `induced_histories`), one particle tree of them all (refused over `max_histories`), a chance node
    over them weighing their chance reach; the columns are the given infostates, found in the new tree
    as the infostates of the joined histories (`InducedHistories.pairs`). depth: the tree and the game stop
    at that move (the game's leaves there), None: to the end of the game.
    """
    public = [tree.infostate_public_state[n][infostates[n]] for n in (0, 1)]
    paths, owners = [], ([], [])
    for state in np.unique(public[0]):
        chosen = [np.flatnonzero(public[n] == state) for n in (0, 1)]
        joined = engine.induced_histories(tree, (infostates[0][chosen[0]], infostates[1][chosen[1]]))
        paths.append(joined.paths)
        for n in (0, 1):
            owners[n].append(chosen[n][joined.pairs[:, n]])
    induced, roots = engine.particle_tree(np.concatenate(paths), depth, max_histories)
    columns = []
    for n in (0, 1):
        column = np.full(len(infostates[n]), -1, dtype=np.int64)
        column[np.concatenate(owners[n])] = induced.infostate[roots, n]
        if np.any(column < 0):
            raise PvfError(f"an infostate of player {n + 1} joins no history of the given infostates")
        columns.append(column)
    return LeafSubgames(induced, roots, induced.chance_reach[roots], (columns[0], columns[1]), depth)


def pose_children(
    engine: ParticleEngine,
    sample: ParticleSample,
    strategy: LazyTrunkStrategy,
    depth: int,
    max_histories: int,
    rng: np.random.Generator,
    bootstrap: bool = False,
) -> PosedRows:
    """Steps 1–3 up to the solve, for particles at move `depth` − 1; the rows are at move `depth`.

    bootstrap: the PBS stops at move `depth` + 1, for a net there (module docstring); else it is solved to the end.
    """
    parents_tree, roots = engine.particle_tree(sample.particles, depth_limit=depth)
    parents, sigma = induced_roots(engine.induced_histories, parents_tree, roots, sample.own_reach)
    # the drawn particles among the parents: their importance weights carry into the children's mass
    drawn = {path: w for path, w in zip(sample.particles, sample.weights)}
    parent_weight = np.array([drawn.get(tuple(path), 0.0) for path in parents.tolist()])
    steps = engine.continuations(parents, strategy)
    live = ~steps.terminal
    if not live.any():
        raise NoLiveChildren(f"every continuation of the particles at move {depth - 1} ends the game")
    at = steps.parent[live]
    paths = np.concatenate([parents[at], steps.actions[live]], axis=1)
    beliefs = sigma[at] * steps.own[live]
    masses = parent_weight[at] * steps.probability[live]
    children_tree, histories = engine.particle_tree(paths, depth_limit=depth + 1)
    public = children_tree.public_state[histories]
    live_states = [s for s in np.unique(public) if all(beliefs[public == s, n].sum() > 0 for n in (0, 1))]
    if not live_states:
        raise NoLiveChildren(f"no public state at move {depth} below the particles has belief of both players")
    chosen = live_states[int(rng.integers(len(live_states)))]
    mine = histories[public == chosen]
    rows, belief, mass = [], [], []
    for n in (0, 1):
        infostate = children_tree.infostate[mine, n]
        rows.append(np.unique(infostate))
        b = np.zeros(children_tree.num_infostates(n))
        b[infostate] = beliefs[public == chosen, n]
        m = np.bincount(infostate, weights=masses[public == chosen], minlength=children_tree.num_infostates(n))
        belief.append(b[rows[n]])
        mass.append(m[rows[n]])
    stop = depth + 1 if bootstrap else None
    leaves = induced_subgames(engine, children_tree, (rows[0], rows[1]), max_histories, stop)

    def solved(average: RootValues, current: RootValues, responses: RootValues | None) -> SolvedRows:
        average, current = leaves.scatter(*average), leaves.scatter(*current)
        tree = leaves.tree
        return SolvedRows(
            tree=tree,
            public_state=int(tree.public_state[leaves.root_histories[0]]),
            infostates=leaves.columns,
            belief=(belief[0], belief[1]),
            target=(average[0][0], average[1][0]),
            target_current=(current[0][0], current[1][0]),
            mass=(mass[0], mass[1]),
            reach=leaves.reach,
            histories=leaves.root_histories,
            target_best_response=None if responses is None else tuple(v[0] for v in leaves.scatter(*responses)),
        )

    return PosedRows(
        game=leaves.game,
        root_beliefs=leaves.root_beliefs(belief[0][None], belief[1][None]),
        guard_groups=leaves.root_public_states,
        histories=leaves.tree.num_histories,
        solved=solved,
        trunk=leaves.trunk,
    )
