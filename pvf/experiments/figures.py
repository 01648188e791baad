"""The figures `pvf reproduce` makes, as settings the command line reads without loading torch.

FIG3_ARCHITECTURES: the value functions fig. 3 compares by default (the paper's two).
FIG4_ARCHITECTURES: the one fig. 4 sweeps by default (its sparse trunks need a net that reads sets).
QUALITY_ARCHITECTURES: the ones `pvf reproduce quality` trains by default (all three).
PROTOCOLS: how `pvf reproduce quality` trains them, the recipe or the paper's protocol
    (`pvf.experiments.quality` says what each lever does); RECIPE_PBS: the recipe's data per game.
"""

from __future__ import annotations

from dataclasses import dataclass

FIG3_ARCHITECTURES = ("positional", "particle")
FIG4_ARCHITECTURES = ("particle",)
QUALITY_ARCHITECTURES = ("positional", "particle", "attention")
RECIPE_PBS = {"leduc": 1_000_000, "goofspiel5": 500_000}  # PBSs of the recipe's shared file, at least
SELECTIONS = ("last", "val_loss")


@dataclass(frozen=True)
class Protocol:
    """How value functions are trained: what on, how much data, the schedule, which checkpoint counts.

    target: a name of `pvf.solvers.guarded_values.TARGETS`; lr_schedule: "constant" or "cosine".
    select: the checkpoint judged, "last" or "val_loss" (the lowest validation loss).
    shared_data: one file for all seeds (the first seed's) instead of one per seed.
    trunks: trunk strategies per file (None: enough for `RECIPE_PBS`).
    p_solve: share of the data's trunks moved towards a trunk solve's leaf queries (`pvf.datasets.solve_queries`).
    """

    name: str
    target: str
    lr_schedule: str
    select: str
    shared_data: bool
    trunks: int | None
    p_solve: float = 0.0


PROTOCOLS = {
    "recipe": Protocol("recipe", "best_response", "cosine", "val_loss", shared_data=True, trunks=None, p_solve=0.5),
    "paper": Protocol("paper", "average", "constant", "last", shared_data=False, trunks=1000),
}
