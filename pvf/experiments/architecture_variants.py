"""A network's config with some arguments changed, trained by the recipe as one ensemble, judged in the trunk.

    python -m pvf.experiments.architecture_variants FILE.h5 --architecture particle --set basis_dim=48 \\
        [--seeds 5] [--first-seed 0] [--max-steps 16384] [--batch-size 64] [--threads 1] [--out DIR] [--json]

`pvf reproduce quality` trains each architecture with the sizes of its
`configs/model/<name>.yaml`. This asks what a change of those arguments
does, everything else the recipe's:
  1. the arguments of `configs/model/<architecture>.yaml` and Adam's rate
     `lr` of configs/train.yaml, with each `--set KEY=VALUE` replacing one
     (a value is read as YAML: 48, 3e-4, concatenation, null); an unknown
     key is refused;
  2. seeds F..F+S−1 (F = `--first-seed`, default 0) trained on FILE (a `pvf generate` file, on its own
     target column) as one ensemble (`pvf.trainers.ensemble_training`),
     each holding out its own share of the trunk strategies, Adam's rate
     cosine-annealed to 0, batch 64 PBSs unless `--batch-size` (member s
     trains as it would in any ensemble, so seeds 5..9 beside a run of
     0..4 make the ten of one run of 0..9);
  3. each member's trunk exploitability (NashConv, 100 trunk CFR+
     iterations) and validation loss at the last step, where the recipe's
     checkpoint is on Leduc (every chosen checkpoint there was the last),
     printed as mean ± std over the seeds, with each member's figures.
The members go to DIR (default runs/variants/<architecture>-<changes>-b<batch>);
a rerun with the same DIR resumes the ensemble from its saved state.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.experiments.reproduce import training_options
from pvf.module_main import run_module
from pvf.trainers.ensemble_training import train_ensemble
from pvf.valuefn.registry import ARCHITECTURES


def changed_options(architecture: str, changes: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the trainer's options, the changes {key: value}) for `configs/model/<architecture>.yaml` with `changes`
    ("KEY=VALUE", VALUE read as YAML) applied; a PvfError for a malformed change or a key the config lacks."""
    options = training_options(architecture)
    applied: dict[str, Any] = {}
    for change in changes:
        key, sep, text = change.partition("=")
        if not sep or not key:
            raise PvfError(f"--set takes KEY=VALUE, got {change!r}")
        if key not in options or key == "val_fraction":
            known = ", ".join(k for k in options if k != "val_fraction")
            raise PvfError(f"--set {key}: configs/model/{architecture}.yaml has no argument {key!r} (it has {known})")
        applied[key] = _value(text)
    return {**options, **applied}, applied


def _value(text: str) -> Any:
    """A YAML value, with numbers such as 3e-4 that YAML 1.1 reads as strings read as floats."""
    value = yaml.safe_load(text)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def run_variant(
    data: Path,
    architecture: str,
    changes: list[str],
    seeds: int,
    max_steps: int,
    out: Path,
    batch_size: int = 64,
    first_seed: int = 0,
) -> dict[str, Any]:
    """Steps 1–3 of the module docstring; the summary as a dict."""
    options, applied = changed_options(architecture, changes)
    target = DataLayout.from_file(data).target  # the file's own column
    out.mkdir(parents=True, exist_ok=True)
    members = list(range(first_seed, first_seed + seeds))
    start = time.perf_counter()
    runs = train_ensemble(
        [data] * seeds,
        architecture,
        [out / f"seed{s}.ckpt" for s in members],
        members,
        max_steps,
        max_steps,
        100,
        batch_size,
        "cpu",
        out / "ensemble.state.pt",
        target=target,
        lr_schedule="cosine",
        chosen=[out / f"seed{s}-lowest-val-loss.ckpt" for s in members],  # validates at the measurement
        **options,
    )
    last = [run.history[-1] for run in runs]
    exploitability = [float(row["trunk_exploitability"]) for row in last]
    return {
        "data": str(data),
        "architecture": architecture,
        "changes": applied,
        "target": target,
        "seeds": members,
        "max_steps": max_steps,
        "batch_size": batch_size,
        "trunk_exploitability": exploitability,
        "val_loss": [float(row["val_loss"]) for row in last],
        "mean": float(np.mean(exploitability)),
        "std": float(np.std(exploitability)),
        "seconds": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a PBS file of `pvf generate`")
    parser.add_argument("--architecture", default="particle", choices=sorted(ARCHITECTURES))
    parser.add_argument("--set", dest="changes", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--seeds", type=int, default=5, help="members, seeds F..F+S-1 (default 5)")
    parser.add_argument("--first-seed", type=int, default=0, help="F, the first member's seed (default 0)")
    parser.add_argument("--max-steps", type=int, default=16384, help="training steps (default 16384)")
    parser.add_argument("--batch-size", type=int, default=64, help="PBSs per step and member (default 64)")
    parser.add_argument("--out", type=Path, default=None, help="where the members go")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1, as pvf reproduce: two runs at torch's default on 2 cores ran 10x slower)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if min(args.seeds, args.max_steps, args.batch_size, args.threads) < 1:
        raise PvfError("--seeds, --max-steps, --batch-size and --threads must be positive")
    if args.first_seed < 0:
        raise PvfError("--first-seed must be non-negative")
    if not args.data.is_file():
        raise PvfError(f"{args.data}: no such file; make one with pvf generate")
    name = "-".join([args.architecture, *(c.replace("=", "") for c in args.changes), f"b{args.batch_size}"])
    out = args.out or Path("runs/variants") / name
    torch.set_num_threads(args.threads)
    summary = run_variant(
        args.data, args.architecture, args.changes, args.seeds, args.max_steps, out, args.batch_size, args.first_seed
    )
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{args.architecture} {summary['changes'] or '(as configured)'}: trunk exploitability "
            f"{summary['mean']:.4f} ± {summary['std']:.4f} over seeds {summary['seeds']} at step {args.max_steps} "
            f"(each {', '.join(f'{x:.4f}' for x in summary['trunk_exploitability'])}; validation loss "
            f"{', '.join(f'{x:.2e}' for x in summary['val_loss'])}); {summary['seconds']:.0f} s"
        )
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.architecture_variants")
