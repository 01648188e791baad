"""Fig. 4 generalised: sparse particle trunks where no equilibrium can be computed.

For a game, a root move r, a trunk depth d, a number of particle draws K and
a seed s:
  1. The reference profile is a stated strategy: the random-trunk mix of
     `pvf generate` (`LazyTrunkStrategy(seed=reference_seed, trunk_id=s)`)
     or the uniform strategy. It is played to move r, again (same stream)
     while the trunk does not matter for the played history alone: while
     the uniform trunk strategy is unexploitable in the one-particle game
     of that history (late in win/lose Goofspiel most public states are
     decided under good play, and there every trunk strategy scores 0);
     its public state gets K particle draws (`pvf.games.history_sampling`); equal draws merge
     and dead draws drop out, leaving k ≤ K distinct particles.
  2. The root is a chance node, made common knowledge as fig. 4 does, over
     (`roots="induced"`, the default) the PBS the particles induce (the
     paper, sec. 5.1): every history joining two particle infostates
     (`pvf.games.induced_pbs`), weighing w(h) = π_c(h)·σ₁(s₁)·σ₂(s₂), σ_n
     the players' own reaches under the reference profile. That is the PBS
     a particle network is trained on (`pvf.datasets.particle_tasks`), and
     its trunk's leaf PBSs are again the PBSs their infostates induce, so
     the network is asked about exactly the game it is measured in.
     With `roots="drawn"` the chance node is over the k particles only,
     each weighing its reach π_c·π₁·π₂ (pvf's first sweeps): the leaf PBSs a
     network sees then hold histories the trunk lacks. Either way the
     weights are the reference's reaches, not renormalised
     (`pvf.solvers.particle_trunks.particle_setting` on a particle tree
     built to the end of the game).
  3. CFR+ solves the trunk (moves r to d) with each leaf evaluator: the
     exact oracle (leaf subgames solved by LP), a trained particle value
     function (`ScaledEvaluator`, the game-root convention it was trained
     in), and the uniform strategy is the reference line.
  4. Trunk exploitability of the trunk strategy is computed exactly by LP in
     the particle-restricted game (the chance node of step 2, solved to the
     end of the game) with the weights divided by Σ w: the
     game whose chance node draws the particles with probabilities w / Σ w.
     Where that game has more than `exact_up_to` histories (the LP no longer
     fits: Goofspiel-8 from K = 64 on) the figure is instead the certified
     upper bound of `pvf.solvers.trunk_bound` (CFR+ with the trunk frozen,
     exact best responses), and the row says so (`measure`, with the
     bound's duality gap); evaluators that solve LPs at the leaves (the
     oracle) are skipped there.
     The reaches of deep histories are tiny (10⁻¹⁰ at move 9 of 13 cards),
     and unnormalised the LP's figures would sink below its tolerances.
     Exploitability is linear in the weights; CFR+ is invariant to their
     scale, so a network (whose belief and value conversions need the
     unnormalised w) solves with w, the oracle LP with w / Σ w.
  5. Optionally (`policies`, `pvf experiment particle-trunks --save-policy`)
     each run's restricted game and trunk strategies as plain data
     (`trunk_policy`): the particles as action sequences of OpenSpiel's
     turn-based form of the game (`pyspiel.convert_to_turn_based` for a
     simultaneous game) with their normalised weights, and per evaluator
     and player the trunk strategy keyed by OpenSpiel information-state
     strings, so the figure can be rechecked with OpenSpiel alone
     (tests/experiments/test_particle_policy.py does, on Goofspiel-4).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.sampling import SamplingConfig
from pvf.games.loading import LoadedGame
from pvf.errors import PvfError
from pvf.games.history_sampling import MAX_PLAYS, play_to_depth, sample_particles
from pvf.games.induced_pbs import induced_roots
from pvf.games.particle_tree import build_particle_tree, find_histories, history_actions
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.evaluators import ExactEvaluator
from pvf.solvers.particle_trunks import particle_setting
from pvf.solvers.sparse_trunks import (
    ScaledEvaluator,
    SparseSetting,
    evaluation_strategies,
    leaf_scales,
    no_strategy,
    select_histories,
    sparse_exploitability,
    sparse_trunk,
    uniform_exploitability,
)
from pvf.solvers.trunk_bound import DEFAULT_BOUND_ITERATIONS, trunk_exploitability_bounds
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk, solve_trunk

UNIFORM = SamplingConfig(p_uniform=1.0)
DEFAULT_EXACT_HISTORIES = 250_000  # restricted games up to this many histories get the exploitability LP (Goofspiel-13's K = 64 all do)
EXACT, BOUND = "exact", "upper bound"


@dataclass(frozen=True)
class SweepEvaluator:
    """One leaf evaluator of a particle sweep.

    make: setting -> (trunk -> LeafEvaluator), called once per (K, seed) and once per trunk.
    game_root: it takes the game-root convention of a trained network (wrapped in `ScaledEvaluator`
        and solved with the unnormalised weights) rather than the normalised weights' (step 4).
    lp_leaves: it solves an LP at each leaf (the exact oracle), so it is skipped where the
        restricted game is beyond the exploitability LP and the bound is used.
    """

    make: Callable[[SparseSetting], Callable[[Trunk], LeafEvaluator]]
    game_root: bool
    lp_leaves: bool = False


ORACLE = SweepEvaluator(lambda setting: ExactEvaluator, game_root=False, lp_leaves=True)  # exact leaf values, by LP


@dataclass(frozen=True)
class ParticleRow:
    """One sparse particle trunk: game × K × seed × evaluator (exploitability in the NashConv convention)."""

    game: str
    draws: int
    seed: int
    particles: int  # distinct drawn particles
    roots: int  # root histories of the trunk (the induced PBS's, or the particles)
    histories: int
    evaluator: str
    exploitability: float  # with the weights normalised to sum 1 (step 4)
    seconds: float
    measure: str = EXACT  # "exact" (LP) or "upper bound" (pvf.solvers.trunk_bound)
    gap: float = 0.0  # the bound's duality gap: the exploitability lies in [exploitability − gap, exploitability]


def check_trunk(loaded: LoadedGame, root_move: int, depth: int, max_histories: int = DEFAULT_MAX_HISTORIES) -> None:
    """Refuse (PvfError), before any work, a trunk whose particle subgame cannot be built.

    In N-card Goofspiel a particle at move r has up to ((N − r)!)² histories
    below it; one over the particle tree's cap would fail only after walking
    the cap's worth of OpenSpiel states.
    """
    if not 0 <= root_move < depth:
        raise PvfError(f"the trunk needs 0 <= --root-move < --depth, got {root_move} and {depth}")
    if loaded.original.get_type().short_name == "goofspiel":
        n = int(loaded.original.get_parameters()["num_cards"])
        below = math.factorial(n - root_move) ** 2
        if below > max_histories:
            raise PvfError(f"a particle at move {root_move} of {n}-card Goofspiel has up to {below:,} histories below it, "
                           f"over the particle tree's cap of {max_histories:,}; use a later --root-move")


def particle_roots(
    loaded: LoadedGame, root_move: int, depth: int, draws: int, seed: int, reference: SamplingConfig, reference_seed: int = 0
) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Step 1: the distinct particles of one public state at `root_move` and their own reaches [k, 2]."""
    strategy = LazyTrunkStrategy(reference_seed, seed, reference)
    rng = np.random.default_rng(np.random.SeedSequence(reference_seed, spawn_key=(seed, draws)))
    for _ in range(MAX_PLAYS):
        history = play_to_depth(loaded, strategy, root_move, rng)
        alone = build_particle_tree(loaded, [history])
        single = particle_setting(alone, find_histories(alone, [history]), np.ones(1), np.ones((1, 2)), root_move, depth)
        if uniform_exploitability(single).exploitability > 1e-12:
            break
    else:
        raise PvfError(f"{MAX_PLAYS} plays to move {root_move} all reached public states where the trunk does not matter")
    sample = sample_particles(loaded, strategy, history, draws, rng)
    while not sample.particles:
        sample = sample_particles(loaded, strategy, history, draws, rng)
    return sample.particles, sample.own_reach


