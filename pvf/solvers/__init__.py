"""pvf.solvers: sequence-form solvers (CFR+, MMD) on numpy arrays; choose one by name with `get_solver` (`SOLVERS`)."""

from pvf.solvers.registry import DEFAULT_SOLVER, SOLVER_NAMES, get_solver

__all__ = ["DEFAULT_SOLVER", "SOLVER_NAMES", "get_solver"]
