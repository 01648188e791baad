"""`pvf reproduce --solver mmd / --target current`: own data or checkpoint files, the same pipeline."""

import h5py
import pytest

from pvf.experiments.fig3 import reproduce_fig3
from pvf.experiments.reproduce import ReproduceConfig


@pytest.mark.parametrize("separate_runs", [True, False])
def test_mmd_targets_and_current_training_have_their_own_files(tmp_path, separate_runs):
    base = dict(
        out=tmp_path,
        games=("leduc",),
        seeds=(0,),
        trunks=3,
        cfr_iterations=5,
        max_steps=2,
        eval_every=2,
        batch_size=16,
        iterations=5,
        separate_runs=separate_runs,
    )
    for solver, target in (("mmd", "average"), ("cfr+", "current")):
        summary = reproduce_fig3(ReproduceConfig(**base, solver=solver, target=target))["leduc"]
        assert summary["particle"]["step"] == 2
    with h5py.File(tmp_path / "data" / "leduc-d7-t3-k5-mmd-seed0.h5", "r") as f:
        assert f.attrs["solver"] == "mmd"
    with h5py.File(tmp_path / "data" / "leduc-d7-t3-k5-seed0.h5", "r") as f:
        assert f.attrs["solver"] == "cfr+"
    checkpoints = sorted(p.name for p in (tmp_path / "checkpoints").glob("*particle*.ckpt"))
    ens = "" if separate_runs else "-ens"  # ensemble members' files
    assert checkpoints == [
        f"leduc-d7-t3-k5-mmd-seed0-particle-steps2-b16{ens}.ckpt",
        f"leduc-d7-t3-k5-seed0-particle-steps2-b16-current{ens}.ckpt",
    ]
