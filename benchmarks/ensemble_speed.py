"""Speed of ensembles: S members trained and evaluated together against S separate runs.

    python benchmarks/ensemble_speed.py [--games leduc goofspiel5] [--architectures positional particle attention]
                                        [--members 10] [--device cpu|cuda] [--json]

For each game (Leduc at move 7, Goofspiel-5 at move 2), in one process:
  1. Data: S small PBS files generated into a temporary directory, one per
     member (generation seed s), so it runs from a fresh clone.
  2. Training, per architecture (default: every registered one,
     `pvf.valuefn.registry`; the paper's sizes, attention's defaults):
     the S-member `EnsembleTrainer` (one batched step for all members)
     against S separate runs (each member's own module, `module.loss`,
     its own Adam), the same batches and the same number of steps, timed
     after a warm-up. "step": batches encoded beforehand and already on
     the device (the bare training step, as benchmarks/train_speed.py;
     on CUDA the ensemble's step is by default one replayed CUDA graph,
     which gathers its batch itself, so there "step" includes the gather;
     `--no-cuda-graph` times the plain step);
     "loop": the ensemble gathering its S·B samples every step from its
     training sets, encoded once on the device (`preload`), against
     separate runs fetching and encoding their B each, as a Lightning
     loop does. The ensemble trains as `pvf reproduce` trains it: in the
     default member groups (`pvf.trainers.member_groups`; on a CPU one
     group for Leduc's nets, one member at a time for Goofspiel-5's
     positional and particle nets), each group's steps in a row; the
     one-group step (all S members in every step) is timed and reported
     beside it (`one_group_*`).
  3. Evaluation, per architecture: each member's trunk exploitability
     (100 CFR+ iterations with the net at the leaves, then the exact LP),
     all S in one batched CFR+ call (`ensemble_trunk_exploitability`)
     against one member at a time (`solve_and_evaluate`); the solve alone
     is timed too, since the LPs are the same work both ways.
  4. Arithmetic bound: the FLOPs of one ensemble step's matrix products
     (`torch.utils.flop_counter`) at the machine's measured peak rate for
     a batched float32 product of the nets' shape; separate step time over
     that is the most any batching could gain (`step_speedup_bound`), and
     `ensemble_step_fraction_of_peak` how close the one-group step is.
Speedups are separate time / ensemble time. `--json` prints one object:
`training_speedup` and `evaluation_speedup` are the smallest step / total
ratios over games and architectures; `details` holds every figure.
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
from torch.utils.flop_counter import FlopCounterMode

from pvf.datasets.generate import generate
from pvf.datasets.layout import DataLayout
from pvf.datasets.spec import GenerationSpec
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.solvers.batched_trunk import evaluate_trunks, solve_trunks
from pvf.solvers.trunk_solver import build_trunk, evaluate_trunk, solve_trunk
from pvf.trainers.ensemble import EnsembleTrainer
from pvf.trainers.member_groups import MemberGroups
from pvf.trainers.preloaded import to_device
from pvf.valuefn.ensemble_evaluator import ensemble_evaluator
from pvf.valuefn.evaluator import NetworkEvaluator
from pvf.valuefn.registry import ARCHITECTURES

GAMES = {"leduc": ("leduc_poker", 7, 8), "goofspiel5": ("goofspiel5", 2, 16)}  # game, depth, trunks per file
POOL = 8  # distinct pre-collated batches cycled through


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device: torch.device) -> float:
    sync(device)
    start = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - start


def matmul_peak_flops(device: torch.device) -> float:
    """FLOP/s of a float32 batched product of the ensemble's typical shape, best of 5.

    Shape: [10, 64, 512] @ [10, 512, 512].
    """
    a, w = torch.randn(10, 64, 512, device=device), torch.randn(10, 512, 512, device=device)
    torch.bmm(a, w)
    reps = 20 if device.type == "cpu" else 500
    seconds = min(timed(lambda: [torch.bmm(a, w) for _ in range(reps)], device) for _ in range(5))
    return 2 * 10 * 64 * 512 * 512 * reps / seconds


def matmul_flops(fn) -> int:
    """Floating-point operations of the matrix products `fn()` runs (forward and backward)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def time_training(
    paths: list[Path], architecture: str, args: argparse.Namespace, device: torch.device
) -> dict[str, Any]:
    """Training samples/s of the ensemble and of S separate runs, bare step and whole loop."""
    S, B = len(paths), args.batch_size
    trainer = EnsembleTrainer.from_files(
        paths,
        architecture,
        range(S),
        args.warmup + 2 * args.steps + 1,
        batch_size=B,
        device=device,
        cuda_graph=None if args.cuda_graph else False,
    )
    batches = [trainer.next_batch() for _ in range(POOL)]

    def ensemble_steps(n: int, fetch: bool) -> None:
        for i in range(n):
            if fetch or trainer.graph_step is not None:
                trainer.train_step()
            else:
                trainer.step(batches[i % POOL])

    ensemble_steps(args.warmup, False)
    step_flops = 0 if trainer.graph_step is not None else matmul_flops(lambda: trainer.step(batches[0]))
    ensemble_step = timed(lambda: ensemble_steps(args.steps, False), device)
    ensemble_loop = timed(lambda: ensemble_steps(args.steps, True), device)

    modules = [trainer.modules[s].to(device) for s in range(S)]  # member s's own module, as a separate run has it
    optimizers = [torch.optim.Adam(m.parameters(), lr=m.lr, fused=True) for m in modules]  # as ValueFunctionModule's
    own = [[{k: v[s * B : (s + 1) * B] for k, v in b.items()} for b in batches] for s in range(S)]

    def separate_steps(n: int, fetch: bool) -> None:
        for s in range(S):
            for i in range(n):
                if fetch:
                    rows = trainer.data[s].dataset.__getitems__(trainer.samplers[s].next())
                    batch = to_device(trainer.encode(rows), device, torch.float32)
                else:
                    batch = own[s][i % POOL]
                loss, _ = modules[s].loss(batch)
                optimizers[s].zero_grad(set_to_none=True)
                loss.backward()
                optimizers[s].step()

    separate_steps(args.warmup, False)
    separate_step = timed(lambda: separate_steps(args.steps, False), device)
    separate_loop = timed(lambda: separate_steps(args.steps, True), device)
    sizes, grouped_step, grouped_loop = time_groups(paths, architecture, args, device)
    default_step, default_loop = grouped_step or ensemble_step, grouped_loop or ensemble_loop
    samples = S * B * args.steps
    # The matrix products alone at the machine's peak rate: no batching can make a step faster.
    bound_s = step_flops * args.steps / args.peak_flops
    return {
        "parameters_per_member": sum(p.numel() for p in modules[0].net.parameters()),
        "backend": trainer.nets.backend,
        "cuda_graph": trainer.graph_step is not None,
        "group_sizes": sizes,
        "ensemble_step_samples_per_s": samples / default_step,
        "separate_step_samples_per_s": samples / separate_step,
        "step_speedup": separate_step / default_step,
        "ensemble_loop_samples_per_s": samples / default_loop,
        "separate_loop_samples_per_s": samples / separate_loop,
        "loop_speedup": separate_loop / default_loop,
        "one_group_step_samples_per_s": samples / ensemble_step,
        "one_group_step_speedup": separate_step / ensemble_step,
        "one_group_loop_speedup": separate_loop / ensemble_loop,
        "matmul_flops_per_step": step_flops,
        "ensemble_step_fraction_of_peak": bound_s / ensemble_step,
        "step_speedup_bound": separate_step / bound_s if bound_s else None,
        "trainer": trainer,
    }


