"""`pvf generate`: a PBS dataset (random trunk strategies, CFR+ or MMD targets) as one HDF5 file.

Samples every non-terminal public state at move number --depth under
--trunks random trunk strategies, solves each PBS's subgame with
--cfr-iterations of CFR+ (many PBSs per batch; `--solver mmd`: of MMD,
its last iterate, recorded in the file's `solver` attribute) and writes the file of
docs/hdf5_schema.md. Its target column holds best responses, guarded where
a belief is zero, by default (the training recipe's, pvf.experiments.quality);
`--target average` writes the paper's average-profile values. Killed runs resume: run the same command again. The
same --seed gives the same samples for any --workers or --backend.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from pvf.commands import add_progress_argument, progress_wanted, resolve_max_histories
from pvf.commands.solver_options import add_solver_arguments
from pvf.errors import PvfError, say_on_stderr
from pvf.games.engine import ENGINES
from pvf.solvers.guarded_values import TARGETS
from pvf.solvers.registry import DEFAULT_SOLVER

if TYPE_CHECKING:
    from pvf.datasets.generate import GenerationReport


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "generate", help="generate a PBS dataset (HDF5) for value-function training", description=__doc__
    )
    p.add_argument("--game", required=True, help="OpenSpiel game string or alias (leduc, goofspiel5, ...)")
    p.add_argument(
        "--depth",
        type=int,
        required=True,
        help="move number of the trunk's leaf public states (Leduc: 7, Goofspiel-5: 2)",
    )
    p.add_argument("--trunks", type=int, required=True, help="number of random trunk strategies (paper: 1000)")
    p.add_argument(
        "--cfr-iterations", type=int, default=100, help="CFR+ iterations per leaf subgame (default 100, as the paper)"
    )
    add_solver_arguments(p, with_options=False, purpose="the targets' solver")
    p.add_argument("--out", required=True, metavar="F.h5", help="output file; its work directory is F.h5.parts")
    p.add_argument("--workers", type=int, default=1, help="parallel worker processes (default 1)")
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local process pool or Ray (RAY_ADDRESS, else a local instance)",
    )
    p.add_argument(
        "--target",
        choices=TARGETS,
        default="best_response",
        help="what /infostates/target holds: best responses, guarded where a belief is zero (best_response, the "
        "default: the values a trunk needs where a belief is zero; one more solve), best responses to one mixed "
        "plan, the guarded solve's alone where a player has no belief in a public state (grouped; local: its budget "
        "per public state), the average "
        "profile's values (average, the paper's) or the last iterate's (always stored too, /infostates/target_current)",
    )
    p.add_argument(
        "--task-size",
        type=int,
        default=None,
        help="trunks per task and CFR+ batch (default 50); part of the file's identity",
    )
    p.add_argument(
        "--p-uniform", type=float, default=None, help="trunk sampling: uniform infostate probability (default 0.05)"
    )
    p.add_argument(
        "--p-pure",
        type=float,
        default=None,
        help="trunk sampling: pure-action probability if not uniform (default 0.1)",
    )
    p.add_argument(
        "--p-solve",
        type=float,
        default=None,
        help="trunk sampling: probability that a trunk's leaf beliefs are moved towards one leaf query of a "
        "trunk CFR+ solve with the data's targets at its leaves (default 0; enumerated and children-row datasets)",
    )
    p.add_argument(
        "--solve-network",
        type=Path,
        default=None,
        metavar="CKPT",
        help="with --particles, --rows children and --p-solve: a particle value net at the leaves of the trunk "
        "solves whose queries the samples take, instead of the data's targets (the beliefs that net's own trunk "
        "asks about; the file records its SHA-256); A.ckpt+B.ckpt: the mean of several nets' values",
    )
    p.add_argument(
        "--target-network",
        type=Path,
        default=None,
        metavar="CKPT",
        help="with --particles and --rows children: bootstrapped targets, each sample's PBS solved to move "
        "--depth + 1 only with this particle value net (trained at depth --depth + 1) at its leaves, instead of "
        "to the end of the game (ReBeL's recursion; the file records its SHA-256); A.ckpt+B.ckpt: the mean of "
        "several nets' values (their SHA-256s joined by '+')",
    )
    p.add_argument(
        "--solve-group",
        type=int,
        default=None,
        metavar="G",
        help="with --p-solve and children rows: consecutive samples that share one query solve and its particles "
        "(default 128; smaller: more distinct public states among the query samples, one solve per G samples)",
    )
    p.add_argument(
        "--public-states",
        choices=("all", "undecided"),
        default=None,
        help="with --rows children: the parents' public state is the one trunk strategy i reaches (all, the default) "
        "or, replaying it, the first where the trunk matters (undecided: the particle-trunk sweep's roots)",
    )
    p.add_argument(
        "--rollout-input",
        type=float,
        default=None,
        metavar="BETA",
        help="with --particles and --rows children (Goofspiel, at most 6 cards left at --depth): add each row's "
        "exact value of random play to the end, each round bidding card c with probability ∝ exp(BETA·c) (0: "
        "uniform), as the column /infostates/cf_rollout that particle nets take as an input",
    )
    p.add_argument(
        "--p-keep",
        type=float,
        default=None,
        help="trunk sampling: keep probability of each action of a mixed infostate (default 0.9)",
    )
    p.add_argument(
        "--particles",
        type=int,
        default=None,
        metavar="K",
        help="particle dataset: one public state per trunk and K sampled histories of it, solved to the end of "
        "the game (no public tree; docs/hdf5_schema.md)",
    )
    p.add_argument(
        "--rows",
        choices=("particles", "children"),
        default="particles",
        help="with --particles: a sample's rows are the particles' infostates at --depth (default), or every "
        "infostate one move "
        "below particles at --depth - 1, zero beliefs included, as a particle trunk's leaves are "
        "(pvf.datasets.particle_children)",
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="with --particles: how histories are stepped: a native kernel where the game has one (auto, the "
        "default; imperfect-information Goofspiel), native (refuse games without one) or openspiel; the same "
        "file from each",
    )
    p.add_argument(
        "--max-histories",
        type=int,
        default=None,
        help="size cap: the public tree's histories (default 2,000,000), or with --particles each particle "
        "subgame's (default 200,000)",
    )
    p.add_argument("--seed", type=int, default=0, help="generation seed (default 0)")
    p.add_argument(
        "--overwrite", action="store_true", help="replace a file or work directory made with other parameters"
    )
    add_progress_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pvf.datasets.generate import generate
    from pvf.datasets.sample_networks import NO_NETWORKS, SampleNetworks
    from pvf.datasets.sampling import SamplingConfig
    from pvf.datasets.spec import DEFAULT_MAX_SUBGAME_HISTORIES, DEFAULT_TASK_SIZE, GenerationSpec, ParticleOptions
    from pvf.games.depths import same_beliefs_warning
    from pvf.games.induced_pbs import check_particle_count
    from pvf.games.loading import load_game
    from pvf.games.public_tree import DEFAULT_MAX_HISTORIES

    mix = {
        k: v
        for k, v in (
            ("p_uniform", args.p_uniform),
            ("p_pure", args.p_pure),
            ("p_keep", args.p_keep),
            ("p_solve", args.p_solve),
        )
        if v is not None
    }
    particles = args.particles is not None
    if particles:
        check_particle_count(args.particles, "--particles")
        if args.solver != DEFAULT_SOLVER:
            raise PvfError(f"particle datasets are solved with {DEFAULT_SOLVER} only; drop --solver {args.solver}")
    elif args.rows != "particles" or args.engine is not None:
        option = "--rows" if args.rows != "particles" else "--engine"
        raise PvfError(f"{option} applies to particle datasets; add --particles K")
    children_only = (
        ("--solve-network", args.solve_network),
        ("--target-network", args.target_network),
        ("--solve-group", args.solve_group),
        ("--public-states", args.public_states),
        ("--rollout-input", args.rollout_input),
    )
    for name, value in children_only:
        if value is not None and (not particles or args.rows != "children"):
            raise PvfError(f"{name} applies to particle children rows; add --particles K --rows children")
    if args.rollout_input is not None:
        from pvf.games.rollouts import rollout_rules

        rollout_rules(load_game(args.game), args.depth, "--rollout-input values")
    resolve_max_histories(args, DEFAULT_MAX_SUBGAME_HISTORIES if particles else DEFAULT_MAX_HISTORIES)
    networks = NO_NETWORKS
    if args.solve_network is not None or args.target_network is not None:  # torch only where a net is asked for
        from pvf.valuefn.network_leaves import network_leaves

        networks = SampleNetworks(
            query=None if args.solve_network is None else network_leaves(args.solve_network, args.game, args.depth),
            targets=None
            if args.target_network is None
            else network_leaves(args.target_network, args.game, args.depth + 1, "--target-network"),
        )
    kind = (
        {
            "particles": ParticleOptions(
                count=args.particles,
                max_histories=args.max_histories,
                rows=args.rows,
                solve_network="" if networks.query is None else networks.query.digest,
                target_network="" if networks.targets is None else networks.targets.digest,
                **({} if args.solve_group is None else {"solve_group": args.solve_group}),
                **({} if args.public_states is None else {"public_states": args.public_states}),
                rollout_input=args.rollout_input,
            )
        }
        if particles
        else {"solver": args.solver}
    )
    spec = GenerationSpec(
        game=args.game,
        depth=args.depth,
        num_trunks=args.trunks,
        cfr_iterations=args.cfr_iterations,
        seed=args.seed,
        sampling=SamplingConfig(**mix),
        target=args.target,
        task_size=DEFAULT_TASK_SIZE if args.task_size is None else args.task_size,
        **kind,
    )
    report = generate(
        spec,
        args.out,
        workers=args.workers,
        backend=args.backend,
        overwrite=args.overwrite,
        progress=progress_wanted(args),
        # a particle spec carries its cap; the engine only steps particle histories
        **(
            {"engine": args.engine or "auto", "networks": networks}
            if particles
            else {"max_histories": args.max_histories}
        ),
    )
    if particles:
        written = f"particle samples (K = {spec.particles.count}) of {spec.game} at move {spec.depth}"
    else:
        written = f"samples of {spec.game} at move {spec.depth}"
        warning = same_beliefs_warning(load_game(spec.game), spec.depth)  # as `pvf describe` warns
        if warning:
            say_on_stderr(f"pvf generate: warning: {warning}")
    _print_report(report, args.json, written, show_rate=not particles)
    return 0


def _print_report(report: GenerationReport, as_json: bool, written: str, show_rate: bool) -> None:
    """A `GenerationReport` as one JSON object, or as lines; `written` says what the samples are."""
    if as_json:
        print(json.dumps(report.as_dict()))
    elif report.status == "complete":
        print(f"{report.path} is complete ({report.num_samples:,} samples); nothing to do")
    else:
        print(f"wrote {report.path}: {report.num_samples:,} {written}")
        print(f"tasks                {report.num_tasks} ({report.tasks_resumed} resumed, {report.tasks_run} run now)")
        print(f"wall time            {report.seconds:.1f} s")
        if show_rate:
            print(f"samples per second   {report.samples_per_second:,.0f} (this run)")
