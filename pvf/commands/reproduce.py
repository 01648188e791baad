"""`pvf reproduce fig3|fig4|particles`: generate, train and evaluate end to end, writing CSV and PNG figures.

    pvf reproduce fig3 [--games leduc,goofspiel5] [--architectures positional,particle] [--seeds 10]
                       [--trunks 1000] [--max-steps N] [--eval-every 64] [--out DIR]
    pvf reproduce fig4 [the same options but --eval-every] [--fractions 1.0,0.9,...,0.1]
    pvf reproduce particles [--games goofspiel8,goofspiel13] [--draws 1,4,16,64] [--particle-trunks 4000]
                            [--particle-steps 4000] [--seeds 3] [--save-policy]
    pvf reproduce quality [--protocol recipe|paper] [--games leduc,goofspiel5] [--select last|val_loss]
                          [--data shared|per-seed] [--ablation] [fig3's options]

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
`pvf reproduce quality` trains by the recipe (best-response targets, one
large file per game, a cosine schedule, the checkpoint of lowest held-out
loss; pvf.experiments.quality) or by the paper's protocol (`--protocol
paper`), each lever also an option, and writes quality-<game>.csv with
the chosen checkpoint of each network and seed; `--ablation` runs the
paper's protocol with each lever alone and the recipe, and writes the
table ablation-<game>.csv (pvf.experiments.quality_ablation).
Goofspiel-8 and -13 exceed the public tree: `pvf reproduce particles` is
their fig. 4, the particle-trunk sweep (docs/particles.md): 4,000
(Goofspiel-8) or 8,000 (Goofspiel-13) particle samples, 4,000 training
steps, K up to 64 (256), exact by LP up to 250,000 histories and a
certified upper bound beyond; the seeds are the reference trunk ids. The
games, architectures and solvers offered are the registries'
(pvf.games.registry, pvf.valuefn.registry, pvf.solvers.registry).

The old spelling `pvf reproduce fig4 --games goofspiel8,...` still works
(one line on stderr names the new one), as do the options a figure does
not use (a line on stderr says they are ignored).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from pvf.commands import add_progress_argument, progress_wanted, require_positive
from pvf.commands.solver_options import add_solver_arguments, solver_name
from pvf.errors import PvfError, say_on_stderr
from pvf.experiments.figures import (
    FIG3_ARCHITECTURES,
    FIG4_ARCHITECTURES,
    PROTOCOLS,
    QUALITY_ARCHITECTURES,
    RECIPE_PBS,
    SELECTIONS,
)
from pvf.games.induced_pbs import check_particle_count
from pvf.games.registry import games_help, reproducible
from pvf.outputs import check_future_dir
from pvf.solvers.guarded_values import TARGETS
from pvf.valuefn.registry import ARCHITECTURES, particle_architectures

MAX_SEEDS = 1_000  # each seed is a dataset and a net per architecture
MAX_THREADS = 1_024  # torch's thread count is a C int; these nets gain nothing beyond a few
MAX_BATCH_SIZE = 1 << 24  # PBSs a step; 2^63 broke the data loader with a traceback
FIGURES = {
    "fig3": ("figure 3: trunk exploitability of value functions during training", "paper"),
    "fig4": ("figure 4: sparse particle trunks from a share of the equilibrium's histories", "paper"),
    "particles": (
        "figure 4 beyond the public tree: particle data, a particle net, the particle-trunk sweep",
        "particle",
    ),
    "quality": ("value functions by the training recipe or the paper's protocol, judged in the trunk", "paper"),
}
# The figures each figure-specific option belongs to, and its type; the other figures accept it (older scripts) and
# ignore it.
OWN_FIGURE: dict[str, tuple[tuple[str, ...], type]] = {
    "eval_every": (("fig3", "quality"), int),
    "fractions": (("fig4",), str),
    "draws": (("particles",), str),
    "particle_trunks": (("particles",), int),
    "particle_steps": (("particles",), int),
    "save_policy": (("particles",), bool),
}
ARCHITECTURE_DEFAULTS = {"fig3": FIG3_ARCHITECTURES, "fig4": FIG4_ARCHITECTURES, "quality": QUALITY_ARCHITECTURES}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce the paper's figure 3 or 4 (or 4 beyond the public tree) end to end",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    figures = p.add_subparsers(dest="figure", required=True, metavar="FIGURE")
    adders: dict[str, Callable[[argparse.ArgumentParser], None]] = {
        "fig3": _fig3_options,
        "fig4": _fig4_options,
        "particles": _particle_options,
        "quality": _quality_options,
    }
    for figure, add_options in adders.items():
        what, kind = FIGURES[figure]
        line = f"{what} ({', '.join(reproducible(kind))})"
        f = figures.add_parser(figure, help=line, description=f"{line[0].upper()}{line[1:]}.")
        add_options(f)
        _common_options(f, figure)
        for name, (own, kind) in OWN_FIGURE.items():  # accepted for older scripts, not listed
            if figure not in own and figure != "quality":
                flag = f"--{name.replace('_', '-')}"
                if kind is bool:
                    f.add_argument(flag, dest=name, action="store_true", help=argparse.SUPPRESS)
                else:
                    f.add_argument(flag, dest=name, type=kind, default=None, help=argparse.SUPPRESS)
        f.set_defaults(func=run)


def _paper_games_option(p: argparse.ArgumentParser, figure: str) -> None:
    p.add_argument(
        "--games",
        default=",".join(reproducible("paper")),
        help=f"comma-separated, from {games_help('paper')}; default all",
    )
    default = ",".join(ARCHITECTURE_DEFAULTS[figure])
    choices = particle_architectures() if figure == "fig4" else ARCHITECTURES
    listed = "; ".join(f"{name}: {ARCHITECTURES.help(name)}" for name in choices)
    p.add_argument(
        "--architectures", help=f"comma-separated value-function architectures (default {default}), from {listed}"
    )


def _training_options(p: argparse.ArgumentParser, defaults: str = "the paper's: average, constant") -> None:
    """Data and training options; `defaults`: where --target and --lr-schedule default to."""
    if defaults.startswith("the paper's"):
        p.add_argument("--trunks", type=int, default=1000, help="random trunk strategies per dataset (default 1000)")
    else:
        recipe = " and ".join(f"{pbs:,} {game} PBSs" for game, pbs in RECIPE_PBS.items())
        p.add_argument(
            "--trunks",
            type=int,
            default=None,
            help=f"random trunk strategies per dataset (default: the recipe's, at least {recipe}; paper 1000)",
        )
    add_solver_arguments(p, with_options=False, purpose="the targets' solver (data files get -<solver> but for cfr+)")
    # --max-steps and --batch-size default to configs/train.yaml's values, read when a run is configured (not
    # here: the parser is built for every pvf command); fig. 3 and 4 train by the paper's target and schedule
    p.add_argument(
        "--target",
        choices=TARGETS,
        default=None,
        help="train on CFR+'s average profile, its last iterate or best responses (guarded where a belief is zero, "
        "or to one mixed plan, grouped or local: `pvf generate --help`) "
        f"(checkpoints get -<target> but for average; default: {defaults})",
    )
    p.add_argument("--max-steps", type=int, default=None, help="training steps (default: configs/train.yaml's)")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="training processes at once (default 1; e.g. the number of cores): ensembles, on a CPU each "
        "network's seeds split into up to N parts, or with --separate-runs single runs",
    )
    p.add_argument(
        "--lr-schedule",
        choices=("constant", "cosine"),
        default=None,
        help=f"Adam's learning rate: constant (the authors') or cosine-annealed to 0 (default: {defaults})",
    )
    p.add_argument(
        "--separate-runs",
        action="store_true",
        help="one training run per seed instead of one ensemble per network (slower)",
    )
    p.add_argument(
        "--no-cuda-graph",
        dest="cuda_graph",
        action="store_false",
        help="on a GPU, run each ensemble step as plain kernels instead of one replayed CUDA graph (the default)",
    )
    p.add_argument(
        "--group-size",
        type=int,
        help="members of an ensemble trained together, group after group between measurements (default: "
        "all on a GPU; on a CPU as many as keep their training state in about 24 MB, e.g. all of "
        "Leduc's, one of Goofspiel-5's)",
    )


def _fig3_options(p: argparse.ArgumentParser) -> None:
    _paper_games_option(p, "fig3")
    _training_options(p)
    p.add_argument(
        "--eval-every", type=int, default=64, help="steps between trunk-exploitability measurements (default 64)"
    )


def _fig4_options(p: argparse.ArgumentParser) -> None:
    _paper_games_option(p, "fig4")
    _training_options(p)
    p.add_argument(
        "--fractions",
        default="1.0,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1",
        help="shares of the equilibrium's support histories kept (default 1.0,0.9,...,0.1)",
    )


def _quality_options(p: argparse.ArgumentParser) -> None:
    _paper_games_option(p, "quality")
    p.add_argument(
        "--protocol",
        choices=tuple(PROTOCOLS),
        default="recipe",
        help="recipe (default): best-response targets, one large file per game with half its trunks moved towards a "
        "trunk solve's leaf queries, cosine schedule, the checkpoint of lowest validation loss; paper: average "
        "targets, 1,000 trunks per seed, constant rate, the last "
        "checkpoint. The options below change one lever of either",
    )
    _training_options(p, defaults="the protocol's")
    p.add_argument(
        "--select",
        choices=SELECTIONS,
        help="the checkpoint judged: last, or val_loss (the lowest validation loss, validated at every "
        "measurement; kept as a -chosen checkpoint) (default: the protocol's)",
    )
    p.add_argument(
        "--data",
        choices=("shared", "per-seed"),
        help="one dataset for all seeds (the first seed's) or one per seed (default: the protocol's)",
    )
    p.add_argument(
        "--eval-every", type=int, default=1024, help="steps between trunk-exploitability measurements (default 1024)"
    )
    p.add_argument(
        "--p-solve",
        type=float,
        help="share of the data's trunks whose leaf beliefs are moved towards a trunk CFR+ solve's leaf queries "
        "(pvf generate --p-solve; default: the protocol's)",
    )
    p.add_argument(
        "--ablation",
        action="store_true",
        help="the paper's protocol, it with each lever of the recipe alone and with targets and data together, "
        "and the recipe: one run each in "
        "OUT/rows/<row>/, sharing OUT/data and OUT/checkpoints; the table OUT/ablation-<game>.csv and .png "
        "(--trunks sets the paper's per-seed trunks; the lever options are refused)",
    )


def _particle_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--games",
        default=",".join(reproducible("particle")),
        help=f"comma-separated, from {games_help('particle')}; default all",
    )
    p.add_argument(
        "--draws",
        help="comma-separated K of the sweep (default 1,4,16,64; goofspiel13 also 256; "
        "beyond the LP: certified upper bounds)",
    )
    p.add_argument("--particle-trunks", type=int, help="dataset samples (default 4000; goofspiel13 8000)")
    p.add_argument("--particle-steps", type=int, help="training steps of the particle net (default 4000)")
    p.add_argument(
        "--save-policy",
        action="store_true",
        help="also write fig4-<game>-policy.json (restricted games and trunk strategies)",
    )


def _common_options(p: argparse.ArgumentParser, figure: str) -> None:
    seeds = (
        "the sweep's reference trunks; the first also seeds the dataset and the net"
        if figure == "particles"
        else "datasets, training runs and tie-breaking"
    )
    p.add_argument("--seeds", type=int, default=10, help=f"number of seeds: {seeds} (default 10)")
    p.add_argument("--seed", type=int, default=0, help="first seed; runs use seed, seed+1, ... (default 0)")
    p.add_argument("--cfr-iterations", type=int, default=100, help="CFR+ iterations per target (default 100)")
    p.add_argument("--batch-size", type=int, default=None, help="training batch size (default: configs/train.yaml's)")
    p.add_argument("--iterations", type=int, default=100, help="CFR+ iterations in every trunk (default 100)")
    p.add_argument("--workers", type=int, default=1, help="dataset-generation processes (default 1)")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: these nets are small, extra threads slowed training 7x on 2 cores)",
    )
    p.add_argument(
        "--accelerator", choices=("cpu", "gpu", "auto"), default="cpu", help="training accelerator (default cpu)"
    )
    p.add_argument("--out", default="runs/reproduce", help="output directory (default runs/reproduce)")
    add_progress_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    import torch

    from pvf.experiments.fig3 import reproduce_fig3
    from pvf.experiments.fig4 import reproduce_fig4
    from pvf.experiments.quality import reproduce_quality
    from pvf.experiments.quality_ablation import reproduce_ablation
    from pvf.experiments.reproduce import ReproduceConfig

    options, notes = config_options(args)
    protocol = options.pop("protocol", None)
    ablation = options.pop("ablation", None)
    config = ReproduceConfig(**options, out=check_future_dir(args.out, "--out"), progress=progress_wanted(args))
    for note in notes:  # only once every option is known good: an error stays one line
        say_on_stderr(note)
    torch.set_num_threads(args.threads)
    if ablation is not None:
        tables = reproduce_ablation(config, *ablation)
        if args.json:
            print(json.dumps({"figure": "quality-ablation", "convention": "NashConv", **tables}))
            return 0
        for game, table in tables.items():
            print(f"ablation {game}: {table['csv']}, {table['png']}")
            for r in table["rows"]:
                print(
                    f"  {r['row']:<10} {r['architecture']:<10} {r['trunk_exploitability_mean']:.5f} "
                    f"± {r['trunk_exploitability_std']:.5f} ({r['seeds']} seeds); mean of the members "
                    f"{r['mean_of_members']:.5f} (NashConv)"
                )
        return 0
    if args.figure == "quality":
        summary = reproduce_quality(config, protocol)
        if args.json:
            print(json.dumps({"figure": "quality", "convention": "NashConv", "protocol": asdict(protocol), **summary}))
            return 0
        for game, result in summary.items():
            print(f"quality {game} ({protocol.name}): {result['csv']}, {result['png']}")
            for arch in config.architectures:
                r = result[arch]
                print(
                    f"  {arch:<10} chosen (mean step {r['chosen_step_mean']:.0f}): {r['chosen_mean']:.5f} "
                    f"± {r['chosen_std']:.5f}; last {r['last_mean']:.5f} ± {r['last_std']:.5f} "
                    f"(NashConv, {r['seeds']} seeds)"
                )
        return 0
    summary = reproduce_fig3(config) if args.figure == "fig3" else reproduce_fig4(config)
    figure = "fig4" if args.figure == "particles" else args.figure  # both write fig4-<game> files
    if args.json:
        print(
            json.dumps(
                {"figure": figure, "convention": "NashConv (OpenSpiel's exploitability is half)", "games": summary}
            )
        )
        return 0
    particle_games = reproducible("particle")
    for game, result in summary.items():
        print(f"{figure} {game}: {result['csv']}, {result['png']}")
        if game in particle_games:
            need = result["positional_inputs"]
            print(f"  particle trunks (data {result['data']}); a positional VF would need {need:,} inputs")
            for row in result["points"]:
                print(
                    f"  {row['evaluator']:<12} K {row['draws']:>4} ({row['particles_mean']:.1f} particles): "
                    f"{row['exploitability_mean']:.5f} ± {row['exploitability_std']:.5f}"
                    + ("" if row["measure"] == "exact" else f" ({row['measure']}, gap <= {row['gap_max']:.4f})")
                )
            continue
        if figure == "fig3":
            for arch in config.architectures:
                r = result[arch]
                print(
                    f"  {arch:<10} step {r['step']:>7}: trunk exploitability {r['trunk_exploitability_mean']:.5f} "
                    f"± {r['trunk_exploitability_std']:.5f} (NashConv), training MSE {r['train_loss_mean']:.3e}"
                )
        else:
            print(
                f"  {result['architecture']}: support {result['support_histories']} of {result['root_histories']} root "
                f"histories; uniform {result['uniform_exploitability']:.5f} "
                f"(root move fixed: {result['uniform_root_exploitability']:.5f})"
            )
            for row in result["points"]:
                print(
                    f"  {row['point']:<12} {row['num_histories']:>4} histories: {row['exploitability_mean']:.5f} "
                    f"± {row['exploitability_std']:.5f} (root move fixed: {row['root_exploitability_mean']:.5f} "
                    f"± {row['root_exploitability_std']:.5f})"
                )
    return 0


def config_options(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """`ReproduceConfig`'s fields from the options, every value checked (a one-line `PvfError`) before any work,
    and the lines for stderr about the old spelling and ignored options."""
    figure = args.figure
    paper, particle = reproducible("paper"), reproducible("particle")
    offered = particle if figure == "particles" else paper
    games = tuple(g.strip() for g in args.games.split(",") if g.strip())
    moved = [g for g in games if g in particle] if figure == "fig4" else []  # the old spelling of `particles`
    unknown = [g for g in games if g not in offered and g not in moved]
    if figure == "fig3" and any(g in particle for g in unknown):
        exceed = [g for g in unknown if g in particle]
        raise PvfError(
            f"fig3 needs the public tree, which {', '.join(exceed)} exceed; their fig. 4 is "
            f"`pvf reproduce particles --games {','.join(exceed)}`"
        )
    if unknown or not games:
        raise PvfError(f"--games takes names from {', '.join(offered)}; got {args.games!r}")
    notes = (
        [f"pvf reproduce: `fig4 --games {','.join(moved)}` is now `pvf reproduce particles --games {','.join(moved)}`"]
        if moved
        else []
    )
    notes += [
        f"pvf reproduce {figure}: --{name.replace('_', '-')} applies to "
        f"{' and '.join(f'`pvf reproduce {verb}`' for verb in own)} only; ignored"
        for name, (own, _) in OWN_FIGURE.items()
        if figure not in own
        and figure != "quality"
        and getattr(args, name) not in (None, False)
        and not (moved and "particles" in own)
    ]
    given = [
        n
        for n in ("seeds", "cfr_iterations", "batch_size", "iterations", "workers", "threads")
        if getattr(args, n) is not None
    ]  # an option left unset takes configs/train.yaml's value
    require_positive(args, *given)
    for name, most in (("seeds", MAX_SEEDS), ("threads", MAX_THREADS), ("batch_size", MAX_BATCH_SIZE)):
        if getattr(args, name) is not None and getattr(args, name) > most:
            raise PvfError(
                f"--{name.replace('_', '-')} {getattr(args, name):,} is more than pvf runs (at most {most:,})"
            )
    if args.accelerator == "gpu":
        import torch

        if not torch.cuda.is_available():
            raise PvfError(
                f"--accelerator gpu, but torch {torch.__version__} sees no CUDA device; "
                "use --accelerator cpu (the default) or auto"
            )
    if args.seed < 0:
        raise PvfError(f"--seed must be non-negative, got {args.seed}")
    options: dict[str, Any] = {
        "games": games,
        "seeds": tuple(range(args.seed, args.seed + args.seeds)),
        "cfr_iterations": args.cfr_iterations,
        "iterations": args.iterations,
        "workers": args.workers,
        "accelerator": args.accelerator,
        **({} if args.batch_size is None else {"batch_size": args.batch_size}),
    }
    if figure == "particles" or moved:
        options.update(_particle_config(args))
    if figure != "particles":
        options.update(_training_config(args, ARCHITECTURE_DEFAULTS[figure]))
    if figure == "quality":
        options.update(_quality_config(args, options))
    return options, notes


def _quality_config(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    """quality: the protocol with the levers given on the command line, and the config fields it sets."""
    if args.target == "current":
        raise PvfError("quality trains on average or best-response targets; --target current is fig3's")
    if args.ablation:
        given = [
            f"--{name.replace('_', '-')}"
            for name in ("target", "lr_schedule", "select", "data", "p_solve")
            if getattr(args, name) is not None
        ] + (["--protocol"] if args.protocol != "recipe" else [])
        if given:
            raise PvfError(f"--ablation sets every lever itself; drop {', '.join(given)}")
        paper = PROTOCOLS["paper"] if args.trunks is None else replace(PROTOCOLS["paper"], trunks=args.trunks)
        return {"ablation": (paper, PROTOCOLS["recipe"]), "trunks": paper.trunks}
    protocol = PROTOCOLS[args.protocol]
    overrides = {
        "target": args.target,
        "lr_schedule": args.lr_schedule,
        "select": args.select,
        "shared_data": None if args.data is None else args.data == "shared",
        "trunks": args.trunks,
        "p_solve": args.p_solve,
    }
    if args.p_solve is not None:
        from pvf.datasets.sampling import SamplingConfig

        SamplingConfig(p_solve=args.p_solve)  # its range check, before any directory is made
    protocol = replace(protocol, **{k: v for k, v in overrides.items() if v is not None})
    if protocol.select == "val_loss" and args.separate_runs:
        raise PvfError("--select val_loss needs ensembles (it validates at every measurement); drop --separate-runs")
    return {
        "protocol": protocol,
        "target": protocol.target,
        "lr_schedule": protocol.lr_schedule,
        "select": protocol.select,
        "trunks": protocol.trunks or options.get("trunks") or 1000,
        "p_solve": protocol.p_solve,
    }


def _training_config(args: argparse.Namespace, default_architectures: tuple[str, ...]) -> dict[str, Any]:
    """fig3 / fig4: architectures, datasets and training, and the figure's own option."""
    figure = args.figure
    architectures = (
        tuple(a.strip() for a in args.architectures.split(",") if a.strip())
        if args.architectures
        else default_architectures
    )
    unknown = [a for a in architectures if a not in ARCHITECTURES]
    twice = sorted({a for a in architectures if architectures.count(a) > 1})
    if twice:
        raise PvfError(f"--architectures names {', '.join(twice)} twice; give each once")
    if unknown or not architectures:
        raise PvfError(f"--architectures takes names from {', '.join(ARCHITECTURES)}; got {args.architectures!r}")
    if figure == "fig4" and any(a not in particle_architectures() for a in architectures):
        raise PvfError(
            f"fig4 sweeps sparse particle trunks: pass particle architectures ({', '.join(particle_architectures())})"
        )
    require_positive(
        args,
        *(["trunks"] if args.trunks is not None else []),
        "jobs",
        *(["max_steps"] if args.max_steps is not None else []),
        *(["eval_every"] if figure in ("fig3", "quality") else []),
    )
    if args.group_size is not None and args.group_size < 1:
        raise PvfError(f"--group-size must be positive, got {args.group_size}")
    options = {
        "architectures": architectures,
        **({} if args.trunks is None else {"trunks": args.trunks}),
        "solver": solver_name(args),
        "jobs": args.jobs,
        **{k: getattr(args, k) for k in ("target", "max_steps", "lr_schedule") if getattr(args, k) is not None},
        "separate_runs": args.separate_runs,
        "cuda_graph": args.cuda_graph,
        "group_size": args.group_size,
    }
    if figure in ("fig3", "quality"):
        options["eval_every"] = args.eval_every
    else:
        try:
            options["fractions"] = tuple(float(f) for f in args.fractions.split(",") if f.strip())
        except ValueError:
            raise PvfError(f"--fractions takes comma-separated numbers, got {args.fractions!r}") from None
        if not options["fractions"] or not all(0 < f <= 1 for f in options["fractions"]):
            raise PvfError(f"--fractions must lie in (0, 1], got {args.fractions!r}")
    return options


def _particle_config(args: argparse.Namespace) -> dict[str, Any]:
    """particles (or fig4's old spelling): the sweep's K, the particle dataset and training, the policy file."""
    try:
        draws = tuple(int(k) for k in args.draws.split(",")) if args.draws else None
    except ValueError:
        raise PvfError(f"--draws takes comma-separated integers, got {args.draws!r}") from None
    if draws is not None and not draws:
        raise PvfError(f"--draws must be positive, got {args.draws!r}")
    for k in draws or ():
        check_particle_count(k, "--draws")
    for name in ("particle_trunks", "particle_steps"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise PvfError(f"--{name.replace('_', '-')} must be positive, got {value}")
    return {
        "draws": draws,
        "save_policy": args.save_policy,
        "particle_trunks": args.particle_trunks,
        "particle_steps": args.particle_steps,
    }
