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
reported, with the uniform strategy's figures as the reference line. The
sweep itself is `pvf.experiments.trunk_sweep`'s, which the particle sweep
shares; this module makes its points from π*'s support.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from pvf.experiments.trunk_sweep import SweepEvaluator, SweepRow, TrunkPoint, columns, summarize_rows, sweep
from pvf.games.features import FeatureTables
from pvf.solvers.sparse_trunks import SparseSetting, select_histories, uniform_exploitability
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS
from pvf.valuefn.network import Network

DEFAULT_FRACTIONS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
NETWORK = "network"  # the evaluator's name in the rows: every network is one (its checkpoint is the row's `network`)
# The columns `pvf evaluate sparse` and `pvf reproduce fig4` write: {column: SweepRow field / summary key}.
RUN_COLUMNS = {
    "network": "network",
    "seed": "seed",
    "point": "point",
    "num_histories": "root_histories",
    "share": "share",
    "exploitability": "exploitability",
    "root_exploitability": "root_exploitability",
    "seconds": "seconds",
}
SUMMARY_COLUMNS = {
    k: k
    for k in (
        "point",
        "num_histories",
        "share",
        "runs",
        "exploitability_mean",
        "exploitability_std",
        "root_exploitability_mean",
        "root_exploitability_std",
    )
}


@dataclass(frozen=True)
class SweepPoint:
    """One point of the sweep: a fraction of the support, or a count of player-node histories."""

    label: str
    fraction: float | None = None
    count: int | None = None


def sweep_points(fractions: Sequence[float], min_count: int | None) -> list[SweepPoint]:
    """The fractions, then (if given) the `min_count` heaviest player-node histories."""
    points = [SweepPoint(f"{f:g}", fraction=float(f)) for f in fractions]
    if min_count is not None:
        points.append(SweepPoint(f"{min_count} histories", count=min_count))
    return points


def trunk_points(setting: SparseSetting, points: Sequence[SweepPoint], seeds: Sequence[int]) -> Iterator[TrunkPoint]:
    """Per seed and point, the support histories it keeps (ties broken by the seed), both figures measured."""
    for seed in seeds:
        for point in points:
            kept = select_histories(setting, fraction=point.fraction, count=point.count, seed=seed)
            yield TrunkPoint(point.label, seed, setting, kept, root_figure=True)


def run_sweep(
    setting: SparseSetting,
    networks: Sequence[Network],
    features: FeatureTables,
    points: Sequence[SweepPoint],
    seeds: Sequence[int],
    iterations: int = DEFAULT_ITERATIONS,
    progress: bool = False,
) -> list[SweepRow]:
    """Solve and evaluate every (network, seed, point), in that order."""
    rows: list[SweepRow] = []
    with tqdm(
        total=len(networks) * len(seeds) * len(points), desc="sparse trunks", disable=not progress, dynamic_ncols=True
    ) as bar:
        for network in networks:

            def make(_setting, network=network):
                return lambda trunk: network.evaluator(trunk, features)

            evaluator = SweepEvaluator(make, game_root=True, network=network.path)
            for point in trunk_points(setting, points, seeds):
                rows.extend(sweep([point], {NETWORK: evaluator}, iterations))
                bar.update()
    return rows


def summarize(rows: Sequence[SweepRow]) -> list[dict[str, Any]]:
    """Per point, in sweep order: histories kept, mean and standard deviation of both figures."""
    return columns(summarize_rows(rows), SUMMARY_COLUMNS)


def runs_table(rows: Sequence[SweepRow]) -> list[dict[str, Any]]:
    """One dict per row, the columns of `-runs.csv` / `sparse_runs.csv`."""
    return columns(rows, RUN_COLUMNS)


def uniform_reference(setting: SparseSetting) -> dict[str, float]:
    """The uniform trunk strategy's figures (NashConv convention), the plot's reference lines."""
    return {
        "exploitability": uniform_exploitability(setting).exploitability,
        "root_exploitability": uniform_exploitability(setting, root_only=True).exploitability,
    }
