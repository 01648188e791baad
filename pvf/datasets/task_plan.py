"""The fixed grouping of a dataset's trunk (or sample) ids into tasks, and the columns a task's shard holds.

Task boundaries depend only on the number of ids and the task size, so a
task's output is the same whichever worker or backend runs it, and a
resumed run finds the same tasks as the run it resumes. Each kind of task
(`pvf.datasets.pbs_tasks`, `pvf.datasets.particle_tasks`) returns its shard
as a dataclass of `SampleColumns`: one array per dataset of the shard file,
a `trunk` column per sample and the per-row `belief`, `target` and
`target_current` among them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class Task:
    """Trunks [trunk_lo, trunk_hi), the `index`-th block."""

    index: int
    trunk_lo: int
    trunk_hi: int

    @property
    def num_trunks(self) -> int:
        return self.trunk_hi - self.trunk_lo


def plan_tasks(num_trunks: int, task_size: int) -> list[Task]:
    """The blocks of `task_size` trunks (the last one shorter) covering 0..num_trunks-1."""
    return [Task(i, lo, min(lo + task_size, num_trunks)) for i, lo in enumerate(range(0, num_trunks, task_size))]


class SampleColumns:
    """Shared by the shard dataclasses: a `trunk` column per sample, every field an array named as its dataset.

    trunk: [n] the samples' trunk (sample) ids; belief, target, target_current: [m] per row.
    """

    trunk: np.ndarray
    belief: np.ndarray
    target: np.ndarray
    target_current: np.ndarray

    @property
    def num_samples(self) -> int:
        return len(self.trunk)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
