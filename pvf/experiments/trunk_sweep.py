"""Fig. 4's sweep: sparse trunks solved with each leaf evaluator and measured, one row per trunk and evaluator.

A sparse trunk (`pvf.solvers.sparse_trunks`) is rooted at a chance node
over some root histories with their weights w; its strategy is measured in
the evaluation trunk rooted at all of the setting's root histories. Fig. 4
has two sources of roots, which differ in their roots and in nothing that
is measured:
  - `pvf.experiments.sparse_sweep`: π*'s support at the root move (Leduc,
    Goofspiel-5); one setting, its points keep the heaviest share of it;
  - `pvf.experiments.particle_sweep`: K particle draws of one public state
    by a reference strategy (games beyond the public tree); one setting per
    (K, seed), all of its roots kept, weights normalised where measured.
Each source turns its points into `TrunkPoint`s; `sweep` then, per point
and `SweepEvaluator`:
  1. builds the sparse trunk over the point's kept roots (for the uniform
     reference, `UNIFORM`, the evaluation trunk itself with no strategy);
  2. solves it by CFR+ with the evaluator at its leaves: an evaluator in a
     trained network's game-root convention is wrapped in `ScaledEvaluator`
     and solved with the weights as drawn, one in the trunk's own
     convention (the exact oracle) with the weights as measured;
  3. measures the strategy's trunk exploitability exactly by LP in the
     measured setting (NashConv convention), or, where the restricted game
     is too large for the LP, the certified upper bound of
     `pvf.solvers.trunk_bound` (the row says which, with the bound's gap);
     with `root_figure`, also the figure with only the root move fixed
     (the authors' evaluation, `sparse_exploitability(root_only=True)`).
`summarize_rows` gives, per (evaluator, point), the runs' mean and standard
deviation (population std, as the plots' bars). Each figure writes the
columns of rows and summaries it always had (`columns`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pvf.solvers.evaluators import ExactEvaluator
from pvf.solvers.sparse_trunks import (
    LeafFactory,
    SparseSetting,
    evaluation_strategies,
    no_strategy,
    normalized_setting,
    sparse_exploitability,
    sparse_trunk_strategy,
)
from pvf.solvers.trunk_bound import DEFAULT_BOUND_ITERATIONS, trunk_exploitability_bounds
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk, player_policies

EXACT, BOUND = "exact", "upper bound"


@dataclass(frozen=True)
class SweepEvaluator:
    """One leaf evaluator of the sweep.

    make: setting -> (trunk -> LeafEvaluator), called once per point and evaluator; None for `UNIFORM`
        (no solve: the uniform trunk strategy, the sweep's reference line).
    game_root: it takes the game-root convention of a trained network (wrapped in `ScaledEvaluator`
        and solved with the weights as drawn) rather than the trunk's own (step 2).
    lp_leaves: it solves an LP at each leaf (the exact oracle), so it is skipped where the
        restricted game is beyond the exploitability LP and the bound is used.
    network: the checkpoint it evaluates, if any (a column of the support sweep's rows).
    """

    make: LeafFactory | None
    game_root: bool
    lp_leaves: bool = False
    network: str = ""


ORACLE = SweepEvaluator(lambda setting: ExactEvaluator, game_root=False, lp_leaves=True)  # exact leaf values, by LP
UNIFORM = SweepEvaluator(None, game_root=False)  # the uniform trunk strategy: the reference line


@dataclass(frozen=True, eq=False)
class TrunkPoint:
    """The roots of one sparse trunk of the sweep.

    label: the point ("0.5", "2 histories", or K as a string); seed: its run's seed.
    setting: the roots with their weights as drawn; kept: [k] indices into `setting.histories` kept.
    normalized: measure (and solve own-convention evaluators) with the weights divided by their sum.
    exact: exploitability by LP, else the certified upper bound (`bound_iterations` CFR+ iterations).
    root_figure: also the root-move-only figure.
    draws, particles: K and the distinct particles it gave (particle roots; None for the support).
    """

    label: str
    seed: int
    setting: SparseSetting
    kept: np.ndarray
    normalized: bool = False
    exact: bool = True
    bound_iterations: int = DEFAULT_BOUND_ITERATIONS
    root_figure: bool = False
    draws: int | None = None
    particles: int | None = None
    started: float | None = None  # when building its roots began (their time counts in the first row's seconds)

    def measured(self) -> SparseSetting:
        """The setting exploitability is measured in: the drawn one, or with weights normalised to sum 1."""
        return normalized_setting(self.setting) if self.normalized else self.setting


@dataclass(frozen=True)
class SweepRow:
    """One sparse trunk solved with one evaluator (exploitability in the NashConv convention).

    game: the game string; point, seed: as `TrunkPoint`; evaluator: its name; network: its checkpoint.
    draws, particles: K and the distinct particles (particle roots), else None and the kept roots.
    root_histories: roots the trunk keeps; share: of all the setting's roots; histories: the tree's.
    exploitability: exact, or a certified upper bound (`measure`, `gap`: it lies in [value − gap, value]).
    root_exploitability: with only the root move fixed (NaN where not measured).
    """

    game: str
    point: str
    seed: int
    evaluator: str
    network: str
    draws: int | None
    particles: int
    root_histories: int
    share: float
    histories: int
    exploitability: float
    root_exploitability: float
    measure: str
    gap: float
    seconds: float


def sweep(
    points: Iterable[TrunkPoint],
    evaluators: Mapping[str, SweepEvaluator],
    iterations: int = DEFAULT_ITERATIONS,
    policies: list[dict] | None = None,
    record: Callable[[TrunkPoint, SparseSetting, float], dict] | None = None,
) -> list[SweepRow]:
    """Every point × evaluator, in that order (steps 1–3).

    policies, record: if `policies` is a list, `record(point, measured, uniform)` is appended to it per
        point, with each solved evaluator's exploitability, measure and trunk policy under "evaluators".
    """
    rows = []
    for point in points:
        measured = point.measured()
        uniform = float("nan")
        entry = None
        start = point.started  # the first row's time includes building the point's roots
        for name, evaluator in evaluators.items():
            if not point.exact and evaluator.lp_leaves:
                continue
            start = time.perf_counter() if start is None else start
            trunk, strategies = _solve(point, measured, evaluator, iterations)
            value, root, how, gap = _measure(point, measured, trunk, strategies)
            rows.append(_row(point, name, evaluator, value, root, how, gap, time.perf_counter() - start))
            start = None
            if evaluator.make is None:
                uniform = value
            elif policies is not None and record is not None:
                entry = entry if entry is not None else record(point, measured, uniform)
                entry["evaluators"][name] = {
                    "exploitability": value,
                    "measure": how,
                    "policy": player_policies(trunk, strategies),
                }
        if policies is not None and record is not None:
            policies.append(entry if entry is not None else record(point, measured, uniform))
    return rows


def _solve(point: TrunkPoint, measured: SparseSetting, evaluator: SweepEvaluator, iterations: int):
    """Steps 1–2: (trunk, per player [S_n] strategy)."""
    if evaluator.make is None:
        return measured.evaluation, no_strategy(measured.evaluation)
    solve = point.setting if evaluator.game_root else measured
    return sparse_trunk_strategy(solve, point.kept, evaluator.make(solve), iterations, evaluator.game_root)


def _measure(point: TrunkPoint, measured: SparseSetting, trunk: Trunk, strategies) -> tuple[float, float, str, float]:
    """Step 3: (exploitability, root-move figure or NaN, "exact" or "upper bound", the bound's gap)."""
    root = float("nan")
    if point.root_figure:
        root = sparse_exploitability(measured, trunk, strategies, root_only=True).exploitability
    if point.exact:
        return sparse_exploitability(measured, trunk, strategies).exploitability, root, EXACT, 0.0
    ev = measured.evaluation
    bound = trunk_exploitability_bounds(
        ev.full, evaluation_strategies(measured, trunk, strategies), ev.masks, ev.root_beliefs, point.bound_iterations
    )
    return bound.upper, root, BOUND, bound.gap


def _row(
    point: TrunkPoint,
    name: str,
    evaluator: SweepEvaluator,
    value: float,
    root: float,
    how: str,
    gap: float,
    seconds: float,
) -> SweepRow:
    setting = point.setting
    kept = len(point.kept)
    return SweepRow(
        game=setting.tree.game_string,
        point=point.label,
        seed=point.seed,
        evaluator=name,
        network=evaluator.network,
        draws=point.draws,
        particles=kept if point.particles is None else point.particles,
        root_histories=kept,
        share=kept / setting.num_histories,
        histories=setting.tree.num_histories,
        exploitability=value,
        root_exploitability=root,
        measure=how,
        gap=gap,
        seconds=seconds,
    )


def summarize_rows(rows: Sequence[SweepRow]) -> list[dict[str, Any]]:
    """Per (evaluator, point), in the order rows first name them: runs, means and standard deviations."""
    table = []
    for name in dict.fromkeys(r.evaluator for r in rows):
        for label in dict.fromkeys(r.point for r in rows):
            mine = [r for r in rows if r.evaluator == name and r.point == label]
            if not mine:  # an LP evaluator beyond the exact LP
                continue
            values = np.array([r.exploitability for r in mine])
            roots = np.array([r.root_exploitability for r in mine])
            table.append(
                {
                    "evaluator": name,
                    "point": label,
                    "draws": mine[0].draws,
                    "num_histories": int(np.mean([r.root_histories for r in mine])),
                    "share": float(np.mean([r.share for r in mine])),
                    "runs": len(mine),
                    "particles_mean": float(np.mean([r.particles for r in mine])),
                    "roots_mean": float(np.mean([r.root_histories for r in mine])),
                    "exploitability_mean": float(values.mean()),
                    "exploitability_std": float(values.std()),
                    "root_exploitability_mean": float(roots.mean()),
                    "root_exploitability_std": float(roots.std()),
                    "measure": " / ".join(sorted({r.measure for r in mine})),
                    "gap_max": float(max(r.gap for r in mine)),
                    "seconds_mean": float(np.mean([r.seconds for r in mine])),
                }
            )
    return table


def columns(records: Iterable[SweepRow | dict[str, Any]], names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Rows or summary entries as dicts of the given columns: {column: field of the row or key of the entry}."""
    out = []
    for r in records:
        get = r.get if isinstance(r, dict) else lambda field, r=r: getattr(r, field)
        out.append({column: get(field) for column, field in names.items()})
    return out