ROOTS = ("induced", "drawn")


def particle_trunk_setting(
    loaded: LoadedGame, root_move: int, depth: int, draws: int, seed: int, reference: SamplingConfig, reference_seed: int = 0,
    roots: str = "induced",
) -> SparseSetting:
    """Steps 1–2: the sparse setting of one draw of particles."""
    particles, own = particle_roots(loaded, root_move, depth, draws, seed, reference, reference_seed)
    return setting_from_particles(loaded, particles, own, root_move, depth, roots)


def setting_from_particles(
    loaded: LoadedGame, particles: list[tuple[int, ...]], own: np.ndarray, root_move: int, depth: int, roots: str = "induced"
) -> SparseSetting:
    """Step 2: the chance-node root over the particles' induced PBS ("induced") or over the particles ("drawn").

    particles: k distinct histories at `root_move`; own: [k, 2] each player's own reach of each.
    """
    if roots not in ROOTS:
        raise PvfError(f"roots must be one of {', '.join(ROOTS)}, got {roots!r}")
    if roots == "induced":
        drawn = build_particle_tree(loaded, particles, depth_limit=depth)
        particles, own = induced_roots(loaded, drawn, find_histories(drawn, particles), own)
    order = sorted(range(len(particles)), key=lambda k: particles[k])
    particles, own = [particles[k] for k in order], own[order]
    tree = build_particle_tree(loaded, particles)
    histories = find_histories(tree, particles)
    weights = tree.chance_reach[histories] * own[:, 0] * own[:, 1]
    return particle_setting(tree, histories, weights, own, root_move, depth)


