"""Preloaded training sets: repeated feature rows stored once against the dense sets, in bytes and gather time.

    python benchmarks/preload_memory.py [--games leduc goofspiel5 goofspiel5-d3] [--trunks 1000] [--json]

For each game (Leduc at move 7, Goofspiel-5 at moves 2 and 3; Goofspiel-5
at move 3 is fig. 4's training data), in one process:
  1. Data: one PBS file of `--trunks` trunks (the paper's 1,000 by
     default; about a minute for all three) generated into a temporary
     directory, so it runs from a fresh clone.
  2. Per architecture (every registered one): one member's training set
     preloaded as `EnsembleTrainer` does (`pvf.trainers.preloaded`: feature
     rows in one table of distinct rows, an int32 index per sample) against
     the baseline, the same set encoded dense in one `encode_batch` call
     (`[n, N, F]` features), as it was kept before: the bytes of each, and
     the median time of gathering a batch of 64 random samples from each
     (one `index_select` per tensor; the table adds one more).
`--json` prints one object: `memory_ratio` (dense bytes / stored bytes,
the smallest over the sets that have a table: positional inputs have none)
and `gather_speedup` (dense time / stored time, the smallest over all);
`details` holds every figure.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pvf.datasets.generate import generate
from pvf.datasets.spec import GenerationSpec
from pvf.trainers.ensemble import EnsembleTrainer
from pvf.valuefn.architecture import Batch
from pvf.valuefn.registry import ARCHITECTURES

GAMES = {"leduc": ("leduc_poker", 7), "goofspiel5": ("goofspiel5", 2), "goofspiel5-d3": ("goofspiel5", 3)}
BATCH = 64
GATHERS = 200


def nbytes(batch: Batch) -> int:
    return sum(t.numel() * t.element_size() for t in batch.values())


def median_ms(gather, rows: int, seed: int = 0) -> float:
    """Median milliseconds of `gather(index)` over `GATHERS` random batches of `BATCH` rows."""
    generator = torch.Generator().manual_seed(seed)
    times = []
    for _ in range(GATHERS):
        index = torch.randint(0, rows, (BATCH,), generator=generator)
        start = time.perf_counter()
        gather(index)
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def compare(path: Path, architecture: str) -> dict[str, Any]:
    trainer = EnsembleTrainer.from_files([path], architecture, [0], 1)
    data = trainer.data[0]
    dense = trainer.encode(data.dataset.__getitems__(np.arange(len(data.rows))))
    preloaded = trainer.preloaded
    stored = nbytes(preloaded.rows) + nbytes(preloaded.tables)
    dense_ms = median_ms(lambda index: {k: v.index_select(0, index) for k, v in dense.items()}, len(data.rows))
    stored_ms = median_ms(preloaded.select, len(data.rows))
    return {
        "samples": len(data.rows),
        "distinct_rows": {key: len(table) for key, table in preloaded.tables.items()},
        "dense_mb": nbytes(dense) / 1e6,
        "stored_mb": stored / 1e6,
        "memory_ratio": nbytes(dense) / stored,
        "dense_gather_ms": dense_ms,
        "stored_gather_ms": stored_ms,
        "gather_speedup": dense_ms / stored_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=sorted(GAMES), default=list(GAMES))
    parser.add_argument("--architectures", nargs="+", choices=sorted(ARCHITECTURES), default=list(ARCHITECTURES))
    parser.add_argument("--trunks", type=int, default=1000, help="trunks of each generated file (the paper: 1,000)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    details: dict[str, Any] = {
        "machine": platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "trunks": args.trunks,
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.games:
            game, depth = GAMES[name]
            path = Path(tmp) / f"{name}.h5"
            generate(
                GenerationSpec(game=game, depth=depth, num_trunks=args.trunks, cfr_iterations=20, seed=0),
                path,
                progress=False,
            )
            for arch in args.architectures:
                row = details[f"{name}/{arch}"] = compare(path, arch)
                if not args.json:
                    print(
                        f"{name:<14} {arch:<10} {row['samples']:>6,} samples: {row['dense_mb']:8.1f} MB dense, "
                        f"{row['stored_mb']:6.1f} MB stored ({row['memory_ratio']:5.1f}x; distinct rows "
                        f"{row['distinct_rows'] or '-'}); gather of {BATCH} {row['dense_gather_ms']:.3f} vs "
                        f"{row['stored_gather_ms']:.3f} ms ({row['gather_speedup']:.2f}x)",
                        flush=True,
                    )
    rows = [v for k, v in details.items() if "/" in k]
    tabled = [r for r in rows if r["distinct_rows"]] or rows  # positional inputs have no table: ratio 1
    out = {
        "memory_ratio": min(r["memory_ratio"] for r in tabled),
        "gather_speedup": min(r["gather_speedup"] for r in rows),
        "details": details,
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"smallest ratios: memory {out['memory_ratio']:.2f}x (sets with a table), gather "
            f"{out['gather_speedup']:.2f}x"
        )


if __name__ == "__main__":
    main()
