"""MMD search's exact exploitability against its step size η, beside the blueprint it updates.

The update-equivalence paper reports that MMD search lowers the uniform
blueprint's (approximate, DQN best-response) exploitability by more than a
third in 3×3 Abrupt Dark Hex and Phantom Tic-Tac-Toe, with η = 50 and
α = 0.01. In a Goofspiel small enough to enumerate pvf judges it exactly:
for each blueprint (uniform, or greedier random play with `--greed β`),
η, belief-sample count K and seed, `pvf.agents.mmd_search.search_policy`
assembles the searcher's strategy at every infostate of both seats and
OpenSpiel's `nash_conv` judges it. One CSV row per (greed, K, η, seed),
appended as measured (a rerun skips the rows it has); a PNG of NashConv
against η (mean ± std over seeds, one line per greed and K, each
blueprint's own NashConv dashed).

    python -m pvf.experiments.mmds_step_size --game goofspiel5 --out docs/figures/play/mmds-goofspiel5.csv \
        [--etas 0.5,1,2,3,5,7,10,20,50] [--samples 10,100] [--seeds 3] [--greed 0,0.5]
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from matplotlib.figure import Figure
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability

from pvf.agents.mmd_search import infostate_policy, mmd_search, search_policy
from pvf.games.public_tree import build_public_tree
from pvf.module_main import run_module
from pvf.results import write_csv
from pvf.solvers.tabular import to_openspiel

ALPHA = 0.01  # the paper's magnet weight for the uniform blueprint


def plot_step_sizes(rows: Sequence[dict[str, Any]], path: str | Path, title: str) -> None:
    """NashConv against η, mean ± std over seeds, one line per greed and K; each blueprint's NashConv dashed."""
    fig = Figure(figsize=(6.5, 4.0))
    ax = fig.subplots()
    lines = sorted({(float(r["greed"]), int(r["samples"])) for r in rows})
    for i, (greed, k) in enumerate(lines):
        mine = [r for r in rows if float(r["greed"]) == greed and int(r["samples"]) == k]
        etas = sorted({float(r["eta"]) for r in mine})
        values = [[float(r["nash_conv"]) for r in mine if float(r["eta"]) == e] for e in etas]
        stds = [np.std(v, ddof=1) if len(v) > 1 else 0.0 for v in values]
        label = f"K = {k}" + (f", greed {greed:g}" if greed else "")
        ax.errorbar(etas, [np.mean(v) for v in values], yerr=stds, marker="o", capsize=3, color=f"C{i}", label=label)
    for j, greed in enumerate(sorted({g for g, _ in lines})):
        blueprint = next(float(r["blueprint_nash_conv"]) for r in rows if float(r["greed"]) == greed)
        name = f"greed {greed:g} blueprint" if greed else "uniform blueprint"
        ax.axhline(blueprint, ls=["--", ":", "-."][j % 3], color="gray", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("step size η (α = 0.01)")
    ax.set_ylabel("NashConv (full game, both seats)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--game", default="goofspiel5", help="an imperfect-information Goofspiel small enough to enumerate"
    )
    parser.add_argument("--out", required=True, help="CSV (appended, resumable); the PNG goes beside it")
    parser.add_argument("--etas", default="0.5,1,2,3,5,7,10,20,50", help="step sizes, comma-separated")
    parser.add_argument("--samples", default="10,100", help="belief samples per decision K, comma-separated")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 of the searcher's samples")
    parser.add_argument(
        "--greed", default="0", help="the blueprints' greed β, comma-separated (0: uniform, the paper's)"
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    tree = build_public_tree(args.game)
    game = tree.loaded.sequential
    uniform = float(exploitability.nash_conv(game, openspiel_policy.UniformRandomPolicy(game)))
    rows: list[dict[str, Any]] = []
    if out.exists():
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
    done = {(float(r["greed"]), int(r["samples"]), float(r["eta"]), int(r["seed"])) for r in rows}
    for greed in (float(g) for g in args.greed.split(",")):
        searcher = mmd_search(tree.loaded, 1, 1.0, ALPHA, 64, 0, greed)  # only its blueprint is used
        blueprint = float(pyspiel.nash_conv(game, to_openspiel(infostate_policy(tree, searcher.blueprint_strategy))))
        for k in (int(s) for s in args.samples.split(",")):
            for eta in (float(e) for e in args.etas.split(",")):
                for seed in range(args.seeds):
                    if (greed, k, eta, seed) in done:
                        continue
                    start = time.perf_counter()
                    policy = search_policy(tree, mmd_search(tree.loaded, k, eta, ALPHA, 64, seed, greed))
                    seconds = time.perf_counter() - start
                    value = float(pyspiel.nash_conv(game, to_openspiel(policy)))
                    print(
                        f"greed={greed:g} K={k} eta={eta:g} seed={seed}: NashConv {value:.4f} "
                        f"(blueprint {blueprint:.4f})",
                        flush=True,
                    )
                    rows.append(
                        {
                            "game": tree.game_string,
                            "samples": k,
                            "eta": eta,
                            "alpha": ALPHA,
                            "seed": seed,
                            "nash_conv": value,
                            "uniform_nash_conv": uniform,
                            "seconds_per_decision": seconds / len(policy),
                            "greed": greed,
                            "blueprint_nash_conv": blueprint,
                        }
                    )
                    out.parent.mkdir(parents=True, exist_ok=True)
                    write_csv(rows, out)
    plot_step_sizes(rows, out.with_suffix(".png"), f"{tree.game_string}:\nMMD search's exploitability")
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.mmds_step_size")
