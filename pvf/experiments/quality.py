"""`pvf reproduce quality`: value functions trained by the recipe, or by the paper's protocol, judged in the trunk.

The recipe changes five things of fig. 3's protocol (the paper's; both are `pvf.experiments.figures.PROTOCOLS`):
  1. targets: best responses, guarded where a belief is zero
     (`pvf.solvers.guarded_values`), the values a trunk needs there;
  2. data: one large file per game shared by all seeds (`RECIPE_PBS`: at
     least 1,000,000 Leduc and 500,000 Goofspiel-5 PBSs), so that no PBS is
     seen more than a few times; each seed still holds out its own share of
     the file's trunk strategies for validation and draws its own batches;
  3. Adam's learning rate cosine-annealed to 0 over the run;
  4. checkpoint selection: each member's weights at its lowest validation
     loss (validated at every measurement, kept as a "-chosen" checkpoint),
     not its last weights;
  5. half the file's trunks moved towards the leaf beliefs a trunk solve
     asks about (`p_solve` 0.5, `pvf.datasets.sampling` step 4), the
     lever that brought both games' nets under the goals
     (docs/results/value-function-quality.md).
Each lever is also an option, so that an ablation row is one flag away
from either protocol. Per game: the data (`pvf.experiments.reproduce`),
each architecture's seeds trained as one ensemble with trunk exploitability
measured every `eval_every` steps, then `quality-<game>.csv` (one row per
measurement; `chosen` is 1 on the selected checkpoint's row of each
architecture and seed, the row the recipe is judged on) and
`quality-<game>.png` (curves, mean ± std over seeds, the chosen
checkpoints marked). `quality-<game>-mean.csv` adds, per architecture, the
trunk exploitability of the mean of its members' judged checkpoints at
the leaves (`MeanEvaluator`: one more trunk solve).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from pvf.errors import PvfError
from pvf.experiments.figures import QUALITY_ARCHITECTURES, RECIPE_PBS, SELECTIONS, Protocol
from pvf.experiments.plots import plot_training
from pvf.experiments.reproduce import ReproduceConfig, check_datasets, chosen_checkpoint, ensure_dataset, train_all
from pvf.games.features import build_feature_tables
from pvf.games.paper import PAPER_GAMES
from pvf.games.public_tree import PublicTree, build_public_tree
from pvf.outputs import check_output_dir
from pvf.results import write_csv
from pvf.solvers.evaluators import MeanEvaluator
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate
from pvf.valuefn.network import load_value_function


def recipe_trunks(game: str, tree: PublicTree) -> int:
    """Trunk strategies whose leaf PBSs number at least `RECIPE_PBS[game]` (one PBS per leaf public state)."""
    states = len(tree.public_states_at_depth(PAPER_GAMES[game].fig3_depth))
    return math.ceil(RECIPE_PBS[game] / states)


def reproduce_quality(config: ReproduceConfig, protocol: Protocol) -> dict[str, Any]:
    """Train and judge every game of `config` by `protocol`; a summary per game.

    config: the protocol's levers (target, lr_schedule, select, p_solve) already set; its trunks are used where
        `protocol.trunks` is not None, else `recipe_trunks` per game.
    """
    for game in config.games:
        if game not in RECIPE_PBS:
            raise PvfError(f"quality trains Leduc and Goofspiel-5 (leduc, goofspiel5), not {game}")
    if config.select == "val_loss" and config.separate_runs:
        raise PvfError("--select val_loss needs ensembles (it validates at every measurement); drop --separate-runs")
    depths = {g: PAPER_GAMES[g].fig3_depth for g in config.games}
    trees = check_datasets(config, depths)
    configs = {
        game: config if protocol.trunks is not None else replace(config, trunks=recipe_trunks(game, trees[game]))
        for game in config.games
    }
    for game, game_config in configs.items():
        check_datasets(game_config, {game: depths[game]}, trees)
    check_output_dir(config.out, "--out")  # made only now: refused input leaves nothing behind
    summary: dict[str, Any] = {}
    for game, game_config in configs.items():
        seeds = game_config.seeds
        if protocol.shared_data:
            shared = ensure_dataset(game_config, game, depths[game], seeds[0])
            data = dict.fromkeys(seeds, shared)
        else:
            data = {seed: ensure_dataset(game_config, game, depths[game], seed) for seed in seeds}
        keys = [(seed, arch) for arch in game_config.architectures or QUALITY_ARCHITECTURES for seed in seeds]
        runs = train_all(game_config, [(data[seed], arch, seed, game_config.eval_every) for seed, arch in keys])
        rows: list[dict[str, Any]] = []
        for (seed, arch), run in zip(keys, runs):
            history = [{"game": game, "architecture": arch, "seed": seed, **r} for r in run.history]
            rows.extend(mark_chosen(history, game_config.select))
        first = ("game", "architecture", "seed", "step", "trunk_exploitability", "chosen")
        extra = {
            "protocol": protocol.name,
            "target": game_config.target,
            "trunks": game_config.trunks,
            "p_solve": game_config.p_solve,
        }
        rows = [{**{k: r[k] for k in first}, **r, **extra} for r in rows]
        csv_path, png_path = config.out / f"quality-{game}.csv", config.out / f"quality-{game}.png"
        write_csv(rows, csv_path)
        plot_training(
            rows,
            png_path,
            f"{game}: trunk exploitability during training, {protocol.name} protocol "
            f"({game_config.target} targets, {game_config.lr_schedule} learning rate, "
            f"{game_config.trunks:,} trunks{' shared' if protocol.shared_data else ' per seed'}"
            f"{f', p_solve {game_config.p_solve:g}' if game_config.p_solve else ''}; "
            f"dots: the chosen checkpoints, by {game_config.select.replace('_', ' ')})",
            loss_key="val_loss" if game_config.select == "val_loss" else "train_loss",
        )
        judged = {}
        for (_, arch), run in zip(keys, runs):
            path = Path(run.checkpoint)
            judged.setdefault(arch, []).append(chosen_checkpoint(path) if game_config.select == "val_loss" else path)
        means = [
            {"game": game, "architecture": arch, "members": len(paths), **_mean_of_members(paths, config.iterations)}
            for arch, paths in judged.items()
        ]
        mean_path = config.out / f"quality-{game}-mean.csv"
        write_csv([{**r, **extra} for r in means], mean_path)
        figures = chosen_figures(rows)
        for r in means:
            figures[r["architecture"]]["mean_of_members"] = r["trunk_exploitability"]
        summary[game] = {"csv": str(csv_path), "png": str(png_path), "mean_csv": str(mean_path), **figures}
    return summary


def _mean_of_members(checkpoints: Sequence[Path], iterations: int) -> dict[str, float]:
    """Trunk exploitability (NashConv) of CFR+ in the trunk the checkpoints were trained for, their mean at the
    leaves."""
    networks = [load_value_function(path) for path in checkpoints]
    layout = networks[0].meta.layout
    tree = build_public_tree(layout.game)
    trunk = build_trunk(tree, layout.depth)
    features = build_feature_tables(tree)
    result = solve_and_evaluate(trunk, MeanEvaluator([n.evaluator(trunk, features) for n in networks]), iterations)
    return {
        "trunk_exploitability": result.exploitability.exploitability,
        "trunk_exploitability_openspiel": result.exploitability.openspiel_convention,
    }


def mark_chosen(history: Sequence[dict[str, Any]], select: str) -> list[dict[str, Any]]:
    """One run's rows with `chosen` set: 1 on the last row ("last") or on the first row of lowest
    validation loss ("val_loss"), 0 elsewhere."""
    if select not in SELECTIONS:
        raise PvfError(f"checkpoint selection is one of {', '.join(SELECTIONS)}, not {select!r}")
    if select == "last":
        pick = max(range(len(history)), key=lambda i: history[i]["step"])
    else:
        losses = [float(r["val_loss"]) for r in history]
        finite = [i for i, v in enumerate(losses) if math.isfinite(v)]
        if not finite:
            raise PvfError("no validation loss was measured: the chosen checkpoint needs one at every measurement")
        pick = min(finite, key=lambda i: (losses[i], history[i]["step"]))
    return [{**r, "chosen": int(i == pick)} for i, r in enumerate(history)]


def chosen_figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per architecture: mean ± std over seeds of the chosen rows' and of the last rows' trunk exploitability."""
    out = {}
    for arch in sorted({r["architecture"] for r in rows}):
        mine = [r for r in rows if r["architecture"] == arch]
        chosen = [r for r in mine if r["chosen"]]
        last = [
            max((r for r in mine if r["seed"] == s), key=lambda r: r["step"]) for s in sorted({r["seed"] for r in mine})
        ]
        out[arch] = {
            "seeds": len(chosen),
            "chosen_step_mean": float(np.mean([r["step"] for r in chosen])),
            **_mean_std("chosen", [r["trunk_exploitability"] for r in chosen]),
            **_mean_std("last", [r["trunk_exploitability"] for r in last]),
        }
    return out


def _mean_std(name: str, values: Sequence[float]) -> dict[str, float]:
    return {f"{name}_mean": float(np.mean(values)), f"{name}_std": float(np.std(values))}
