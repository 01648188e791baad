"""Fig. 3 on Leduc with MMD's last iterate as targets, and trunks solved by MMD.

Reads the `pvf reproduce fig3 --games leduc` runs of several target variants
(one output directory each, e.g. CFR+'s average, CFR+'s last iterate
(`--target current`), MMD's last iterate (`--solver mmd`)) and

  1. summarises each variant's trunk exploitability during training (the
     trunk solved by 100 CFR+ iterations, as logged by `pvf reproduce`):
     per seed the mean over the second half of training, over the last 4
     measurements, and the last measurement; then mean ± std over seeds;
  2. solves the trunk of every final network again with each trunk solver —
     CFR+ (average strategy) and MMD (last iterate) under its schedules —
     next to the exact oracle with the same solver, and records the exact
     trunk exploitability (NashConv convention, OpenSpiel's is half);
  3. compares the target columns of the seed-0 data files where the
     infostate's belief is 0 and where it is positive (mean |difference|);
  4. as a control, solves the trunk (100 CFR+ iterations) with each target
     recipe computed exactly at the leaves on demand — what a network that
     learned its targets perfectly would give (as `pvf experiment
     leaf-targets`, with MMD's last iterate added).

Writes fig3_targets.csv (every measurement), fig3_targets_summary.csv,
fig3_targets.png, trunk_solvers.csv and perfect_targets.csv into --out, and prints the tables.

Run (after the reproduce runs, see docs/results/mmd.md):
    .venv/bin/python benchmarks/mmd_targets.py --runs runs/mmd --variants cfr-average,cfr-current,mmd \
        [--out docs/figures/mmd]
"""

from __future__ import annotations

import argparse
import csv
import textwrap
from pathlib import Path
from typing import Any

import h5py
import numpy as np
from matplotlib.figure import Figure

from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.results import write_csv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.evaluators import CFRTargetEvaluator, ExactEvaluator
from pvf.solvers.leaf_subgames import LeafSubgames
from pvf.solvers.mmd import make_schedule, mmd
from pvf.solvers.registry import get_solver
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate
from pvf.valuefn.network import load_value_function

LABELS = {
    "cfr-average": "CFR+ average (default)",
    "cfr-current": "CFR+ last iterate",
    "mmd": "MMD last iterate, 100 it.",
    "mmd-1000": "MMD last iterate, 1,000 it.",
    "average-zerofix": "CFR+ average, last iterate at belief 0",
}
# Trunk solvers: (name, solver, schedule name or None, iterations).
TRUNK_SOLVERS = [
    ("CFR+ 100", "cfr+", None, 100),
    ("MMD sqrt 100", "mmd", "sqrt", 100),
    ("MMD alternating 100", "mmd", "alternating", 100),
    ("MMD sqrt 1000", "mmd", "sqrt", 1000),
    ("CFR+ 1000", "cfr+", None, 1000),
]
LAST = 4  # measurements in the "last" window


