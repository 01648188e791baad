"""`pvf reproduce fig3|fig4`: generate, train and evaluate end to end, writing CSV and PNG figures.

    pvf reproduce fig3 [--games leduc,goofspiel5] [--architectures positional,particle,attention] [--seeds 10]
                       [--trunks 1000] [--max-steps 131072] [--out DIR]
    pvf reproduce fig4 [the same options] [--fractions 1.0,0.9,...,0.1]
    pvf reproduce fig4 --games goofspiel8,goofspiel13 [--draws 1,4,16,64] [--particle-trunks 4000]
                       [--particle-steps 4000] [--seeds 3] [--save-policy]

Paper scale is the default (10 seeds, 1,000 trunks, 131,072 training steps
with trunk exploitability every 64): days of CPU time. Smaller runs:
e.g. `--seeds 2 --trunks 100 --max-steps 2000 --eval-every 200`. The seeds
of each network train together as one ensemble (one batched step for all
seeds; a killed rerun continues from the last saved state);
`--separate-runs` trains one run per seed. `--jobs N` trains N ensembles
(or runs) at once, one process each; on a CPU each network's seeds are
split into up to N parts, so that every core trains. Finished
datasets and checkpoints under --out are reused by a rerun with the same
options (pvf.experiments.reproduce). Figures are in the NashConv convention.
Goofspiel-8 and -13 exceed the public tree: their fig. 4 is the particle-trunk
sweep (docs/particles.md): 4,000 (Goofspiel-8) or 8,000 (Goofspiel-13)
particle samples, 4,000 training steps, K up to 64 (256), exact by LP up to
250,000 histories and a certified upper bound beyond; the seeds are the
reference trunk ids.
"""

from __future__ import annotations

import argparse
import json

