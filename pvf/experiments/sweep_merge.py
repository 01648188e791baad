"""Particle-trunk sweeps run apart, as one figure: their `-runs.csv` tables merged, summarised and plotted.

    python -m pvf.experiments.sweep_merge A-runs.csv B-runs.csv ... --out DIR [--name goofspiel13] [--title T]

A sweep of ten draws per K at K = 256 is hours on one core; run as two
processes (`--seeds 0,1,2,3,4` and `--seeds 5,6,7,8,9`), or with new
networks beside an earlier run's oracle and targets (`--no-oracle`, no
`--targets`), its runs tables are merged here:
  1. every row of every table, keyed by (game, evaluator, K, seed);
  2. a key in several tables must hold the same run there (the draws are
     seeded, so a rerun gives the same restricted game): the same
     particles, roots and histories and an exploitability within 1e-9;
     otherwise the merge stops and names the key. The first table's row is
     kept (its seconds);
  3. one game only; evaluators in the order the tables first name them;
  4. `DIR/fig4-<name>.csv` (the summary `pvf experiment particle-trunks`
     writes: per evaluator and K, runs, means and standard deviations over
     the seeds), `DIR/fig4-<name>-runs.csv` and the PNG.
"""

from __future__ import annotations

import argparse
import csv
import math
from collections.abc import Sequence
from pathlib import Path

from pvf.errors import PvfError, require_files
from pvf.experiments.particle_sweep import plot_particle_sweep, runs_table, summarize
from pvf.experiments.trunk_sweep import SweepRow
from pvf.module_main import run_module
from pvf.results import write_csv

TOLERANCE = 1e-9  # exploitability of one run written by two sweeps (shortest-repr floats: equal in practice)


def read_runs(path: Path) -> list[SweepRow]:
    """The rows of one `fig4-<game>-runs.csv` (`pvf.experiments.particle_sweep.RUN_COLUMNS`)."""
    require_files([path])
    with open(path, newline="") as f:
        records = list(csv.DictReader(f))
    needed = {"game", "draws", "seed", "particles", "roots", "histories", "evaluator", "exploitability", "seconds"}
    missing = needed - set(records[0] if records else needed)
    if not records or missing:
        raise PvfError(f"{path}: not a particle-trunk runs table (missing {', '.join(sorted(missing)) or 'rows'})")
    try:
        return [_run_row(r) for r in records]
    except (TypeError, ValueError) as e:  # a field that is not a number, or a row with too few fields
        raise PvfError(
            f"{path}: a row is not a particle-trunk run ({e}); is the file a -runs.csv the sweep wrote?"
        ) from None


def _run_row(r: dict[str, str]) -> SweepRow:
    return SweepRow(
        game=r["game"],
        point=r["draws"],
        seed=int(r["seed"]),
        evaluator=r["evaluator"],
        network="",
        draws=int(r["draws"]),
        particles=int(r["particles"]),
        root_histories=int(r["roots"]),
        share=math.nan,
        histories=int(r["histories"]),
        exploitability=float(r["exploitability"]),
        root_exploitability=math.nan,
        measure=r.get("measure") or "exact",
        gap=float(r.get("gap") or 0.0),
        seconds=float(r["seconds"]),
    )


def merge_runs(tables: Sequence[Sequence[SweepRow]]) -> list[SweepRow]:
    """Steps 1-3: one row per (evaluator, K, seed), in a sweep's order: by K, seed and evaluator (first named first)."""
    kept: dict[tuple[str, int | None, int], SweepRow] = {}
    for rows in tables:
        for row in rows:
            key = (row.evaluator, row.draws, row.seed)
            first = kept.setdefault(key, row)
            if first is row:
                continue
            same = (first.game, first.particles, first.root_histories, first.histories, first.measure) == (
                row.game,
                row.particles,
                row.root_histories,
                row.histories,
                row.measure,
            )
            if not same or abs(first.exploitability - row.exploitability) > TOLERANCE:
                raise PvfError(
                    f"{row.evaluator}, K = {row.draws}, seed {row.seed} differs between the tables "
                    f"({first.exploitability!r} on {first.histories} histories against {row.exploitability!r} on "
                    f"{row.histories}): they are not runs of the same sweep"
                )
    games = {r.game for r in kept.values()}
    if len(games) > 1:
        raise PvfError(f"the tables hold {len(games)} games ({', '.join(sorted(games))}); merge one game's at a time")
    order = {name: i for i, name in enumerate(dict.fromkeys(key[0] for key in kept))}
    return sorted(kept.values(), key=lambda r: (r.draws or 0, r.seed, order[r.evaluator]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="fig4-<game>-runs.csv tables of particle-trunk sweeps")
    parser.add_argument("--out", type=Path, required=True, help="output folder (created)")
    parser.add_argument("--name", default="game", help="the files' game name: fig4-<name>.csv (default game)")
    parser.add_argument(
        "--title", default=None, help="the plot's title (default: the name, the seeds and the number of tables)"
    )
    args = parser.parse_args(argv)
    rows = merge_runs([read_runs(path) for path in args.runs])
    table = summarize(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(table, args.out / f"fig4-{args.name}.csv")
    write_csv(runs_table(rows), args.out / f"fig4-{args.name}-runs.csv")
    seeds = len({r.seed for r in rows})
    title = args.title or f"{args.name}: particle trunks, {seeds} seeds (merged from {len(args.runs)} sweeps)"
    plot_particle_sweep(table, str(args.out / f"fig4-{args.name}.png"), title)
    print(f"{len(rows)} runs, {len(table)} (evaluator, K) rows -> {args.out / f'fig4-{args.name}.csv'}")
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.sweep_merge")
