"""Rollout values as an input of particle nets: the data column, the leaves' twin of it, the residual net.

`pvf generate --rollout-input β` adds `/infostates/cf_rollout`, each children row's exact value of greed-β
random play from its histories (targets' convention); particle nets take it per unit of reach, and with
`rollout_residual` predict the difference from it, so a net whose output layer is zero is the rollout leaves.
"""

from __future__ import annotations

import csv
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from pvf.cli import main
from pvf.datasets.layout import DataLayout
from pvf.solvers.counterfactual_reach import CounterfactualReach
from pvf.trainers.training import train_value_function
from tests.conftest import GOOF5
from tests.datasets.pbs_helpers import datasets_of

GENERATE = ["generate", "--game", "goofspiel5", "--particles", "6", "--rows", "children", "--trunks", "6"]
GENERATE += ["--task-size", "3", "--cfr-iterations", "30", "--no-progress"]


def test_history_means_are_the_weighted_means_of_each_columns_histories():
    rng = np.random.default_rng(0)
    columns = (np.array([0, 0, 1, 2, 2, 2]), np.array([0, 1, 1, 0, 1, 1]))  # the last two: one pair, two histories
    weights, values = rng.random(6), rng.normal(size=6)
    reach = CounterfactualReach(columns, weights, (3, 2))
    b1, b2 = rng.random((2, 3)), rng.random((2, 2))
    b2[1, 1] = 0.0  # row 1 of the batch: column 1 of player 1 has no opponent belief left
    u1, u2 = reach.history_means(b1, b2, reach.valued(values))
    for b in range(2):
        for n, (u, own, other) in enumerate(((u1, b1, b2), (u2, b2, b1))):
            for j in range(own.shape[1]):
                mine = columns[n] == j
                w = weights[mine] * other[b, columns[1 - n][mine]]
                expected = (w * values[mine] * (1 if n == 0 else -1)).sum() / w.sum() if w.sum() > 0 else 0.0
                assert u[b, j] == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.fixture(scope="module")
def rollout_files(tmp_path_factory) -> dict[str, Path]:
    """Goofspiel-5 children rows at move 3 without and with `--rollout-input 0.25` (both engines)."""
    folder = tmp_path_factory.mktemp("rollout_input")
    runs = {
        "plain": ["--depth", "3"],
        "native": ["--depth", "3", "--rollout-input", "0.25", "--engine", "native"],
        "openspiel": ["--depth", "3", "--rollout-input", "0.25", "--engine", "openspiel"],
    }
    for name, extra in runs.items():
        assert main([*GENERATE, *extra, "--out", str(folder / f"{name}.h5")]) == 0
    return {name: folder / f"{name}.h5" for name in runs}


def test_the_column_is_added_and_nothing_else_changes(rollout_files):
    plain, native, walked = (datasets_of(rollout_files[n]) for n in ("plain", "native", "openspiel"))
    assert set(native) == set(plain) | {"infostates/cf_rollout"}
    for name, values in plain.items():
        np.testing.assert_array_equal(values, native[name], err_msg=name)
    for name, values in native.items():
        np.testing.assert_allclose(values, walked[name], rtol=1e-12, atol=1e-12, err_msg=name)
    with h5py.File(rollout_files["native"]) as f:
        assert f.attrs["rollout_input"] == 0.25
    with h5py.File(rollout_files["plain"]) as f:
        assert "rollout_input" not in f.attrs
    assert DataLayout.from_file(rollout_files["plain"]).rollout_input is None
    assert DataLayout.from_file(rollout_files["native"]).rollout_input == 0.25
    assert DataLayout.from_file(rollout_files["native"], rollout_feature=False).rollout_input is None


def test_inspect_names_the_particle_options(rollout_files, capsys):
    assert main(["inspect", str(rollout_files["native"])]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("particles"))
    assert "K = 6" in line and "rows children" in line and "rollout_input 0.25" in line


