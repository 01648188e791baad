"""`train_ensemble`: rows like the training callback's, member checkpoints, and a killed run resumed exactly."""

from __future__ import annotations

import math

import pytest
import torch

import pvf.trainers.ensemble_training as ensemble_training
from pvf.datasets.generate import generate
from pvf.datasets.spec import GenerationSpec
from pvf.trainers.ensemble import EnsembleTrainer
from pvf.trainers.ensemble_training import train_ensemble
from pvf.valuefn.network import load_value_function

SEEDS = (0, 1)
SMALL = dict(basis_layers=2, basis_hidden_width=8, regression_layers=2, regression_hidden_width=8)


@pytest.fixture(scope="module")
def kuhn_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("ensemble_runs")
    paths = [root / f"kuhn{s}.h5" for s in SEEDS]
    for s, path in zip(SEEDS, paths):
        generate(
            GenerationSpec(game="kuhn_poker", depth=3, num_trunks=12, cfr_iterations=20, seed=s), path, progress=False
        )
    return paths


def run(files, out, state=None, progress=False, group_size=None, every=4, block_steps=1024):
    out.mkdir(parents=True, exist_ok=True)
    return train_ensemble(
        files,
        "particle",
        [out / f"m{s}.ckpt" for s in SEEDS],
        SEEDS,
        12,
        every,
        iterations=20,
        batch_size=4,
        state=state,
        save_every_s=0,
        group_size=group_size,
        progress=progress,
        block_steps=block_steps,
        **SMALL,
    )


@pytest.mark.parametrize("group_size", [None, 1])  # one group of both members; one member at a time
def test_rows_and_checkpoints(kuhn_files, tmp_path, capsys, group_size):
    runs = run(kuhn_files, tmp_path, progress=True, group_size=group_size)
    bar = capsys.readouterr().err
    mean = sum(r.history[-1]["trunk_exploitability"] for r in runs) / len(runs)
    assert "particle x2" in bar and "12/12" in bar and f"trunk_exploitability={mean:.4f}" in bar
    for r in runs:
        assert [h["step"] for h in r.history] == [0, 4, 8, 12]
        assert math.isnan(r.history[0]["train_loss"]) and all(h["train_loss"] > 0 for h in r.history[1:])
        assert all(0 <= h["trunk_exploitability"] <= 1 for h in r.history)
        assert r.history[0]["trunk_exploitability_openspiel"] == pytest.approx(r.history[0]["trunk_exploitability"] / 2)
        assert load_value_function(r.checkpoint, game="kuhn_poker", depth=3).architecture == "particle"
    assert runs[0].history[-1]["train_loss"] != runs[1].history[-1]["train_loss"]


def test_groups_of_one_member_give_the_ensembles_rows(kuhn_files, tmp_path):
    """The same training in another grouping: rows equal up to float32 rounding."""
    together, apart = run(kuhn_files, tmp_path / "together"), run(kuhn_files, tmp_path / "apart", group_size=1)
    for a, b in zip(together, apart):
        assert [h["step"] for h in a.history] == [h["step"] for h in b.history]
        for ra, rb in zip(a.history, b.history):
            assert ra == pytest.approx(rb, rel=1e-4, abs=1e-6, nan_ok=True)


@pytest.mark.parametrize("group_size", [None, 1])
def test_killed_run_resumes_where_it_stopped(kuhn_files, tmp_path, monkeypatch, group_size):
    straight = run(kuhn_files, tmp_path / "straight", group_size=group_size)
    state = tmp_path / "killed" / "state.pt"
    measure = ensemble_training.ensemble_trunk_exploitability
    steps = []

    def dies_at_step_12(trunk, nets, *args):
        steps.append(len(steps))
        if len(steps) == 4:  # the measurement at step 12: state holds step 8
            raise KeyboardInterrupt
        return measure(trunk, nets, *args)

    monkeypatch.setattr(ensemble_training, "ensemble_trunk_exploitability", dies_at_step_12)
    with pytest.raises(KeyboardInterrupt):
        run(kuhn_files, tmp_path / "killed", state, group_size=group_size)
    assert torch.load(state, weights_only=True)["trainer"]["step"] == 8
    monkeypatch.setattr(ensemble_training, "ensemble_trunk_exploitability", measure)
    resumed = run(kuhn_files, tmp_path / "killed", state, group_size=group_size)
    assert_identical(straight, resumed)


@pytest.mark.parametrize("group_size", [None, 1])
def test_a_run_measured_only_at_its_ends_saves_between_and_resumes(kuhn_files, tmp_path, monkeypatch, group_size):
    """As fig. 4 trains (measured at steps 0 and 12 only): the state is saved after every block of 4 steps,
    so a run killed in step 10 resumes from step 8 and ends as the uninterrupted run."""
    straight = run(kuhn_files, tmp_path / "straight", group_size=group_size, every=12, block_steps=4)
    state = tmp_path / "killed" / "state.pt"
    step = EnsembleTrainer.train_step

    def dies_in_step_10(self):
        if self.step_count == 9:
            raise KeyboardInterrupt
        return step(self)

    monkeypatch.setattr(EnsembleTrainer, "train_step", dies_in_step_10)
    with pytest.raises(KeyboardInterrupt):
        run(kuhn_files, tmp_path / "killed", state, group_size=group_size, every=12, block_steps=4)
    assert torch.load(state, weights_only=True)["trainer"]["step"] == 8
    monkeypatch.setattr(EnsembleTrainer, "train_step", step)
    resumed = run(kuhn_files, tmp_path / "killed", state, group_size=group_size, every=12, block_steps=4)
    assert [h["step"] for h in resumed[0].history] == [0, 12]
    assert_identical(straight, resumed)


def assert_identical(runs, others):
    """Same rows (NaN where no loss yet) and bit-identical member weights."""
    for a, b in zip(runs, others, strict=True):
        assert len(a.history) == len(b.history)
        for ra, rb in zip(a.history, b.history):
            assert ra == pytest.approx(rb, rel=0, abs=0, nan_ok=True)
        weights = [torch.load(p, weights_only=True)["state_dict"] for p in (a.checkpoint, b.checkpoint)]
        assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
