"""`python -m pvf.experiments.target_quality`: the sweep of the best-response targets against the exact oracle."""

import csv

import pytest

from pvf.experiments import target_quality
from pvf.experiments.leaf_targets import EVALUATORS, RESPONSE_EVALUATORS
from pvf.experiments.target_quality import COLUMNS, main, run, within
from pvf.module_main import reported_status
from pvf.solvers.guarded_values import DEFAULT_GUARD, RESPONSE_KINDS
from pvf.solvers.trunk_solver import build_trunk
from tests.conftest import KUHN, cached_tree

GOOFSPIEL3 = "goofspiel(imp_info=True,num_cards=3,points_order=descending)"


def test_the_criterion():
    assert within(0.1, 0.12) and not within(0.1, 0.121)
    assert within(0.01, 0.0149) and not within(0.01, 0.0151)  # below 0.02: 0.005 of slack
    assert within(0.05, 0.01)  # the oracle is a reference, not a lower bound


@pytest.mark.parametrize("kind", ["guarded", "mixed", "budget", "grouped"])
def test_rows_are_appended_once_and_a_rerun_continues(tmp_path, capsys, kind):
    out = tmp_path / "quality.csv"
    assert run([GOOFSPIEL3], out, draws=(4,), seeds=(0,), kind=kind) == 0
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert [r["path"] for r in rows] == ["enumerated", "particle"]
    assert all(list(r) == list(COLUMNS) and r["ok"] == "1" for r in rows)
    before = out.read_text()
    assert run([GOOFSPIEL3], out, draws=(4,), seeds=(0,), kind=kind) == 0
    assert out.read_text() == before
    assert main(["--summary", "--out", str(out)]) == 0
    assert "goofspiel" in capsys.readouterr().out


def test_particle_cases_beyond_the_exploitability_lp_are_named_and_not_written(tmp_path, capsys, monkeypatch):
    """There the sweep has bounds, no oracle: such a case gets no row (a rerun tries it again), as Goofspiel-6's
    particle trunks from the initial state."""
    monkeypatch.setattr(target_quality, "EXACT_HISTORIES", 1)
    out = tmp_path / "quality.csv"
    assert run([GOOFSPIEL3], out, draws=(4,), seeds=(0,)) == 0
    assert [r["path"] for r in csv.DictReader(out.open())] == ["enumerated"]
    assert "particle 0 1 4 0 not judged: beyond the exploitability LP (1 histories)" in capsys.readouterr().out


def test_min_depth_keeps_the_trunks_whose_leaves_lie_at_that_move_or_later(tmp_path):
    out = tmp_path / "deep.csv"
    assert main(["--games", KUHN, "--out", str(out), "--min-depth", "3"]) == 0
    depths = {int(r["depth"]) for r in csv.DictReader(out.open())}
    assert depths and min(depths) == 3
    status = reported_status(lambda: main(["--out", str(tmp_path / "x.csv"), "--min-depth", "0"]), "tq")
    assert status == 2 and not (tmp_path / "x.csv").exists()


def test_cases_missed_in_a_sweep_are_measured_again_with_longer_trunk_solves(tmp_path):
    first = tmp_path / "first.csv"
    run([GOOFSPIEL3], first, draws=(4,), seeds=(0,))
    rows = list(csv.DictReader(first.open()))
    assert [r["path"] for r in rows] == ["enumerated", "particle"]
    with first.open("w", newline="") as f:  # as if the particle case had missed
        csv.DictWriter(f, COLUMNS).writeheader()
        csv.DictWriter(f, COLUMNS).writerows([rows[0], {**rows[1], "ok": "0"}])
    again = tmp_path / "again.csv"
    assert main(["--games", GOOFSPIEL3, "--out", str(again), "--iterations", "7", "--cases-missed-in", str(first)]) == 0
    (row,) = list(csv.DictReader(again.open()))
    assert row["path"] == "particle" and row["draws"] == "4"
    assert float(row["oracle"]) != float(rows[1]["oracle"])  # 7 trunk iterations, not 100
    other = tmp_path / "other.csv"  # another sweep that missed the enumerated case: the union of the two is measured
    with other.open("w", newline="") as f:
        csv.DictWriter(f, COLUMNS).writeheader()
        csv.DictWriter(f, COLUMNS).writerows([{**rows[0], "ok": "0"}])
    missed = [str(first), str(other)]
    assert main(["--games", GOOFSPIEL3, "--out", str(again), "--iterations", "7", "--cases-missed-in", *missed]) == 0
    assert [r["path"] for r in csv.DictReader(again.open())] == ["particle", "enumerated"]


def test_a_missing_cases_file_is_refused(tmp_path, capsys):
    out = tmp_path / "a.csv"
    status = reported_status(lambda: main(["--out", str(out), "--cases-missed-in", str(tmp_path / "none.csv")]), "tq")
    assert status == 2 and not out.exists()
    assert "none.csv: no such file" in capsys.readouterr().err


def test_each_kind_is_measured_on_enumerated_trunks_by_the_leaf_targets_evaluator_with_its_options():
    assert set(RESPONSE_EVALUATORS) == set(RESPONSE_KINDS)
    trunk = build_trunk(cached_tree(KUHN), 3)
    for name, kind in RESPONSE_KINDS.items():
        evaluator = EVALUATORS[RESPONSE_EVALUATORS[name]](trunk, 100)
        assert (evaluator.target, evaluator.guard, evaluator.kind) == ("best_response", DEFAULT_GUARD, kind), name
