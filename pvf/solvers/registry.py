"""Equilibrium solvers by name, all with `cfr_plus`'s call signature.

`get_solver(name)` returns a callable
    solver(game, iterations, root_beliefs=None, frozen=(None, None),
           leaf_evaluator=None, callback=None) -> SolverResult
so that dataset targets, trunk solving and `pvf solve` choose a solver by
name. "cfr+": CFR+, whose solution is the *average* profile (the result's
`current_root_values` hold the last iterate). "mmd": magnetic mirror
descent, whose solution is the last iterate (`average_*` and `current_*`
fields both hold it); its schedule is a parameter of `get_solver`.
"""

from __future__ import annotations

from functools import partial

from pvf.errors import PvfError
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import Solver
from pvf.solvers.mmd import Schedule, mmd

DEFAULT_SOLVER = "cfr+"
SOLVER_NAMES = ("cfr+", "mmd")


def get_solver(name: str, schedule: Schedule | None = None) -> Solver:
    """The solver called `name` ("cfr+" or "mmd"); `schedule` only for MMD (default: its default schedule)."""
    if name == "cfr+":
        if schedule is not None:
            raise PvfError("an MMD schedule was given for the cfr+ solver; pass --solver mmd or drop the schedule options")
        return cfr_plus
    if name == "mmd":
        return partial(mmd, schedule=schedule)
    raise PvfError(f"unknown solver {name!r}; choose one of: {', '.join(SOLVER_NAMES)}")
