"""Figure 3 (`pvf reproduce fig3`): trunk exploitability of value functions during training.

Figure 3 (per game; Leduc trunk depth 7, Goofspiel-5 depth 2), per seed s:
  1. generate the PBS dataset with seed s (`pvf.datasets.generate`; a
     finished file of the same spec is reused, an interrupted one resumed);
  2. train each architecture (default: the positional and the particle
     net; any registered one, `pvf.valuefn.registry`) on it (seed s) with
     trunk exploitability measured every `eval_every` steps (`training`);
  3. write `fig3-<game>.csv` (one row per measurement) and
     `fig3-<game>.png` (mean ± std over seeds against training steps).
Datasets, configs and training are `pvf.experiments.reproduce`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pvf.errors import PvfError
from pvf.experiments.figures import FIG3_ARCHITECTURES
from pvf.experiments.plots import plot_training

# Short names used on the command line and in file names.
from pvf.experiments.reproduce import ReproduceConfig, check_datasets, ensure_dataset, train_all
from pvf.games.paper import PAPER_GAMES, PARTICLE_GAMES
from pvf.outputs import check_output_dir
from pvf.results import write_csv


def reproduce_fig3(config: ReproduceConfig) -> dict[str, Any]:
    """Figure 3 for every game of the config; returns a summary (final figures and file paths)."""
    summary: dict[str, Any] = {}
    check_datasets(config, {g: PAPER_GAMES[g].fig3_depth for g in config.games if g in PAPER_GAMES})
    check_output_dir(config.out, "--out")  # made only now: refused input leaves nothing behind
    for game in config.games:
        if game in PARTICLE_GAMES:
            raise PvfError(f"fig3 needs the public tree, which {game} exceeds; it has fig4 (particle trunks) only")
        data = {seed: ensure_dataset(config, game, PAPER_GAMES[game].fig3_depth, seed) for seed in config.seeds}
        keys = [(seed, arch) for seed in config.seeds for arch in (config.architectures or FIG3_ARCHITECTURES)]
        runs = train_all(config, [(data[seed], arch, seed, config.eval_every) for seed, arch in keys])
        rows: list[dict[str, Any]] = []
        for (seed, arch), run in zip(keys, runs):
            rows.extend({"game": game, "architecture": arch, "seed": seed, **r} for r in run.history)
        csv_path, png_path = config.out / f"fig3-{game}.csv", config.out / f"fig3-{game}.png"
        write_csv(rows, csv_path)
        plot_training(
            rows,
            png_path,
            f"{game}: trunk exploitability during training (trunk to move {PAPER_GAMES[game].fig3_depth})",
        )
        summary[game] = {"csv": str(csv_path), "png": str(png_path), **_final_figures(rows)}
    return summary


def _final_figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per architecture: mean ± std over seeds of the last measurement's exploitability and loss."""
    out = {}
    for arch in sorted({r["architecture"] for r in rows}):
        last: dict[int, dict[str, Any]] = {}
        for r in rows:
            if r["architecture"] == arch and r["step"] >= last.get(r["seed"], {"step": -1})["step"]:
                last[r["seed"]] = r
        expl = np.array([r["trunk_exploitability"] for r in last.values()])
        loss = np.array([r["train_loss"] for r in last.values()])
        out[arch] = {
            "step": int(max(r["step"] for r in last.values())),
            "trunk_exploitability_mean": float(expl.mean()),
            "trunk_exploitability_std": float(expl.std()),
            "train_loss_mean": float(np.nanmean(loss)) if np.isfinite(loss).any() else float("nan"),
        }
    return out