def training_rows(runs: Path, variants: list[str]) -> list[dict[str, Any]]:
    rows = []
    for variant in variants:
        with open(runs / variant / "fig3-leduc.csv", newline="") as f:
            for r in csv.DictReader(f):
                rows.append(
                    {
                        "variant": variant,
                        "architecture": r["architecture"],
                        "seed": int(r["seed"]),
                        "step": int(r["step"]),
                        "train_loss": float(r["train_loss"]),
                        "trunk_exploitability": float(r["trunk_exploitability"]),
                    }
                )
    return rows


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (variant, architecture): window means per seed, then mean ± std over seeds."""
    out = []
    for variant in dict.fromkeys(r["variant"] for r in rows):
        for arch in sorted({r["architecture"] for r in rows if r["variant"] == variant}):
            per_seed: dict[str, list[float]] = {"second_half": [], "last4": [], "final": [], "final_loss": []}
            seeds = sorted({r["seed"] for r in rows if r["variant"] == variant and r["architecture"] == arch})
            for seed in seeds:
                mine = sorted(
                    (r for r in rows if (r["variant"], r["architecture"], r["seed"]) == (variant, arch, seed)),
                    key=lambda r: r["step"],
                )
                expl = np.array([r["trunk_exploitability"] for r in mine])
                steps = np.array([r["step"] for r in mine])
                per_seed["second_half"].append(expl[steps >= steps[-1] / 2].mean())
                per_seed["last4"].append(expl[-LAST:].mean())
                per_seed["final"].append(expl[-1])
                per_seed["final_loss"].append(mine[-1]["train_loss"])
            row: dict[str, Any] = {"variant": variant, "architecture": arch, "seeds": len(seeds)}
            for key, values in per_seed.items():
                row[f"{key}_mean"], row[f"{key}_std"] = float(np.mean(values)), float(np.std(values))
            out.append(row)
    return out


def trunk_solver_rows(runs: Path, variants: list[str]) -> list[dict[str, Any]]:
    """Every final checkpoint's trunk exploitability under each trunk solver, and the exact oracle's."""
    rows = []
    tree = build_public_tree("leduc_poker")
    features = build_feature_tables(tree)
    trunk = None
    for name, solver_name, schedule, iterations in TRUNK_SOLVERS:
        solver = get_solver(solver_name, None if schedule is None else make_schedule(schedule))
        for variant in variants:
            for checkpoint in sorted((runs / variant / "checkpoints").glob("*.ckpt")):
                network = load_value_function(checkpoint)
                trunk = trunk or build_trunk(tree, network.meta.layout.depth)
                result = solve_and_evaluate(trunk, network.evaluator(trunk, features), iterations, solver)
                rows.append(
                    {
                        "trunk_solver": name,
                        "variant": variant,
                        "architecture": network.architecture,
                        "checkpoint": checkpoint.name,
                        "trunk_exploitability": result.exploitability.exploitability,
                    }
                )
        oracle = solve_and_evaluate(trunk, ExactEvaluator(trunk), iterations, solver)
        rows.append(
            {
                "trunk_solver": name,
                "variant": "",
                "architecture": "exact oracle",
                "checkpoint": "",
                "trunk_exploitability": oracle.exploitability.exploitability,
            }
        )
        print(f"{name}: done", flush=True)
    return rows


class MMDTargetEvaluator:
    """The leaf subgames solved as `pvf generate --solver mmd` does: MMD's last iterate from the queried beliefs."""

    def __init__(self, trunk, iterations: int):
        leaves = trunk.leaf_histories()
        self.leaves = LeafSubgames(trunk.tree, leaves, trunk.history_weights(leaves), trunk.game.leaf_infostates)
        self.iterations = iterations

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        result = mmd(self.leaves.game, self.iterations, root_beliefs=self.leaves.root_beliefs(reach1, reach2))
        return self.leaves.scatter(*result.root_values)


def perfect_target_rows(depth: int = 7, iterations: int = 100) -> list[dict[str, Any]]:
    """Trunk exploitability (CFR+ trunk) with each target recipe computed exactly at the leaves."""
    trunk = build_trunk(build_public_tree("leduc_poker"), depth)
    evaluators = {
        "cfr-average": CFRTargetEvaluator(trunk, 100, "average"),
        "cfr-current": CFRTargetEvaluator(trunk, 100, "current"),
        "mmd": MMDTargetEvaluator(trunk, 100),
        "mmd-1000": MMDTargetEvaluator(trunk, 1000),
    }
    rows = []
    for variant, evaluator in evaluators.items():
        result = solve_and_evaluate(trunk, evaluator, iterations, cfr_plus)
        rows.append({"variant": variant, "trunk_exploitability": result.exploitability.exploitability})
        print(f"| {LABELS[variant]} | {rows[-1]['trunk_exploitability']:.4f} |", flush=True)
    return rows


