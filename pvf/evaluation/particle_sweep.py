"""Fig. 4 generalised: sparse particle trunks where no equilibrium can be computed.

For a game, a root move r, a trunk depth d, a number of particle draws K and
a seed s:
  1. The reference profile is a stated strategy: the random-trunk mix of
     `pvf generate` (`LazyTrunkStrategy(seed=reference_seed, trunk_id=s)`)
     or the uniform strategy. It is played to move r; its public state gets
     K particle draws (`pvf.datasets.particle_sampling`); equal draws merge
     and dead draws drop out, leaving k ≤ K distinct particles.
  2. Each particle weighs w(h) = π_c(h)·π₁(h)·π₂(h) under the reference
     profile (its reach, as fig. 4's π*-reach, not renormalised), and the
     particles are made common knowledge by a chance node over them
     (`pvf.solvers.particle_trunks.particle_setting` on a particle tree built
     to the end of the game).
  3. CFR+ solves the trunk (moves r to d) with each leaf evaluator: the
     exact oracle (leaf subgames solved by LP), a trained particle value
     function (`ScaledEvaluator`, the game-root convention it was trained
     in), and the uniform strategy is the reference line.
  4. Trunk exploitability of the trunk strategy is computed exactly by LP in
     the particle-restricted game (the chance node over the k particles,
     solved to the end of the game), NashConv convention, and divided by
     the total weight Σ w: the figure of the game whose chance node draws
     the particles with probabilities w / Σ w (exploitability is linear in
     the weights; the solve keeps the unnormalised weights so that the
     network's belief and value conversions stay exact).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.particle_sampling import play_to_depth, sample_particles
from pvf.datasets.sampling import SamplingConfig
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import build_particle_tree, find_histories
from pvf.solvers.cfr_plus import LeafEvaluator
from pvf.solvers.particle_trunks import particle_setting
from pvf.solvers.sparse_trunks import SparseSetting, select_histories, solve_sparse_trunk, uniform_exploitability
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk

UNIFORM = SamplingConfig(p_uniform=1.0)


@dataclass(frozen=True)
class ParticleRow:
    """One sparse particle trunk: game × K × seed × evaluator (exploitability in the NashConv convention)."""

    game: str
    draws: int
    seed: int
    particles: int
    histories: int
    evaluator: str
    exploitability: float  # divided by the particles' total weight (step 4)
    seconds: float


def particle_roots(
    loaded: LoadedGame, root_move: int, draws: int, seed: int, reference: SamplingConfig, reference_seed: int = 0
) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Step 1: the distinct particles of one public state at `root_move` and their own reaches [k, 2]."""
    strategy = LazyTrunkStrategy(reference_seed, seed, reference)
    rng = np.random.default_rng(np.random.SeedSequence(reference_seed, spawn_key=(seed, draws)))
    history = play_to_depth(loaded, strategy, root_move, rng)
    sample = sample_particles(loaded, strategy, history, draws, rng)
    while not sample.particles:
        sample = sample_particles(loaded, strategy, history, draws, rng)
    return sample.particles, sample.own_reach


def particle_trunk_setting(
    loaded: LoadedGame, root_move: int, depth: int, draws: int, seed: int, reference: SamplingConfig, reference_seed: int = 0
) -> SparseSetting:
    """Steps 1–2: the sparse setting of one draw of particles."""
    particles, own = particle_roots(loaded, root_move, draws, seed, reference, reference_seed)
    order = sorted(range(len(particles)), key=lambda k: particles[k])
    particles, own = [particles[k] for k in order], own[order]
    tree = build_particle_tree(loaded, particles)
    roots = find_histories(tree, particles)
    weights = tree.chance_reach[roots] * own[:, 0] * own[:, 1]
    return particle_setting(tree, roots, weights, own, root_move, depth)


def run_particle_sweep(
    loaded: LoadedGame,
    root_move: int,
    depth: int,
    draws: Sequence[int],
    seeds: Sequence[int],
    evaluators: dict[str, tuple[Callable[[SparseSetting], Callable[[Trunk], LeafEvaluator]], bool]],
    reference: SamplingConfig = SamplingConfig(),
    iterations: int = DEFAULT_ITERATIONS,
    reference_seed: int = 0,
) -> list[ParticleRow]:
    """Every (K, seed): the uniform line and each evaluator's trunk exploitability (steps 3–4).

    evaluators: name -> (setting -> make_evaluator(trunk), game_root_convention).
    """
    rows = []
    for k in draws:
        for seed in seeds:
            start = time.perf_counter()
            setting = particle_trunk_setting(loaded, root_move, depth, k, seed, reference, reference_seed)
            size = (setting.num_histories, setting.tree.num_histories)
            total = float(setting.weights.sum())
            uniform = uniform_exploitability(setting).exploitability / total
            rows.append(ParticleRow(loaded.game_string, k, seed, *size, "uniform", uniform, time.perf_counter() - start))
            kept = select_histories(setting, fraction=1.0)
            for name, (factory, game_root) in evaluators.items():
                start = time.perf_counter()
                result = solve_sparse_trunk(setting, kept, factory(setting), iterations, game_root_convention=game_root)
                rows.append(ParticleRow(loaded.game_string, k, seed, *size, name, result.exploitability.exploitability / total, time.perf_counter() - start))
    return rows


def summarize(rows: Sequence[ParticleRow]) -> list[dict]:
    """Per (evaluator, K): runs, distinct particles (mean), exploitability mean and standard deviation."""
    table = []
    for name in dict.fromkeys(r.evaluator for r in rows):
        for k in dict.fromkeys(r.draws for r in rows):
            mine = [r for r in rows if r.evaluator == name and r.draws == k]
            values = np.array([r.exploitability for r in mine])
            table.append({
                "evaluator": name,
                "draws": k,
                "runs": len(mine),
                "particles_mean": float(np.mean([r.particles for r in mine])),
                "exploitability_mean": float(values.mean()),
                "exploitability_std": float(values.std()),
                "seconds_mean": float(np.mean([r.seconds for r in mine])),
            })
    return table


def plot_particle_sweep(table: Sequence[dict], path: str, title: str) -> None:
    """Exploitability against K (log scale), one line per evaluator, standard deviations as bars."""
    import textwrap

    from matplotlib.figure import Figure

    from pvf.evaluation.plots import NASHCONV_LABEL

    fig = Figure(figsize=(6.5, 4.5))
    ax = fig.subplots()
    for name in dict.fromkeys(r["evaluator"] for r in table):
        mine = [r for r in table if r["evaluator"] == name]
        ax.errorbar([r["draws"] for r in mine], [r["exploitability_mean"] for r in mine],
                    yerr=[r["exploitability_std"] for r in mine], marker="o", capsize=3, label=name,
                    linestyle="--" if name == "uniform" else "-")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("particle draws K at the root public state")
    ax.set_ylabel(f"{NASHCONV_LABEL} / Σ w")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(textwrap.fill(title, 60), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
