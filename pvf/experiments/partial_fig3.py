"""Figure 3 of a `pvf reproduce fig3` run that is still going (or was stopped): CSV and PNG of what it has so far.

    python -m pvf.experiments.partial_fig3 RUN_DIR --game goofspiel5 [--csv F] [--png F] [--json]

Ensemble runs keep every member's measurements in their saved training
state (`RUN_DIR/checkpoints/<game>-…-seeds…-<architecture>-…-ens-e<E>.state.pt`,
written at most every minute) until the members are finished, then in one
CSV per member (`…-seed<s>-<architecture>-…-ens.csv` beside its
checkpoint). This collects both into the rows `pvf reproduce fig3` writes
(`fig3-<game>.csv`: game, architecture, seed, step, ...) and plots them the
same way, so a run of hours can be looked at while it trains. Per
architecture it prints the members found and the last step all of them have
reached; `pvf/experiments/summarize_fig3.py` gives the window statistics of the CSV
(an unfinished run's second half is that of the steps so far). Default
outputs: `RUN_DIR/fig3-<game>-partial.csv` and `.png`.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import torch

from pvf.experiments.plots import plot_training
from pvf.results import write_csv

STATE = re.compile(
    r"^(?P<game>[a-z0-9]+)-(?P<data>d\d+-t\d+-k\d+(?:-[a-z]+)?)-seeds(?P<seeds>[\d-]+)-(?P<arch>[a-z]+)-(?P<run>steps\d+-b\d+.*?)-ens-e\d+\.state\.pt$"
)
FINISHED = re.compile(
    r"^(?P<game>[a-z0-9]+)-(?P<data>d\d+-t\d+-k\d+(?:-[a-z]+)?)-seed(?P<seed>\d+)-(?P<arch>[a-z]+)-(?P<run>steps\d+-b\d+.*)-ens\.csv$"
)


def collect(run_dir: Path, game: str) -> list[dict[str, Any]]:
    """fig3 rows of every member found under `run_dir/checkpoints` (saved states and finished members' CSVs)."""
    rows, runs = [], set()
    for path in sorted((run_dir / "checkpoints").glob(f"{game}-*")):
        state, finished = STATE.match(path.name), FINISHED.match(path.name)
        if state and state["game"] == game:
            saved = torch.load(path, map_location="cpu", weights_only=True)
            for seed, history in zip(saved["trainer"]["seeds"], saved["histories"]):
                rows += [{"game": game, "architecture": state["arch"], "seed": int(seed), **r} for r in history]
            runs.add((state["data"], state["run"]))
        elif finished and finished["game"] == game and path.with_suffix(".ckpt").exists():
            with open(path, newline="") as f:
                rows += [
                    {"game": game, "architecture": finished["arch"], "seed": int(finished["seed"]), **_numbers(r)}
                    for r in csv.DictReader(f)
                ]
            runs.add((finished["data"], finished["run"]))
    if len(runs) > 1:
        fail(
            f"{run_dir} holds runs of {game} with different options ({', '.join(sorted('-'.join(r) for r in runs))}); "
            "give each its own --out"
        )
    return rows


def fail(message: str) -> None:
    """One line on stderr, exit status 2 (as `pvf` does for bad input)."""
    print(f"partial_fig3: error: {message}", file=sys.stderr)
    sys.exit(2)


def _numbers(row: dict[str, str]) -> dict[str, Any]:
    return {k: int(v) if k in ("step", "epoch") else float(v) for k, v in row.items()}


def progress(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per architecture: its seeds and the last step every one of them has reached."""
    out = {}
    for arch in sorted({r["architecture"] for r in rows}):
        last = {}
        for r in rows:
            if r["architecture"] == arch:
                last[r["seed"]] = max(last.get(r["seed"], 0), r["step"])
        out[arch] = {"seeds": sorted(last), "common_step": min(last.values())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="the run's --out directory")
    parser.add_argument("--game", required=True, help="leduc or goofspiel5")
    parser.add_argument("--csv", type=Path, help="default RUN_DIR/fig3-<game>-partial.csv")
    parser.add_argument("--png", type=Path, help="default RUN_DIR/fig3-<game>-partial.png")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if not (args.run_dir / "checkpoints").is_dir():
        fail(f"{args.run_dir} has no checkpoints/ directory: give the --out of a pvf reproduce fig3 run")
    rows = collect(args.run_dir, args.game)
    if not rows:
        fail(f"no ensemble states or finished members of {args.game} under {args.run_dir / 'checkpoints'}")
    csv_path = args.csv or args.run_dir / f"fig3-{args.game}-partial.csv"
    png_path = args.png or args.run_dir / f"fig3-{args.game}-partial.png"
    rows.sort(key=lambda r: (r["architecture"], r["seed"], r["step"]))
    write_csv(rows, csv_path)
    found = progress(rows)
    title = (
        f"{args.game}: trunk exploitability during training (so far: "
        + ", ".join(f"{arch} to step {p['common_step']:,}" for arch, p in found.items())
        + ")"
    )
    plot_training(rows, png_path, title)
    summary = {"csv": str(csv_path), "png": str(png_path), "architectures": found}
    if args.json:
        print(json.dumps(summary))
        return
    for arch, p in found.items():
        print(f"{arch}: {len(p['seeds'])} seeds, all measured up to step {p['common_step']:,}")
    print(f"wrote {csv_path} and {png_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
