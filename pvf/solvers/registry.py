"""Equilibrium solvers by name, all with `cfr_plus`'s call signature.

`SOLVERS` maps each name to a `SolverSpec`: the solver callable
    solver(game, iterations, root_beliefs=None, frozen=(None, None),
           leaf_evaluator=None, callback=None) -> SolverResult
with its default settings, a one-line help, which profile is its solution,
and its own command-line options with the function that builds the solver
from their values. The `pvf` commands derive `--solver`'s choices, the
option groups and their help from it, so a new solver is its module plus
one entry here. "cfr+": CFR+, whose solution is the *average* profile (the
result's `current_root_values` hold the last iterate). "mmd": magnetic
mirror descent, whose solution is the last iterate (`average_*` and
`current_*` fields both hold it); its schedule is set by `--schedule`,
`--alpha`, `--stepsize`, or by `get_solver`'s `schedule`. "abcs": ABCs
(`pvf.solvers.abcs`), a sampled learner of whole games whose solution is its
average policy; it takes the commands' `--seed` and runs 30,000 iterations
unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from pvf.errors import PvfError
from pvf.solvers.abcs import abcs
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import Solver
from pvf.solvers.mmd import DEFAULT_SCHEDULE, SCHEDULE_NAMES, Schedule, make_schedule, mmd


@dataclass(frozen=True)
class SolverOption:
    """One command-line option of a solver: `--<name>`, its value type and its one-line help."""

    name: str
    help: str
    type: Callable[[str], Any] = str

    @property
    def flag(self) -> str:
        return f"--{self.name}"

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class SolverSpec:
    """A solver as the registry and the commands know it.

    solve: the solver with its default settings (`cfr_plus`'s call signature).
    help: one line for `--help`.
    solution: the profile it returns as its solution, "average strategy" or "last iterate".
    options: its own options beyond `--solver` (MMD: `--schedule`, `--alpha`, `--stepsize`).
    from_options: the solver for those options' values, passed as keyword arguments named by
        `SolverOption.dest` (None where not given); unused by a solver without options.
    settings: the keyword argument of `solve` that `get_solver(name, schedule)` sets (MMD: "schedule"), if any.
    seeded: `solve` samples and takes `seed=`; the commands pass their `--seed` (ABCs).
    default_iterations: what `pvf solve` runs without `--iterations` (None: the command's default).
    """

    solve: Solver
    help: str
    solution: str = "average strategy"
    options: tuple[SolverOption, ...] = ()
    from_options: Callable[..., Solver] | None = None
    settings: str | None = None
    seeded: bool = False
    default_iterations: int | None = None

    def build(self, **values: Any) -> Solver:
        """The solver for its options' values (None: not given); `solve` itself for a solver without options."""
        return self.from_options(**values) if self.from_options is not None else self.solve


def _mmd_from_options(schedule: str | None = None, alpha: float | None = None, stepsize: float | None = None) -> Solver:
    return partial(mmd, schedule=make_schedule(schedule, alpha, stepsize))


DEFAULT_SOLVER = "cfr+"
SOLVERS: dict[str, SolverSpec] = {
    "cfr+": SolverSpec(cfr_plus, "CFR+ (its average strategy)"),
    "mmd": SolverSpec(
        mmd,
        "magnetic mirror descent with the dilated entropy (its last iterate)",
        solution="last iterate",
        options=(
            SolverOption(
                "schedule",
                f"one of {', '.join(SCHEDULE_NAMES)} (default {DEFAULT_SCHEDULE}; fixed when --alpha is given)",
            ),
            SolverOption(
                "alpha", "temperature; fixed: OpenSpiel's alpha, named schedules: the constant a of alpha_t", float
            ),
            SolverOption("stepsize", "stepsize (fixed: default alpha/max|A|^2 as OpenSpiel)", float),
        ),
        from_options=_mmd_from_options,
        settings="schedule",
    ),
    "abcs": SolverSpec(
        abcs,
        "ABCs, Boltzmann Q-learning and MAX-CFR by child stationarity, sampled; whole games only (its average policy)",
        seeded=True,
        default_iterations=30_000,
    ),
}
SOLVER_NAMES = SOLVERS.keys()  # a live view: a solver registered later is named too


def solver_spec(name: str) -> SolverSpec:
    """The registry entry called `name`; a one-line PvfError naming the known solvers otherwise."""
    if name not in SOLVERS:
        raise PvfError(f"unknown solver {name!r}; choose one of: {', '.join(SOLVERS)}")
    return SOLVERS[name]


def get_solver(name: str, schedule: Schedule | None = None) -> Solver:
    """The solver called `name`; `schedule` only for a solver that takes one (MMD; default: its default schedule)."""
    spec = solver_spec(name)
    if spec.settings is None:
        if schedule is not None:
            raise PvfError(
                f"an MMD schedule was given for the {name} solver; pass --solver mmd or drop the schedule options"
            )
        return spec.solve
    return partial(spec.solve, **{spec.settings: schedule})
