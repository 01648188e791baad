"""Dataset generation speed: batched CFR+ targets against one PBS at a time.

For Leduc at move 7 and Goofspiel-5 (descending) at move 2, with 100 CFR+
iterations per leaf subgame:
  1. batched: `--trunks` trunk strategies generated as pvf generate does it,
     in tasks of 50 trunks, each task one CFR+ call on the union of the leaf
     subgames (B = 50 trunks × all leaf public states), in this process;
  2. one at a time: the first `--single` of the same PBSs, each solved alone
     on its own public state's subgame (B = 1), in the same run;
  3. the ratio of the two throughputs (samples per second, wall clock).
With `--full`, it also times the paper-size files end to end
(`pvf generate --trunks 1000 --workers 2`: 54,000 Leduc / 9,000 Goofspiel
samples), files included.

    python benchmarks/generate_speed.py [--trunks 100] [--single 300] [--full] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from pvf.datasets.generate import generate
from pvf.datasets.pbs_tasks import context
from pvf.datasets.sampling import leaf_beliefs, sample_trunk_strategies
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.task_plan import plan_tasks
from pvf.datasets.tasks import run_task
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game

CASES = (
    ("leduc_poker", 7),
    ("goofspiel(num_cards=5,imp_info=True,points_order=descending)", 2),
)


def batched(spec: GenerationSpec) -> tuple[int, float]:
    """(samples, seconds) of generating every task of `spec` in this process."""
    start = time.perf_counter()
    samples = sum(run_task(spec, task).num_samples for task in plan_tasks(spec.num_trunks, spec.task_size))
    return samples, time.perf_counter() - start


def one_at_a_time(spec: GenerationSpec, limit: int) -> tuple[int, float]:
    """(samples, seconds) of solving the first `limit` PBSs of `spec` one by one (B = 1)."""
    ctx = context(spec.game, spec.depth, spec.cfr_iterations)
    trunk = ctx.trunk
    games = {int(p): build_sequence_game(ctx.tree, root_public_state=int(p)) for p in trunk.leaf_public_states}
    L = len(trunk.leaf_public_states)
    trunks = np.arange(min(spec.num_trunks, -(-limit // L)))
    beliefs = leaf_beliefs(trunk, sample_trunk_strategies(trunk, trunks, spec.seed, spec.sampling))
    off = trunk.leaf_offsets
    done = 0
    start = time.perf_counter()
    for t in range(len(trunks)):
        for k, p in enumerate(trunk.leaf_public_states):
            if done == limit:
                break
            b = tuple(beliefs[n][t : t + 1, off[n][k] : off[n][k + 1]] for n in (0, 1))
            cfr_plus(games[int(p)], spec.cfr_iterations, root_beliefs=b)
            done += 1
    return done, time.perf_counter() - start


def full_size(spec: GenerationSpec, workers: int) -> float:
    """Wall seconds of `pvf generate` for `spec` with `workers` processes (file written and joined)."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        generate(spec, Path(tmp) / "full.h5", workers=workers, progress=False)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trunks", type=int, default=100, help="trunks of the batched measurement (default 100)")
    parser.add_argument("--single", type=int, default=300, help="PBSs solved one at a time (default 300)")
    parser.add_argument("--cfr-iterations", type=int, default=100)
    parser.add_argument("--full", action="store_true", help="also time the paper-size files (1000 trunks, 2 workers)")
    parser.add_argument("--workers", type=int, default=2, help="workers of the --full run (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for game, depth in CASES:
        spec = GenerationSpec(game, depth, args.trunks, args.cfr_iterations, seed=args.seed)
        context(spec.game, spec.depth, spec.cfr_iterations)  # tree, trunk and union game: not timed
        n_b, s_b = batched(spec)
        n_1, s_1 = one_at_a_time(spec, args.single)
        row = {
            "game": game,
            "depth": depth,
            "cfr_iterations": args.cfr_iterations,
            "batched_samples": n_b,
            "batched_per_s": n_b / s_b,
            "single_samples": n_1,
            "single_per_s": n_1 / s_1,
            "speedup": (n_b / s_b) / (n_1 / s_1),
        }
        if args.full:
            paper = GenerationSpec(game, depth, 1000, args.cfr_iterations, seed=args.seed)
            row["full_samples"] = 1000 * n_b // args.trunks
            row["full_wall_s"] = full_size(paper, args.workers)
            row["full_workers"] = args.workers
        rows.append(row)
        if not args.json:
            line = (
                f"{game} @ move {depth}: batched {row['batched_per_s']:,.0f} samples/s ({n_b} samples), "
                f"one at a time {row['single_per_s']:,.1f} samples/s ({n_1} samples), ratio {row['speedup']:.0f}x"
            )
            if args.full:
                line += f"; {row['full_samples']:,} samples with {args.workers} workers in {row['full_wall_s']:.1f} s"
            print(line, flush=True)
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
