"""The --solver / --schedule / --alpha / --stepsize options shared by the commands that solve.

`add_solver_arguments` registers them; `solver_from_args` turns them into a
solver with `cfr_plus`'s call signature (`pvf.solvers.get_solver`), with a
one-line `PvfError` for a bad value or an MMD option given to CFR+.
"""

from __future__ import annotations

import argparse

from pvf.errors import PvfError


def add_solver_arguments(p: argparse.ArgumentParser, schedule_options: bool = True) -> None:
    """--solver, and (if `schedule_options`) MMD's --schedule, --alpha, --stepsize."""
    p.add_argument("--solver", default="cfr+", help="cfr+ (average strategy) or mmd (magnetic mirror descent, last iterate); default cfr+")
    if schedule_options:
        p.add_argument("--schedule", default=None, help="mmd: alternating (default), sqrt, paper, or fixed (the default when --alpha is given)")
        p.add_argument("--alpha", type=float, default=None, help="mmd: temperature; fixed: OpenSpiel's alpha, named schedules: the constant a of alpha_t")
        p.add_argument("--stepsize", type=float, default=None, help="mmd: stepsize (fixed: default alpha/max|A|^2 as OpenSpiel)")


def solver_from_args(args: argparse.Namespace):
    """The solver the options name; PvfError for unknown names, bad values, or MMD options with cfr+."""
    from pvf.solvers import SOLVER_NAMES, get_solver
    from pvf.solvers.mmd import make_schedule

    if args.solver not in SOLVER_NAMES:
        raise PvfError(f"unknown --solver {args.solver!r}; choose one of: {', '.join(SOLVER_NAMES)}")
    given = [f"--{k}" for k in ("schedule", "alpha", "stepsize") if getattr(args, k, None) is not None]
    if args.solver != "mmd":
        if given:
            raise PvfError(f"{', '.join(given)} only apply to --solver mmd")
        return get_solver(args.solver)
    schedule = make_schedule(getattr(args, "schedule", None), getattr(args, "alpha", None), getattr(args, "stepsize", None))
    return get_solver("mmd", schedule)
