"""Helpers of the dataset tests: small generation specs and exact file comparison."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from pvf.datasets.generate import generate
from pvf.datasets.spec import GenerationSpec

LEDUC = "leduc_poker"
GOOF5 = "goofspiel(num_cards=5,imp_info=True,points_order=descending)"


def small_spec(game: str = LEDUC, depth: int = 7, trunks: int = 3, iterations: int = 20, **kw) -> GenerationSpec:
    return GenerationSpec(game=game, depth=depth, num_trunks=trunks, cfr_iterations=iterations, seed=7, **kw)


def make(path: Path, spec: GenerationSpec, workers: int = 1, backend: str = "local") -> Path:
    generate(spec, path, workers=workers, backend=backend, progress=False)
    return path


def datasets_of(path: Path) -> dict[str, np.ndarray]:
    """Every dataset of an HDF5 file, by path."""
    out: dict[str, np.ndarray] = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def assert_same_samples(a: Path, b: Path) -> None:
    """Bit-identical datasets and equal provenance (creation time aside)."""
    da, db = datasets_of(a), datasets_of(b)
    assert sorted(da) == sorted(db)
    for name in da:
        assert da[name].dtype == db[name].dtype, name
        np.testing.assert_array_equal(da[name], db[name], err_msg=name, strict=True)
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        attrs_a = {k: v for k, v in fa.attrs.items() if k != "created"}
        attrs_b = {k: v for k, v in fb.attrs.items() if k != "created"}
    assert attrs_a == attrs_b


def network_files(argv: list[str], option: str, checkpoint: Path, tmp_path: Path) -> tuple[dict, dict]:
    """`pvf generate argv` with `option checkpoint` (by both engines) and without it: (with, without) datasets,
    after checking that the file records the checkpoint's SHA-256 under the option's attribute and that the
    native and OpenSpiel engines wrote the same file."""
    from pvf.cli import main
    from pvf.valuefn.network_leaves import file_sha256

    files = {name: tmp_path / f"{name}.h5" for name in ("native", "openspiel", "without")}
    for engine in ("native", "openspiel"):
        assert main([*argv, option, str(checkpoint), "--engine", engine, "--out", str(files[engine])]) == 0
    assert main([*argv, "--out", str(files["without"])]) == 0
    native, walked, without = (datasets_of(files[n]) for n in ("native", "openspiel", "without"))
    with h5py.File(files["native"]) as f:
        assert f.attrs[option.removeprefix("--").replace("-", "_")] == file_sha256(checkpoint)
    for name, values in native.items():
        np.testing.assert_allclose(values, walked[name], rtol=0, atol=1e-12, err_msg=name)
    return native, without
