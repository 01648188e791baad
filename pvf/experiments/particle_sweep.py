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
     (`pvf.solvers.sparse_trunks.particle_setting` on a particle tree
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
     (`pvf.solvers.trunk_solver.player_policies`): the particles as action sequences of OpenSpiel's
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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError, TooManyHistories
from pvf.experiments.trunk_sweep import (
    EXACT,
    UNIFORM,
    SweepEvaluator,
    SweepRow,
    TrunkPoint,
    columns,
    summarize_rows,
    sweep,
)
from pvf.games.engine import check_engine, live_particles, particle_engine
from pvf.games.induced_pbs import check_particle_count
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import history_actions
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES
from pvf.solvers.particle_settings import play_until_trunk_matters, setting_from_particles
from pvf.solvers.sparse_trunks import SparseSetting, select_histories
from pvf.solvers.trunk_bound import DEFAULT_BOUND_ITERATIONS
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

UNIFORM_REFERENCE = SamplingConfig(p_uniform=1.0)
DEFAULT_EXACT_HISTORIES = (
    250_000  # restricted games up to this many histories get the exploitability LP (Goofspiel-13's K = 64 all do)
)


# The columns `pvf experiment particle-trunks` and `pvf reproduce particles` write:
# {column: SweepRow field / summary key}.
RUN_COLUMNS = {
    "game": "game",
    "draws": "draws",
    "seed": "seed",
    "particles": "particles",
    "roots": "root_histories",
    "histories": "histories",
    "evaluator": "evaluator",
    "exploitability": "exploitability",
    "seconds": "seconds",
    "measure": "measure",
    "gap": "gap",
}
SUMMARY_COLUMNS = {
    k: k
    for k in (
        "evaluator",
        "draws",
        "runs",
        "particles_mean",
        "roots_mean",
        "exploitability_mean",
        "exploitability_std",
        "measure",
        "gap_max",
        "seconds_mean",
    )
}


def draws_and_seeds(draws: str, seeds: str) -> tuple[list[int], list[int]]:
    """`--draws` and `--seeds` of a particle-trunk command: comma-separated particle counts (each allowed by
    `check_particle_count`) and non-negative seeds; a one-line PvfError otherwise."""
    try:
        counts, numbers = [int(k) for k in draws.split(",")], [int(s) for s in seeds.split(",")]
    except ValueError:
        raise PvfError("--draws and --seeds take comma-separated integers, e.g. 1,4,16") from None
    for k in counts:
        check_particle_count(k, "--draws")
    if min(numbers) < 0:
        raise PvfError(f"--seeds must be non-negative, got {seeds}")
    return counts, numbers


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
        if depth > n:
            raise PvfError(
                f"{n}-card Goofspiel has {n} moves (0 to {n - 1}, then the end); --depth must be at most {n}, "
                f"got {depth}"
            )
        below = math.factorial(n - root_move) ** 2
        if below > max_histories:
            raise PvfError(
                f"a particle at move {root_move} of {n}-card Goofspiel has up to {below:,} histories below it, "
                f"over the particle tree's cap of {max_histories:,}; use a later --root-move"
            )


def particle_roots(
    loaded: LoadedGame,
    root_move: int,
    depth: int,
    draws: int,
    seed: int,
    reference: SamplingConfig,
    reference_seed: int = 0,
    engine: str = "auto",
) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Step 1: the distinct particles of one public state at `root_move` and their own reaches [k, 2].

    engine: the particle engine (`pvf.games.engine`; the same particles from each)."""
    game = particle_engine(loaded, engine)
    strategy = LazyTrunkStrategy(reference_seed, seed, reference)
    rng = np.random.default_rng(np.random.SeedSequence(reference_seed, spawn_key=(seed, draws)))
    history = play_until_trunk_matters(game, strategy, root_move, depth, rng)
    sample = live_particles(game, strategy, history, draws, rng)
    return sample.particles, sample.own_reach


def particle_trunk_setting(
    loaded: LoadedGame,
    root_move: int,
    depth: int,
    draws: int,
    seed: int,
    reference: SamplingConfig,
    reference_seed: int = 0,
    roots: str = "induced",
    engine: str = "auto",
    max_histories: int = DEFAULT_MAX_HISTORIES,
) -> SparseSetting:
    """Steps 1–2: the sparse setting of one draw of particles (`engine`: the particle engine; `max_histories`:
    the cap of its tree, solved to the end of the game)."""
    particles, own = particle_roots(loaded, root_move, depth, draws, seed, reference, reference_seed, engine)
    return setting_from_particles(loaded, particles, own, root_move, depth, roots, engine, max_histories=max_histories)


def oversized_points(
    loaded: LoadedGame,
    root_move: int,
    depth: int,
    draws: Sequence[int],
    seeds: Sequence[int],
    reference: SamplingConfig,
    reference_seed: int,
    roots: str,
    engine: str,
    max_histories: int,
    skip: bool,
) -> set[tuple[int, int]]:
    """The (K, seed) points whose restricted game has more than `max_histories` histories: returned if `skip`,
    else a PvfError naming the first. Builds each point's tree once (seconds at Goofspiel-13's K = 256)."""
    oversized = set()
    for k in draws:
        for seed in seeds:
            try:
                particle_trunk_setting(
                    loaded, root_move, depth, k, seed, reference, reference_seed, roots, engine, max_histories
                )
            except TooManyHistories as exc:
                if not skip:
                    raise PvfError(
                        f"K = {k}, seed {seed}: {exc} (or raise --max-histories, now {max_histories:,}, "
                        "or leave such draws out with --skip-oversized)"
                    ) from None
                oversized.add((k, seed))
    return oversized


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
    engine: str = "auto",
    max_histories: int = DEFAULT_MAX_HISTORIES,
    skip_oversized: bool = False,
    skipped: list[tuple[int, int]] | None = None,
) -> list[SweepRow]:
    """Every (K, seed): the uniform line and each evaluator's trunk exploitability (steps 3–4).

    evaluators: name -> `SweepEvaluator`.
    policies: if a list, one `restricted_game` record per (K, seed) is appended to it (step 5).
    roots: "induced" (the chance node over the PBS the particles induce) or "drawn" (over the particles).
    exact_up_to: restricted games with more histories get the certified bound (`bound_iterations`) instead of the LP.
    engine: the particle engine of steps 1–2 (`pvf.games.engine`; the same rows from each).
    max_histories: the cap of each restricted game's tree. Every (K, seed)'s particles are drawn and its tree's
        size checked before any is solved, so a game over the cap is named at once, not hours into a sweep.
    skip_oversized: leave such points out instead (their (K, seed) appended to `skipped`); the summary's
        `runs` then counts the others.
    """
    check_engine(engine)
    oversized = oversized_points(
        loaded, root_move, depth, draws, seeds, reference, reference_seed, roots, engine, max_histories, skip_oversized
    )
    if skipped is not None:
        skipped.extend(sorted(oversized))

    def points():
        for k in draws:
            for seed in seeds:
                if (k, seed) in oversized:
                    continue
                start = time.perf_counter()
                particles, own = particle_roots(loaded, root_move, depth, k, seed, reference, reference_seed, engine)
                setting = setting_from_particles(
                    loaded, particles, own, root_move, depth, roots, engine, max_histories=max_histories
                )
                yield TrunkPoint(
                    str(k),
                    seed,
                    setting,
                    select_histories(setting, fraction=1.0),
                    normalized=True,
                    exact=setting.tree.num_histories <= exact_up_to,
                    bound_iterations=bound_iterations,
                    draws=k,
                    particles=len(particles),
                    started=start,
                )

    return sweep(points(), {"uniform": UNIFORM, **evaluators}, iterations, policies, restricted_game)


def restricted_game(point: TrunkPoint, setting: SparseSetting, uniform: float) -> dict:
    """Step 5: the particle-restricted game of a point (`setting`: with normalised weights), as plain data."""
    return {
        "draws": point.draws,
        "seed": point.seed,
        "particles": [
            {"actions": history_actions(setting.tree, int(h)), "weight": float(w)}
            for h, w in zip(setting.histories, setting.weights)
        ],
        "uniform_exploitability": uniform,
        "evaluators": {},
    }


def write_policy_file(
    path: str | Path, game: str, root_move: int, depth: int, reference: str, policies: list[dict]
) -> None:
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


def summarize(rows: Sequence[SweepRow]) -> list[dict]:
    """Per (evaluator, K): runs, distinct particles and root histories (means), exploitability mean and std."""
    return columns(summarize_rows(rows), SUMMARY_COLUMNS)


def runs_table(rows: Sequence[SweepRow]) -> list[dict]:
    """One dict per row, the columns of `fig4-<game>-runs.csv`."""
    return columns(rows, RUN_COLUMNS)


LEGEND_INSIDE = 6  # legend entries that fit inside the axes of a sweep's figure


def plot_particle_sweep(table: Sequence[dict], path: str, title: str) -> None:
    """`sweep_figure` saved as a PNG at `path`."""
    sweep_figure(table, title).savefig(path, dpi=120, bbox_inches="tight")


def sweep_figure(table: Sequence[dict], title: str) -> Figure:
    """Exploitability against K (log scale), one line per evaluator, standard deviations as bars (a Figure).

    Where the table has a mean of networks, its single networks (evaluators named "network …" or with the
    word "net" in them, as merged sweeps rename them) are drawn faint (thin, in light shades, without bars), so
    the means and the references stand out. A legend of more than `LEGEND_INSIDE` entries goes to the right of the
    axes, where it covers no line.
    """
    import re
    import textwrap

    from matplotlib import colormaps
    from matplotlib.figure import Figure

    from pvf.experiments.plots import NASHCONV_LABEL

    names = list(dict.fromkeys(r["evaluator"] for r in table))
    bounded = any(r.get("measure", EXACT) != EXACT for r in table)  # some runs beyond the LP: a legend entry for them
    outside = len(names) + bounded > LEGEND_INSIDE
    fig = Figure(figsize=(10.0 if outside else 6.5, 4.5))
    ax = fig.subplots()
    has_mean = any("mean of" in name for name in names)
    shades = {"main": 0, "faint": 0}
    for name in names:
        mine = [r for r in table if r["evaluator"] == name]
        faint = has_mean and "mean of" not in name and re.search(r"\bnet(work)?\b", name) is not None
        kind = "faint" if faint else "main"
        color = colormaps["tab20"](2 * shades[kind] + 1) if faint else f"C{shades[kind]}"
        shades[kind] += 1
        line = ax.errorbar(
            [r["draws"] for r in mine],
            [r["exploitability_mean"] for r in mine],
            yerr=None if faint else [r["exploitability_std"] for r in mine],
            marker="o",
            markersize=3 if faint else 6,
            linewidth=0.8 if faint else 1.5,
            alpha=0.45 if faint else 1.0,
            capsize=3,
            label=name,
            linestyle="--" if name == "uniform" else "-",
            color=color,
        )
        bound = [r for r in mine if r.get("measure", EXACT) != EXACT]
        if bound:  # certified upper bounds (some or all runs beyond the LP): a hollow triangle over the point
            color = line.lines[0].get_color()
            ax.plot(
                [r["draws"] for r in bound],
                [r["exploitability_mean"] for r in bound],
                linestyle="none",
                marker="v",
                markersize=11,
                markerfacecolor="none",
                color=color,
                markeredgecolor=color,
            )
    if bounded:
        ax.plot(
            [],
            [],
            linestyle="none",
            marker="v",
            markerfacecolor="none",
            color="black",
            label="upper bound (beyond the LP)",
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("particle draws K at the root public state")
    ax.set_ylabel(f"{NASHCONV_LABEL}, weights normalised")
    ax.grid(True, which="both", alpha=0.3)
    if outside:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    else:
        ax.legend(fontsize=8)
    ax.set_title(textwrap.fill(title, 60), fontsize=10)
    fig.tight_layout()
    return fig