def time_groups(
    paths: list[Path], architecture: str, args: argparse.Namespace, device: torch.device
) -> tuple[list[int], float | None, float | None]:
    """pvf's default grouping (`MemberGroups`): its group sizes and the seconds of `args.steps` bare steps and
    loop steps of every member, each group's steps in a row; (sizes, None, None) when it is one group."""
    groups = MemberGroups.from_files(
        paths,
        architecture,
        range(len(paths)),
        args.warmup + 2 * args.steps + 1,
        batch_size=args.batch_size,
        device=device,
        cuda_graph=None if args.cuda_graph else False,
    )
    sizes = [g.members for g in groups.groups]
    if len(sizes) == 1:
        return sizes, None, None
    batches = [[g.next_batch() for _ in range(POOL)] for g in groups.groups]

    def steps(n: int, fetch: bool) -> None:
        for group, own in zip(groups.groups, batches):
            for i in range(n):
                if fetch:
                    group.train_step()
                else:
                    group.step(own[i % POOL])

    steps(args.warmup, False)
    return sizes, timed(lambda: steps(args.steps, False), device), timed(lambda: steps(args.steps, True), device)


def time_evaluation(
    trainer: EnsembleTrainer, game: str, depth: int, iterations: int, device: torch.device
) -> dict[str, Any]:
    """Trunk exploitability of all S members: one batched CFR+ call against one member at a time."""
    tree = build_public_tree(game)
    trunk = build_trunk(tree, depth)
    features = build_feature_tables(tree)
    layout: DataLayout = trainer.layout
    architecture = trainer.architecture
    S = trainer.members
    stacked = trainer.nets.eval()
    nets = [trainer.member_net(s).to(device).eval() for s in range(S)]
    batched = ensemble_evaluator(trunk, stacked, architecture, layout, features)
    alone = [NetworkEvaluator(trunk, net, architecture, layout, features) for net in nets]
    solve_trunks(trunk, batched, S, 2)  # warm-up
    solve_trunk(trunk, alone[0], 2)
    out: dict[str, Any] = {}
    out["ensemble_solve_s"] = timed(
        lambda: out.__setitem__("strategies", solve_trunks(trunk, batched, S, iterations)), device
    )
    out["separate_solve_s"] = timed(
        lambda: out.__setitem__("separate", [solve_trunk(trunk, ev, iterations) for ev in alone]), device
    )
    out["ensemble_lp_s"] = timed(lambda: out.__setitem__("together", evaluate_trunks(trunk, out["strategies"])), device)
    out["separate_lp_s"] = timed(
        lambda: out.__setitem__("apart", [evaluate_trunk(trunk, st) for st in out["separate"]]), device
    )
    together, apart = out.pop("together"), out.pop("apart")
    out.pop("strategies"), out.pop("separate")
    out["max_exploitability_difference"] = max(
        abs(a.exploitability - b.exploitability) for a, b in zip(together, apart)
    )
    out["mean_exploitability"] = float(np.mean([a.exploitability for a in together]))
    out["solve_speedup"] = out["separate_solve_s"] / out["ensemble_solve_s"]
    out["speedup"] = (out["separate_solve_s"] + out["separate_lp_s"]) / (out["ensemble_solve_s"] + out["ensemble_lp_s"])
    stacked.train()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=sorted(GAMES), default=list(GAMES))
    parser.add_argument("--architectures", nargs="+", choices=sorted(ARCHITECTURES), default=list(ARCHITECTURES))
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (cuda:N)")
    parser.add_argument("--steps", type=int, default=50, help="timed training steps per run")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=100, help="CFR+ iterations of a trunk solve")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: one core for both sides)")
    parser.add_argument(
        "--no-cuda-graph",
        dest="cuda_graph",
        action="store_false",
        help="on CUDA, time the plain ensemble step instead of the replayed CUDA graph",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device visible to torch")
    details: dict[str, Any] = {
        "machine": platform.processor() or platform.machine(),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "members": args.members,
        "batch_size": args.batch_size,
        "steps": args.steps,
        "iterations": args.iterations,
    }
    args.peak_flops = details["matmul_peak_flops"] = matmul_peak_flops(device)
    training, evaluation = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.games:
            game, depth, trunks = GAMES[name]
            paths = []
            for s in range(args.members):
                paths.append(Path(tmp) / f"{name}_{s}.h5")
                spec = GenerationSpec(game=game, depth=depth, num_trunks=trunks, cfr_iterations=20, seed=s)
                generate(spec, paths[-1], progress=False)
            for arch in args.architectures:
                train = time_training(paths, arch, args, device)
                trainer = train.pop("trainer")
                evaluate = time_evaluation(trainer, game, depth, args.iterations, device)
                details[f"{name}/{arch}"] = {"training": train, "evaluation": evaluate}
                training.append(train["step_speedup"])
                evaluation.append(evaluate["speedup"])
                if not args.json:
                    print(
                        f"{name:<10} {arch:<10} training {train['ensemble_step_samples_per_s']:>10,.0f} vs "
                        f"{train['separate_step_samples_per_s']:>9,.0f} samples/s ({train['step_speedup']:.2f}x step "
                        f"in groups of {'/'.join(map(str, train['group_sizes']))}, "
                        f"{train['one_group_step_speedup']:.2f}x all in one, "
                        f"at most {train['step_speedup_bound'] or float('nan'):.2f}x at the matmul peak, "
                        f"{train['loop_speedup']:.2f}x loop); evaluation {evaluate['speedup']:.2f}x "
                        f"(solve {evaluate['solve_speedup']:.2f}x, LPs {evaluate['ensemble_lp_s']:.2f} s), "
                        f"max |Δ expl| {evaluate['max_exploitability_difference']:.1e}",
                        flush=True,
                    )
    out = {"training_speedup": min(training), "evaluation_speedup": min(evaluation), "details": details}
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"smallest speedups with {args.members} members: training {out['training_speedup']:.2f}x, "
            f"evaluation {out['evaluation_speedup']:.2f}x"
        )


if __name__ == "__main__":
    main()
