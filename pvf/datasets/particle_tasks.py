"""One task of a particle dataset: a block of sample ids → one shard.

`pvf.datasets.tasks` sends a spec with particles here (its blocks are
`pvf.datasets.task_plan`'s). Sample i of the spec (`spec.particles`: K,
the history cap, the subgame, the rows):
  1. Trunk strategy i (`LazyTrunkStrategy(seed, i)`) is played to move
     `depth` and K particles of the public state reached are drawn, with
     their importance weights (`pvf.datasets.particle_draws`); the
     generator is `default_rng(SeedSequence(seed, spawn_key=(i,)))`, so a
     sample depends on (spec, i) only, never on the worker or task.
     With `rows="children"` the particles are drawn at move `depth` − 1
     and steps 2–3 are `pvf.datasets.particle_children.pose_children`
     (the rows: every infostate one move below them, zero beliefs
     included); with `p_solve` > 0 some samples are posed instead from
     their group's particles towards a trunk solve's query
     (`pvf.datasets.particle_solve_queries`). Steps 2–3 below are
     `rows="particles"`.
  2. The subgame is built to the end of the game (`pvf.games.particle_tree`,
     refused beyond `max_histories`) and rooted at a chance node. By
     default (`subgame="induced"`) it is the PBS the particles induce (the
     paper, sec. 5.1): each particle infostate s carries its player's own
     reach σ_n(s) under the trunk strategy, every other infostate 0, so the
     roots are all histories joining two particle infostates
     (`pvf.games.induced_pbs`), each weighing σ₁(s₁)·σ₂(s₂)·π_c(h). That
     PBS is a function of what a particle value function sees (σ and
     features per infostate) and is what it is asked at the leaves of a
     sparse trunk (`pvf.solvers.sparse_trunks`, fig. 4). With
     `subgame="drawn"` the roots are the distinct particles only, each
     weighing its reach π(h) = π_c(h)·π₁(h)·π₂(h): targets then depend on
     which histories were drawn, which no input shows (docs/particles.md
     measures how much; networks trained on them did not learn).
  3. CFR+ (`cfr_iterations`) solves it. Its root sequences are the
     particles' distinct infostates, the sample's rows, player 1's first.
     A row's belief is the player's own reach σ_n(s) of the infostate (the
     beliefs the value networks take, as in enumerated files); its target
     is the root counterfactual value divided by σ_n(s), the value
     convention of enumerated files (cfv carries chance and opponent
     reach, here over the subgame's roots); Σ belief·target over both players
     is 0. `mass` is the importance-weighted belief Σ_k w_k of the
     infostate's particles, the unbiased estimate of the full PBS's
     Σ_{h∈s} π(h). Importance weights are not used as the subgame's root
     weights: one particle stands for about |S|/K histories, so its weight
     is |S|/K times its reach and the targets of the infostates it lands
     in (one particle each, mostly) would carry that factor, which no
     input of the network reveals (measured: targets up to 5.8·10⁶ in
     Goofspiel-13 at move 10 with K = 32, against |u| ≤ 1 here).
     `cf_reach` is the row's counterfactual reach in the subgame
     (`pvf.solvers.counterfactual_reach`: Σ over its root histories of
     π_c·σ_{−n}), which bounds its target (|target| ≤ cf_reach·max|u|);
     `cf_opponent` the mean of the opponent's private features over the
     same histories and weights (`CounterfactualReach.opponent_features`);
     with `rollout_input` = β (children rows), `cf_rollout` the exact
     value of greed-β random play from the same histories, weighted the
     same way (`CounterfactualReach.history_means` times cf_reach: the
     targets' convention, so Σ belief·cf_rollout is 0 too).
  4. Features are the OpenSpiel observers' (as `build_feature_tables`) for
     the sample's public state and its rows' infostates only.
The samples of a task share one CFR+ call: their subgames (in separate
trees, sharing nothing) are solved as one block-diagonal game
(`pvf.solvers.disjoint_games`, up to `JOINT_HISTORIES` histories at a
time), which gives each sample's values bit for bit as its own solve would
and pays the solver's per-call overhead once (at K = 16 in Goofspiel-13 a
sample's solve is ~500 sequences a player, far too small to amortise it).
Samples with bootstrapped targets (a net at their leaves,
`pvf.datasets.particle_children`) are solved one by one: each sample's
leaves are its own net queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from pvf.datasets.particle_children import NoLiveChildren, PosedRows, RootValues, SolvedRows, pose_children
from pvf.datasets.particle_draws import draw_particles, play_again
from pvf.datasets.particle_solve_queries import query_parents, solve_query
from pvf.datasets.sample_networks import NO_NETWORKS, LeafNetwork, SampleNetworks, check_networks
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.task_plan import SampleColumns, Task
from pvf.errors import PvfError
from pvf.games.engine import ParticleEngine, live_particles, particle_engine
from pvf.games.features import checked_game
from pvf.games.goofspiel_kernel import GoofspielRules
from pvf.games.history_sampling import ParticleSample
from pvf.games.induced_pbs import induced_roots
from pvf.games.loading import load_game
from pvf.games.particle_tree import find_histories
from pvf.games.public_tree import PublicTree
from pvf.games.rollouts import history_paths, play_values, rollout_rules
from pvf.solvers.best_response import best_response_root_values
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.counterfactual_reach import CounterfactualReach
from pvf.solvers.disjoint_games import DisjointGames
from pvf.solvers.guarded_values import RESPONSE_KINDS, RESPONSE_TARGETS, best_response_targets
from pvf.solvers.sequence_form import build_sequence_game

# Samples of a task are solved together until their subgames hold this many histories (memory, not speed:
# a Goofspiel-13 task of 50 samples at K = 16 is about 430,000; one sample at K = 256 up to 4 million).
JOINT_HISTORIES = 1_000_000
CHILDREN_REPLAYS = 100  # plays of a children sample's trunk strategy before its depth is refused


@dataclass(frozen=True)
class ParticleShard(SampleColumns):
    """The samples of one task (n samples, m rows, m_n rows of player n).

    trunk: [n] sample ids; offset: [n + 1] row offsets from 0.
    public_features: [n, Fp] float32; private_features: [m, Fq] float32 (row order).
    player: [m] int8; slot: [m] int32 position within the player's block of the sample.
    belief, target, target_current, mass, cf_reach: [m] float64; cf_opponent: [m, Fq] float32.
    particles: [n] distinct particles; dead: [n] draws with weight 0; histories: [n] subgame size.
    cf_rollout: [m] float64 with the spec's `rollout_input`, else [0] (shards written before it lack it).
    """

    trunk: np.ndarray
    offset: np.ndarray
    public_features: np.ndarray
    private_features: np.ndarray
    player: np.ndarray
    slot: np.ndarray
    belief: np.ndarray
    target: np.ndarray
    target_current: np.ndarray
    mass: np.ndarray
    cf_reach: np.ndarray
    cf_opponent: np.ndarray
    particles: np.ndarray
    dead: np.ndarray
    histories: np.ndarray
    cf_rollout: np.ndarray = field(default_factory=lambda: np.zeros(0))


def solve_sample(
    spec: GenerationSpec, sample_id: int, engine: str = "auto", networks: SampleNetworks = NO_NETWORKS
) -> dict:
    """Steps 1–4 for one sample of a particle spec: its rows (player 1's, then player 2's) and features.

    engine: "auto", "native" or "openspiel" (`pvf.games.engine`): the same sample from either.
    networks: the nets at the leaves of the query and target solves, where the spec records them."""
    return solve_samples(spec, [sample_id], engine, networks)[0]


def solve_samples(
    spec: GenerationSpec, sample_ids: Iterable[int], engine: str = "auto", networks: SampleNetworks = NO_NETWORKS
) -> list[dict]:
    """`solve_sample` of each id, in order, their subgames solved as one game (module docstring, end)."""
    check_networks(spec, networks)
    loaded, _ = checked_game(spec.game)
    game = particle_engine(loaded, engine)
    out, pending = [], []
    for sample_id in sample_ids:
        pending.append(_pose(spec, game, sample_id, networks))
        if sum(posed.histories for _, posed in pending) >= JOINT_HISTORIES:
            out += _solve(spec, game, pending, networks)
            pending = []
    return out + (_solve(spec, game, pending, networks) if pending else [])


def _pose(
    spec: GenerationSpec, game: ParticleEngine, sample_id: int, networks: SampleNetworks
) -> tuple[ParticleSample, PosedRows]:
    """Steps 1–2 of one sample: its particles and the game whose solve gives its rows' targets."""
    query = solve_query(spec, sample_id) if spec.particles.rows == "children" else None
    bootstrap, cap = networks.targets is not None, spec.particles.max_histories
    if query is not None:  # the group's particles, towards one of its trunk solve's queries
        sample, strategy = query_parents(spec, game.name, query, networks.query)
        rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(sample_id,)))
        return sample, pose_children(game, sample, strategy, spec.depth, cap, rng, bootstrap)
    sample, strategy, rng = draw_particles(spec, game, sample_id)
    if spec.particles.rows != "children":
        return sample, _pose_particle_rows(spec, game, sample)
    for _ in range(CHILDREN_REPLAYS):
        try:
            return sample, pose_children(game, sample, strategy, spec.depth, cap, rng, bootstrap)
        except NoLiveChildren:  # play again from the same stream (`pvf.datasets.particle_draws`)
            history = play_again(spec, game, strategy, rng)
            sample = live_particles(game, strategy, history, spec.particles.count, rng)
    raise PvfError(
        f"sample {sample_id}: in {CHILDREN_REPLAYS} plays of its trunk strategy no public state at move "
        f"{spec.depth} was one both players reach (the game ends there, or one player's belief is 0); "
        "choose a smaller --depth"
    )


