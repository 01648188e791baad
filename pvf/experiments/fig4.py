"""Figure 4 (`pvf reproduce fig4`): sparse trunks from a share of the equilibrium's histories.

Figure 4 (per game; Leduc roots at move 5, trunk to 7; Goofspiel-5 roots at
move 2, trunk to 3, so its net is trained on depth-3 data), per seed s:
  1–2. dataset and particle net as above (reused when fig. 3 made them);
  3. the sparse sweep with the net and tie-breaking seed s
     (`sparse_sweep`); then `fig4-<game>.csv` (mean ± std per point),
     `fig4-<game>-runs.csv` (one row per net and point; the net named by
     its checkpoint's path under `out`) and `fig4-<game>.png` with the
     uniform line.
     Other particle architectures (e.g. attention) get the same files with
     `-<architecture>` after the game.
Games beyond the public tree are `pvf.experiments.particles_figure`'s (reproduce_fig4 hands them
over, as `pvf reproduce fig4 --games goofspiel8` did). Datasets, configs and training are
`pvf.experiments.reproduce`'s.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pvf.experiments.figures import FIG4_ARCHITECTURES
from pvf.experiments.particles_figure import particle_dataset_spec, reproduce_particle_fig4
from pvf.experiments.plots import plot_sparse

# Short names used on the command line and in file names.
from pvf.experiments.reproduce import ReproduceConfig, check_datasets, ensure_dataset, train_all
from pvf.experiments.sparse_sweep import (
    run_sweep,
    runs_table,
    summarize,
    sweep_points,
    uniform_reference,
)
from pvf.games.features import build_feature_tables
from pvf.games.paper import PAPER_GAMES, PARTICLE_GAMES
from pvf.outputs import check_output_dir
from pvf.results import write_csv
from pvf.solvers.sparse_trunks import sparse_setting
from pvf.valuefn.network import load_value_function


def reproduce_fig4(config: ReproduceConfig) -> dict[str, Any]:
    """Figure 4 for every game of the config; returns a summary (table, uniform line, file paths)."""
    summary: dict[str, Any] = {}
    trees = check_datasets(config, {g: PAPER_GAMES[g].sparse_depth for g in config.games if g in PAPER_GAMES})
    for game in config.games:
        if game in PARTICLE_GAMES:
            particle_dataset_spec(config, PARTICLE_GAMES[game])  # refused now, not after the others' work
    check_output_dir(config.out, "--out")  # made only now: refused input leaves nothing behind
    for game in config.games:
        if game in PARTICLE_GAMES:
            summary[game] = reproduce_particle_fig4(config, PARTICLE_GAMES[game])
            continue
        paper = PAPER_GAMES[game]
        root_move, depth, min_count = paper.sparse_root_move, paper.sparse_depth, paper.sparse_min_histories
        tree = trees[game]
        setting = sparse_setting(tree, root_move, depth, config.equilibrium_iterations)
        features = build_feature_tables(tree)
        points = sweep_points(config.fractions, min_count)
        uniform = uniform_reference(setting)
        data = [ensure_dataset(config, game, depth, seed) for seed in config.seeds]
        for arch in config.architectures or FIG4_ARCHITECTURES:
            runs = train_all(config, [(d, arch, seed, config.max_steps) for d, seed in zip(data, config.seeds)])
            rows = []
            for seed, run in zip(config.seeds, runs):
                network = load_value_function(run.checkpoint)
                swept = run_sweep(setting, [network], features, points, [seed], config.iterations, config.progress)
                where = Path(run.checkpoint).resolve().relative_to(config.out.resolve()).as_posix()  # portable
                rows.extend(replace(row, network=where) for row in swept)
            table = summarize(rows)
            name = game if arch == "particle" else f"{game}-{arch}"
            csv_path, png_path = config.out / f"fig4-{name}.csv", config.out / f"fig4-{name}.png"
            write_csv(table, csv_path)
            write_csv(runs_table(rows), config.out / f"fig4-{name}-runs.csv")
            plot_sparse(
                table,
                uniform,
                png_path,
                f"{game}: sparse trunks, move {root_move} to {depth}" + ("" if arch == "particle" else f" ({arch})"),
            )
            summary[name] = {
                "architecture": arch,
                "csv": str(csv_path),
                "png": str(png_path),
                "support_histories": setting.num_histories,
                "root_histories": setting.num_root_histories,
                "uniform_exploitability": uniform["exploitability"],
                "uniform_root_exploitability": uniform["root_exploitability"],
                "points": table,
            }
    return summary
