"""NashConv against iterations on Leduc: pvf's MMD (its schedules) against pvf's CFR+.

Curves: MMD's last iterate under the default "alternating" schedule, the
simultaneous "sqrt", the update-equivalence paper's "paper" (α_t = η_t =
1/√t, relative units), a constant stepsize with α_t annealed (unstable after
about 2,000 iterations) and a fixed α (OpenSpiel's units and default
stepsize); CFR+'s average and last iterate. Each point is a fresh run of that many iterations; NashConv
is pvf's exact best response (checked against pyspiel.nash_conv at 1,000
iterations, printed). Writes CSV and PNG (default docs/figures/mmd/).

Run: .venv/bin/python benchmarks/mmd_convergence.py [--max-iterations 10000] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np
import pyspiel
from matplotlib.figure import Figure

from pvf.games.public_tree import build_public_tree
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.mmd import Schedule, make_schedule, mmd
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.tabular import to_openspiel, to_tabular

FIXED_ALPHA = 0.005
CONSTANT_STEPSIZE = Schedule(alpha=0.5, stepsize=0.25, alpha_decay=0.5, relative=True)


def curves(game, points: list[int]) -> dict[str, list[float]]:
    runs = {
        "MMD alternating (default)": lambda t: _solution(mmd(game, t)),
        "MMD sqrt (simultaneous)": lambda t: _solution(mmd(game, t, schedule=make_schedule("sqrt"))),
        "MMD paper": lambda t: _solution(mmd(game, t, schedule=make_schedule("paper"))),
        "MMD constant stepsize": lambda t: _solution(mmd(game, t, schedule=CONSTANT_STEPSIZE)),
        f"MMD fixed alpha {FIXED_ALPHA}": lambda t: _solution(
            mmd(game, t, schedule=make_schedule("fixed", alpha=FIXED_ALPHA))
        ),
        "CFR+ average": lambda t: _solution(cfr_plus(game, t)),
        "CFR+ last iterate": lambda t: _solution(cfr_plus(game, t), current=True),
    }
    out = {}
    for name, run in runs.items():
        out[name] = [float(nash_conv(game, run(t))[0]) for t in points]
        print(f"{name}: " + ", ".join(f"{t}: {v:.4g}" for t, v in zip(points, out[name])), flush=True)
    return out


def _solution(result, current: bool = False):
    strategy = result.current_strategy if current else result.average_strategy
    return strategy[0][0], strategy[1][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-iterations", type=int, default=10000)
    parser.add_argument("--out", default="docs/figures/mmd")
    args = parser.parse_args()
    tree = build_public_tree("leduc_poker")
    game = build_sequence_game(tree)
    points = sorted({int(round(v)) for v in np.logspace(0, np.log10(args.max_iterations), 25)} | {1000})
    results = curves(game, points)
    check = to_openspiel(to_tabular(game, _solution(mmd(game, 1000))))
    print(f"MMD default at 1,000 iterations, pyspiel.nash_conv: {pyspiel.nash_conv(tree.loaded.sequential, check):.6f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "leduc_nashconv.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["iterations", *results])
        for i, t in enumerate(points):
            writer.writerow([t, *(f"{results[k][i]:.6g}" for k in results)])
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    for name, values in results.items():
        ax.loglog(points, values, label=name, linestyle="--" if "CFR" in name else "-")
    ax.set_xlabel("iterations")
    ax.set_ylabel("NashConv (OpenSpiel's exploitability is half)")
    ax.set_title("Leduc poker: MMD's last iterate against CFR+")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "leduc_nashconv.png", dpi=120)
    print(f"wrote {out / 'leduc_nashconv.csv'} and {out / 'leduc_nashconv.png'}")


if __name__ == "__main__":
    main()