def _solve(
    spec: GenerationSpec,
    game: ParticleEngine,
    pending: Sequence[tuple[ParticleSample, PosedRows]],
    networks: SampleNetworks,
) -> list[dict]:
    """Step 3 and 4 for the posed samples: solved as one game, or one by one where a net values their leaves
    (each sample's leaves are its own trunk's)."""
    if networks.targets is None:
        return _solve_jointly(spec, game, pending)
    return [_solve_bootstrapped(spec, game, sample, posed, networks.targets) for sample, posed in pending]


def _solve_bootstrapped(
    spec: GenerationSpec, game: ParticleEngine, sample: ParticleSample, posed: PosedRows, network: LeafNetwork
) -> dict:
    """Step 3 on one sample's depth-limited PBS with `network` at its leaves (bootstrapped targets), and 4."""
    leaves = network(posed.trunk) if posed.game.has_leaves else None  # the game may end before the net's move
    result = cfr_plus(posed.game, spec.cfr_iterations, root_beliefs=posed.root_beliefs, leaf_evaluator=leaves)
    responses = None
    if spec.target in RESPONSE_TARGETS:
        responses = best_response_targets(
            posed.game,
            cfr_plus,
            spec.cfr_iterations,
            posed.root_beliefs,
            posed.guard_groups,
            solved=result,
            leaf_evaluator=leaves,
            kind=RESPONSE_KINDS[RESPONSE_TARGETS[spec.target]],
        )
    return _sample(spec, game, sample, posed.solved(result.root_values, result.current_root_values, responses))


