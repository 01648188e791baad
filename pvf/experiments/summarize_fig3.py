"""Window statistics of a `pvf reproduce fig3` CSV: the numbers docs/results/reproduction.md quotes.

    python -m pvf.experiments.summarize_fig3 docs/figures/reproduce/fig3-leduc.csv \
        [--skip 8] [--last 16] [--every N] [--json]

Single trunk-exploitability measurements move a lot between neighbouring
checkpoints at a constant learning rate, so each seed's curve is first
reduced to one number per window, and the windows are then averaged over
seeds (mean ± standard deviation over seeds; population std, as the plots'
bands and fig. 4's bars):
- `second_half`: the measurements at steps >= half the last step;
- `last_k`: the last `--last` measurements;
- `last`: the last measurement;
- `best`: the seed's lowest measurement;
- `train_mse_end`: the training MSE logged at the last measurement.
For two architectures A (reference, default positional) and B (default
particle): the ratio B/A of every window's mean, the seeds whose
second-half mean is lower for B and the mean same-seed difference B - A of
second-half means with its standard error (std with ddof 1 / sqrt(seeds)), the share of same-seed measurements
(after the first `--skip`) where B <= A, and the first step (and epoch)
from which B's seed-mean curve is at or below A's at every later
measurement (step 0, the untrained nets, left out of the first).
Rows with NaN exploitability are ignored.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

WINDOWS = ("second_half", "last_k", "last", "best", "train_mse_end")


def read_curves(path: str | Path, every: int = 1) -> dict[str, dict[int, dict[str, np.ndarray]]]:
    """architecture -> seed -> {"step", "epoch", "expl", "loss"}: arrays [M] sorted by step.

    every: keep only measurements at multiples of this many steps (a coarser interval from a finer run).
    """
    curves: dict[str, dict[int, list[tuple[int, int, float, float]]]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            point = (int(row["step"]), int(row["epoch"]), float(row["trunk_exploitability"]), float(row["train_loss"]))
            if np.isfinite(point[2]) and point[0] % every == 0:
                curves.setdefault(row["architecture"], {}).setdefault(int(row["seed"]), []).append(point)
    return {
        arch: {
            seed: dict(zip(("step", "epoch", "expl", "loss"), (np.array(c) for c in zip(*sorted(points)))))
            for seed, points in sorted(seeds.items())
        }
        for arch, seeds in curves.items()
    }


def seed_windows(curve: dict[str, np.ndarray], last_k: int) -> dict[str, float]:
    """One seed's curve reduced to one number per window (see the module docstring)."""
    steps, expl = curve["step"], curve["expl"]
    return {
        "second_half": float(expl[steps >= steps[-1] / 2].mean()),
        "last_k": float(expl[-last_k:].mean()),
        "last": float(expl[-1]),
        "best": float(expl.min()),
        "train_mse_end": float(curve["loss"][-1]),
    }


def summarize(
    curves: dict[str, dict[int, dict[str, np.ndarray]]],
    reference: str = "positional",
    other: str = "particle",
    last_k: int = 16,
    skip: int = 8,
) -> dict[str, Any]:
    """Per architecture, per window: mean and std over seeds (and the per-seed values); then B vs A."""
    out: dict[str, Any] = {"skip": skip, "last_k": last_k, "architectures": {}}
    for arch, seeds in curves.items():
        per_seed = {seed: seed_windows(curve, last_k) for seed, curve in seeds.items()}
        last_steps = {int(c["step"][-1]) for c in seeds.values()}
        table: dict[str, Any] = {"seeds": len(seeds), "last_step": max(last_steps), "measurements": {}}
        for window in WINDOWS:
            values = np.array([w[window] for w in per_seed.values()])
            table[window] = {
                "mean": float(values.mean()),
                "std": float(values.std()),
                "min": float(values.min()),
                "max": float(values.max()),
                "per_seed": values.tolist(),
            }
        table["measurements"] = {str(s): len(c["step"]) for s, c in seeds.items()}
        out["architectures"][arch] = table
    if reference in curves and other in curves:
        out["comparison"] = compare(curves[reference], curves[other], out["architectures"], reference, other, skip)
    return out


