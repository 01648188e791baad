"""End-to-end speed of `pvf reproduce fig3`: ensembles (the default) against `--separate-runs`.

What a user waits for, where `benchmarks/ensemble_speed.py` times the parts:
  1. the datasets of every seed are generated once (not timed) and copied
     into two fresh output folders;
  2. `reproduce_fig3` runs in each, once with the seeds of every network as
     one ensemble (split over `--jobs` processes) and once as one Lightning
     run per seed (`separate_runs`, `--jobs` runs at a time): training and
     every trunk-exploitability measurement, all figures written;
  3. the ratio of the two wall-clock times, and each side's final mean
     trunk exploitability per network (different draws of one experiment:
     the two sides' batch orders differ, docs/ensembles.md).

    python benchmarks/reproduce_speed.py [--game leduc] [--seeds 10] [--trunks 100] [--max-steps 1024]
                                         [--eval-every 64] [--jobs 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

from pvf.experiments.fig3 import reproduce_fig3
from pvf.experiments.reproduce import ReproduceConfig, ensure_dataset
from pvf.games.paper import PAPER_GAMES


def timed_fig3(config: ReproduceConfig) -> tuple[float, dict[str, float]]:
    """(seconds, final mean trunk exploitability per architecture) of one `reproduce_fig3` run."""
    start = time.perf_counter()
    summary = reproduce_fig3(config)[config.games[0]]
    seconds = time.perf_counter() - start
    finals = {
        arch: float(figures["trunk_exploitability_mean"])
        for arch, figures in summary.items()
        if isinstance(figures, dict)
    }
    return seconds, finals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc", choices=sorted(PAPER_GAMES))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trunks", type=int, default=100, help="trunk strategies per dataset (paper: 1,000)")
    parser.add_argument("--max-steps", type=int, default=1024)
    parser.add_argument("--eval-every", type=int, default=64)
    parser.add_argument("--jobs", type=int, default=2, help="training processes of either side")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)

    with tempfile.TemporaryDirectory() as tmp:
        base = ReproduceConfig(
            out=Path(tmp) / "data-only",
            games=(args.game,),
            seeds=tuple(range(args.seeds)),
            trunks=args.trunks,
            max_steps=args.max_steps,
            eval_every=args.eval_every,
            workers=args.jobs,
            jobs=args.jobs,
        )
        for seed in base.seeds:
            ensure_dataset(base, args.game, PAPER_GAMES[args.game].fig3_depth, seed)
        sides = {}
        for name, separate in (("ensembles", False), ("separate_runs", True)):
            out = Path(tmp) / name
            shutil.copytree(base.out / "data", out / "data")
            sides[name] = timed_fig3(replace(base, out=out, separate_runs=separate))

    (ens_s, ens_final), (sep_s, sep_final) = sides["ensembles"], sides["separate_runs"]
    result = {
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch thread per process, {args.jobs} jobs",
        "game": args.game,
        "seeds": args.seeds,
        "trunks": args.trunks,
        "max_steps": args.max_steps,
        "eval_every": args.eval_every,
        "ensemble_seconds": ens_s,
        "separate_seconds": sep_s,
        "speedup": sep_s / ens_s,
        "ensemble_final_exploitability": ens_final,
        "separate_final_exploitability": sep_final,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"pvf reproduce fig3, {args.game}, {args.seeds} seeds x {args.max_steps} steps, trunk exploitability every "
        f"{args.eval_every}, {args.jobs} jobs ({result['machine']}; datasets made beforehand)"
    )
    for label, seconds, finals in (("ensembles", ens_s, ens_final), ("separate runs", sep_s, sep_final)):
        means = ", ".join(f"{arch} {value:.3f}" for arch, value in sorted(finals.items()))
        print(f"  {label:<14} {seconds:8.1f} s   final mean trunk exploitability: {means}")
    print(f"  ratio          {sep_s / ens_s:8.2f}x")


if __name__ == "__main__":
    main()