def target_differences(runs: Path) -> list[dict[str, Any]]:
    """Mean |difference| between target recipes (seed-0 files), at zero-belief infostates and elsewhere.

    Needs the cfr-average and mmd runs (the former holds both CFR+ columns); none without them.
    """
    if not (runs / "cfr-average/data").is_dir() or not (runs / "mmd/data").is_dir():
        return []
    with h5py.File(runs / "cfr-average/data/leduc-d7-t1000-k100-seed0.h5", "r") as f:
        belief, average, current = (f[f"infostates/{k}"][:] for k in ("belief", "target", "target_current"))
    with h5py.File(runs / "mmd/data/leduc-d7-t1000-k100-mmd-seed0.h5", "r") as f:
        mmd_target = f["infostates/target"][:]
    pairs = {
        "average - current": average - current,
        "average - mmd": average - mmd_target,
        "current - mmd": current - mmd_target,
    }
    zero = belief == 0
    rows = [
        {
            "pair": name,
            "zero_belief": float(np.abs(d[zero]).mean()),
            "positive_belief": float(np.abs(d[~zero]).mean()),
            "zero_belief_share": float(zero.mean()),
        }
        for name, d in pairs.items()
    ]
    for r in rows:
        print(
            f"| {r['pair']} | {r['zero_belief']:.4f} | {r['positive_belief']:.5f} | share "
            f"{r['zero_belief_share']:.3f} |"
        )
    return rows


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    archs = sorted({r["architecture"] for r in rows})
    fig = Figure(figsize=(5.5 * len(archs), 4.2))
    axes = np.atleast_1d(fig.subplots(1, len(archs), sharey=True))
    for ax, arch in zip(axes, archs):
        for variant in dict.fromkeys(r["variant"] for r in rows):
            mine = [r for r in rows if r["variant"] == variant and r["architecture"] == arch]
            steps = np.array(sorted({r["step"] for r in mine if r["step"] > 0}))
            values = np.array([[r["trunk_exploitability"] for r in mine if r["step"] == s] for s in steps])
            mean, std = values.mean(axis=1), values.std(axis=1)
            ax.plot(steps, mean, label=LABELS.get(variant, variant))
            ax.fill_between(steps, np.maximum(mean - std, 1e-3), mean + std, alpha=0.2)
        ax.axhline(0.077, color="k", linestyle=":", label="exact oracle (0.077)")
        ax.set_title(f"{arch} VF")
        ax.set_xlabel("training step")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("trunk exploitability (NashConv), 100 CFR+ it.")
    axes[-1].legend(fontsize=8)
    fig.suptitle(
        textwrap.fill(
            "Leduc, trunk to move 7: targets from CFR+'s average / last iterate and MMD's last"
            " iterate (mean ± std over seeds)",
            100,
        ),
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="runs/mmd", help="directory holding one reproduce output per variant")
    parser.add_argument("--variants", default="cfr-average,cfr-current,mmd")
    parser.add_argument("--out", default="docs/figures/mmd")
    parser.add_argument("--skip-trunk-solvers", action="store_true")
    args = parser.parse_args()
    runs, out, variants = Path(args.runs), Path(args.out), args.variants.split(",")
    out.mkdir(parents=True, exist_ok=True)
    rows = training_rows(runs, variants)
    write_csv(rows, out / "fig3_targets.csv")
    summary = summarise(rows)
    write_csv(summary, out / "fig3_targets_summary.csv")
    plot(rows, out / "fig3_targets.png")
    print("| targets | VF | second half | last 4 | last | training MSE at the end |")
    for r in summary:
        print(
            f"| {LABELS.get(r['variant'], r['variant'])} | {r['architecture']} | "
            + " | ".join(f"{r[k + '_mean']:.3f} ± {r[k + '_std']:.3f}" for k in ("second_half", "last4", "final"))
            + f" | {r['final_loss_mean']:.2g} |"
        )
    print("| target pair (seed 0) | mean |diff| at zero belief | at positive belief |")
    target_differences(runs)
    if args.skip_trunk_solvers:
        return
    print("| perfectly learned targets | trunk exploitability, 100 CFR+ it. |")
    write_csv(perfect_target_rows(), out / "perfect_targets.csv")
    trunk_rows = trunk_solver_rows(runs, variants)
    write_csv(trunk_rows, out / "trunk_solvers.csv")
    names = [name for name, *_ in TRUNK_SOLVERS]
    print("| targets | VF | " + " | ".join(names) + " |")
    groups = [(v, a) for v in variants for a in sorted({r["architecture"] for r in trunk_rows if r["variant"] == v})]
    for variant, arch in [*groups, ("", "exact oracle")]:
        cells = []
        for name in names:
            values = np.array(
                [
                    r["trunk_exploitability"]
                    for r in trunk_rows
                    if (r["trunk_solver"], r["variant"], r["architecture"]) == (name, variant, arch)
                ]
            )
            cells.append(f"{values.mean():.3f}" + (f" ± {values.std():.3f}" if len(values) > 1 else ""))
        print(f"| {LABELS.get(variant, variant)} | {arch} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
