"""A task's particle samples solved as one game (`pvf.solvers.disjoint_games`): each sample's rows bit for bit as
solved alone, for every kind of row, subgame and target, and however the task is split into joint solves."""

import numpy as np
import pytest

from pvf.datasets import particle_tasks
from pvf.datasets.particle_tasks import solve_sample, solve_samples
from pvf.datasets.spec import ParticleSpec

SAMPLES = 6


def _assert_same(together: dict, alone: dict) -> None:
    assert together.keys() == alone.keys()
    for key, value in together.items():
        if key == "stats":
            assert value == alone[key]
        else:
            np.testing.assert_array_equal(value, alone[key], err_msg=key)


@pytest.mark.parametrize(
    "game,depth,particles,rows,subgame,target",
    [
        ("goofspiel5", 2, 6, "particles", "induced", "average"),
        ("goofspiel5", 2, 6, "particles", "drawn", "best_response"),
        ("goofspiel5", 3, 8, "children", "induced", "best_response"),
        ("goofspiel13", 10, 16, "children", "induced", "current"),
    ],
)
def test_samples_solved_together_are_each_solved_alone(game, depth, particles, rows, subgame, target):
    spec = ParticleSpec(game, depth, SAMPLES, particles, 30, target=target, subgame=subgame, rows=rows)
    together = solve_samples(spec, range(SAMPLES))
    assert len(together) == SAMPLES
    for sample_id, sample in enumerate(together):
        _assert_same(sample, solve_sample(spec, sample_id))


def test_a_task_split_into_several_joint_solves_gives_the_same_rows(monkeypatch):
    spec = ParticleSpec("goofspiel5", 3, SAMPLES, 8, 30, rows="children", target="best_response")
    whole = solve_samples(spec, range(SAMPLES))
    sizes = [sample["stats"][2] for sample in whole]
    monkeypatch.setattr(particle_tasks, "JOINT_HISTORIES", sizes[0] + sizes[1])  # the first two solved together
    for together, split in zip(whole, solve_samples(spec, range(SAMPLES)), strict=True):
        _assert_same(together, split)