def run_particle_sweep(
    loaded: LoadedGame,
    root_move: int,
    depth: int,
    draws: Sequence[int],
    seeds: Sequence[int],
    evaluators: dict[str, SweepEvaluator],
    reference: SamplingConfig = SamplingConfig(),
    iterations: int = DEFAULT_ITERATIONS,
    reference_seed: int = 0,
    policies: list[dict] | None = None,
    roots: str = "induced",
    exact_up_to: int = DEFAULT_EXACT_HISTORIES,
    bound_iterations: int = DEFAULT_BOUND_ITERATIONS,
) -> list[ParticleRow]:
    """Every (K, seed): the uniform line and each evaluator's trunk exploitability (steps 3–4).

    evaluators: name -> `SweepEvaluator`.
    policies: if a list, one `trunk_policy` record per (K, seed) is appended to it (step 5).
    roots: "induced" (the chance node over the PBS the particles induce) or "drawn" (over the particles).
    exact_up_to: restricted games with more histories get the certified bound (`bound_iterations`) instead of the LP.
    """
    rows = []
    for k in draws:
        for seed in seeds:
            start = time.perf_counter()
            particles, own = particle_roots(loaded, root_move, depth, k, seed, reference, reference_seed)
            setting = setting_from_particles(loaded, particles, own, root_move, depth, roots)
            size = (len(particles), setting.num_histories, setting.tree.num_histories)
            normal = particle_setting(setting.tree, setting.histories, setting.weights / setting.weights.sum(),
                                      setting.own_reach, root_move, depth)
            exact = setting.tree.num_histories <= exact_up_to
            measure = lambda trunk, strategies: _measure(normal, trunk, strategies, exact, bound_iterations)  # noqa: E731
            uniform, how, gap = measure(normal.evaluation, no_strategy(normal.evaluation))
            rows.append(ParticleRow(loaded.game_string, k, seed, *size, "uniform", uniform, time.perf_counter() - start, how, gap))
            kept = select_histories(setting, fraction=1.0)
            record = restricted_game(normal, k, seed, uniform)
            for name, sweep in evaluators.items():
                if not exact and sweep.lp_leaves:
                    continue
                start = time.perf_counter()
                solve = setting if sweep.game_root else normal
                trunk = sparse_trunk(solve, kept)
                evaluator = sweep.make(solve)(trunk)
                if sweep.game_root:
                    evaluator = ScaledEvaluator(evaluator, leaf_scales(solve, trunk))
                strategies = solve_trunk(trunk, evaluator, iterations)
                value, how, gap = measure(trunk, strategies)
                rows.append(ParticleRow(loaded.game_string, k, seed, *size, name, value, time.perf_counter() - start, how, gap))
                record["evaluators"][name] = {"exploitability": value, "measure": how, "policy": trunk_policy(trunk, strategies)}
            if policies is not None:
                policies.append(record)
    return rows


def _measure(setting: SparseSetting, trunk: Trunk, strategies, exact: bool, bound_iterations: int) -> tuple[float, str, float]:
    """(exploitability, "exact", 0) by LP, or (certified upper bound, "upper bound", its duality gap)."""
    if exact:
        return sparse_exploitability(setting, trunk, strategies).exploitability, EXACT, 0.0
    ev = setting.evaluation
    bound = trunk_exploitability_bounds(ev.full, evaluation_strategies(setting, trunk, strategies), ev.masks,
                                        ev.root_beliefs, bound_iterations)
    return bound.upper, BOUND, bound.gap


