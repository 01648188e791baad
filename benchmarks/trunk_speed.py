"""Speed of depth-limited trunk solving with a network at the leaves.

    python benchmarks/trunk_speed.py [--game leduc_poker --depth 7 --iterations 100 --repeats 5]

Builds the trunk (Leduc: initial state to move 7, 54 leaf public states),
untrained networks of the paper's size for the data layout of that depth
(positional: 5 layers of width 5 x input; particle: change basis 3 layers of
width 3 x input, regression as the positional net, K = K1max + K2max), and
times `solve_trunk` (CFR+ with every leaf PBS of an iteration in one forward
pass; two evaluator calls per iteration; beliefs normalised per public state
as `pvf train` does by default), best of --repeats after a warm-up.
The exact trunk-exploitability LP and the exact oracle are timed once for
comparison. Target: 100 iterations in under 1 s on CPU.
Baseline in the same run: the particle net behind a plain module call
(`particle_basis_every_query`), so that the leaf encoder computes its
change basis at every query instead of once per solve; `--json` also
prints the ratio (`particle_basis_cache_speedup`).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from pvf.datasets.layout import DataLayout
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.solvers.evaluators import ConstantEvaluator, ExactEvaluator
from pvf.solvers.trunk_solver import build_trunk, evaluate_trunk, solve_trunk
from pvf.valuefn import ARCHITECTURES, NetworkEvaluator
from pvf.valuefn.registry import make_architecture


class PlainCall(torch.nn.Module):
    """`net` behind a plain call: the leaf encoder sees no `ParticleVF` and computes everything per query."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        return self.net(*args)


def best_time(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--depth", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--oracle", action="store_true", help="also time the exact oracle (slow: ~10 s in Leduc)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    tree = build_public_tree(args.game)
    trunk = build_trunk(tree, args.depth)
    tables = build_feature_tables(tree)
    slots = tuple(int(np.diff(trunk.game.leaf_offsets[n]).max()) for n in (0, 1))
    layout = DataLayout(tree.game_string, args.depth, "average", tables.public_dim, tables.private_dim, slots)
    torch.manual_seed(0)
    evaluators = {}
    for name in ARCHITECTURES:  # paper-size nets (untrained: the speed does not depend on the weights)
        arch = make_architecture(name)
        evaluators[name] = NetworkEvaluator(trunk, arch.build(layout).eval(), arch, layout, tables)
        if name == "particle":
            evaluators["particle_basis_every_query"] = NetworkEvaluator(
                trunk, PlainCall(evaluators[name].net), arch, layout, tables
            )
    evaluators["constant"] = ConstantEvaluator()
    out = {
        "game": tree.game_string,
        "depth": args.depth,
        "leaf_public_states": len(trunk.game.leaf_public_states),
        "iterations": args.iterations,
        "torch_threads": torch.get_num_threads(),
    }
    for name, evaluator in evaluators.items():
        out[f"{name}_seconds"] = best_time(
            lambda evaluator=evaluator: solve_trunk(trunk, evaluator, args.iterations), args.repeats
        )
    out["particle_basis_cache_speedup"] = out["particle_basis_every_query_seconds"] / out["particle_seconds"]
    strategies = solve_trunk(trunk, evaluators["particle"], args.iterations)
    out["exploitability_lp_seconds"] = best_time(lambda: evaluate_trunk(trunk, strategies), 1)
    if args.oracle:
        start = time.perf_counter()
        solve_trunk(trunk, ExactEvaluator(trunk), args.iterations)
        out["oracle_seconds"] = time.perf_counter() - start
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{out['game']}, trunk to move {args.depth} ({out['leaf_public_states']} leaf public states), "
        f"{args.iterations} CFR+ iterations, best of {args.repeats}"
    )
    for key, value in out.items():
        if key.endswith("_seconds"):
            print(f"  {key[: -len('_seconds')]:<26} {value:8.3f} s")
    print(f"  particle basis once per solve: {out['particle_basis_cache_speedup']:.2f}x faster than at every query")


if __name__ == "__main__":
    main()