def _solve_jointly(
    spec: GenerationSpec, game: ParticleEngine, pending: Sequence[tuple[ParticleSample, PosedRows]]
) -> list[dict]:
    """Step 3 for the posed samples, their games as one (`DisjointGames`: each game's values bit for bit), and 4."""
    posed = [p for _, p in pending]
    joined = DisjointGames([p.game for p in posed])
    beliefs = joined.join_roots([p.root_beliefs for p in posed])
    result = cfr_plus(joined.game, spec.cfr_iterations, root_beliefs=beliefs)
    responses = [None] * len(posed)
    kind = RESPONSE_KINDS.get(RESPONSE_TARGETS.get(spec.target, ""))
    if kind is not None and spec.particles.rows == "children":
        groups = joined.join_labels([p.guard_groups for p in posed])
        values = best_response_targets(
            joined.game, cfr_plus, spec.cfr_iterations, beliefs, groups, solved=result, kind=kind
        )
        responses = joined.split(values)
    elif kind is not None:  # every root infostate has belief 1 (its weight): the guarded solve is the solve
        x, y = (p.T for p in result.average_realization)
        responses = joined.split(best_response_root_values(joined.game, x, y))
    parts = zip(pending, joined.split(result.root_values), joined.split(result.current_root_values), responses)
    return [_sample(spec, game, sample, p.solved(a, c, r)) for (sample, p), a, c, r in parts]


