"""Rollout leaf values a chunk of hands at a time against all at once: seconds and peak memory, in one run.

`pvf.games.rollouts.play_values` values each distinct hands-and-score of a set of histories by R sampled
pairs of bid orders, gathering the bids of `CHUNK_ELEMENTS` at a time. The baseline is the same function
with the chunk set above the whole set (every [U, R, m] array at once, as it was before chunking). Both
value the same histories from the same generator seed and must agree bit for bit; each setting is timed
`--repeats` times (the minimum is printed) and its peak traced memory (`tracemalloc`, which counts NumPy's
arrays) measured on its own.

The default histories are drawn at random at the start of move 4 of Goofspiel-13 (as many as the particle
agent's solve two moves ahead from move 2 values, `horizon=2`), 64 orders each (`ROLLOUT_DRAWS`).

Run:
    .venv/bin/python benchmarks/rollout_speed.py                     # 810,700 histories at move 4
    .venv/bin/python benchmarks/rollout_speed.py --histories 100000 --move 6 --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from pvf.games import rollouts  # noqa: E402
from pvf.games.goofspiel_kernel import rules_of  # noqa: E402
from pvf.games.loading import load_game  # noqa: E402
from pvf.valuefn.rollout_leaves import ROLLOUT_DRAWS  # noqa: E402


def random_paths(num_cards: int, move: int, count: int, seed: int) -> np.ndarray:
    """[count, 2·move] turn-based paths: each player's first `move` bids, a random order of its cards."""
    rng = np.random.default_rng(seed)
    bids = [np.argsort(rng.random((count, num_cards)), axis=1)[:, :move] for _ in (0, 1)]
    paths = np.empty((count, 2 * move), dtype=np.int64)
    paths[:, 0::2], paths[:, 1::2] = bids
    return paths


def measure(rules, paths: np.ndarray, chunk: int, repeats: int) -> tuple[float, float, np.ndarray]:
    """(fastest seconds, peak traced MB, values [H]) of `play_values` with `CHUNK_ELEMENTS = chunk`."""
    rollouts.CHUNK_ELEMENTS = chunk
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        values = rollouts.play_values(rules, paths, ROLLOUT_DRAWS, np.random.default_rng(0))
        seconds.append(time.perf_counter() - start)
    tracemalloc.start()
    rollouts.play_values(rules, paths, ROLLOUT_DRAWS, np.random.default_rng(0))
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return min(seconds), peak, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="goofspiel13", help="a Goofspiel (default goofspiel13)")
    parser.add_argument("--move", type=int, default=4, help="the histories' move (default 4)")
    parser.add_argument("--histories", type=int, default=810_700, help="histories valued (default 810,700)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per setting (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="the histories' seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    rules = rules_of(load_game(args.game))
    if rules is None or not 0 <= args.move < rules.rounds or args.histories < 1 or args.repeats < 1:
        raise SystemExit("needs a Goofspiel, 0 <= --move < its rounds, --histories and --repeats at least 1")
    paths = random_paths(rules.num_cards, args.move, args.histories, args.seed)
    default = rollouts.CHUNK_ELEMENTS
    chunked = measure(rules, paths, default, args.repeats)
    whole = measure(rules, paths, 1 << 62, args.repeats)
    rollouts.CHUNK_ELEMENTS = default
    if chunked[2].tobytes() != whole[2].tobytes():
        raise SystemExit("chunked and whole values differ")
    out = {
        "game": args.game,
        "move": args.move,
        "histories": args.histories,
        "chunked_seconds": chunked[0],
        "whole_seconds": whole[0],
        "speedup": whole[0] / chunked[0],
        "chunked_peak_mb": chunked[1],
        "whole_peak_mb": whole[1],
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}",
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.game}, {args.histories:,} histories at move {args.move}, {ROLLOUT_DRAWS} orders each, one core")
    print(f"chunked ({default:,} bids at a time): {chunked[0]:.2f} s, peak {chunked[1]:,.0f} MB")
    print(f"whole arrays at once:           {whole[0]:.2f} s, peak {whole[1]:,.0f} MB")
    print(f"speed-up {out['speedup']:.1f}x, memory {whole[1] / chunked[1]:.1f}x less ({out['machine']})")


if __name__ == "__main__":
    main()
