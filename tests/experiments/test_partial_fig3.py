"""pvf/experiments/partial_fig3.py: a stopped `pvf reproduce fig3` run's rows.

They come from its saved state and its finished members.
"""

from __future__ import annotations

import csv
import functools
import subprocess
import sys
from pathlib import Path

import pytest

import pvf.experiments.reproduce as reproduce
import pvf.trainers.ensemble_training as ensemble_training
from pvf.experiments.fig3 import reproduce_fig3
from pvf.experiments.reproduce import ReproduceConfig

ROOT = Path(__file__).resolve().parents[2]


def test_partial_figure_of_a_stopped_run_then_the_finished_one(tmp_path, monkeypatch):
    config = ReproduceConfig(
        out=tmp_path,
        games=("leduc",),
        architectures=("positional",),
        seeds=(0, 1),
        trunks=3,
        cfr_iterations=5,
        max_steps=6,
        eval_every=2,
        batch_size=16,
        iterations=5,
    )
    reproduce_fig3(config)  # positional: finished members (checkpoints and CSVs)
    measure, calls = ensemble_training.ensemble_trunk_exploitability, []

    def dies_at_step_4(*args):
        calls.append(None)
        if len(calls) == 3:  # measurements at steps 0, 2, then 4: the state holds step 2
            raise KeyboardInterrupt
        return measure(*args)

    monkeypatch.setattr(ensemble_training, "ensemble_trunk_exploitability", dies_at_step_4)
    monkeypatch.setattr(
        reproduce, "train_ensemble", functools.partial(ensemble_training.train_ensemble, save_every_s=0)
    )
    particle = ReproduceConfig(**{**config.__dict__, "architectures": ("particle",)})
    with pytest.raises(KeyboardInterrupt):
        reproduce_fig3(particle)

    script = [sys.executable, "-m", "pvf.experiments.partial_fig3", str(tmp_path), "--game", "leduc"]
    out = subprocess.run(script, capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [
        "particle: 2 seeds, all measured up to step 2",
        "positional: 2 seeds, all measured up to step 6",
    ]
    with open(tmp_path / "fig3-leduc-partial.csv", newline="") as f:
        partial = list(csv.DictReader(f))
    assert (tmp_path / "fig3-leduc-partial.png").exists()
    assert sorted((r["architecture"], r["seed"], r["step"]) for r in partial) == sorted(
        [("positional", s, t) for s in "01" for t in "0246"] + [("particle", s, t) for s in "01" for t in "02"]
    )

    monkeypatch.setattr(ensemble_training, "ensemble_trunk_exploitability", measure)
    reproduce_fig3(ReproduceConfig(**{**config.__dict__, "architectures": ("positional", "particle")}))  # resumes
    with open(tmp_path / "fig3-leduc.csv", newline="") as f:
        final = {(r["architecture"], r["seed"], r["step"]): r for r in csv.DictReader(f)}
    for row in partial:  # the partial rows are the finished run's
        assert final[row["architecture"], row["seed"], row["step"]] == row

    empty = subprocess.run(
        [*script[:3], str(tmp_path / "checkpoints"), "--game", "leduc"], capture_output=True, text=True
    )
    assert empty.returncode == 2 and empty.stderr.splitlines() == [
        f"partial_fig3: error: {tmp_path / 'checkpoints'} has no checkpoints/ directory: give the --out of a "
        "pvf reproduce fig3 run"
    ]
