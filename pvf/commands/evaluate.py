"""`pvf evaluate`: trunk exploitability of a trained value function, and sparse-trunk sweeps.

    pvf evaluate --checkpoint C [--game G --depth D] [--iterations 100] [--solver mmd] [--save-policy F.json] [--json]
    pvf evaluate sparse --checkpoint C [C ...] [--fractions 1.0,0.9,...,0.1] [--seeds 0,1,...] [--out DIR] [--json]

The first solves the trunk from the initial state to the net's training
depth with the net at the leaves, next to the exact oracle and the constant
zero evaluator (pvf.experiments.trunk_report). The second sweeps sparse
trunks built from a share of the equilibrium's histories (paper, fig. 4;
pvf.experiments.sparse_sweep) and writes CSV and PNG files. Figures are in
the NashConv convention; OpenSpiel's (the authors') half is printed beside.
"""

from __future__ import annotations

import argparse
import json

from pvf.commands import add_progress_argument, progress_wanted, require_positive
from pvf.commands.solver_options import add_solver_arguments, solver_from_args
from pvf.errors import PvfError
from pvf.outputs import check_future_dir, check_output_dir, check_output_file, disk_errors


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="trunk exploitability of a trained value function (and sparse sweeps)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--checkpoint", help="value-function checkpoint written by `pvf train`")
    _common(p)
    add_solver_arguments(p)
    p.add_argument("--save-policy", metavar="F.json", help="write the trunk strategy {infostate: {action: prob}}")
    p.add_argument("--skip-oracle", action="store_true", help="skip the exact-oracle baseline (the slowest part)")
    p.set_defaults(func=run, mode=None)
    modes = p.add_subparsers(dest="mode", metavar="MODE")
    s = modes.add_parser(
        "sparse",
        help="sparse particle trunks (paper, fig. 4)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "--checkpoint", nargs="+", required=True, help="one or more checkpoints (e.g. one per training seed)"
    )
    _common(s)
    s.add_argument(
        "--root-move", type=int, help="move number of the root histories (default: the paper's, Leduc 5, Goofspiel-5 2)"
    )
    s.add_argument(
        "--fractions",
        default="1.0,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1",
        help="shares of the support histories to keep, heaviest first (default 1.0,0.9,...,0.1)",
    )
    s.add_argument(
        "--min-histories",
        type=int,
        help="last point: the K heaviest player-node histories (default: the paper's, Leduc 2, Goofspiel 1; 0 = none)",
    )
    s.add_argument("--seeds", help="tie-breaking seeds among equally heavy histories, e.g. 0,1,2 (default: --seed)")
    s.add_argument(
        "--equilibrium-iterations",
        type=int,
        default=1000,
        help="full-game CFR+ iterations for the equilibrium (default 1000)",
    )
    s.add_argument(
        "--support-threshold",
        type=float,
        default=1e-3,
        help="equilibrium action probabilities below this count as not played (default 1e-3)",
    )
    s.add_argument(
        "--out",
        default="runs/sparse",
        help="directory for sparse.csv, sparse_runs.csv, sparse.png (default runs/sparse)",
    )
    add_progress_argument(s)
    s.set_defaults(func=run_sparse)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--game", help="OpenSpiel game string (default: the checkpoint's; another is an error)")
    p.add_argument(
        "--depth", type=int, help="trunk depth as a move number (default: the checkpoint's; another is an error)"
    )
    p.add_argument(
        "--iterations", type=int, default=100, help="CFR+ iterations in the trunk (default 100, as the paper)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed (the trunk solve is deterministic; sparse: default tie-breaking seed)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from pvf.experiments.trunk_report import CONVENTION, evaluate_network
    from pvf.solvers.tabular import save_policy
    from pvf.valuefn.network import load_value_function

    if not args.checkpoint:
        raise PvfError("pass --checkpoint C (a value function written by `pvf train`)")
    require_positive(args, "iterations")
    solver = solver_from_args(args)
    if args.save_policy is not None:
        check_output_file(args.save_policy, "--save-policy")
    network = load_value_function(args.checkpoint, args.game, args.depth)
    report = evaluate_network(network, args.iterations, oracle=not args.skip_oracle, solver=solver)
    out = {**report.as_dict(), "solver": args.solver}
    if args.save_policy:
        with disk_errors(args.save_policy):
            save_policy(report.policy(), args.save_policy)
        out["policy"] = args.save_policy
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"game                 {out['game']}")
    print(f"trunk                initial state to move {out['depth']}, {out['iterations']} {args.solver} iterations")
    print(f"value function       {out['checkpoint']} ({out['architecture']})")
    print(f"convention           {CONVENTION}")
    print(f"{'leaf evaluator':<20} {'NashConv':>12} {'OpenSpiel':>12} {'solve s':>9}")
    for label, key in (("network", ""), ("exact oracle", "oracle_"), ("constant zero", "constant_")):
        if f"{key}trunk_exploitability" in out:
            print(
                f"{label:<20} {out[f'{key}trunk_exploitability']:>12.6f} "
                f"{out[f'{key}trunk_exploitability_openspiel']:>12.6f} {out[f'{key}solve_seconds']:>9.2f}"
            )
    if args.save_policy:
        print(f"policy               {args.save_policy}")
    return 0


def run_sparse(args: argparse.Namespace) -> int:
    from pvf.experiments.plots import plot_sparse
    from pvf.experiments.sparse_sweep import run_sweep, runs_table, summarize, sweep_points, uniform_reference
    from pvf.experiments.trunk_report import CONVENTION
    from pvf.games.features import build_feature_tables
    from pvf.games.paper import paper_game
    from pvf.games.public_tree import build_public_tree
    from pvf.results import write_csv
    from pvf.solvers.sparse_trunks import sparse_setting
    from pvf.valuefn.network import load_value_function

    require_positive(args, "iterations")
    check_future_dir(args.out, "--out")  # checked before any work, made once the input is known good
    networks = [load_value_function(path, args.game, args.depth) for path in args.checkpoint]
    layout = networks[0].meta.layout
    for other in networks[1:]:
        if (other.meta.game, other.meta.layout.depth) != (layout.game, layout.depth):
            raise PvfError(
                f"{other.path} was trained on {other.meta.game} at depth {other.meta.layout.depth}, "
                f"{networks[0].path} on {layout.game} at depth {layout.depth}; sweep one setting at a time"
            )
    paper = paper_game(layout.game)
    root_move = args.root_move if args.root_move is not None else (paper.sparse_root_move if paper else None)
    if root_move is None:
        raise PvfError(f"no default root move for {layout.game}; pass --root-move M (below depth {layout.depth})")
    min_count = args.min_histories if args.min_histories is not None else (paper.sparse_min_histories if paper else 1)
    fractions = _numbers(args.fractions, "--fractions", float)
    seeds = _numbers(args.seeds, "--seeds", int) if args.seeds else [args.seed]
    if not all(0 < f <= 1 for f in fractions):
        raise PvfError(f"--fractions must lie in (0, 1], got {args.fractions}")
    if min(seeds) < 0:
        raise PvfError(f"--seeds must be non-negative, got {args.seeds if args.seeds else args.seed}")
    tree = build_public_tree(layout.game)
    setting = sparse_setting(tree, root_move, layout.depth, args.equilibrium_iterations, args.support_threshold)
    points = sweep_points(fractions, min_count or None)
    rows = run_sweep(
        setting, networks, build_feature_tables(tree), points, seeds, args.iterations, progress=progress_wanted(args)
    )
    summary = summarize(rows)
    uniform = uniform_reference(setting)
    out_dir = check_output_dir(args.out, "--out")  # only now: bad input or a failed sweep leaves no directory
    write_csv(summary, out_dir / "sparse.csv")
    write_csv(runs_table(rows), out_dir / "sparse_runs.csv")
    plot_sparse(
        summary, uniform, out_dir / "sparse.png", f"{layout.game}: sparse trunks, move {root_move} to {layout.depth}"
    )
    out = {
        "game": layout.game,
        "root_move": root_move,
        "depth": layout.depth,
        "root_histories": setting.num_root_histories,
        "support_histories": setting.num_histories,
        "iterations": args.iterations,
        "convention": CONVENTION,
        "uniform_exploitability": uniform["exploitability"],
        "uniform_root_exploitability": uniform["root_exploitability"],
        "points": summary,
        "csv": str(out_dir / "sparse.csv"),
        "runs_csv": str(out_dir / "sparse_runs.csv"),
        "png": str(out_dir / "sparse.png"),
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print(
        f"game       {layout.game}: roots at move {root_move} ({setting.num_histories} of "
        f"{setting.num_root_histories} histories in the equilibrium's support), trunk to move {layout.depth}"
    )
    print(f"runs       {len(networks)} network(s) x {len(seeds)} seed(s), {args.iterations} CFR+ iterations")
    print(f"convention {CONVENTION}")
    print(f"{'point':<14} {'histories':>9}  {'whole trunk fixed':>22}  {'root move fixed (authors)':>26}")
    for r in summary:
        print(
            f"{r['point']:<14} {r['num_histories']:>9}  {r['exploitability_mean']:>12.5f} ± "
            f"{r['exploitability_std']:<7.5f}"
            f"  {r['root_exploitability_mean']:>16.5f} ± {r['root_exploitability_std']:<7.5f}"
        )
    print(
        f"{'uniform':<14} {'':>9}  {uniform['exploitability']:>12.5f}{'':10}  {uniform['root_exploitability']:>16.5f}"
    )
    print(f"files      {out['csv']}, {out['runs_csv']}, {out['png']}")
    return 0


def _numbers(text: str, flag: str, kind: type) -> list:
    try:
        values = [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise PvfError(f"{flag} takes comma-separated {kind.__name__}s, got {text!r}") from None
    if not values:
        raise PvfError(f"{flag} is empty")
    return values