def test_rollout_values_are_zero_sum_and_bounded_by_the_reach(rollout_files):
    data = datasets_of(rollout_files["native"])
    offset, belief = data["samples/offset"], data["infostates/belief"]
    value, reach = data["infostates/cf_rollout"], data["infostates/cf_reach"]
    assert np.all(np.abs(value) <= reach + 1e-12)  # win-loss returns: |u| <= 1
    for lo, hi in zip(offset[:-1], offset[1:]):
        assert abs(np.sum(belief[lo:hi] * value[lo:hi])) < 1e-12
    assert np.abs(value).max() > 0.05


def test_a_residual_net_with_a_zero_output_layer_is_the_rollout_leaves(rollout_files, tmp_path):
    """Trained with `rollout_residual`, the net adds reach × mean rollout value to its output: with the output
    layer zeroed, its trunk's NashConv is the exact rollout leaves' of the same greed, draw by draw."""
    run = train_value_function(
        rollout_files["native"], "particle", tmp_path / "net.ckpt", 0, 2, None, rollout_residual=True
    )
    checkpoint = torch.load(run.checkpoint, map_location="cpu", weights_only=True)
    last = max(int(k.split(".")[2]) for k in checkpoint["state_dict"] if k.startswith("net.regression."))
    for kind in ("weight", "bias"):
        key = f"net.regression.{last}.{kind}"
        checkpoint["state_dict"][key] = torch.zeros_like(checkpoint["state_dict"][key])
    zero = tmp_path / "zero.ckpt"
    torch.save(checkpoint, zero)
    argv = ["experiment", "particle-trunks", "--game", "goofspiel5", "--root-move", "2", "--depth", "3"]
    argv += ["--draws", "1,4", "--seeds", "0,1", "--no-oracle", "--rollouts", "exact", "--rollout-greed", "0.25"]
    assert main([*argv, "--network", str(zero), "--out", str(tmp_path / "sweep")]) == 0
    with open(tmp_path / "sweep" / "fig4-goofspiel5-runs.csv") as f:
        rows = list(csv.DictReader(f))
    by = {}
    for row in rows:
        by.setdefault(row["evaluator"], {})[(row["draws"], row["seed"])] = float(row["exploitability"])
    network, rollout = by["network zero.ckpt"], by["rollout exact greed 0.25"]
    assert network.keys() == rollout.keys() and len(network) == 4
    for key, value in rollout.items():
        assert network[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key


def test_refusals(rollout_files, tmp_path, capsys):
    cases = [
        (["--depth", "3", "--rollout-input", "-1"], "a number β >= 0"),
        (["--depth", "1", "--rollout-input", "0.5", "--game", "goofspiel8"], "at most 6: 7 are left at move 1"),
        (["--depth", "3", "--rows", "particles", "--rollout-input", "0.5"], "applies to particle children rows"),
    ]
    for extra, words in cases:
        argv = [*GENERATE, *extra, "--out", str(tmp_path / "x.h5")]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and "\n" not in err, err
        assert not (tmp_path / "x.h5").exists()
    with pytest.raises(Exception, match="rollout_residual needs the counterfactual-reach and rollout inputs"):
        train_value_function(rollout_files["plain"], "particle", tmp_path / "n.ckpt", 0, 1, None, rollout_residual=True)


def test_shards_written_before_the_column_still_resume(tmp_path):
    """A particle shard without `cf_rollout` (written before the column existed) is still one of its task."""
    from pvf.datasets.particle_spec import ParticleSpec
    from pvf.datasets.particle_tasks import run_particle_task
    from pvf.datasets.task_plan import Task
    from pvf.datasets.writer import particle_shard_matches, write_shard

    spec = ParticleSpec(GOOF5, 3, 2, 4, 10, rows="children", task_size=2)
    task = Task(0, 0, 2)
    path = tmp_path / "shard.h5"
    write_shard(path, task, run_particle_task(spec, task))
    with h5py.File(path, "a") as f:
        assert len(f["cf_rollout"]) == 0
        del f["cf_rollout"]
    assert particle_shard_matches(path, task)
    with h5py.File(path, "a") as f:
        f["cf_rollout"] = np.zeros(3)  # neither none nor one per row
    assert not particle_shard_matches(path, task)
