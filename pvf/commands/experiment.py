"""`pvf experiment`: the paper's small self-contained experiments.

`pvf experiment linear` reproduces fig. 2 (app. D): it trains the linear
baseline and the particle variants on linear targets y = A x and writes
DIR/linear_targets.csv (step, variant, loss) and DIR/linear_targets.png.

`pvf experiment leaf-targets` solves a trunk with the dataset's targets
computed on demand at the leaves (CFR+ average profile, last iterate, best
responses) next to the exact oracle and the zero evaluator: the trunk
exploitability a network that learned its targets perfectly would reach
(pvf.experiments.leaf_targets).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pvf.commands import require_positive
from pvf.errors import PvfError
from pvf.outputs import check_output_dir


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("experiment", help="small experiments from the paper's appendices")
    experiments = parser.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    linear = experiments.add_parser(
        "linear", help="learning linear targets y = Ax (app. D, fig. 2)", description=__doc__.splitlines()[0]
    )
    linear.add_argument("--n", type=int, default=10, help="dimension of x and y (default 10)")
    linear.add_argument("--samples", type=int, default=100, help="training set size (default 100)")
    linear.add_argument("--steps", type=int, default=2000, help="full-batch Adam steps per variant (default 2000)")
    linear.add_argument("--lr", type=float, default=1e-2, help="initial learning rate, cosine-annealed (default 1e-2)")
    linear.add_argument(
        "--random-basis", action="store_true", help="particle features T e_j with a random regular T instead of e_j"
    )
    linear.add_argument("--out", type=Path, default=Path("runs/experiment-linear"), help="output folder")
    linear.add_argument("--seed", type=int, default=0)
    linear.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    linear.set_defaults(func=run)
    leaf = experiments.add_parser(
        "leaf-targets",
        help="trunk exploitability with the training targets themselves at the leaves",
        description="Trunk exploitability of CFR+ with the leaf values a perfect network would give, "
        "for each target recipe, next to the exact oracle and the zero evaluator (NashConv convention).",
    )
    leaf.add_argument("--game", default="leduc_poker", help="OpenSpiel game string or alias (default leduc_poker)")
    leaf.add_argument("--depth", type=int, default=7, help="trunk depth as a move number (default 7)")
    leaf.add_argument("--cfr-iterations", type=int, default=100, help="CFR+ iterations per leaf solve, as the targets (default 100)")
    leaf.add_argument("--iterations", type=int, default=100, help="CFR+ iterations in the trunk (default 100)")
    leaf.add_argument("--seed", type=int, default=0, help="unused: every step is deterministic (accepted for uniformity)")
    leaf.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    leaf.set_defaults(func=run_leaf)


def run(args: argparse.Namespace) -> int:
    from pvf.experiments import curve_rows, plot_curves, run_linear_targets
    from pvf.results import write_csv

    check_output_dir(args.out, "--out")
    curves = run_linear_targets(  # raises PvfError on bad --n, --samples, --steps, --lr
        n=args.n,
        samples=args.samples,
        steps=args.steps,
        seed=args.seed,
        lr=args.lr,
        random_basis=args.random_basis,
    )
    csv_path, png_path = args.out / "linear_targets.csv", args.out / "linear_targets.png"
    write_csv(curve_rows(curves), csv_path)
    plot_curves(curves, png_path)

    final = {variant: float(losses[-1]) for variant, losses in curves.items()}
    if args.json:
        summary = {
            "n": args.n,
            "samples": args.samples,
            "steps": args.steps,
            "lr": args.lr,
            "random_basis": args.random_basis,
            "seed": args.seed,
            "final_mse": final,
            "min_mse": {variant: float(losses.min()) for variant, losses in curves.items()},
            "csv": str(csv_path),
            "png": str(png_path),
        }
        print(json.dumps(summary))
    else:
        print(f"linear targets: n={args.n}, {args.samples} samples, {args.steps} steps, seed {args.seed}")
        print("final training MSE:")
        for variant, loss in final.items():
            print(f"  {variant:<16} {loss:.3e}")
        print(f"wrote {csv_path} and {png_path}")
    return 0


def run_leaf(args: argparse.Namespace) -> int:
    from pvf.experiments.leaf_targets import run_leaf_targets

    require_positive(args, "cfr_iterations", "iterations")

    shown: list[str] = []

    def show(row: dict) -> None:  # the header waits for the first row: bad input prints nothing but the error
        if args.json:
            return
        if not shown:
            print(f"{args.game}, trunk to move {args.depth}, {args.iterations} trunk iterations, "
                  f"leaf targets from {args.cfr_iterations} CFR+ iterations")
            print(f"{'leaf evaluator':<20} {'NashConv':>10} {'OpenSpiel':>10} {'solve s':>8}")
        print(f"{row['evaluator']:<20} {row['trunk_exploitability']:>10.4f} {row['openspiel']:>10.4f} {row['solve_seconds']:>8.1f}",
              flush=True)
        shown.append(row["evaluator"])

    rows = run_leaf_targets(args.game, args.depth, args.cfr_iterations, args.iterations, on_result=show)
    if args.json:
        print(json.dumps({
            "game": args.game,
            "depth": args.depth,
            "iterations": args.iterations,
            "cfr_iterations": args.cfr_iterations,
            "trunk_exploitability": {r["evaluator"]: r["trunk_exploitability"] for r in rows},
            "rows": rows,
        }))
    return 0
