"""Training speed of the value networks: PBS samples per second at the paper's sizes.

For Leduc at move 7 (54 leaf public states, 5 + 5 infostates each) and
Goofspiel-5 at move 2 (9 leaf public states, up to 20 + 20 infostates):
  1. build the public tree and feature tables, and synthetic PBSs at the
     real leaf public states: real features and slots, random beliefs and
     targets (the speed does not depend on their values);
  2. collate: `PbsCollate` on batches of B samples (the data pipeline);
  3. step: forward, masked MSE, backward and Adam on a collated batch, for
     every registered architecture at the paper's sizes (configs/); for
     the particle net also with its change basis run on every particle row
     (`pvf.nets.distinct_rows.every_row`, the baseline) instead of once
     per distinct row, and the ratio;
  4. with --loop: the whole Lightning loop (`pvf.trainers.training`:
     DataLoader on a real generated file, batched fetch, collate, step,
     logging) in samples per second, beside the bare step of 3, and the
     batched fetch (`__getitems__`) against sample-by-sample fetching.

Run: .venv/bin/python benchmarks/train_speed.py [--steps 200] [--batch-size 64] [--threads N] [--device cpu] [--loop]
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from pvf.datasets.generate import generate
from pvf.datasets.layout import DataLayout
from pvf.datasets.reader import PBSDataset
from pvf.datasets.spec import GenerationSpec
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.nets import ParticleVF
from pvf.nets.distinct_rows import every_row
from pvf.trainers.data import PbsCollate, PbsSample, PbsTorchDataset
from pvf.trainers.module import ValueFunctionModule
from pvf.trainers.training import train_value_function
from pvf.valuefn import ARCHITECTURES
from pvf.valuefn.architecture import Architecture, Batch
from pvf.valuefn.registry import make_architecture

GAMES = {"leduc": ("leduc_poker", 7), "goofspiel5": ("goofspiel5", 2)}
POOL = 16  # distinct batches cycled through


def synthetic_samples(game: str, depth: int, count: int, seed: int = 0) -> tuple[DataLayout, list[PbsSample]]:
    """`count` PBSs at the leaf public states of `game` at `depth`, with its true layout."""
    tree = build_public_tree(game)
    tables = build_feature_tables(tree)
    leaves = tree.public_states_at_depth(depth)
    rng = np.random.default_rng(seed)
    samples = []
    for p in rng.choice(leaves, size=count):
        infos = [tree.public_state_infostates[n][p] for n in (0, 1)]
        size = len(infos[0]) + len(infos[1])
        samples.append(
            PbsSample(
                public=tables.public[p],
                player=np.repeat([0, 1], [len(infos[0]), len(infos[1])]),
                slot=np.concatenate([np.arange(len(infos[0])), np.arange(len(infos[1]))]),
                belief=rng.random(size, dtype=np.float32),
                target=0.1 * rng.standard_normal(size, dtype=np.float32),
                private=np.concatenate([tables.private[0][infos[0]], tables.private[1][infos[1]]]),
            )
        )
    max_slots = tuple(max(len(tree.public_state_infostates[n][p]) for p in leaves) for n in (0, 1))
    layout = DataLayout(tree.game_string, depth, "average", tables.public_dim, tables.private_dim, max_slots)
    return layout, samples


def time_collate(arch: Architecture, layout: DataLayout, samples: list[PbsSample], batch_size: int) -> float:
    """Samples per second through the collate function and the architecture's encoding."""
    collate = PbsCollate()
    start = time.perf_counter()
    for i in range(0, len(samples) - batch_size + 1, batch_size):
        arch.encode_batch(collate(samples[i : i + batch_size]), layout)
    return (len(samples) // batch_size) * batch_size / (time.perf_counter() - start)


def time_steps(module: ValueFunctionModule, batches: list[Batch], steps: int, device: str) -> float:
    """Training samples per second: forward, loss, backward, Adam."""
    module.to(device)
    batches = [{k: v.to(device) for k, v in b.items()} for b in batches]
    optimizer = module.configure_optimizers()

    def step(batch: Batch) -> None:
        loss, _ = module.loss(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    for i in range(10):
        step(batches[i % len(batches)])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        step(batches[i % len(batches)])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return steps * batches[0]["public"].shape[0] / (time.perf_counter() - start)


def time_fetch(path: Path, layout: DataLayout, batch_size: int, batches: int = 200) -> tuple[float, float]:
    """Samples per second into a particle batch: (one `__getitems__` per batch, one `__getitem__` per sample)."""
    with PBSDataset(path) as ds:
        batches = min(batches, ds.num_samples // batch_size)
    dataset = PbsTorchDataset(path, np.arange(batches * batch_size))
    collate, particle = PbsCollate(), make_architecture("particle")
    rates = []
    for fetch in (dataset.__getitems__, lambda idx: [dataset[i] for i in idx]):
        start = time.perf_counter()
        for b in range(batches):
            particle.encode_batch(collate(fetch(list(range(b * batch_size, (b + 1) * batch_size)))), layout)
        rates.append(batches * batch_size / (time.perf_counter() - start))
    return rates[0], rates[1]


def time_loop(path: Path, architecture: str, steps: int, batch_size: int, device: str) -> float:
    """Training samples per second through the Lightning loop (a short run's start-up subtracted)."""
    accelerator = "gpu" if device.startswith("cuda") else "cpu"
    elapsed = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (20, 20 + steps):
            start = time.perf_counter()
            train_value_function(
                path, architecture, Path(tmp) / "net.ckpt", 0, n, 10**9, batch_size=batch_size, accelerator=accelerator
            )
            elapsed.append(time.perf_counter() - start)
    return steps * batch_size / (elapsed[1] - elapsed[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="timed training steps per network")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--games", nargs="+", choices=sorted(GAMES), default=list(GAMES))
    parser.add_argument("--loop", action="store_true", help="also time the whole Lightning loop on a generated file")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(
        f"# {platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, device {args.device}, batch {args.batch_size}"
    )
    for name in args.games:
        layout, samples = synthetic_samples(*GAMES[name], count=POOL * args.batch_size)
        collate = PbsCollate()
        print(
            f"{name}: Fp={layout.public_dim} Fq={layout.private_dim} slots={list(layout.max_slots)}; collate + encode "
            + ", ".join(
                f"{a} {time_collate(make_architecture(a), layout, samples, args.batch_size):,.0f}"
                for a in ARCHITECTURES
            )
            + " samples/s"
        )
        data = None
        if args.loop:
            data = Path(tempfile.mkdtemp()) / f"{name}.h5"
            game, depth = GAMES[name]
            generate(
                GenerationSpec(game=game, depth=depth, num_trunks=200, cfr_iterations=20, seed=0), data, progress=False
            )
            batched, single = time_fetch(data, layout, args.batch_size)
            print(
                f"  fetch + collate: batched {batched:,.0f} samples/s, sample by sample {single:,.0f} "
                f"({batched / single:.1f}x)"
            )
        for arch_name in ARCHITECTURES:
            arch = make_architecture(arch_name)
            batches = [
                arch.encode_batch(collate(samples[i : i + args.batch_size]), layout)
                for i in range(0, len(samples), args.batch_size)
            ]
            module = ValueFunctionModule(arch, layout.to_dict())
            params = sum(p.numel() for p in module.parameters())
            rate = time_steps(module, batches, args.steps, args.device)
            line = f"  {arch_name:<10} {params:>9,} params  {rate:>10,.0f} training samples/s (bare step)"
            if isinstance(module.net, ParticleVF):
                with every_row():
                    baseline = time_steps(module, batches, args.steps, args.device)
                line += f", basis on every particle row {baseline:,.0f} ({rate / baseline:.2f}x)"
            if data is not None:
                loop = time_loop(data, arch_name, args.steps, args.batch_size, args.device)
                line += f", {loop:,.0f} through the Lightning loop ({loop / rate:.0%})"
            print(line)


if __name__ == "__main__":
    main()