def restricted_game(setting: SparseSetting, draws: int, seed: int, uniform: float) -> dict:
    """Step 5: the particle-restricted game of a setting with normalised weights, as plain data."""
    return {
        "draws": draws,
        "seed": seed,
        "particles": [{"actions": history_actions(setting.tree, int(h)), "weight": float(w)}
                      for h, w in zip(setting.histories, setting.weights)],
        "uniform_exploitability": uniform,
        "evaluators": {},
    }


def trunk_policy(trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray]) -> list[dict[str, dict[str, float]]]:
    """Per player {OpenSpiel infostate string: {action: probability}} over the trunk's decision infostates."""
    out = []
    for n in (0, 1):
        seqs, strings, policy = trunk.game.players[n], trunk.tree.infostate_strings[n], {}
        for i, info in enumerate(seqs.infostates):
            key = strings[int(info)]
            if key in policy:  # an OpenSpiel string in two public states: the key would not identify it
                raise PvfError(f"player {n + 1}'s infostate string {key!r} occurs in two public states; no policy file")
            block = range(int(seqs.info_start[i]), int(seqs.info_start[i] + seqs.info_size[i]))
            policy[key] = {str(int(seqs.seq_action[j])): float(strategies[n][j]) for j in block}
        out.append(policy)
    return out


def write_policy_file(path: str | Path, game: str, root_move: int, depth: int, reference: str, policies: list[dict]) -> None:
    """One JSON file: the game, the trunk and every run's `restricted_game` record (step 5)."""
    document = {
        "format": "pvf particle trunk policy, version 1",
        "game": game,
        "turn_based": "actions are of pyspiel.convert_to_turn_based(game) when the game is simultaneous",
        "root_move": root_move,
        "depth": depth,
        "reference": reference,
        "exploitability": "trunk exploitability, NashConv convention (sum over players of what a best response gains), "
                          "in the game whose chance node draws the particles with these weights and then plays to the end; "
                          "the trunk strategy is fixed at the trunk's infostates (moves root_move to depth - 1)",
        "runs": policies,
    }
    with open(path, "w") as f:
        json.dump(document, f)


def summarize(rows: Sequence[ParticleRow]) -> list[dict]:
    """Per (evaluator, K): runs, distinct particles and root histories (means), exploitability mean and std."""
    table = []
    for name in dict.fromkeys(r.evaluator for r in rows):
        for k in dict.fromkeys(r.draws for r in rows):
            mine = [r for r in rows if r.evaluator == name and r.draws == k]
            if not mine:  # an LP evaluator beyond --exact-up-to
                continue
            values = np.array([r.exploitability for r in mine])
            table.append({
                "evaluator": name,
                "draws": k,
                "runs": len(mine),
                "particles_mean": float(np.mean([r.particles for r in mine])),
                "roots_mean": float(np.mean([r.roots for r in mine])),
                "exploitability_mean": float(values.mean()),
                "exploitability_std": float(values.std()),
                "measure": " / ".join(sorted({r.measure for r in mine})),
                "gap_max": float(max(r.gap for r in mine)),
                "seconds_mean": float(np.mean([r.seconds for r in mine])),
            })
    return table


def plot_particle_sweep(table: Sequence[dict], path: str, title: str) -> None:
    """Exploitability against K (log scale), one line per evaluator, standard deviations as bars."""
    import textwrap

    from matplotlib.figure import Figure

    from pvf.experiments.plots import NASHCONV_LABEL

    fig = Figure(figsize=(6.5, 4.5))
    ax = fig.subplots()
    bounded = False
    for name in dict.fromkeys(r["evaluator"] for r in table):
        mine = [r for r in table if r["evaluator"] == name]
        line = ax.errorbar([r["draws"] for r in mine], [r["exploitability_mean"] for r in mine],
                           yerr=[r["exploitability_std"] for r in mine], marker="o", capsize=3, label=name,
                           linestyle="--" if name == "uniform" else "-")
        bound = [r for r in mine if r.get("measure", EXACT) != EXACT]
        if bound:  # certified upper bounds (some or all runs beyond the LP): a hollow triangle over the point
            bounded = True
            color = line.lines[0].get_color()
            ax.plot([r["draws"] for r in bound], [r["exploitability_mean"] for r in bound], linestyle="none", marker="v",
                    markersize=11, markerfacecolor="none", color=color, markeredgecolor=color)
    if bounded:
        ax.plot([], [], linestyle="none", marker="v", markerfacecolor="none", color="black", label="upper bound (beyond the LP)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("particle draws K at the root public state")
    ax.set_ylabel(f"{NASHCONV_LABEL}, weights normalised")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(textwrap.fill(title, 60), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
