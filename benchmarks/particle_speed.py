"""Particle data, native kernel against OpenSpiel's walk: samples per second per core, on the same samples.

For each K (16 and 64) this solves the same children-row samples (`pvf generate --particles K --rows
children`, sample ids 1..N of seed 0, as one task: their subgames in one CFR+ call, as a task of `pvf
generate` solves them; its default task is 50 samples; sample 0 warms both engines up) with the native
engine and with the OpenSpiel engine (`pvf.games.engine`), in one process on one core, checks that both
give the same rows bit for bit, and prints each engine's samples per second, the speed-up, the share
of the native engine's time spent in CFR+ (the targets' 100 iterations), and each engine's time per
sample by stage (`STAGES`: playing to the public state, sampling particles, continuations, particle
trees, joins of induced histories, the sequence form, CFR+, and the rest). Peak memory is the process's
(both engines, all settings).

Run:
    .venv/bin/python benchmarks/particle_speed.py                       # Goofspiel-13, depth 10, 10 samples per setting
    .venv/bin/python benchmarks/particle_speed.py --game goofspiel8 --samples 20 --json
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import resource
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from pvf.datasets.particle_tasks import solve_samples  # noqa: E402
from pvf.datasets.spec import ParticleSpec  # noqa: E402
from pvf.games.paper import PARTICLE_GAMES  # noqa: E402

DRAWS = (16, 64)


ENGINE_CLASSES = (("pvf.games.goofspiel_kernel", "GoofspielEngine"), ("pvf.games.openspiel_engine", "OpenSpielEngine"))
ENGINE_STAGES = {  # each engine's method: its stage
    "play_to_depth": "play",
    "sample_particles": "sampling",
    "continuations": "continuations",
    "particle_tree": "trees",
    "induced_histories": "joins",
}
STAGES = (  # (module, owner in it or None, function, stage): what a sample's time is spent on, per engine
    ("pvf.datasets.particle_tasks", None, "cfr_plus", "CFR+"),
    ("pvf.solvers.leaf_subgames", None, "build_sequence_game", "sequence form"),
    *((module, owner, method, stage) for module, owner in ENGINE_CLASSES for method, stage in ENGINE_STAGES.items()),
)


class StageClock:
    """Wraps the functions of `STAGES` where the particle path calls them and adds up their seconds by stage.

    None of them calls another, so the stages do not overlap; the rest of a sample's time is "other"."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def install(self) -> None:
        for module_name, owner_name, name, stage in STAGES:
            module = importlib.import_module(module_name)
            owner = module if owner_name is None else getattr(module, owner_name)
            setattr(owner, name, self._timed(getattr(owner, name), stage))

    def _timed(self, real, stage: str):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start

        return timed


def run_setting(spec: ParticleSpec, samples: int, clock: StageClock) -> dict:
    """Both engines on sample ids 1..samples of `spec`: seconds per sample, in all and per stage."""
    ids = range(1, samples + 1)
    seconds, stages, outputs = {}, {}, {}
    for engine in ("native", "openspiel"):
        solve_samples(spec, [0], engine)  # loads the game, builds caches
        clock.seconds = {}
        start = time.perf_counter()
        outputs[engine] = solve_samples(spec, ids, engine)
        seconds[engine] = (time.perf_counter() - start) / samples
        stages[engine] = {stage: t / samples for stage, t in clock.seconds.items()}
        stages[engine]["other"] = seconds[engine] - sum(stages[engine].values())
    cfr = stages["native"].get("CFR+", 0.0)
    for a, b in zip(outputs["native"], outputs["openspiel"]):
        for key in a:
            same = a[key] == b[key] if key == "stats" else np.array_equal(a[key], b[key])
            if not same:
                raise SystemExit(f"the engines differ on {key!r}")
    histories = np.mean([out["stats"][2] for out in outputs["native"]])
    return {
        "particles": spec.particles.count,
        "native_seconds": seconds["native"],
        "openspiel_seconds": seconds["openspiel"],
        "native_samples_per_second": 1 / seconds["native"],
        "openspiel_samples_per_second": 1 / seconds["openspiel"],
        "speedup": seconds["openspiel"] / seconds["native"],
        "cfr_seconds": cfr,
        "cfr_share": cfr / seconds["native"],
        "subgame_histories": float(histories),
        "stage_seconds": stages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="goofspiel13", help="a game with a native kernel (default goofspiel13)")
    parser.add_argument("--depth", type=int, default=None, help="rows' move (default: the game's particle depth)")
    parser.add_argument("--samples", type=int, default=10, help="samples per setting and engine (default 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    if args.samples < 1:
        raise SystemExit("--samples must be at least 1")
    depth = args.depth if args.depth is not None else getattr(PARTICLE_GAMES.get(args.game), "depth", None)
    if depth is None:
        raise SystemExit(f"--depth is needed for {args.game}")
    clock = StageClock()
    clock.install()
    settings = [
        run_setting(
            ParticleSpec(args.game, depth, args.samples + 1, k, 100, rows="children", max_histories=2_000_000),
            args.samples,
            clock,
        )
        for k in DRAWS
    ]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    first = settings[0]
    summary = {
        "game": args.game,
        "depth": depth,
        "samples": args.samples,
        "speedup": first["speedup"],
        "cfr_share": first["cfr_share"],
        "peak_memory_mb": peak_mb,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}",
        "settings": settings,
    }
    if args.json:
        print(json.dumps(summary))
        return
    print(f"{args.game}, children rows at move {depth}, {args.samples} samples per setting, one core")
    print(f"{'K':>4} {'native/s':>9} {'openspiel/s':>12} {'speed-up':>9} {'CFR+ share':>11} {'histories':>10}")
    for s in settings:
        print(
            f"{s['particles']:>4} {s['native_samples_per_second']:>9.1f} {s['openspiel_samples_per_second']:>12.2f} "
            f"{s['speedup']:>8.1f}x {s['cfr_share']:>10.0%} {s['subgame_histories']:>10.0f}"
        )
    print("milliseconds per sample by stage, native / OpenSpiel engine:")
    names = list(dict.fromkeys(name for s in settings for e in s["stage_seconds"].values() for name in e))
    print(f"{'K':>4} " + " ".join(f"{name:>15}" for name in names))
    for s in settings:
        native, openspiel = s["stage_seconds"]["native"], s["stage_seconds"]["openspiel"]
        cells = [f"{1e3 * native.get(n, 0.0):.1f} / {1e3 * openspiel.get(n, 0.0):.1f}" for n in names]
        print(f"{s['particles']:>4} " + " ".join(f"{c:>15}" for c in cells))
    print(f"peak memory {peak_mb:.0f} MB ({summary['machine']})")


if __name__ == "__main__":
    main()