def compare(
    a: dict[int, dict[str, np.ndarray]],
    b: dict[int, dict[str, np.ndarray]],
    tables: dict[str, Any],
    reference: str,
    other: str,
    skip: int,
) -> dict[str, Any]:
    """B against A on the seeds and steps both have."""
    seeds = sorted(set(a) & set(b))
    ratios = {w: tables[other][w]["mean"] / tables[reference][w]["mean"] for w in WINDOWS}
    diff = np.array([_window(b[s], "second_half") - _window(a[s], "second_half") for s in seeds])
    lower_seeds = [s for s, d in zip(seeds, diff) if d < 0]
    at_or_below, pairs = 0, 0
    for s in seeds:
        steps, ia, ib = np.intersect1d(a[s]["step"], b[s]["step"], return_indices=True)
        keep = slice(skip, None)
        at_or_below += int((b[s]["expl"][ib][keep] <= a[s]["expl"][ia][keep]).sum())
        pairs += len(steps[keep])
    steps = sorted(int(t) for t in set.intersection(*(set(a[s]["step"]) & set(b[s]["step"]) for s in seeds)))
    mean_a = np.array([np.mean([_at(a[s], t) for s in seeds]) for t in steps])
    mean_b = np.array([np.mean([_at(b[s], t) for s in seeds]) for t in steps])
    below = mean_b <= mean_a
    first_match = next((i for i in range(len(steps)) if below[i] and steps[i] > 0), None)
    stays = next((i for i in range(len(steps)) if below[i:].all()), None)
    epochs = {t: int(np.mean([b[s]["epoch"][b[s]["step"] == t][0] for s in seeds])) for t in steps}
    return {
        "reference": reference,
        "other": other,
        "ratio": ratios,
        "seeds_lower_second_half": f"{len(lower_seeds)} of {len(seeds)}",
        "second_half_difference_mean": float(diff.mean()),
        "second_half_difference_sem": float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan"),
        "share_at_or_below": at_or_below / pairs if pairs else float("nan"),
        "pairs_compared": pairs,
        "mean_curve_share_at_or_below": float(below[skip:].mean()) if len(below) > skip else float("nan"),
        "first_step_mean_at_or_below": None if first_match is None else steps[first_match],
        "first_epoch_mean_at_or_below": None if first_match is None else epochs[steps[first_match]],
        "step_from_which_mean_stays_at_or_below": None if stays is None else steps[stays],
    }


def _window(curve: dict[str, np.ndarray], window: str) -> float:
    return seed_windows(curve, 1)[window]


def _at(curve: dict[str, np.ndarray], step: int) -> float:
    return float(curve["expl"][curve["step"] == step][0])


def markdown(summary: dict[str, Any], last_k: int) -> str:
    """The summary as a markdown table (means ± std over seeds, ratio B/A) plus the comparison lines."""
    archs = list(summary["architectures"])
    comp = summary.get("comparison")
    if comp:
        archs = [comp["reference"], comp["other"]] + [a for a in archs if a not in (comp["reference"], comp["other"])]
    names = {
        "second_half": "mean of the second half of training",
        "last_k": f"mean of the last {last_k} measurements",
        "last": "the last single measurement",
        "best": "best single measurement of a run",
        "train_mse_end": "training MSE at the end",
    }
    seeds = {summary["architectures"][a]["seeds"] for a in archs}
    header = f"| trunk exploitability (NashConv, mean ± std over {'/'.join(map(str, sorted(seeds)))} seeds) | "
    header += " | ".join(archs) + (f" | {comp['other']} / {comp['reference']} |" if comp else " |")
    lines = [header, "|---" * (len(archs) + 1 + bool(comp)) + "|"]
    for window in WINDOWS:
        fmt = "{:.2e} ± {:.1e}" if window == "train_mse_end" else "{:.3f} ± {:.3f}"
        cells = [
            fmt.format(summary["architectures"][a][window]["mean"], summary["architectures"][a][window]["std"])
            for a in archs
        ]
        ratio = [f"{comp['ratio'][window]:.2f}"] if comp else []
        lines.append("| " + " | ".join([names[window], *cells, *ratio]) + " |")
    if comp:
        lines += [
            "",
            f"- seeds whose second-half mean is lower for {comp['other']}: {comp['seeds_lower_second_half']}; "
            f"same-seed difference {comp['other']} − {comp['reference']} {comp['second_half_difference_mean']:+.3f} "
            f"(standard error {comp['second_half_difference_sem']:.3f})",
            f"- same-seed measurements (after the first {summary['skip']}) with {comp['other']} <= "
            f"{comp['reference']}: "
            f"{100 * comp['share_at_or_below']:.0f}% of {comp['pairs_compared']}",
            f"- seed-mean curves, {comp['other']} <= {comp['reference']} at "
            f"{100 * comp['mean_curve_share_at_or_below']:.0f}% "
            f"of measurements after the first {summary['skip']}; first at step {comp['first_step_mean_at_or_below']} "
            f"(epoch {comp['first_epoch_mean_at_or_below']}), at every later one from step "
            f"{comp['step_from_which_mean_stays_at_or_below'] or 'none'}",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=Path, help="fig3-<game>.csv written by `pvf reproduce fig3`")
    parser.add_argument("--reference", default="positional", help="architecture A of the ratios B/A")
    parser.add_argument("--other", default="particle", help="architecture B of the ratios B/A")
    parser.add_argument("--last", type=int, default=16, help="measurements in the last-k window")
    parser.add_argument("--skip", type=int, default=8, help="first measurements left out of the same-seed comparison")
    parser.add_argument(
        "--every",
        type=int,
        default=1,
        help="only measurements at multiples of this many steps "
        "(e.g. 1024 on an every-64 run: does the coarser interval give the same windows?)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    summary = summarize(read_curves(args.csv, args.every), args.reference, args.other, args.last, args.skip)
    print(json.dumps(summary, indent=1) if args.json else markdown(summary, args.last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
