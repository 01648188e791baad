"""Reader and `pvf inspect`: a valid file is summarised; anything else is a one-line error, exit 2."""

from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pytest

from pvf.cli import main
from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError


def _inspect(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["inspect", *argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_summary_of_a_valid_file(leduc_file, capsys):
    rc, out, err = _inspect(capsys, str(leduc_file), "--json")
    assert rc == 0, err
    summary = json.loads(out)
    assert summary["attrs"]["schema"] == "pvf.pbs" and summary["attrs"]["game"] == "leduc_poker"
    assert summary["attrs"]["sampling"]["p_uniform"] == 0.05
    assert summary["num_samples"] == 162 and summary["num_trunks_present"] == 3
    assert set(summary["samples_per_public_state"].values()) == {3}
    assert len(summary["samples_per_public_state"]) == 54
    assert summary["max_zero_sum_residual"] < 1e-12
    assert summary["features"]["public"][0] > 0
    with PBSDataset(leduc_file) as ds:
        assert summary["target"]["max"] == ds.target.max()
    rc, out, _ = _inspect(capsys, str(leduc_file))
    assert rc == 0 and "zero-sum residual" in out and "54, samples each: 3" in out


def _copy(src, tmp_path, name="copy.h5"):
    dst = tmp_path / name
    shutil.copyfile(src, dst)
    return dst


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _scramble(path):
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(0)
    lo, hi = len(data) // 4, 3 * len(data) // 4
    data[lo:hi] = rng.integers(0, 256, hi - lo, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))


def _not_hdf5(path):
    path.write_text("trunk,public_state\n0,66\n")


def _drop_schema_attr(path):
    with h5py.File(path, "a") as f:
        del f.attrs["schema"]


def _foreign(path):
    path.unlink()
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(3))


def _future_version(path):
    with h5py.File(path, "a") as f:
        f.attrs["schema_version"] = 3


def _incomplete(path):
    with h5py.File(path, "a") as f:
        f.attrs["complete"] = False


def _missing_dataset(path):
    with h5py.File(path, "a") as f:
        del f["infostates/target_current"]


def _bad_offsets(path):
    with h5py.File(path, "a") as f:
        f["samples/offset"][-1] = 5


@pytest.mark.parametrize(
    "damage, message",
    [
        (_truncate, "HDF5"),
        (_scramble, ""),
        (_not_hdf5, "not a readable HDF5 file"),
        (_drop_schema_attr, "not a pvf PBS file"),
        (_foreign, "not a pvf PBS file"),
        (_future_version, "schema version 3"),
        (_incomplete, "incomplete"),
        (_missing_dataset, "target_current"),
        (_bad_offsets, "offset"),
    ],
)
def test_bad_files_are_one_line_errors(leduc_file, tmp_path, capsys, damage, message):
    path = _copy(leduc_file, tmp_path)
    damage(path)
    rc, out, err = _inspect(capsys, str(path))
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    with pytest.raises(PvfError):
        with PBSDataset(path) as ds:
            ds.summary()


def test_missing_file(tmp_path, capsys):
    rc, _, err = _inspect(capsys, str(tmp_path / "nope.h5"))
    assert rc == 2 and "no such file" in err
