"""Late-run CPU training steps with denormal Adam moments, flushed to zero against left alone.

    python benchmarks/denormals.py [--fraction 0.34] [--steps 40] [--json]

On one CPU thread (as each `pvf reproduce` worker trains), for Goofspiel-5's
positional net at the paper's size (the net where a paper-scale run slowed
down; `pvf.trainers.denormals`):
  1. one training step (forward, masked MSE, backward, fused Adam) on a
     synthetic batch of 64 PBSs (`train_speed.synthetic_samples`) creates
     Adam's state;
  2. a `--fraction` of every parameter's entries is made "dead", as late in
     a long run: a gradient hook zeroes their gradients and their Adam
     moments are set to denormal values (the default is the fraction measured
     at step 102,400 of the Goofspiel-5 run);
  3. `--steps` further steps are timed without and then with
     `flush_denormals()` around each, from the same state.
The speedup is plain time / flushed time; `--json` prints one object.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import time

import torch
from train_speed import synthetic_samples

from pvf.trainers.data import PbsCollate
from pvf.trainers.denormals import flush_denormals
from pvf.trainers.ensemble import build_member

DEAD_MOMENTS = {"exp_avg": 1e-39, "exp_avg_sq": 1e-40}  # below float32's smallest normal, 1.18e-38


def late_run_module(fraction: float, seed: int = 0) -> tuple[torch.nn.Module, torch.optim.Optimizer, dict]:
    """The positional Goofspiel-5 module, its Adam after one step with `fraction` of the state dead, a batch."""
    layout, samples = synthetic_samples("goofspiel5", 2, 64, seed)
    module = build_member("positional", layout, seed)
    batch = module.architecture.encode_batch(PbsCollate()(samples), layout)
    optimizer = module.configure_optimizers()  # fused Adam at the constant rate, as training uses
    generator = torch.Generator().manual_seed(seed)
    for p in module.parameters():
        alive = (torch.rand(p.shape, generator=generator) >= fraction).to(p.dtype)
        p.register_hook(lambda grad, alive=alive: grad * alive)
    _step(module, optimizer, batch)
    for p in module.parameters():
        alive = p.grad != 0
        for key, value in DEAD_MOMENTS.items():
            optimizer.state[p][key].masked_fill_(~alive, value)
    return module, optimizer, batch


def _step(module: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: dict) -> None:
    loss, _ = module.loss(batch)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def time_steps(
    module: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: dict, steps: int, flushed: bool
) -> float:
    """Milliseconds per training step (each in `flush_denormals()` when `flushed`)."""
    start = time.perf_counter()
    for _ in range(steps):
        if flushed:
            with flush_denormals():
                _step(module, optimizer, batch)
        else:
            _step(module, optimizer, batch)
    return 1000 * (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.34, help="share of parameter entries with dead gradients")
    parser.add_argument("--steps", type=int, default=40, help="timed steps each way")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    torch.set_num_threads(1)
    module, optimizer, batch = late_run_module(args.fraction)
    state = copy.deepcopy((module.state_dict(), optimizer.state_dict()))
    plain = time_steps(module, optimizer, batch, args.steps, flushed=False)
    module.load_state_dict(state[0])
    optimizer.load_state_dict(state[1])
    flushed = time_steps(module, optimizer, batch, args.steps, flushed=True)
    result = {
        "machine": f"{platform.processor() or platform.machine()}, {platform.system()}, "
        f"torch {torch.__version__}, 1 thread",
        "dead_fraction": args.fraction,
        "plain_ms_per_step": round(plain, 3),
        "flushed_ms_per_step": round(flushed, 3),
        "speedup": round(plain / flushed, 2),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"machine: {result['machine']}")
        print(
            f"Goofspiel-5 positional, {args.fraction:.0%} of the state dead: {plain:.2f} ms a step plain, "
            f"{flushed:.2f} ms flushed ({result['speedup']}x)"
        )


if __name__ == "__main__":
    main()