def _sample(spec: GenerationSpec, game: ParticleEngine, sample: ParticleSample, solved: SolvedRows) -> dict:
    """Step 4: one sample's rows (player 1's, then player 2's), features and counts."""
    public, private = game.features(solved.tree, solved.public_state, solved.infostates)
    target = solved.of(spec.target)
    width = max(p.shape[1] for p in private)
    private = [np.pad(p, ((0, 0), (0, width - p.shape[1]))) for p in private]
    b = [solved.belief[n][None] for n in (0, 1)]
    cf_reach = solved.reach(*b)
    cf_opponent = solved.reach.opponent_features(*b, *private)
    beta = spec.particles.rollout_input
    cf_rollout = np.zeros(0)
    if beta is not None:
        rules = _rules(spec.game, spec.depth)
        values = play_values(rules, history_paths(solved.tree, solved.histories), None, greed=beta)
        means = solved.reach.history_means(*b, solved.reach.valued(values))
        cf_rollout = np.concatenate([cf_reach[n][0] * means[n][0] for n in (0, 1)])
    return {
        "player": np.concatenate([np.full(len(solved.belief[n]), n, dtype=np.int8) for n in (0, 1)]),
        "belief": np.concatenate(solved.belief),
        "target": np.concatenate(target),
        "target_current": np.concatenate(solved.target_current),
        "mass": np.concatenate(solved.mass),
        "cf_reach": np.concatenate([cf_reach[0][0], cf_reach[1][0]]),
        "cf_opponent": np.concatenate([cf_opponent[0][0], cf_opponent[1][0]]),
        "cf_rollout": cf_rollout,
        "private": np.concatenate(private),
        "slot": np.concatenate([np.arange(len(i), dtype=np.int32) for i in solved.infostates]),
        "public": public,
        "stats": (len(sample.particles), sample.dead, solved.tree.num_histories),
    }


@lru_cache(maxsize=4)
def _rules(game: str, depth: int) -> GoofspielRules:
    """The rules rollout values need, once per process (`pvf.games.rollouts.rollout_rules`)."""
    return rollout_rules(load_game(game), depth, "--rollout-input values")


