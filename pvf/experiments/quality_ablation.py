"""`pvf reproduce quality --ablation`: what each lever of the recipe is worth alone, from the paper's protocol.

Rows (`ablation_protocols`): the paper's protocol; it with exactly one lever
of the recipe (`pvf.experiments.quality`) changed — best-response targets,
the recipe's large shared file, the cosine schedule, the checkpoint of
lowest validation loss, data moved towards a trunk solve's queries
("solve"); it with the first two together ("targets+data": more data of
the average profile's values can hurt, so the two levers interact); and
the whole recipe. Each row is one
`reproduce_quality` run that writes its figures to out/rows/<row>/, and all
rows keep their data and networks in out/data and out/checkpoints (the
config's `store`), so a file or a network two rows need is made once: the
rows that judge by validation loss run first, so the "checkpoint" row trains
the paper row's networks, validated at every measurement (validation does
not change training), judges their lowest-validation-loss weights, and the
paper row then reuses them.
Table: out/ablation-<game>.csv, one line per (row, architecture) (a run with fewer architectures keeps
the table's lines of the others): seeds,
mean ± std over seeds of the judged checkpoints' trunk exploitability
(NashConv), the mean of the members at the leaves, the exact oracle's
(the same trunk solve with LP-exact leaf values: a reference, not a lower
bound) and the levers; and out/ablation-<game>.png, the same as bars with
±1 std (`plot_ablation` redraws it from the CSV).
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from pvf.experiments.figures import QUALITY_ARCHITECTURES, Protocol
from pvf.experiments.plots import NASHCONV_LABEL
from pvf.experiments.quality import reproduce_quality
from pvf.experiments.reproduce import ReproduceConfig
from pvf.games.paper import PAPER_GAMES
from pvf.games.public_tree import build_public_tree
from pvf.outputs import check_output_dir
from pvf.results import write_csv
from pvf.solvers.evaluators import ExactEvaluator
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate

LEVERS = {  # a row's name: the Protocol fields it takes from the recipe
    "targets": ("target",),
    "data": ("shared_data", "trunks"),
    "schedule": ("lr_schedule",),
    "checkpoint": ("select",),
    "solve": ("p_solve",),
    "targets+data": ("target", "shared_data", "trunks"),
}


def ablation_protocols(paper: Protocol, recipe: Protocol) -> list[Protocol]:
    """The rows: `paper`, `paper` with each lever of `recipe` alone (named by the lever), with targets and data
    together, then `recipe`."""
    rows = [replace(paper, name="paper")]
    for lever, fields in LEVERS.items():
        rows.append(replace(paper, name=lever, **{f: getattr(recipe, f) for f in fields}))
    return [*rows, replace(recipe, name="recipe")]


def reproduce_ablation(config: ReproduceConfig, paper: Protocol, recipe: Protocol) -> dict[str, Any]:
    """Every row of `ablation_protocols` for every game of `config`; per game the table's path and rows.

    config: games, architectures, seeds, steps and the rest shared by every row; its target, schedule,
        selection and trunks are each row's.
    """
    out = check_output_dir(config.out, "--out")
    store = config.store_dir
    protocols = ablation_protocols(paper, recipe)
    results: dict[str, dict[str, Any]] = {}  # row name -> reproduce_quality's summary
    for protocol in sorted(protocols, key=lambda p: p.select != "val_loss"):  # validated runs first (docstring)
        row_config = replace(
            config,
            out=out / "rows" / protocol.name,
            store=store,
            target=protocol.target,
            lr_schedule=protocol.lr_schedule,
            select=protocol.select,
            trunks=protocol.trunks or config.trunks,
            p_solve=protocol.p_solve,
        )
        results[protocol.name] = reproduce_quality(row_config, protocol)
    summary = {}
    for game in config.games:
        oracle = exact_oracle(game, config.iterations)
        csv_path, png_path = out / f"ablation-{game}.csv", out / f"ablation-{game}.png"
        table = merged_table(
            [
                _table_row(game, protocol, arch, results[protocol.name][game][arch], oracle)
                for protocol in protocols
                for arch in sorted(config.architectures or QUALITY_ARCHITECTURES)
            ],
            csv_path,
        )
        write_csv(table, csv_path)
        plot_ablation(table, png_path, f"{game}: each lever of the recipe alone, from the paper's protocol")
        summary[game] = {"csv": str(csv_path), "png": str(png_path), "rows": table}
    return summary


def merged_table(rows: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """`rows` with the lines of the table at `path` for architectures `rows` lacks (a run with `--architectures`
    adds its columns to the table and keeps the others'), in row order, then by architecture.

    A line of the old table is kept only if it has the new table's columns and one of its rows."""
    archs = {r["architecture"] for r in rows}
    order = list(dict.fromkeys(r["row"] for r in rows))
    kept = []
    if path.exists():
        with open(path, newline="") as f:
            kept = [
                line
                for line in csv.DictReader(f)
                if line["architecture"] not in archs and list(line) == list(rows[0]) and line["row"] in order
            ]
    return sorted([*rows, *kept], key=lambda r: (order.index(r["row"]), r["architecture"]))


def exact_oracle(game: str, iterations: int) -> float:
    """Trunk exploitability (NashConv) of `iterations` of CFR+ in the paper game's fig. 3 trunk with exact leaves."""
    trunk = build_trunk(build_public_tree(PAPER_GAMES[game].game), PAPER_GAMES[game].fig3_depth)
    return solve_and_evaluate(trunk, ExactEvaluator(trunk), iterations).exploitability.exploitability


def _table_row(game: str, protocol: Protocol, arch: str, figures: dict[str, Any], oracle: float) -> dict[str, Any]:
    return {
        "game": game,
        "row": protocol.name,
        "architecture": arch,
        "seeds": figures["seeds"],
        "trunk_exploitability_mean": figures["chosen_mean"],
        "trunk_exploitability_std": figures["chosen_std"],
        "chosen_step_mean": figures["chosen_step_mean"],
        "mean_of_members": figures["mean_of_members"],
        "oracle": oracle,
        "target": protocol.target,
        "data": "shared" if protocol.shared_data else "per-seed",
        "trunks": protocol.trunks if protocol.trunks is not None else "recipe",
        "lr_schedule": protocol.lr_schedule,
        "select": protocol.select,
        "p_solve": protocol.p_solve,
    }


def plot_ablation(table: list[dict[str, Any]], path: str | Path, title: str) -> None:
    """table: `reproduce_ablation`'s rows (or the CSV's); one group of bars per row, one bar per architecture (mean
    ± std over seeds), the mean of the members as a cross on it, the exact oracle dashed; log scale."""
    rows = list(dict.fromkeys(r["row"] for r in table))
    archs = sorted({r["architecture"] for r in table})
    fig = Figure(figsize=(max(6.0, 1.1 * len(rows) + 1.5), 4))
    ax = fig.subplots()
    width = 0.8 / len(archs)
    for i, arch in enumerate(archs):
        for j, name in enumerate(rows):
            r = next((r for r in table if r["row"] == name and r["architecture"] == arch), None)
            if r is None:
                continue
            x = j + (i - (len(archs) - 1) / 2) * width
            mean, std = float(r["trunk_exploitability_mean"]), float(r["trunk_exploitability_std"])
            ax.bar(x, mean, width, yerr=std, color=f"C{i}", label=arch if j == 0 else None, capsize=3)
            ax.plot(x, float(r["mean_of_members"]), "kx", label="mean of the members" if i == j == 0 else None)
    ax.axhline(float(table[0]["oracle"]), color="k", ls="--", lw=1, label="exact oracle")
    ax.set_xticks(range(len(rows)), rows, rotation=20)
    ax.set_yscale("log")
    ax.set_ylabel(NASHCONV_LABEL)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    ax.set_title(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
