"""`pvf evaluate sparse`: trunk exploitability against the share of root histories kept (fig. 4).

For every network and every tie-breaking seed (`pvf.solvers.sparse_trunks`):
  1. the sweep's points keep the ⌈f·N⌉ heaviest of the N support histories
     for each fraction f (default 1.0, 0.9, …, 0.1), then the `min_count`
     heaviest histories where a player acts (1 in Goofspiel, 2 in Leduc);
  2. each sparse trunk is solved by CFR+ with the network at the leaves
     (its beliefs and values converted by `ScaledEvaluator`);
  3. both figures are recorded: the whole trunk fixed (trunk exploitability
     as the paper defines it) and only the root move fixed (the authors').
Per point the mean and standard deviation over networks × seeds are
reported, with the uniform strategy's figures as the reference line.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from pvf.valuefn.network import Network
from pvf.games.features import FeatureTables
from pvf.solvers.sparse_trunks import SparseSetting, select_histories, solve_sparse_trunk, uniform_exploitability
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS

DEFAULT_FRACTIONS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)


@dataclass(frozen=True)
class SweepPoint:
    """One point of the sweep: a fraction of the support, or a count of player-node histories."""

    label: str
    fraction: float | None = None
    count: int | None = None


@dataclass(frozen=True)
class SweepRow:
    """One sparse trunk solved: network × seed × point. Exploitability in the NashConv convention."""

    network: str
    seed: int
    point: str
    num_histories: int
    share: float  # num_histories / support histories
    exploitability: float
    root_exploitability: float
    seconds: float


def sweep_points(fractions: Sequence[float], min_count: int | None) -> list[SweepPoint]:
    """The fractions, then (if given) the `min_count` heaviest player-node histories."""
    points = [SweepPoint(f"{f:g}", fraction=float(f)) for f in fractions]
    if min_count is not None:
        points.append(SweepPoint(f"{min_count} histories", count=min_count))
    return points


def run_sweep(
    setting: SparseSetting,
    networks: Sequence[Network],
    features: FeatureTables,
    points: Sequence[SweepPoint],
    seeds: Sequence[int],
    iterations: int = DEFAULT_ITERATIONS,
    progress: bool = False,
) -> list[SweepRow]:
    """Solve and evaluate every (network, seed, point)."""
    rows = []
    jobs = [(net, seed, point) for net in networks for seed in seeds for point in points]
    for network, seed, point in tqdm(jobs, desc="sparse trunks", disable=not progress, dynamic_ncols=True):
        kept = select_histories(setting, fraction=point.fraction, count=point.count, seed=seed)
        start = time.perf_counter()
        result = solve_sparse_trunk(
            setting,
            kept,
            lambda trunk: network.evaluator(trunk, features),
            iterations,
        )
        rows.append(
            SweepRow(
                network=network.path,
                seed=seed,
                point=point.label,
                num_histories=len(kept),
                share=len(kept) / setting.num_histories,
                exploitability=result.exploitability.exploitability,
                root_exploitability=result.root_exploitability.exploitability,
                seconds=time.perf_counter() - start,
            )
        )
    return rows


def summarize(rows: Sequence[SweepRow], points: Sequence[SweepPoint]) -> list[dict[str, Any]]:
    """Per point, in sweep order: histories kept, mean and standard deviation of both figures."""
    table = []
    for point in points:
        mine = [r for r in rows if r.point == point.label]
        trunk = np.array([r.exploitability for r in mine])
        root = np.array([r.root_exploitability for r in mine])
        table.append(
            {
                "point": point.label,
                "num_histories": int(np.mean([r.num_histories for r in mine])),
                "share": float(np.mean([r.share for r in mine])),
                "runs": len(mine),
                "exploitability_mean": float(trunk.mean()),
                "exploitability_std": float(trunk.std()),
                "root_exploitability_mean": float(root.mean()),
                "root_exploitability_std": float(root.std()),
            }
        )
    return table


def uniform_reference(setting: SparseSetting) -> dict[str, float]:
    """The uniform trunk strategy's figures (NashConv convention), the plot's reference lines."""
    return {
        "exploitability": uniform_exploitability(setting).exploitability,
        "root_exploitability": uniform_exploitability(setting, root_only=True).exploitability,
    }