from pvf.commands import add_progress_argument, progress_wanted, require_positive
from pvf.errors import PvfError
from pvf.outputs import check_output_dir


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("reproduce", help="reproduce the paper's figure 3 or 4 end to end", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("figure", choices=("fig3", "fig4"), help="fig3: exploitability during training; fig4: sparse trunks")
    p.add_argument("--games", default="leduc,goofspiel5", help="comma-separated, from leduc, goofspiel5 (default both); fig4 also goofspiel8, goofspiel13 (particle trunks)")
    p.add_argument("--architectures", help="comma-separated value-function architectures, from positional, particle, "
                   "attention (default fig3: positional,particle; fig4: particle)")
    p.add_argument("--seeds", type=int, default=10, help="number of seeds: datasets, training runs and tie-breaking (default 10)")
    p.add_argument("--seed", type=int, default=0, help="first seed; runs use seed, seed+1, ... (default 0)")
    p.add_argument("--trunks", type=int, default=1000, help="random trunk strategies per dataset (default 1000)")
    p.add_argument("--cfr-iterations", type=int, default=100, help="CFR+ iterations per target (default 100)")
    p.add_argument("--solver", choices=("cfr+", "mmd"), default="cfr+",
                   help="targets' solver: cfr+ (default) or mmd (its last iterate; data files get -mmd)")
    p.add_argument("--target", choices=("average", "current"), default="average",
                   help="train on CFR+'s average profile (default) or last iterate (checkpoints get -current)")
    p.add_argument("--max-steps", type=int, default=131072, help="training steps (default 131072 = 2048 x 64)")
    p.add_argument("--eval-every", type=int, default=64, help="fig3: steps between trunk-exploitability measurements (default 64)")
    p.add_argument("--batch-size", type=int, default=64, help="training batch size (default 64)")
    p.add_argument("--iterations", type=int, default=100, help="CFR+ iterations in every trunk (default 100)")
    p.add_argument("--fractions", default="1.0,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1", help="fig4: shares of support histories kept")
    p.add_argument("--workers", type=int, default=1, help="dataset-generation processes (default 1)")
    p.add_argument("--jobs", type=int, default=1,
                   help="training processes at once (default 1; e.g. the number of cores): ensembles, on a CPU each "
                        "network's seeds split into up to N parts, or with --separate-runs single runs")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (default 1: these nets are small, extra threads slowed training 7x on 2 cores)")
    p.add_argument("--lr-schedule", choices=("constant", "cosine"), default="constant",
                   help="Adam's learning rate: constant 1e-3 (default, the authors') or cosine-annealed to 0")
    p.add_argument("--separate-runs", action="store_true",
                   help="one training run per seed instead of one ensemble per network (slower)")
    p.add_argument("--accelerator", choices=("cpu", "gpu", "auto"), default="cpu", help="training accelerator (default cpu)")
    p.add_argument("--no-cuda-graph", dest="cuda_graph", action="store_false",
                   help="on a GPU, run each ensemble step as plain kernels instead of one replayed CUDA graph (the default)")
    p.add_argument("--group-size", type=int,
                   help="members of an ensemble trained together, group after group between measurements (default: "
                        "all on a GPU; on a CPU as many as keep their training state in about 24 MB, e.g. all of "
                        "Leduc's, one of Goofspiel-5's)")
    p.add_argument("--draws", help="particle games: comma-separated K of the sweep (default 1,4,16,64; goofspiel13 also 256; beyond the LP: certified upper bounds)")
    p.add_argument("--particle-trunks", type=int, help="particle games: dataset samples (default 4000; goofspiel13 8000)")
    p.add_argument("--particle-steps", type=int, help="particle games: training steps (default 4000)")
    p.add_argument("--save-policy", action="store_true",
                   help="particle games: also write fig4-<game>-policy.json (restricted games and trunk strategies)")
    p.add_argument("--out", default="runs/reproduce", help="output directory (default runs/reproduce)")
    add_progress_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import torch

    from pvf.experiments.reproduce import FIG3_ARCHITECTURES, FIG4_ARCHITECTURES, GAMES, ReproduceConfig, reproduce_fig3, reproduce_fig4
    from pvf.games.paper import PARTICLE_GAMES
    from pvf.valuefn.registry import ARCHITECTURES

    games = tuple(g.strip() for g in args.games.split(",") if g.strip())
    unknown = [g for g in games if g not in GAMES]
    if unknown or not games:
        raise PvfError(f"--games takes names from {', '.join(GAMES)}; got {args.games!r}")
    default = FIG3_ARCHITECTURES if args.figure == "fig3" else FIG4_ARCHITECTURES
    architectures = tuple(a.strip() for a in args.architectures.split(",") if a.strip()) if args.architectures else default
    unknown = [a for a in architectures if a not in ARCHITECTURES]
    if unknown or not architectures:
        raise PvfError(f"--architectures takes names from {', '.join(ARCHITECTURES)}; got {args.architectures!r}")
    if args.figure == "fig4" and "positional" in architectures:
        raise PvfError("fig4 sweeps sparse particle trunks: pass particle architectures (particle, attention)")
    require_positive(
        args, "seeds", "trunks", "cfr_iterations", "max_steps", "eval_every", "batch_size", "iterations", "workers", "jobs", "threads"
    )
    if args.seed < 0:
        raise PvfError(f"--seed must be non-negative, got {args.seed}")
    try:
        fractions = tuple(float(f) for f in args.fractions.split(",") if f.strip())
    except ValueError:
        raise PvfError(f"--fractions takes comma-separated numbers, got {args.fractions!r}") from None
    particle = [g for g in games if g in PARTICLE_GAMES]
    if particle and args.figure == "fig3":
        raise PvfError(f"fig3 needs the public tree, which {', '.join(particle)} exceed; they have fig4 (particle trunks) only")
    try:
        draws = tuple(int(k) for k in args.draws.split(",")) if args.draws else None
    except ValueError:
        raise PvfError(f"--draws takes comma-separated integers, got {args.draws!r}") from None
    if draws is not None and (not draws or min(draws) < 1):
        raise PvfError(f"--draws must be positive, got {args.draws!r}")
    for name in ("particle_trunks", "particle_steps", "group_size"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise PvfError(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    out = check_output_dir(args.out, "--out")
    torch.set_num_threads(args.threads)
    config = ReproduceConfig(
        out=out,
        games=games,
        architectures=architectures,
        seeds=tuple(range(args.seed, args.seed + args.seeds)),
        trunks=args.trunks,
        cfr_iterations=args.cfr_iterations,
        solver=args.solver,
        target=args.target,
        max_steps=args.max_steps,
        eval_every=args.eval_every,
        batch_size=args.batch_size,
        iterations=args.iterations,
        workers=args.workers,
        jobs=args.jobs,
        lr_schedule=args.lr_schedule,
        accelerator=args.accelerator,
        separate_runs=args.separate_runs,
        cuda_graph=args.cuda_graph,
        group_size=args.group_size,
        fractions=fractions,
        progress=progress_wanted(args),
        particle_trunks=args.particle_trunks,
        particle_steps=args.particle_steps,
        draws=draws,
        save_policy=args.save_policy,
    )
    summary = reproduce_fig3(config) if args.figure == "fig3" else reproduce_fig4(config)
    if args.json:
        print(json.dumps({"figure": args.figure, "convention": "NashConv (OpenSpiel's exploitability is half)", "games": summary}))
        return 0
    for game, result in summary.items():
        print(f"{args.figure} {game}: {result['csv']}, {result['png']}")
        if game in PARTICLE_GAMES:
            print(f"  particle trunks (data {result['data']}); a positional VF would need {result['positional_inputs']:,} inputs")
            for row in result["points"]:
                print(f"  {row['evaluator']:<12} K {row['draws']:>4} ({row['particles_mean']:.1f} particles): "
                      f"{row['exploitability_mean']:.5f} ± {row['exploitability_std']:.5f}"
                      + ("" if row["measure"] == "exact" else f" ({row['measure']}, gap <= {row['gap_max']:.4f})"))
            continue
        if args.figure == "fig3":
            for arch in architectures:
                r = result[arch]
                print(f"  {arch:<10} step {r['step']:>7}: trunk exploitability {r['trunk_exploitability_mean']:.5f} "
                      f"± {r['trunk_exploitability_std']:.5f} (NashConv), training MSE {r['train_loss_mean']:.3e}")
        else:
            print(f"  {result['architecture']}: support {result['support_histories']} of {result['root_histories']} root histories; "
                  f"uniform {result['uniform_exploitability']:.5f} (root move fixed: {result['uniform_root_exploitability']:.5f})")
            for row in result["points"]:
                print(f"  {row['point']:<12} {row['num_histories']:>4} histories: {row['exploitability_mean']:.5f} "
                      f"± {row['exploitability_std']:.5f} (root move fixed: {row['root_exploitability_mean']:.5f} "
                      f"± {row['root_exploitability_std']:.5f})")
    return 0
