"""`--solver` and each solver's own options, derived from the solver registry (`pvf.solvers.registry.SOLVERS`).

`add_solver_arguments` registers `--solver` (its help lists every
registered solver) and, unless told not to, one option group per solver
with options (MMD: `--schedule`, `--alpha`, `--stepsize`). `solver_name`
checks the name; `solver_from_args` builds the solver (`cfr_plus`'s call
signature) from the options, with a one-line `PvfError` for an unknown
name, a bad value, or an option of another solver; a sampling solver
(`SolverSpec.seeded`, ABCs) gets the command's `--seed`.
"""

from __future__ import annotations

import argparse
from functools import partial

from pvf.errors import PvfError
from pvf.solvers.interface import Solver
from pvf.solvers.registry import DEFAULT_SOLVER, SOLVERS, solver_spec


def add_solver_arguments(p: argparse.ArgumentParser, with_options: bool = True, purpose: str = "the solver") -> None:
    """`--solver NAME` (default `DEFAULT_SOLVER`), and (if `with_options`) every solver's own options, a group each."""
    listed = "; ".join(f"{name}: {spec.help}" for name, spec in SOLVERS.items())
    p.add_argument("--solver", default=DEFAULT_SOLVER, help=f"{purpose}, default {DEFAULT_SOLVER} ({listed})")
    if not with_options:
        return
    added: set[str] = set()
    for name, spec in SOLVERS.items():
        options = [option for option in spec.options if option.dest not in added]
        if options:
            group = p.add_argument_group(f"--solver {name} options")
            for option in options:
                group.add_argument(option.flag, type=option.type, default=None, help=option.help)
                added.add(option.dest)


def solver_name(args: argparse.Namespace) -> str:
    """`--solver`, checked against the registry (a one-line `PvfError` naming the known solvers)."""
    if args.solver not in SOLVERS:
        raise PvfError(f"unknown --solver {args.solver!r}; choose one of: {', '.join(SOLVERS)}")
    return args.solver


def solver_from_args(args: argparse.Namespace) -> Solver:
    """The solver the options name; PvfError for unknown names, bad values, or options of another solver."""
    spec = solver_spec(solver_name(args))
    own = {option.dest for option in spec.options}
    foreign = [
        (option.flag, name)
        for name, other in SOLVERS.items()
        for option in other.options
        if option.dest not in own and getattr(args, option.dest, None) is not None
    ]
    if foreign:
        flags = ", ".join(dict.fromkeys(flag for flag, _ in foreign))
        owners = " or ".join(f"--solver {name}" for name in dict.fromkeys(name for _, name in foreign))
        raise PvfError(f"{flags} only apply to {owners}")
    solver = spec.build(**{option.dest: getattr(args, option.dest, None) for option in spec.options})
    if spec.seeded and getattr(args, "seed", None) is not None:
        return partial(solver, seed=args.seed)
    return solver
