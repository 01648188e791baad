"""`pvf experiment progressive-hiding` (pvf.experiments.progressive_hiding): --quick writes its CSV and figure;
bad options are one-line errors with exit status 2."""

from __future__ import annotations

import csv
import json

import pytest

from pvf.cli import main
from pvf.experiments.progressive_hiding import PROTOCOLS, QUICK_ITERATIONS, QUICK_RUNS


def test_a_quick_run_writes_its_csv_and_figure(tmp_path, capsys):
    out = tmp_path / "hiding"
    assert main(["experiment", "progressive-hiding", "--quick", "--games", "cmp", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    with open(out / "progressive_hiding.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(PROTOCOLS["cmp"].learners) * QUICK_ITERATIONS
    assert {r["runs"] for r in rows} == {str(QUICK_RUNS)}
    assert {r["learner"] for r in summary["final"]} == set(PROTOCOLS["cmp"].learners)
    assert (out / "progressive_hiding.png").stat().st_size > 0


@pytest.mark.parametrize(
    "options", [["--runs", "0"], ["--games", "poker"], ["--seed", "-1"], ["--runs", "many"]], ids=str
)
def test_bad_options_are_one_line_errors(tmp_path, capsys, options):
    try:
        status = main(["experiment", "progressive-hiding", "--out", str(tmp_path / "x"), *options])
    except SystemExit as exit_info:  # argparse's own refusals (a non-integer) exit; pvf's return
        status = exit_info.code
    assert status == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
