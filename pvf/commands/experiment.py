"""`pvf experiment`: the paper's small self-contained experiments.

`pvf experiment linear` reproduces fig. 2 (app. D): it trains the linear
baseline and the particle variants on linear targets y = A x and writes
DIR/linear_targets.csv (step, variant, loss) and DIR/linear_targets.png.

`pvf experiment leaf-targets` solves a trunk with the dataset's targets
computed on demand at the leaves (CFR+ average profile, last iterate, best
responses, guarded where a belief is zero or not) next to the
exact oracle and the zero evaluator: the trunk exploitability a network
that learned its targets perfectly would reach (pvf.experiments.leaf_targets).

`pvf experiment particle-trunks` is fig. 4 generalised to your own particle
networks: sparse particle trunks of K histories drawn by a reference
strategy (pvf.experiments.particle_sweep).

`pvf experiment abcs` reproduces fig. 1 (b)-(d) of "Easy as ABCs": ABCs,
MAX-CFR, BQL, ES-MCCFR and OS-MCCFR on weighted rock-paper-scissors, Kuhn
and Leduc, OpenSpiel's NashConv against iterations and wall time
(pvf.experiments.abcs).

`pvf experiment progressive-hiding` reproduces section 6 of "Learning in
Games with Progressive Hiding": CFR against progressive hiding on
Cooperative Matching Pennies, Trade Comm and Abstracted Tiny Bridge
(pvf.experiments.progressive_hiding).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pvf.commands import require_positive, resolve_max_histories
from pvf.errors import PvfError, say_on_stderr
from pvf.games.engine import ENGINES
from pvf.outputs import check_future_dir, check_output_dir
from pvf.solvers.guarded_values import TARGETS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="small experiments from the paper's appendices",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    experiments = parser.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    linear = experiments.add_parser(
        "linear",
        help="learning linear targets y = Ax (app. D, fig. 2)",
        description="Learning linear targets y = Ax (app. D, fig. 2): the linear baseline and the particle variants, "
        "trained on the same samples; writes DIR/linear_targets.csv and .png.",
    )
    linear.add_argument("--n", type=int, default=10, help="dimension of x and y (default 10)")
    linear.add_argument("--samples", type=int, default=100, help="training set size (default 100)")
    linear.add_argument("--steps", type=int, default=2000, help="full-batch Adam steps per variant (default 2000)")
    linear.add_argument("--lr", type=float, default=1e-2, help="initial learning rate, cosine-annealed (default 1e-2)")
    linear.add_argument(
        "--random-basis", action="store_true", help="particle features T e_j with a random regular T instead of e_j"
    )
    linear.add_argument("--out", default="runs/experiment-linear", help="output folder")
    linear.add_argument("--seed", type=int, default=0)
    linear.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    linear.set_defaults(func=run)
    leaf = experiments.add_parser(
        "leaf-targets",
        help="trunk exploitability with the training targets themselves at the leaves",
        description="Trunk exploitability of CFR+ with the leaf values a perfect network would give, "
        "for each target recipe, next to the exact oracle and the zero evaluator (NashConv convention).",
    )
    leaf.add_argument("--game", default="leduc_poker", help="OpenSpiel game string or alias (default leduc_poker)")
    leaf.add_argument("--depth", type=int, default=7, help="trunk depth as a move number (default 7)")
    leaf.add_argument(
        "--root-move",
        type=int,
        default=0,
        help="root the trunk at the equilibrium's support histories at this move (default 0: the initial state)",
    )
    leaf.add_argument(
        "--cfr-iterations", type=int, default=100, help="CFR+ iterations per leaf solve, as the targets (default 100)"
    )
    leaf.add_argument("--iterations", type=int, default=100, help="CFR+ iterations in the trunk (default 100)")
    leaf.add_argument(
        "--max-histories", type=int, default=None, help="size cap of the enumerated game (default 2,000,000)"
    )
    leaf.add_argument(
        "--seed", type=int, default=0, help="unused: every step is deterministic (accepted for uniformity)"
    )
    leaf.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    leaf.set_defaults(func=run_leaf)
    part = experiments.add_parser(
        "particle-trunks",
        help="fig. 4 generalised: sparse particle trunks over K particles drawn by a reference strategy",
        description="Sparse particle trunks (pvf.experiments.particle_sweep): K particle draws of one public state at "
        "--root-move, a trunk to --depth, trunk exploitability (exact LP, particle weights normalised) of CFR+ with "
        "the oracle, a particle network and the uniform strategy. Writes DIR/fig4-<game>.csv, -runs.csv and .png.",
    )
    part.add_argument(
        "--game", required=True, help="OpenSpiel game string or alias (goofspiel5, goofspiel8, goofspiel13)"
    )
    part.add_argument("--root-move", type=int, required=True, help="move number of the root public state")
    part.add_argument("--depth", type=int, required=True, help="move number of the trunk's leaves")
    part.add_argument("--draws", default="1,4,16,64", help="comma-separated K (default 1,4,16,64)")
    part.add_argument(
        "--seeds", default="0,1,2", help="comma-separated seeds: trunk ids of the reference strategy (default 0,1,2)"
    )
    part.add_argument(
        "--reference",
        choices=("mix", "uniform"),
        default="mix",
        help="reference strategy: the random-trunk mix of pvf generate (default) or uniform",
    )
    part.add_argument(
        "--roots",
        choices=("induced", "drawn"),
        default="induced",
        help="the trunk's root: the PBS the particles induce (default; what particle networks are trained on) "
        "or the drawn particles only",
    )
    part.add_argument(
        "--network",
        action="append",
        default=[],
        metavar="CKPT",
        help="a particle value function checkpoint (repeatable)",
    )
    part.add_argument(
        "--mean-of-networks",
        action="store_true",
        help="also a row for the mean of all --network values at the leaves (e.g. nets trained with different seeds)",
    )
    part.add_argument("--no-oracle", action="store_true", help="skip the exact (LP) oracle at the leaves")
    part.add_argument(
        "--targets",
        nargs="?",
        const="average",
        default=None,
        choices=TARGETS,
        metavar="KIND",
        help="also a dataset target at the leaves (CFR+, 100 iterations, on the PBS each leaf's particles induce): "
        "what a perfect network trained on it would give; KIND average (the default, the row 'targets'), current, "
        "best_response (pvf generate's default target: the row 'targets best_response'), grouped or local",
    )
    part.add_argument(
        "--target-network",
        type=Path,
        default=None,
        metavar="CKPT",
        help="with --targets: the leaf PBSs solved to move --depth + 1 only, this particle net (trained at --depth "
        "+ 1) at their leaves: the bootstrapped targets of pvf generate --target-network (the row's name ends in "
        "'bootstrapped'); A.ckpt+B.ckpt: the mean of several nets' values",
    )
    part.add_argument(
        "--rollouts",
        nargs="?",
        const="agent",
        default=None,
        metavar="DRAWS",
        help="also a row of rollout leaves: each leaf history valued by uniform random play to the end of the game "
        "(pvf.valuefn.rollout_leaves; Goofspiel only); DRAWS bid orders per history (bare: as many as the particle "
        "agent's leaves=rollout, the row 'rollout'; the row 'rollout DRAWS' otherwise) or 'exact' (every order; at "
        "most 6 cards left)",
    )
    part.add_argument(
        "--rollout-greed",
        type=float,
        default=0.0,
        metavar="BETA",
        help="with --rollouts: the rollout policy bids card c with probability proportional to exp(BETA*c) (points "
        "descending; exp(-BETA*c) ascending) instead of uniformly (0, the default; pvf.games.rollouts); the row's "
        "name ends in 'greed BETA'",
    )
    part.add_argument("--iterations", type=int, default=100, help="CFR+ iterations in the trunk (default 100)")
    part.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="how particle histories are stepped: a native kernel where the game has one (auto, the default), "
        "native or openspiel; the same rows from each",
    )
    part.add_argument(
        "--exact-up-to",
        type=int,
        default=None,
        metavar="H",
        help="restricted games of up to H histories get the exact LP (default 250,000); larger ones a certified upper "
        "bound (CFR+ with the trunk frozen and exact best responses, pvf.solvers.trunk_bound) and no oracle",
    )
    part.add_argument(
        "--bound-iterations",
        type=int,
        default=None,
        help="CFR+ iterations per frozen game of the bound (default 1000; more narrows its gap)",
    )
    part.add_argument(
        "--max-histories",
        type=int,
        default=None,
        metavar="H",
        help="size cap of each restricted game, solved to the end of the game (default 2,000,000; Goofspiel-13's "
        "K = 256 needs up to 9,400,000 in ten seeds); every draw's size is checked before the sweep starts",
    )
    part.add_argument(
        "--skip-oversized",
        action="store_true",
        help="leave out the draws whose restricted game exceeds --max-histories (named on stderr; the CSV's runs "
        "column counts the rest) instead of stopping",
    )
    part.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    part.add_argument("--out", default="runs/particle-trunks", help="output folder")
    part.add_argument(
        "--save-policy",
        type=Path,
        metavar="FILE.json",
        help="also write every run's restricted game "
        "(particle action sequences, weights) and trunk strategies keyed by OpenSpiel infostate strings",
    )
    part.set_defaults(func=run_particle_trunks)
    abcs = experiments.add_parser(
        "abcs",
        help='fig. 1 (b)-(d) of "Easy as ABCs": ABCs vs BQL, MAX-CFR, ES- and OS-MCCFR',
        description='Fig. 1 (b)-(d) of "Easy as ABCs" (pvf.experiments.abcs): ABCs, MAX-CFR, BQL, OpenSpiel\'s '
        "ES-MCCFR and OS-MCCFR with the paper's hyper-parameters on weighted rock-paper-scissors, Kuhn and Leduc; "
        "OpenSpiel's NashConv of each average policy against iterations and wall time, mean and 95%% interval "
        "over seeds. Writes DIR/abcs.csv, DIR/abcs-final.csv and DIR/abcs.png.",
    )
    abcs.add_argument("--games", default="rps,kuhn,leduc", help="comma-separated: rps, kuhn, leduc (default all)")
    abcs.add_argument("--seeds", type=int, default=3, help="seeds per learner, --seed, --seed + 1, ... (default 3)")
    abcs.add_argument(
        "--iterations",
        type=int,
        default=None,
        help="iterations of every learner on every game (default: rps 20,000, kuhn 20,000, leduc 10,000)",
    )
    abcs.add_argument(
        "--quick", action="store_true", help="a smoke run in seconds: 60 iterations, 3 checkpoints, one seed"
    )
    abcs.add_argument("--out", default="docs/figures/abcs", help="output folder (default docs/figures/abcs)")
    abcs.add_argument("--seed", type=int, default=0, help="the first seed (default 0: seeds 0, 1, 2 as the paper)")
    abcs.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    abcs.set_defaults(func=run_abcs)
    hiding = experiments.add_parser(
        "progressive-hiding",
        help="progressive hiding vs CFR on team games (Cooperative Matching Pennies, Trade Comm, Tiny Bridge)",
        description='Section 6 of Heymann & Lanctot\'s "Learning in Games with Progressive Hiding" '
        "(pvf.experiments.progressive_hiding): CFR and progressive hiding (regret matching, or FTRL for Trade Comm, "
        "under the cheated or recall information map, penalised toward implementability) on Cooperative Matching "
        "Pennies, Trade Comm (2, 2) and (3, 2) and Abstracted Tiny Bridge; the projected policy's payoff per "
        "iteration, mean, 10%% quantile, success rate and best-so-far over runs. "
        "Writes DIR/progressive_hiding.csv and DIR/progressive_hiding.png.",
    )
    hiding.add_argument(
        "--games",
        default="cmp,cmp_sampled,cmp_sampled_cf,trade_comm,trade_comm_3_2,tiny_bridge",
        help="comma-separated: cmp, cmp_sampled, cmp_sampled_cf (sampled episodes), trade_comm, trade_comm_3_2, "
        "tiny_bridge (default all)",
    )
    hiding.add_argument(
        "--runs",
        type=int,
        default=None,
        help="runs per learner (default: the cmp games 1,000, trade_comm and trade_comm_3_2 100, tiny_bridge 50)",
    )
    hiding.add_argument(
        "--quick", action="store_true", help="a smoke run in seconds: 4 runs of 10 iterations per learner"
    )
    hiding.add_argument(
        "--out",
        default="docs/figures/progressive_hiding",
        help="output folder (default docs/figures/progressive_hiding)",
    )
    hiding.add_argument("--seed", type=int, default=0, help="seed of the runs' random initial policies (default 0)")
    hiding.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    hiding.set_defaults(func=run_progressive_hiding)


def run(args: argparse.Namespace) -> int:
    from pvf.experiments.linear_targets import check_options, curve_rows, plot_curves, run_linear_targets
    from pvf.results import write_csv

    check_options(args.n, args.samples, args.steps, args.lr, args.seed)  # before the output directory is made
    args.out = check_output_dir(args.out, "--out")
    curves = run_linear_targets(
        n=args.n,
        samples=args.samples,
        steps=args.steps,
        seed=args.seed,
        lr=args.lr,
        random_basis=args.random_basis,
    )
    csv_path, png_path = args.out / "linear_targets.csv", args.out / "linear_targets.png"
    write_csv(curve_rows(curves), csv_path)
    plot_curves(curves, png_path)

    final = {variant: float(losses[-1]) for variant, losses in curves.items()}
    if args.json:
        summary = {
            "n": args.n,
            "samples": args.samples,
            "steps": args.steps,
            "lr": args.lr,
            "random_basis": args.random_basis,
            "seed": args.seed,
            "final_mse": final,
            "min_mse": {variant: float(losses.min()) for variant, losses in curves.items()},
            "csv": str(csv_path),
            "png": str(png_path),
        }
        print(json.dumps(summary))
    else:
        print(f"linear targets: n={args.n}, {args.samples} samples, {args.steps} steps, seed {args.seed}")
        print("final training MSE:")
        for variant, loss in final.items():
            print(f"  {variant:<16} {loss:.3e}")
        print(f"wrote {csv_path} and {png_path}")
    return 0


def run_leaf(args: argparse.Namespace) -> int:
    from pvf.experiments.leaf_targets import run_leaf_targets
    from pvf.games.public_tree import DEFAULT_MAX_HISTORIES

    require_positive(args, "cfr_iterations", "iterations")
    resolve_max_histories(args, DEFAULT_MAX_HISTORIES)

    shown: list[str] = []

    def show(row: dict) -> None:  # the header waits for the first row: bad input prints nothing but the error
        if args.json:
            return
        if not shown:
            start = "" if args.root_move == 0 else f"from move {args.root_move} "
            print(
                f"{args.game}, trunk {start}to move {args.depth}, {args.iterations} trunk iterations, "
                f"leaf targets from {args.cfr_iterations} CFR+ iterations"
            )
            print(f"{'leaf evaluator':<28} {'NashConv':>10} {'OpenSpiel':>10} {'solve s':>8}")
        print(
            f"{row['evaluator']:<28} {row['trunk_exploitability']:>10.4f} {row['openspiel']:>10.4f} "
            f"{row['solve_seconds']:>8.1f}",
            flush=True,
        )
        shown.append(row["evaluator"])

    if args.root_move < 0:
        raise PvfError(f"--root-move must be a move number (0 or more), got {args.root_move}")
    rows = run_leaf_targets(
        args.game,
        args.depth,
        args.cfr_iterations,
        args.iterations,
        on_result=show,
        max_histories=args.max_histories,
        root_move=args.root_move,
    )
    if args.json:
        print(
            json.dumps(
                {
                    "game": args.game,
                    "depth": args.depth,
                    "root_move": args.root_move,
                    "iterations": args.iterations,
                    "cfr_iterations": args.cfr_iterations,
                    "trunk_exploitability": {r["evaluator"]: r["trunk_exploitability"] for r in rows},
                    "rows": rows,
                }
            )
        )
    return 0


def run_particle_trunks(args: argparse.Namespace) -> int:
    from pvf.datasets.induced_targets import induced_pbs_evaluator
    from pvf.datasets.sampling import SamplingConfig
    from pvf.experiments.particle_sweep import (
        DEFAULT_EXACT_HISTORIES,
        UNIFORM_REFERENCE,
        check_trunk,
        draws_and_seeds,
        plot_particle_sweep,
        run_particle_sweep,
        runs_table,
        summarize,
        write_policy_file,
    )
    from pvf.experiments.positional_slots import enumerated_slots
    from pvf.experiments.trunk_sweep import ORACLE, SweepEvaluator
    from pvf.games.depths import positional_inputs
    from pvf.games.features import build_feature_tables
    from pvf.games.loading import ALIASES, load_game
    from pvf.games.public_tree import DEFAULT_MAX_HISTORIES
    from pvf.results import write_csv
    from pvf.solvers.evaluators import MeanEvaluator
    from pvf.solvers.trunk_bound import DEFAULT_BOUND_ITERATIONS
    from pvf.valuefn.network import load_value_function
    from pvf.valuefn.rollout_leaves import ROLLOUT_DRAWS, rollout_draws, rollout_leaves

    require_positive(args, "iterations")
    exact_up_to = DEFAULT_EXACT_HISTORIES if args.exact_up_to is None else args.exact_up_to
    bound_iterations = DEFAULT_BOUND_ITERATIONS if args.bound_iterations is None else args.bound_iterations
    if exact_up_to < 0 or bound_iterations < 1:
        raise PvfError(
            f"--exact-up-to must be >= 0 and --bound-iterations >= 1, got {exact_up_to} and {bound_iterations}"
        )
    max_histories = resolve_max_histories(args, DEFAULT_MAX_HISTORIES)
    draws, seeds = draws_and_seeds(args.draws, args.seeds)
    if args.save_policy is not None and (args.save_policy.suffix != ".json" or not args.save_policy.parent.is_dir()):
        raise PvfError(f"--save-policy takes a .json file in an existing folder, got {args.save_policy}")
    out = check_future_dir(args.out, "--out")  # checked now, made only once the sweep succeeded
    loaded = load_game(args.game)
    rollouts = None
    if args.rollout_greed and args.rollouts is None:
        raise PvfError("--rollout-greed sets the policy of the rollouts row; add --rollouts")
    if not args.rollout_greed >= 0.0:
        raise PvfError(f"--rollout-greed is a number >= 0 (0: uniform rollouts), got {args.rollout_greed}")
    if args.rollouts is not None:
        draws_per_history = ROLLOUT_DRAWS if args.rollouts == "agent" else rollout_draws(args.rollouts)
        name = "rollout" if draws_per_history == ROLLOUT_DRAWS else f"rollout {args.rollouts}"
        name += f" greed {args.rollout_greed:g}" if args.rollout_greed else ""
        leaves = rollout_leaves(loaded, draws_per_history, args.depth, args.rollout_greed)
        rollouts = (name, SweepEvaluator(leaves, game_root=False))
    check_trunk(loaded, args.root_move, args.depth)
    evaluators = {} if args.no_oracle else {"oracle": ORACLE}
    if args.target_network is not None and args.targets is None:
        raise PvfError("--target-network sets the leaves of the targets row's solves; add --targets")
    if args.targets is not None:
        kind, bootstrap = args.targets, None
        if args.target_network is not None:
            from pvf.valuefn.network_leaves import network_leaves

            bootstrap = network_leaves(args.target_network, loaded.game_string, args.depth + 1, "--target-network")
        name = ("targets" if kind == "average" else f"targets {kind}") + ("" if bootstrap is None else " bootstrapped")
        evaluators[name] = SweepEvaluator(
            lambda setting: lambda trunk: induced_pbs_evaluator(loaded, trunk, 100, kind, args.engine, bootstrap),
            game_root=True,
        )
    if rollouts is not None:
        evaluators[rollouts[0]] = rollouts[1]
    full, members = None, []
    for path in args.network:
        network = load_value_function(path, loaded.game_string, args.depth)
        if network.architecture == "positional" and full is None:
            full = _enumerated_tree(loaded, path, args.depth)

        def factory(setting, network=network, full=full if network.architecture == "positional" else None):
            features = build_feature_tables(setting.tree)
            if full is None:
                return lambda trunk: network.evaluator(trunk, features)
            return lambda trunk: network.evaluator(trunk, features, enumerated_slots(trunk, full))

        name = f"network {Path(path).name}"
        evaluators[name if name not in evaluators else f"network {path}"] = SweepEvaluator(
            factory, game_root=True
        )  # two last.ckpt: full paths
        members.append(factory)
    if args.mean_of_networks:
        if len(members) < 2:
            raise PvfError("--mean-of-networks needs at least two --network checkpoints")

        def mean_factory(setting, members=members):
            makers = [member(setting) for member in members]
            return lambda trunk: MeanEvaluator([make(trunk) for make in makers])

        evaluators[f"mean of {len(members)} networks"] = SweepEvaluator(mean_factory, game_root=True)
    reference = SamplingConfig() if args.reference == "mix" else UNIFORM_REFERENCE
    policies: list[dict] | None = [] if args.save_policy is not None else None
    skipped: list[tuple[int, int]] = []
    rows = run_particle_sweep(
        loaded,
        args.root_move,
        args.depth,
        draws,
        seeds,
        evaluators,
        reference,
        args.iterations,
        policies=policies,
        roots=args.roots,
        exact_up_to=exact_up_to,
        bound_iterations=bound_iterations,
        engine=args.engine,
        max_histories=max_histories,
        skip_oversized=args.skip_oversized,
        skipped=skipped,
    )
    if skipped:
        say_on_stderr(
            f"left out {len(skipped)} draw(s) over {max_histories:,} histories (K, seed): "
            + ", ".join(f"({k}, {s})" for k, s in skipped)
        )
    args.out = check_output_dir(out, "--out")  # only now: a failed sweep leaves nothing behind
    name = next((alias for alias, full in ALIASES.items() if full == loaded.game_string), "game")
    table = summarize(rows)
    write_csv(table, args.out / f"fig4-{name}.csv")
    write_csv(runs_table(rows), args.out / f"fig4-{name}-runs.csv")
    plot_particle_sweep(
        table,
        str(args.out / f"fig4-{name}.png"),
        f"{name}: particle trunks, move {args.root_move} to {args.depth}, {args.reference} reference, "
        f"{args.roots} roots",
    )
    need = positional_inputs(loaded.game_string, args.depth)
    if policies is not None:
        write_policy_file(args.save_policy, loaded.game_string, args.root_move, args.depth, args.reference, policies)
    if args.json:
        print(
            json.dumps(
                {
                    "game": loaded.game_string,
                    "root_move": args.root_move,
                    "depth": args.depth,
                    "reference": args.reference,
                    "roots": args.roots,
                    "positional_inputs": need,
                    "points": table,
                    "csv": str(args.out / f"fig4-{name}.csv"),
                    "policy": None if args.save_policy is None else str(args.save_policy),
                }
            )
        )
        return 0
    print(
        f"{name}: trunk move {args.root_move} -> {args.depth}, reference {args.reference}, roots {args.roots}, "
        f"seeds {args.seeds}"
    )
    if need:
        print(f"a positional value function at move {args.depth} would need at least {need:,} infostate inputs")
    print(
        f"{'evaluator':<28} {'K':>5} {'particles':>9} {'roots':>7} {'NashConv':>12} {'std':>10} {'s/run':>7}  measure"
    )
    for r in table:
        bound = f" (gap <= {r['gap_max']:.4f})" if r["measure"] != "exact" else ""
        print(
            f"{r['evaluator']:<28} {r['draws']:>5} {r['particles_mean']:>9.1f} {r['roots_mean']:>7.1f} "
            f"{r['exploitability_mean']:>12.5f} "
            f"{r['exploitability_std']:>10.5f} {r['seconds_mean']:>7.1f}  {r['measure']}{bound}"
        )
    if policies is not None:
        print(f"wrote {args.save_policy}")
    print(f"wrote {args.out}/fig4-{name}.csv, -runs.csv and .png")
    return 0


def _enumerated_tree(loaded, path, depth: int):
    """The full public tree a positional network's slots refer to.

    Beyond enumeration, a PvfError naming the inputs the network would need.
    """
    from pvf.games.depths import positional_inputs
    from pvf.games.public_tree import build_public_tree

    try:
        return build_public_tree(loaded)
    except PvfError:
        need = positional_inputs(loaded.game_string, depth)
        raise PvfError(
            f"{path} is a positional value function, whose inputs are the slots of the enumerated public tree, and "
            f"{loaded.game_string} cannot be enumerated (a positional net at move {depth} would need at least "
            f"{need:,} inputs); use a particle network"
        ) from None


def run_abcs(args: argparse.Namespace) -> int:
    from pvf.experiments.abcs import (
        CHECKPOINTS,
        DEFAULT_ITERATIONS,
        QUICK_CHECKPOINTS,
        QUICK_ITERATIONS,
        parse_games,
        plot,
        run_game,
        summarize,
    )
    from pvf.results import write_csv

    games = parse_games(args.games)
    require_positive(args, "seeds")
    if args.iterations is not None:
        require_positive(args, "iterations")
    if args.seed < 0:
        raise PvfError(f"--seed must be non-negative, got {args.seed}")
    seeds = [args.seed] if args.quick else list(range(args.seed, args.seed + args.seeds))
    out = check_output_dir(args.out, "--out")

    def show(run: list) -> None:
        if not args.json:
            last = run[-1]
            print(
                f"{last.game:<6} {last.learner:<9} seed {last.seed}  {last.iteration:>7} iterations  "
                f"{last.seconds:>7.1f} s  NashConv {last.nash_conv:.4f}",
                flush=True,
            )

    rows = []
    for game in games:
        iterations = args.iterations or (QUICK_ITERATIONS if args.quick else DEFAULT_ITERATIONS[game])
        rows += run_game(game, iterations, seeds, QUICK_CHECKPOINTS if args.quick else CHECKPOINTS, on_run=show)
    final = summarize(rows)
    csv_path, final_path, png_path = out / "abcs.csv", out / "abcs-final.csv", out / "abcs.png"
    write_csv(rows, csv_path)
    write_csv(final, final_path)
    plot(rows, png_path)
    if args.json:
        print(json.dumps({"seeds": seeds, "final": final, "csv": str(csv_path), "png": str(png_path)}))
    else:
        print(f"{'game':<6} {'learner':<9} {'iterations':>10} {'NashConv':>9} {'95% CI':>8} {'seconds':>8}")
        for r in final:
            print(
                f"{r['game']:<6} {r['learner']:<9} {r['iterations']:>10} {r['nash_conv']:>9.4f} "
                f"{r['ci95']:>8.4f} {r['seconds']:>8.1f}"
            )
        print(f"wrote {csv_path}, {final_path} and {png_path}")
    return 0


def run_progressive_hiding(args: argparse.Namespace) -> int:
    from pvf.experiments.progressive_hiding import (
        DEFAULT_RUNS,
        QUICK_ITERATIONS,
        QUICK_RUNS,
        final_rows,
        parse_games,
        plot,
        run_game,
    )
    from pvf.results import write_csv

    games = parse_games(args.games)
    if args.runs is not None:
        require_positive(args, "runs")
    if args.seed < 0:
        raise PvfError(f"--seed must be non-negative, got {args.seed}")
    out = check_output_dir(args.out, "--out")

    def show(row: dict) -> None:
        if not args.json:
            print(
                f"{row['game']:<14} {row['learner']:<11} {row['runs']:>5} runs {row['iteration']:>5} iterations  "
                f"mean {row['mean']:.3f}  10% quantile {row['q10']:.3f}  success {row['success']:.1%}",
                flush=True,
            )

    rows = []
    for game in games:
        runs = args.runs or (QUICK_RUNS if args.quick else DEFAULT_RUNS[game])
        rows += run_game(game, runs, args.seed, QUICK_ITERATIONS if args.quick else None, on_learner=show)
    csv_path, png_path = out / "progressive_hiding.csv", out / "progressive_hiding.png"
    write_csv(rows, csv_path)
    plot(rows, png_path)
    if args.json:
        print(json.dumps({"seed": args.seed, "final": final_rows(rows), "csv": str(csv_path), "png": str(png_path)}))
    else:
        print(f"wrote {csv_path} and {png_path}")
    return 0
