"""`pvf reproduce --solver mmd / --target current`: own data or checkpoint files, the same pipeline."""

import h5py

from pvf.evaluation.reproduce import ReproduceConfig, reproduce_fig3


def test_mmd_targets_and_current_training_have_their_own_files(tmp_path):
    base = dict(out=tmp_path, games=("leduc",), seeds=(0,), trunks=3, cfr_iterations=5, max_steps=2, eval_every=2,
                batch_size=16, iterations=5)
    for solver, target in (("mmd", "average"), ("cfr+", "current")):
        summary = reproduce_fig3(ReproduceConfig(**base, solver=solver, target=target))["leduc"]
        assert summary["particle"]["step"] == 2
    with h5py.File(tmp_path / "data" / "leduc-d7-t3-k5-mmd-seed0.h5", "r") as f:
        assert f.attrs["solver"] == "mmd"
    with h5py.File(tmp_path / "data" / "leduc-d7-t3-k5-seed0.h5", "r") as f:
        assert f.attrs["solver"] == "cfr+"
    checkpoints = sorted(p.name for p in (tmp_path / "checkpoints").glob("*particle*.ckpt"))
    assert checkpoints == ["leduc-d7-t3-k5-mmd-seed0-particle-steps2-b16.ckpt", "leduc-d7-t3-k5-seed0-particle-steps2-b16-current.ckpt"]
