"""Particle children samples at the beliefs a particle trunk's solve asks about (`SamplingConfig.p_solve`).

The particle analogue of `pvf.datasets.solve_queries`. A sparse particle
trunk (`pvf.experiments.particle_sweep`: K particles at move D − 1, a
chance node over the PBS they induce, leaves at move D) asks its value
function about the children of its roots with the beliefs of its CFR+
iterates: σ_n(parent)·π_t(a | s), π_t the current iterate at the parent's
infostate s. A children sample (`pvf.datasets.particle_children`) has the
same rows with π the random trunk strategy instead, and nets trained on
those err 2–4× more at their trunk's queries than on fresh samples, 5–16×
on zero-belief rows (`pvf.experiments.particle_trunk_errors`). For sample
i of a children spec with p_solve > 0:
  1. Its second generator (spawn key (i, 1), as the enumerated step 4)
     draws (u, k); if u ≥ p_solve the sample is a plain children sample,
     so files with p_solve = 0 are unchanged.
  2. Else it belongs to group g = i // G (G the spec's `solve_group`,
     default 128). The group's particles are those sample g·G draws (its trunk strategy, its
     generator); the group's trunk (move D − 1 to D over the PBS they
     induce) is solved by 100 CFR+ iterations (as the sweep) with the data's own
     targets at its leaves (`pvf.datasets.induced_targets`: what a network
     that learned the data perfectly would answer), or with a net given
     (`pvf generate --solve-network CKPT`: a value net, whose own
     solve asks about other beliefs than the targets'; one round of
     ReBeL's loop, data where the net's trunk asks), and each leaf query's
     iterate π_t is recovered from its leaf reaches (at a chance-node root
     one round deep, the reach of the sequence (s, a) is π_t(a | s)). This
     is done once per process and group (about 10 s at K = 16 in
     Goofspiel-13 with the targets, 0.6 s with a net, shared by the
     group's query samples).
  3. The sample's children are posed from the group's particles with the
     behaviour π_k at the parents' infostates (the k-th query's iterate, k
     uniform over the solve's queries; the random strategy of sample
     g·G only where the solve has none): the children's
     beliefs are the query's own. Its own generator (spawn key (i,)) draws
     the leaf public state its rows come from, as for any children sample.
Unlike the enumerated step, no part of the random strategy is mixed in:
λ·π_k + (1 − λ)·π is positive wherever the random strategy is, which drops
the zero beliefs a trunk's iterates have. In Goofspiel-13 at K = 16 (four
draws, second half of the solve) 25–46% of the leaf infostates have zero
reach with the targets at the leaves and 50–66% with a 300,000-sample net;
mixed with λ ~ U(0, 1) (the first version of this module) 4% of the query
samples' rows were left at zero, against 16% of plain samples'.
The solve is deterministic, so a sample depends on (spec, i) only.
Nets trained on 25,600 Goofspiel-13 samples with p_solve = 0.5 were no better
than on plain ones, at the trunk or at its queries, with the targets' or a
net's own queries (docs/results/particles.md): their error at the trunk
comes from its public states, all undecided, where most random-play samples
are decided (`--public-states undecided`, `pvf.datasets.particle_draws`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pvf.datasets.induced_targets import induced_pbs_evaluator
from pvf.datasets.particle_draws import draw_particles
from pvf.datasets.sample_networks import LeafNetwork
from pvf.datasets.spec import GenerationSpec
from pvf.games.engine import particle_engine
from pvf.games.history_sampling import ParticleSample, Strategy
from pvf.games.loading import load_game
from pvf.solvers.evaluators import RecordingEvaluator
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.particle_settings import setting_from_particles
from pvf.solvers.sparse_trunks import (
    ScaledEvaluator,
    leaf_scales,
    select_histories,
    sparse_trunk_strategy,
)
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk

Behaviour = dict[str, np.ndarray]  # OpenSpiel infostate string -> probabilities of its legal actions, in order


@dataclass(frozen=True)
class SolveQuery:
    """Step 1's draw for a sample posed at a trunk solve's query: its group and the query k."""

    group: int
    query: float  # U(0, 1); the query index is floor(query · Q)


def solve_query(spec: GenerationSpec, sample_id: int) -> SolveQuery | None:
    """Step 1: the sample's query draw, or None for a plain children sample."""
    if spec.sampling.p_solve == 0:
        return None
    u, k = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(sample_id, 1))).random(2)
    if u >= spec.sampling.p_solve:
        return None
    return SolveQuery(sample_id // spec.particles.solve_group, float(k))


class QueryBehaviour:
    """The `Strategy` of step 3: `iterate` where it has the infostate, `base` elsewhere."""

    def __init__(self, iterate: Behaviour, base: Strategy) -> None:
        self.iterate, self.base = iterate, base

    def __call__(self, info_string: str, num_actions: int) -> np.ndarray:
        known = self.iterate.get(info_string)
        return np.asarray(self.base(info_string, num_actions), dtype=np.float64) if known is None else known


def query_behaviours(trunk: Trunk, reaches: tuple[np.ndarray, np.ndarray]) -> list[Behaviour]:
    """Step 2: per query the iterate at the trunk's decision infostates (reaches: per player [Q, J_n] leaf reaches
    in the trunk's convention, one round below a chance-node root). An infostate some of whose actions reach
    no leaf (the game ends there) is left out: the base strategy plays it."""
    Q = reaches[0].shape[0]
    out: list[Behaviour] = [{} for _ in range(Q)]
    for n in (0, 1):
        seqs, strings = trunk.game.players[n], trunk.tree.infostate_strings[n]
        parent = trunk.game.leaf_parent[n]
        at = parent >= 0
        realization = np.full((Q, seqs.num_sequences), np.nan)
        realization[:, parent[at]] = reaches[n][:, at]
        for i, info in enumerate(seqs.infostates):
            block = np.arange(seqs.info_start[i], seqs.info_start[i] + seqs.info_size[i])
            block = block[np.argsort(seqs.seq_action[block])]  # OpenSpiel's legal-action order
            probs = realization[:, block]
            if np.isnan(probs).any():
                continue
            for q in range(Q):
                out[q][strings[int(info)]] = probs[q]
    return out


@dataclass(frozen=True, eq=False)
class GroupSolve:
    """Step 2 for one group: its particles and trunk strategy (its first sample's) and each query's iterate."""

    sample: ParticleSample
    base: Strategy
    behaviours: list[Behaviour]


@lru_cache(maxsize=4)
def group_solve(spec: GenerationSpec, engine: str, group: int, leaves: LeafNetwork | None = None) -> GroupSolve:
    """Step 2 for one group, once per process (engine: "native" or "openspiel"; leaves: the net at the trunk's
    leaves where the spec records one, `SampleNetworks.query`)."""
    loaded = load_game(spec.game)
    sample, base, _ = draw_particles(spec, particle_engine(loaded, engine), group * spec.particles.solve_group)
    depth, cap = spec.depth, spec.particles.max_histories
    setting = setting_from_particles(
        loaded, sample.particles, sample.own_reach, depth - 1, depth, "induced", engine, max_histories=cap
    )
    recorded: list[RecordingEvaluator] = []

    def make(trunk: Trunk) -> LeafEvaluator:
        if leaves is None:
            inner = induced_pbs_evaluator(loaded, trunk, spec.cfr_iterations, spec.target, engine)
        else:
            inner = leaves(trunk)
        recording = RecordingEvaluator(ScaledEvaluator(inner, leaf_scales(setting, trunk)))
        recorded.append(recording)
        return recording

    trunk, _ = sparse_trunk_strategy(
        setting, select_histories(setting, fraction=1.0), make, DEFAULT_ITERATIONS, game_root_convention=False
    )
    if not recorded:  # the game ends at the trunk's leaves: nothing is asked
        return GroupSolve(sample, base, [{}])
    return GroupSolve(sample, base, query_behaviours(trunk, (recorded[0].stacked(0), recorded[0].stacked(1))))


def query_parents(
    spec: GenerationSpec, engine: str, query: SolveQuery, leaves: LeafNetwork | None = None
) -> tuple[ParticleSample, QueryBehaviour]:
    """Step 3's particles (the group's) and behaviour at the parents: the group's k-th query iterate (the
    group's trunk strategy where it has none)."""
    solved = group_solve(spec, engine, query.group, leaves)
    k = min(int(query.query * len(solved.behaviours)), len(solved.behaviours) - 1)
    return solved.sample, QueryBehaviour(solved.behaviours[k], solved.base)
