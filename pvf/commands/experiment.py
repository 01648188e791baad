"""`pvf experiment`: the paper's small self-contained experiments.

`pvf experiment linear` reproduces fig. 2 (app. D): it trains the linear
baseline and the particle variants on linear targets y = A x and writes
DIR/linear_targets.csv (step, variant, loss) and DIR/linear_targets.png.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pvf.errors import PvfError


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


def run(args: argparse.Namespace) -> int:
    from pvf.experiments import plot_curves, run_linear_targets, write_csv

    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PvfError(f"cannot create output folder {args.out}: {exc.strerror}") from exc
    curves = run_linear_targets(  # raises PvfError on bad --n, --samples, --steps, --lr
        n=args.n,
        samples=args.samples,
        steps=args.steps,
        seed=args.seed,
        lr=args.lr,
        random_basis=args.random_basis,
    )
    csv_path, png_path = args.out / "linear_targets.csv", args.out / "linear_targets.png"
    write_csv(curves, csv_path)
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
