"""`pvf generate --particles K --engine native|openspiel`: the same file from either engine."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from pvf.cli import main


def _datasets(path):
    out = {}
    with h5py.File(path) as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
        attrs = dict(f.attrs)
    return out, attrs


@pytest.mark.parametrize(
    "game,depth,particles,rows,trunks,extra",
    [
        ("goofspiel5", "2", "6", "particles", "8", []),
        ("goofspiel5", "3", "8", "children", "8", []),
        ("goofspiel5", "3", "8", "children", "6", ["--p-solve", "0.5"]),  # 4 of 6 samples near one trunk solve
        ("goofspiel(num_cards=8,imp_info=True,points_order=ascending)", "5", "16", "children", "3", []),
        ("goofspiel13", "10", "16", "children", "3", []),
        ("goofspiel13", "10", "16", "children", "3", ["--public-states", "undecided"]),
    ],
)
def test_native_and_openspiel_write_the_same_file(tmp_path, game, depth, particles, rows, trunks, extra):
    """The same samples (particles, rows, features, integers) and values to 1e-12 (in practice: bit for bit)."""
    files = {}
    for engine in ("native", "openspiel"):
        files[engine] = tmp_path / f"{engine}.h5"
        argv = ["generate", "--game", game, "--depth", depth, "--particles", particles, "--rows", rows, *extra]
        argv += ["--trunks", trunks, "--cfr-iterations", "30", "--task-size", "2", "--engine", engine]
        assert main([*argv, "--out", str(files[engine]), "--no-progress"]) == 0
    (native, native_attrs), (walked, walked_attrs) = _datasets(files["native"]), _datasets(files["openspiel"])
    assert native.keys() == walked.keys()
    assert native_attrs.keys() == walked_attrs.keys()
    for key, value in native_attrs.items():
        assert key == "created" or np.all(walked_attrs[key] == value), key  # the spec and sizes; not the clock
    for name, values in native.items():
        if np.issubdtype(values.dtype, np.floating):
            np.testing.assert_allclose(values, walked[name], rtol=0, atol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(values, walked[name], err_msg=name)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--game", "leduc", "--depth", "3", "--particles", "4", "--engine", "native"], "has no native engine"),
        (["--game", "goofspiel5", "--depth", "2", "--engine", "native"], "--engine applies to particle datasets"),
    ],
)
def test_engine_refusals_are_one_line_exit_2(tmp_path, capsys, argv, message):
    out = tmp_path / "bad.h5"
    rc = main(["generate", *argv, "--trunks", "3", "--cfr-iterations", "5", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []
