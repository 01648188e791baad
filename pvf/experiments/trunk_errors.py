"""Where a value net errs that its trunk feels: its error at the beliefs its own trunk solve visits.

    python -m pvf.experiments.trunk_errors A.ckpt [B.ckpt ...] [--data FILE.h5] [--split-seeds 0,1,...] \\
        [--pbs 2000] [--json]

A net is trained and validated on the PBSs of random trunk strategies;
the trunk solve that judges it queries the net at the beliefs of its own
CFR+ iterates, which need not look like those. For each checkpoint:
  1. the trunk of its game from the initial state to its training depth,
     solved by 100 CFR+ iterations with the net at the leaves, every leaf
     query recorded (reach1 [Q, J1], reach2 [Q, J2]); the solve's NashConv;
  2. at each recorded query, the net's counterfactual values and those of
     its training target (`CFRTargetEvaluator`: the leaf subgames solved
     from the queried beliefs as the data's targets were, 100 CFR+
     iterations, the target kind of the net's layout), and the query's
     relative error Σ|net − target| / Σ|target| over both players' leaf
     infostates; reported as the mean over the second half of the queries
     (the iterates CFR+'s average is made of) and over all;
  3. the share of each player's trunk infostates (of two actions or more)
     where the solve's average strategy puts more than 0.95 on one action
     (`near_pure`): the data's random trunk strategies make 10% pure
     (`pvf.datasets.sampling`, the default mix);
  4. with `--data` (the file the net was trained on), the relative error
     pooled over the first `--pbs` PBSs of its validation split (`--split-seeds`:
     each checkpoint's split seed, an ensemble member's seed; default 0; in
     the normalised units the net sees, which leave the ratio per player
     unchanged): the error on the training distribution, beside it.
A net whose error is low on the validation PBSs and high on its trunk's
own queries fits beliefs its trunk does not ask about.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pvf.errors import PvfError, require_files
from pvf.experiments.row_errors import validation_predictions
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.module_main import run_module
from pvf.solvers.evaluators import CFRTargetEvaluator, RecordingEvaluator
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk, TrunkResult, build_trunk, solve_and_evaluate
from pvf.trainers.configs import training_defaults
from pvf.valuefn.network import Network, load_value_function


def relative_errors(values: tuple[np.ndarray, np.ndarray], reference: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """[Q] Σ|values − reference| / Σ|reference| over both players' columns, per row (values: ([Q, J1], [Q, J2]))."""
    error = sum(np.abs(v - r).sum(axis=1) for v, r in zip(values, reference))
    size = sum(np.abs(r).sum(axis=1) for r in reference)
    return error / np.maximum(size, np.finfo(float).tiny)


def trajectory_errors(
    trunk: Trunk, evaluator: LeafEvaluator, reference: LeafEvaluator, iterations: int = DEFAULT_ITERATIONS
) -> tuple[TrunkResult, np.ndarray]:
    """Steps 1–2: (the trunk solved with `evaluator` at its leaves, [Q] relative error against `reference`
    at each of the solve's leaf queries, in the order the solve made them)."""
    recording = RecordingEvaluator(evaluator)
    result = solve_and_evaluate(trunk, recording, iterations)
    answers = (recording.stacked(2), recording.stacked(3))
    errors = relative_errors(answers, reference(recording.stacked(0), recording.stacked(1)))
    return result, errors


def near_pure(trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray], threshold: float = 0.95) -> list[float]:
    """Step 3: per player, the share of its trunk infostates of 2+ actions whose largest probability exceeds
    `threshold`, NaN for a player without one (strategies: per player [S_n] behaviour probabilities on
    `trunk.game`)."""
    shares = []
    for seqs, strategy in zip(trunk.game.players, strategies):
        R = seqs.num_roots  # infostate blocks follow the roots back to back (`pvf.solvers.sequence_ops`)
        largest = np.maximum.reduceat(np.asarray(strategy)[R:], seqs.info_start - R)[seqs.info_size > 1]
        shares.append(float(np.mean(largest > threshold)) if len(largest) else float("nan"))
    return shares