def _pose_particle_rows(spec: GenerationSpec, game: ParticleEngine, sample: ParticleSample) -> PosedRows:
    """Step 2 with rows="particles": the particles' own infostates; target = root cfv / σ_n."""
    tree, roots, weights, located = _subgame(spec, game, sample)
    game_form = build_sequence_game(tree, root_histories=roots, root_weights=weights)
    infos = tuple(game_form.players[n].root_infostates for n in (0, 1))
    sigma, mass = [], []
    for n in (0, 1):
        # σ_n of an infostate: any of its particles' (equal by perfect recall); mass: the sum of their weights
        of_particle = tree.infostate[located, n]
        own = np.zeros(tree.num_infostates(n))
        own[of_particle] = sample.own_reach[:, n]
        total = np.bincount(of_particle, weights=sample.weights, minlength=tree.num_infostates(n))
        sigma.append(own[infos[n]])
        mass.append(total[infos[n]])
    values = lambda profile: tuple(profile[n][0] / sigma[n] for n in (0, 1))  # noqa: E731
    columns = tuple(np.searchsorted(infos[n], tree.infostate[roots, n]) for n in (0, 1))
    reach = CounterfactualReach(columns, tree.chance_reach[roots], (len(infos[0]), len(infos[1])))

    def solved(average: RootValues, current: RootValues, responses: RootValues | None) -> SolvedRows:
        return SolvedRows(
            tree,
            int(tree.public_state[roots[0]]),
            infos,
            tuple(sigma),
            values(average),
            values(current),
            tuple(mass),
            reach,
            roots,
            None if responses is None else values(responses),
        )

    return PosedRows(
        game=game_form,
        root_beliefs=tuple(np.ones((1, len(infos[n]))) for n in (0, 1)),
        guard_groups=None,
        histories=tree.num_histories,
        solved=solved,
    )


def _subgame(
    spec: GenerationSpec, game: ParticleEngine, sample: ParticleSample
) -> tuple[PublicTree, np.ndarray, np.ndarray, np.ndarray]:
    """Step 2: (tree, root histories [R], root weights [R], [k] the tree histories of the particles).

    "drawn": the roots are the distinct particles, each weighing its reach.
    "induced": the roots are every history joining two particle infostates,
    weighing σ₁(s₁)·σ₂(s₂)·π_c(h) (`pvf.games.induced_pbs`).
    """
    cap = spec.particles.max_histories
    tree, roots = game.particle_tree(sample.particles, max_histories=cap)
    if spec.particles.subgame == "drawn":
        weights = tree.chance_reach[roots] * sample.own_reach[:, 0] * sample.own_reach[:, 1]
        return tree, roots, weights, roots
    paths, reach = induced_roots(game.induced_histories, tree, roots, sample.own_reach)
    induced, joined_roots = game.particle_tree(paths, max_histories=cap)
    weights = induced.chance_reach[joined_roots] * reach[:, 0] * reach[:, 1]
    return induced, joined_roots, weights, find_histories(induced, sample.particles)


def run_particle_task(
    spec: GenerationSpec, task: Task, engine: str = "auto", networks: SampleNetworks = NO_NETWORKS
) -> ParticleShard:
    """All samples of the task, in sample-id order (`engine`, `networks`: `solve_sample`'s)."""
    samples = solve_samples(spec, range(task.trunk_lo, task.trunk_hi), engine, networks)
    sizes = [len(s["belief"]) for s in samples]
    cat = lambda k: np.concatenate([s[k] for s in samples])  # noqa: E731
    return ParticleShard(
        trunk=np.arange(task.trunk_lo, task.trunk_hi, dtype=np.int64),
        offset=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        public_features=np.stack([s["public"] for s in samples]).astype(np.float32),
        private_features=cat("private").astype(np.float32),
        player=cat("player"),
        slot=cat("slot"),
        belief=cat("belief"),
        target=cat("target"),
        target_current=cat("target_current"),
        mass=cat("mass"),
        cf_reach=cat("cf_reach"),
        cf_opponent=cat("cf_opponent").astype(np.float32),
        particles=np.array([s["stats"][0] for s in samples], dtype=np.int64),
        dead=np.array([s["stats"][1] for s in samples], dtype=np.int64),
        histories=np.array([s["stats"][2] for s in samples], dtype=np.int64),
        cf_rollout=cat("cf_rollout"),
    )
