"""The Python API checks its arguments where they enter: a wrong type is a `PvfTypeError` (a `TypeError` too), an
impossible value a `PvfValueError` (a `ValueError` too), each naming the argument, before any work and any file."""

from __future__ import annotations

import pytest

import pvf
from pvf.errors import PvfError, PvfTypeError, PvfValueError

TYPE_ERRORS = [
    ("solve", lambda: pvf.solve("kuhn_poker", iterations="10"), "iterations"),
    ("solve", lambda: pvf.solve(None), "game"),
    ("solve", lambda: pvf.solve("kuhn_poker", iterations=True), "iterations"),
    ("build_trunk", lambda: pvf.build_trunk(None, 3), "tree"),
    ("build_trunk", lambda: pvf.build_trunk("kuhn_poker", 2.5), "depth"),
    ("solve_trunk", lambda: pvf.solve_trunk("kuhn_poker"), "trunk"),
    ("generate_dataset", lambda: pvf.generate_dataset("kuhn_poker", 3, 2, out=None), "out"),
    ("generate_dataset", lambda: pvf.generate_dataset("kuhn_poker", "3", 2, out="x.h5"), "depth"),
    ("train_value_function", lambda: pvf.train_value_function("d.h5", 3, "vf.ckpt"), "architecture"),
    ("train_value_function", lambda: pvf.train_value_function("d.h5", "particle", None), "checkpoint"),
    ("load_value_function", lambda: pvf.load_value_function(None), "path"),
]
VALUE_ERRORS = [
    ("solve", lambda: pvf.solve("kuhn_poker", iterations=0), "iterations"),
    ("build_trunk", lambda: pvf.build_trunk("kuhn_poker", -1), "depth"),
    ("generate_dataset", lambda: pvf.generate_dataset("kuhn_poker", 3, 0, out="x.h5"), "trunks"),
    ("train_value_function", lambda: pvf.train_value_function("d.h5", "particle", "vf.ckpt", max_steps=0), "max_steps"),
]


@pytest.mark.parametrize("call, name", [(c, n) for _, c, n in TYPE_ERRORS], ids=[f"{f}-{n}" for f, _, n in TYPE_ERRORS])
def test_wrong_types_are_type_errors_naming_the_argument(call, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PvfTypeError, match=name) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, PvfError)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "call, name", [(c, n) for _, c, n in VALUE_ERRORS], ids=[f"{f}-{n}" for f, _, n in VALUE_ERRORS]
)
def test_impossible_values_are_value_errors_naming_the_argument(call, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PvfValueError, match=name) as info:
        call()
    assert isinstance(info.value, ValueError)
    assert list(tmp_path.iterdir()) == []
