"""Where a particle value net errs that its trunk feels: its error at its own sparse trunk's queries.

    python -m pvf.experiments.particle_trunk_errors A.ckpt [B.ckpt ...] --game goofspiel13 --root-move 9 \\
        --depth 10 [--draws 16] [--seeds 0,1,2] [--data FRESH.h5] [--samples 400] [--driver D.ckpt] [--json]

The particle analogue of `pvf.experiments.trunk_errors`. A particle net is
trained on children samples of random trunk strategies
(`pvf.datasets.particle_children`); the sparse particle trunk that judges
it (`pvf.experiments.particle_sweep`, fig. 4) asks it about the beliefs of
its own CFR+ iterates. For each checkpoint and each draw (K, seed) of the
sweep (the same particles and trunk as its rows, reference: the mix):
  1. the trunk solved by CFR+ (`--iterations`, default 100) with the net at
     its leaves, every leaf query recorded; the strategy's exact trunk
     exploitability (NashConv, weights normalised: the sweep's figure);
  2. at each query, the values of the net's training target on the PBSs
     the queried beliefs induce (`pvf.datasets.induced_targets`: CFR+ of
     100 iterations, the target kind of the net's layout); per player the
     relative error Σ|net − target| / Σ|target| pooled over the second
     half of the queries (the iterates CFR+'s average is made of) and the
     leaf public states, averaged over the players whose targets are not
     all 0 (each player's ratio is unchanged by the per-player scale a net
     normalises its targets by); the same over leaf public states where both
     players have belief ("both", the only kind a children sample is drawn
     from) and the others ("one"), and with only the zero-belief rows'
     error in the numerator ("zero": their share of the error). Each
     figure is the mean over the draws.
  3. with `--data` (a children file of the net's game and depth that it
     was not trained on, e.g. `pvf generate` with another `--seed`), the
     same pooled ratios over its first `--samples` samples: the error on
     the training distribution, beside it; and split by whether the
     sample's public state is one where the trunk matters (its played
     history, `pvf.solvers.particle_settings.trunk_matters`), the only
     kind the sweep's roots are ("undecided"), or not ("decided").
A net whose error is low on fresh samples and high at its trunk's queries
fits beliefs its trunk does not ask about. With `--driver D.ckpt` the trunk
of step 1 is solved with D at its leaves (NashConv and queries are D's;
one solve and one set of targets per draw, whatever the number of
checkpoints) and each checkpoint is measured at D's queries: a net
trained on D's queries (`pvf generate --solve-network D.ckpt`) that errs
little there and much at its own queries is steered by its own solve
towards its errors, rather than missing data.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pvf.datasets.induced_targets import induced_pbs_evaluator
from pvf.datasets.particle_draws import played_history
from pvf.datasets.particle_solve_queries import solve_query
from pvf.datasets.reader import PBSDataset
from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.spec import GenerationSpec
from pvf.errors import PvfError, require_files
from pvf.experiments.particle_sweep import check_trunk, draws_and_seeds, particle_trunk_setting
from pvf.games.engine import particle_engine
from pvf.games.features import FeatureTables, build_feature_tables
from pvf.games.loading import LoadedGame, load_game
from pvf.module_main import run_module
from pvf.solvers.evaluators import RecordingEvaluator
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.particle_settings import trunk_matters
from pvf.solvers.sparse_trunks import (
    normalized_setting,
    select_histories,
    sparse_exploitability,
    sparse_trunk_strategy,
)
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk
from pvf.trainers.data import PbsTorchDataset, num_samples
from pvf.valuefn.encoding import normalized_rows
from pvf.valuefn.network import Network, load_value_function

CHUNK = 200


def group_sums(
    values: np.ndarray, targets: np.ndarray, beliefs: np.ndarray, groups: np.ndarray, players: np.ndarray
) -> dict[str, np.ndarray]:
    """Per group (a leaf public state of one query, or one sample) and player [G, 2]: `miss` Σ|value − target|,
    `zero` the same over zero-belief rows only, `size` Σ|target|.

    values, targets, beliefs: [M] one entry per (group, infostate); groups: [M] ids 0..G-1; players: [M] 0 or 1.
    """
    G = int(groups.max()) + 1 if len(groups) else 0
    key = groups * 2 + players
    miss = np.abs(values - targets)
    total = lambda w: np.bincount(key, weights=w, minlength=2 * G).reshape(G, 2)  # noqa: E731
    return {"miss": total(miss), "zero": total(np.where(beliefs == 0, miss, 0.0)), "size": total(np.abs(targets))}


def pooled(sums: dict[str, np.ndarray], keep: np.ndarray, part: str = "miss") -> float:
    """The relative error pooled over the kept groups: per player Σ `part` / Σ size, averaged over the players
    whose targets are not all 0 there (NaN if none is)."""
    size = sums["size"][keep].sum(axis=0)
    has = size > 0
    if not has.any():
        return float("nan")
    return float((sums[part][keep].sum(axis=0)[has] / size[has]).mean())


def query_errors(
    trunk: Trunk, reach: tuple[np.ndarray, np.ndarray], net: tuple[np.ndarray, np.ndarray], target: tuple
) -> dict[str, np.ndarray]:
    """Step 2 over recorded queries (reach, net, target: per player [Q, J_n], the game-root convention):
    per (query, leaf public state) the sums of `group_sums`, `both` (both players have belief there) and
    `query` (its query's index)."""
    Q = reach[0].shape[0]
    states = [trunk.tree.infostate_public_state[n][trunk.game.leaf_infostates[n]] for n in (0, 1)]
    _, local = np.unique(np.concatenate(states), return_inverse=True)
    S = int(local.max()) + 1
    local = (local[: len(states[0])], local[len(states[0]) :])
    flat = lambda arrays: np.concatenate([a.ravel() for a in arrays])  # noqa: E731
    groups = flat([np.arange(Q)[:, None] * S + local[n][None, :] for n in (0, 1)])
    players = flat([np.full(reach[n].shape, n) for n in (0, 1)])
    sums = group_sums(flat(net), flat(target), flat(reach), groups, players)
    mass = [np.stack([np.bincount(local[n], weights=r, minlength=S) for r in reach[n]]) for n in (0, 1)]
    return {
        **sums,
        "both": ((mass[0] > 0) & (mass[1] > 0)).ravel(),
        "query": np.repeat(np.arange(Q), S),
    }


SUMMARY = ("error_all", "zero_all", "error_both", "zero_both", "error_one", "zero_one", "share_both")


def summary(report: dict[str, np.ndarray]) -> dict[str, float]:
    """Step 2's figures for one draw: pooled over the second half of the queries, all leaf public states,
    then by kind; with the share of leaf public states where both players have belief."""
    late = report["query"] >= (report["query"].max() + 1) // 2
    out = {}
    for name, keep in (("all", late), ("both", late & report["both"]), ("one", late & ~report["both"])):
        out[f"error_{name}"] = pooled(report, keep)
        out[f"zero_{name}"] = pooled(report, keep, "zero")
    out["share_both"] = float(report["both"][late].mean())
    return out


@dataclass(frozen=True)
class RecordedSolve:
    """Step 1 for one draw: its trunk, the setting tree's feature tables, the strategy's NashConv and, where a leaf
    was asked, the recorded queries: per player [Q, J_n] reaches and the solving evaluator's values."""

    trunk: Trunk
    features: FeatureTables
    exploitability: float
    reach: tuple[np.ndarray, np.ndarray] | None
    values: tuple[np.ndarray, np.ndarray] | None


def recorded_solve(
    loaded: LoadedGame,
    make: Callable[[Trunk, FeatureTables], LeafEvaluator],
    root_move: int,
    depth: int,
    draws: int,
    seed: int,
    iterations: int = DEFAULT_ITERATIONS,
) -> RecordedSolve:
    """Step 1 for one draw of particles and one evaluator in the game-root convention (make: (trunk, the setting
    tree's feature tables) -> evaluator; a net's `evaluator`)."""
    s = particle_trunk_setting(loaded, root_move, depth, draws, seed, SamplingConfig())
    features = build_feature_tables(s.tree)
    made: list[RecordingEvaluator] = []

    def recorded(trunk: Trunk) -> LeafEvaluator:
        made.append(RecordingEvaluator(make(trunk, features)))
        return made[-1]

    trunk, strategies = sparse_trunk_strategy(s, select_histories(s, fraction=1.0), recorded, iterations)
    exploitability = sparse_exploitability(normalized_setting(s), trunk, strategies).exploitability
    if not made:  # the trunk reaches the end of the game: no leaf was asked
        return RecordedSolve(trunk, features, exploitability, None, None)
    (recording,) = made
    reach, values = (recording.stacked(0), recording.stacked(1)), (recording.stacked(2), recording.stacked(3))
    return RecordedSolve(trunk, features, exploitability, reach, values)


def query_targets(loaded: LoadedGame, solved: RecordedSolve, target: str) -> tuple[np.ndarray, np.ndarray]:
    """Step 2's reference: the induced PBSs' `target` values at the recorded queries (per player [Q, J_n])."""
    return induced_pbs_evaluator(loaded, solved.trunk, 100, target)(*solved.reach)


def solve_report(
    loaded: LoadedGame,
    solved: RecordedSolve,
    target: str,
    measure: Callable[[Trunk, FeatureTables], LeafEvaluator] | None = None,
    targets: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, Any]:
    """Step 2 for one recorded solve: its NashConv, the queries' `query_errors` against the `target` values
    (`targets`, computed here if not given) and the draw's `summary`; the errors are those of the solving
    evaluator, or of `measure`'s at the same queries."""
    report = {"exploitability": solved.exploitability}
    if solved.reach is None:
        return report
    targets = query_targets(loaded, solved, target) if targets is None else targets
    values = solved.values if measure is None else measure(solved.trunk, solved.features)(*solved.reach)
    errors = query_errors(solved.trunk, solved.reach, values, targets)
    return {**report, **errors, **summary(errors)}


def draw_report(
    loaded: LoadedGame,
    make: Callable[[Trunk, FeatureTables], LeafEvaluator],
    target: str,
    root_move: int,
    depth: int,
    draws: int,
    seed: int,
    iterations: int = DEFAULT_ITERATIONS,
    measure: Callable[[Trunk, FeatureTables], LeafEvaluator] | None = None,
) -> dict[str, Any]:
    """Steps 1–2 for one draw (`recorded_solve`, `solve_report`): the trunk NashConv, the recorded queries'
    `query_errors` against the induced PBSs' `target` values, and the draw's `summary`. With `measure`, the
    errors are those of its evaluator at the queries of `make`'s solve."""
    solved = recorded_solve(loaded, make, root_move, depth, draws, seed, iterations)
    return solve_report(loaded, solved, target, measure)


def sample_sums(data: Path, net: Network, samples: int) -> dict[str, np.ndarray]:
    """Step 3: `group_sums` per sample of `data`'s first `samples`, in the normalised units the net sees (a
    per-sample, per-player scale: each player's ratio within a sample is that of the game's units)."""
    ids = np.arange(min(samples, num_samples(data)))
    dataset = PbsTorchDataset(data, ids, net.meta.layout.target, block_samples=0)
    parts = []
    for lo in range(0, len(ids), CHUNK):
        rows = dataset.__getitems__(list(range(lo, min(lo + CHUNK, len(ids)))))
        batch = net.meta.encoding.encode_batch(rows, net.meta.layout)
        with torch.no_grad():
            values, targets, mask = net.meta.encoding.predict(net.net, batch)
        beliefs, _, _ = normalized_rows(rows, net.meta.layout.normalize)
        groups = np.repeat(np.arange(len(rows["counts"])), rows["counts"])
        parts.append(
            group_sums(values[mask].double().numpy(), targets[mask].double().numpy(), beliefs, groups, rows["player"])
        )
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def undecided_samples(data: Path, samples: int) -> np.ndarray:
    """[N] whether each of the first `samples` samples of a children file has its parents where the trunk matters:
    the history its trunk strategy played (a `--p-solve` query sample's: its group's first sample's)."""
    with PBSDataset(data) as ds:
        spec = GenerationSpec.from_attrs(ds.attrs)
    if spec.particles is None or spec.particles.rows != "children":
        raise PvfError(f"{data} is not a particle file of children rows (pvf generate --particles K --rows children)")
    engine = particle_engine(load_game(spec.game), "auto")
    judged: dict[int, bool] = {}  # per sample whose history is played: a group's query samples share one
    out = np.zeros(min(samples, spec.num_trunks), dtype=bool)
    for i in range(len(out)):
        query = solve_query(spec, i)
        source = i if query is None else query.group * spec.particles.solve_group
        if source not in judged:
            history, _, _ = played_history(spec, engine, source)
            judged[source] = trunk_matters(engine, history, spec.depth - 1, spec.depth)
        out[i] = judged[source]
    return out


class DrivenSolves:
    """`--driver`: each draw's trunk solved once with the driver at its leaves, its queries' targets once per
    target kind, and every checkpoint measured there."""

    def __init__(self, loaded: LoadedGame, driver: Network, root_move: int, depth: int, iterations: int) -> None:
        self.loaded, self.driver = loaded, driver
        self.root_move, self.depth, self.iterations = root_move, depth, iterations
        self.solves: dict[tuple[int, int], RecordedSolve] = {}
        self.targets: dict[tuple[int, int, str], tuple[np.ndarray, np.ndarray]] = {}

    def report(
        self, draws: int, seed: int, target: str, measure: Callable[[Trunk, FeatureTables], LeafEvaluator]
    ) -> dict[str, Any]:
        """`solve_report` of `measure` at the driver's queries of draw (draws, seed)."""
        if (draws, seed) not in self.solves:
            self.solves[draws, seed] = recorded_solve(
                self.loaded, self.driver.evaluator, self.root_move, self.depth, draws, seed, self.iterations
            )
        solved = self.solves[draws, seed]
        if solved.reach is not None and (draws, seed, target) not in self.targets:
            self.targets[draws, seed, target] = query_targets(self.loaded, solved, target)
        return solve_report(self.loaded, solved, target, measure, self.targets.get((draws, seed, target)))


def mean_of_draws(values: list[float]) -> float:
    """The mean over the draws that have the figure (NaN where none has: e.g. no leaf public state of a kind)."""
    present = [v for v in values if not np.isnan(v)]
    return float(np.mean(present)) if present else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", type=Path, nargs="+", help="particle value-function checkpoints")
    parser.add_argument("--game", required=True, help="the game, e.g. goofspiel13")
    parser.add_argument("--root-move", type=int, required=True, help="the sparse trunk's root move")
    parser.add_argument("--depth", type=int, required=True, help="its leaves' move (the nets' training depth)")
    parser.add_argument("--draws", default="16", help="particle draws K, comma-separated (default 16)")
    parser.add_argument("--seeds", default="0,1,2", help="draw seeds, comma-separated (default 0,1,2)")
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="trunk CFR+ iterations")
    parser.add_argument("--data", type=Path, help="a children file the nets were not trained on: their error there")
    parser.add_argument("--samples", type=int, default=400, help="samples read with --data (default 400)")
    parser.add_argument(
        "--driver",
        type=Path,
        help="solve each trunk with this net at its leaves; measure every checkpoint at its queries",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per checkpoint and K")
    args = parser.parse_args(argv)
    require_files([*args.checkpoints, *([args.data] if args.data else []), *([args.driver] if args.driver else [])])
    if args.samples < 1 or args.iterations < 1:
        raise PvfError("--samples and --iterations must be positive")
    draws, seeds = draws_and_seeds(args.draws, args.seeds)
    loaded = load_game(args.game)
    check_trunk(loaded, args.root_move, args.depth)
    nets = [load_value_function(path, loaded.game_string, args.depth) for path in args.checkpoints]
    driven = None
    if args.driver is not None:
        driver = load_value_function(args.driver, loaded.game_string, args.depth)
        driven = DrivenSolves(loaded, driver, args.root_move, args.depth, args.iterations)
    undecided = None if args.data is None else undecided_samples(args.data, args.samples)
    for path, net in zip(args.checkpoints, nets):
        target, fresh = net.meta.layout.target, {}
        if args.data is not None:
            sums = sample_sums(args.data, net, args.samples)
            every = np.ones(len(sums["size"]), dtype=bool)
            fresh = {
                "data_error": pooled(sums, every),
                "data_zero": pooled(sums, every, "zero"),
                "data_samples": len(every),
                "data_undecided": int(undecided.sum()),
                "data_error_undecided": pooled(sums, undecided),
                "data_zero_undecided": pooled(sums, undecided, "zero"),
                "data_error_decided": pooled(sums, ~undecided),
            }
        for k in draws:
            if driven is None:
                reports = [
                    draw_report(loaded, net.evaluator, target, args.root_move, args.depth, k, seed, args.iterations)
                    for seed in seeds
                ]
            else:
                reports = [driven.report(k, seed, target, net.evaluator) for seed in seeds]
            figures = [r for r in reports if "query" in r]
            line: dict[str, Any] = {
                "checkpoint": str(path),
                **({"driver": str(args.driver)} if driven is not None else {}),
                "draws": k,
                "seeds": seeds,
                "exploitability": [r["exploitability"] for r in reports],
                **{key: mean_of_draws([f[key] for f in figures]) for key in SUMMARY},
                **fresh,
            }
            if args.json:
                print(json.dumps(line), flush=True)
                continue
            text = (
                f"{path.name} K={k}: NashConv {np.mean(line['exploitability']):.4f} over {len(seeds)} draws"
                f"{'' if driven is None else f' of {args.driver.name} at the leaves'}; "
                f"relative error at {'its' if driven is None else 'that'} trunk's queries {line['error_all']:.3f} "
                f"(both players' mass {line['error_both']:.3f}, "
                f"one player's {line['error_one']:.3f}; "
                f"{line['share_both']:.2f} of leaf states have both; "
                f"zero-belief rows {line['zero_all']:.3f})"
            )
            if fresh:
                text += (
                    f"; on {fresh['data_samples']} fresh samples {fresh['data_error']:.3f} "
                    f"(zero-belief rows {fresh['data_zero']:.3f}; on the {fresh['data_undecided']} undecided "
                    f"{fresh['data_error_undecided']:.3f}, the decided {fresh['data_error_decided']:.3f})"
                )
            print(text, flush=True)
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.particle_trunk_errors")
