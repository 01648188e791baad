"""Member groups: an ensemble trained group by group is the same training, saves and resumes as one ensemble."""

from __future__ import annotations

import pytest
import torch

from pvf.errors import PvfError
from pvf.trainers.ensemble import EnsembleTrainer
from pvf.trainers.member_groups import MemberGroups, auto_group_size, group_bounds

SEEDS = (3, 4, 5)
SMALL = dict(basis_layers=2, basis_hidden_width=16, regression_layers=3, regression_hidden_width=24)
STEPS = 24


def groups(files, group_size, steps=STEPS):
    return MemberGroups.from_files(
        files, "particle", SEEDS, steps, batch_size=16, group_size=group_size, dtype=torch.float64, **SMALL
    )


def test_group_bounds_split_members_evenly():
    assert group_bounds(10, 1) == [(k, k + 1) for k in range(10)]
    assert group_bounds(10, 7) == [(0, 5), (5, 10)]
    assert group_bounds(10, 3) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert group_bounds(10, 10) == group_bounds(10, 40) == [(0, 10)]


def test_auto_group_size_follows_the_members_size():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert auto_group_size(10, 84_000, cpu) == 10  # Leduc's positional net: one group
    assert auto_group_size(10, 940_000, cpu) == 1  # Goofspiel-5's: one member at a time
    assert auto_group_size(10, 940_000, cuda) == 10  # a GPU takes all at once
    assert auto_group_size(10, 84_000, cpu, torch.float64) < 10


@pytest.mark.parametrize("group_size", [1, 2])
def test_groups_train_as_one_ensemble(leduc_files, group_size):
    """Float64: every member's loss trajectory as in one 3-member ensemble; measured at the same steps, and
    blocks end at every multiple of the measurement interval and of the block length."""
    whole = EnsembleTrainer.from_files(
        leduc_files, "particle", SEEDS, STEPS, batch_size=16, dtype=torch.float64, **SMALL
    )
    whole.fit()
    grouped = groups(leduc_files, group_size)
    assert [g.members for g in grouped.groups] == [b - a for a, b in group_bounds(3, group_size)]
    seen, blocks = [], []
    grouped.fit(
        lambda tr: seen.append([g.step_count for g in tr.groups]),
        every_n_steps=10,
        on_block=lambda tr: blocks.append([g.step_count for g in tr.groups]),
        block_steps=8,
    )
    assert seen == [[0] * len(grouped.groups), [10] * len(grouped.groups), [20] * len(grouped.groups)]
    assert blocks == [[step] * len(grouped.groups) for step in (8, 10, 16, 20, 24)]  # ends at both multiples
    torch.testing.assert_close(grouped.loss_window(0, STEPS), whole.losses, rtol=0, atol=1e-10)
    stacked = grouped.nets().tensors()
    for name, tensor in whole.nets.tensors().items():
        torch.testing.assert_close(stacked[name], tensor, rtol=0, atol=1e-10)


def test_state_resumes_under_any_grouping(leduc_files):
    """A state saved in groups of 2 + 1 is a 3-member ensemble state: it resumes in groups of 1 and as one ensemble."""
    straight = groups(leduc_files, 1)
    straight.fit()
    half = groups(leduc_files, 2)
    for g in half.groups:
        for _ in range(STEPS // 2):
            g.train_step()
    state = half.state_dict()
    assert state["step"] == STEPS // 2 and state["nets"][next(iter(state["nets"]))].shape[0] == 3
    resumed = groups(leduc_files, 1)
    resumed.load_state_dict(state)
    resumed.fit()
    plain = EnsembleTrainer.from_files(
        leduc_files, "particle", SEEDS, STEPS, batch_size=16, dtype=torch.float64, **SMALL
    )
    plain.load_state_dict(state)
    plain.fit()
    for other in (resumed.loss_window(0, STEPS), plain.losses):
        torch.testing.assert_close(other, straight.loss_window(0, STEPS), rtol=0, atol=1e-10)
    with pytest.raises(PvfError, match="seeds"):
        MemberGroups.from_files(
            leduc_files[:2], "particle", SEEDS[:2], STEPS, batch_size=16, group_size=1, **SMALL
        ).load_state_dict(state)


def test_a_group_size_must_be_positive(leduc_files):
    with pytest.raises(PvfError, match="group size"):
        groups(leduc_files, 0)