def validation_error(data: Path, net: Network, pbs: int, split_seed: int) -> float:
    """Step 4: the relative error pooled over the first `pbs` validation PBSs of `data` (split `split_seed`):
    Σ|net − target| / Σ|target| over all their rows (a PBS whose targets are all 0 has no ratio of its own)."""
    error = size = 0.0
    for _, _, _, values, targets, mask in validation_predictions(
        data, net, split_seed, pbs, training_defaults().val_fraction
    ):
        values, targets = (torch.where(mask, t, 0.0).double().numpy() for t in (values, targets))
        error += float(np.abs(values - targets).sum())
        size += float(np.abs(targets).sum())
    return error / size


def checkpoint_report(
    checkpoint: Path, data: Path | None, pbs: int, split_seed: int, cache: dict[str, Any]
) -> dict[str, Any]:
    """Steps 1–4 for one checkpoint (`cache`: the trunks and target evaluators of the games seen so far)."""
    net = load_value_function(checkpoint)
    layout = net.meta.layout
    key = f"{layout.game}@{layout.depth}/{layout.target}"
    if key not in cache:
        tree = build_public_tree(layout.game)
        trunk = build_trunk(tree, layout.depth)
        cache[key] = (trunk, build_feature_tables(tree), CFRTargetEvaluator(trunk, DEFAULT_ITERATIONS, layout.target))
    trunk, features, targets = cache[key]
    result, errors = trajectory_errors(trunk, net.evaluator(trunk, features), targets)
    report = {
        "checkpoint": str(checkpoint),
        "trunk_exploitability": result.exploitability.exploitability,
        "near_pure": near_pure(trunk, result.strategies),
        "queries": len(errors),
        "trunk_error": float(errors[len(errors) // 2 :].mean()),
        "trunk_error_all": float(errors.mean()),
    }
    if data is not None:
        report["split_seed"] = split_seed
        report["validation_error"] = validation_error(data, net, pbs, split_seed)
    return report


def split_seeds(text: str | None, count: int) -> list[int]:
    """`--split-seeds`: one non-negative integer per checkpoint (None: all 0); a PvfError otherwise."""
    if text is None:
        return [0] * count
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise PvfError(f"--split-seeds takes comma-separated integers, got {text!r}") from None
    if len(seeds) != count or min(seeds) < 0:
        raise PvfError(f"--split-seeds needs one non-negative seed per checkpoint ({count}), got {text!r}")
    return seeds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", type=Path, nargs="+", help="value-function checkpoints")
    parser.add_argument("--data", type=Path, help="the PBS file they were trained on: their validation error beside")
    parser.add_argument("--split-seeds", help="each checkpoint's split seed with --data, comma-separated (default 0s)")
    parser.add_argument("--pbs", type=int, default=2000, help="validation PBSs read with --data (default 2000)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per checkpoint")
    args = parser.parse_args(argv)
    require_files([*args.checkpoints, *([args.data] if args.data else [])])
    if args.pbs < 1:
        raise PvfError("--pbs must be positive")
    seeds = split_seeds(args.split_seeds, len(args.checkpoints))
    cache: dict[str, Any] = {}
    for path, seed in zip(args.checkpoints, seeds):
        report = checkpoint_report(path, args.data, args.pbs, seed, cache)
        if args.json:
            print(json.dumps(report), flush=True)
            continue
        line = (
            f"{path}: NashConv {report['trunk_exploitability']:.4f}, relative error at its trunk's queries "
            f"{report['trunk_error']:.3f} (second half; all {report['trunk_error_all']:.3f}), near-pure infostates "
            f"{report['near_pure'][0]:.2f} / {report['near_pure'][1]:.2f}"
        )
        if "validation_error" in report:
            line += f", on validation PBSs {report['validation_error']:.3f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.trunk_errors")
