"""`pvf experiment abcs` (pvf.experiments.abcs): a quick run writes its CSVs and figure; weighted RPS is the paper's."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from pvf.cli import main
from pvf.experiments.abcs import LEARNERS, QUICK_CHECKPOINTS, checkpoints, game_string
from pvf.games.public_tree import build_public_tree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game


def test_a_quick_run_writes_its_csv_table_and_figure(tmp_path, capsys):
    out = tmp_path / "abcs"
    assert main(["experiment", "abcs", "--quick", "--games", "rps,kuhn", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    with open(out / "abcs.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(LEARNERS) * QUICK_CHECKPOINTS
    assert {r["learner"] for r in rows} == set(LEARNERS) and {r["game"] for r in rows} == {"rps", "kuhn"}
    assert all(0 <= float(r["nash_conv"]) < 3 for r in rows)
    nodes = {r["learner"]: r["nodes_touched"] for r in rows if r["iteration"] == "60"}
    assert nodes["ES-MCCFR"] == "" and int(nodes["ABCs"]) > 0  # counted for pvf's learners only
    with open(out / "abcs-final.csv") as f:
        assert len(list(csv.DictReader(f))) == len(summary["final"]) == 2 * len(LEARNERS)
    assert (out / "abcs.png").stat().st_size > 0


def test_weighted_rps_pays_two_for_winning_with_rock():
    with game_string("rps") as string:
        game = build_sequence_game(build_public_tree(string))
        result = cfr_plus(game, 2000)
    for n in (0, 1):  # the equilibrium of rock 2 / paper 1 / scissors 1: (1/4, 1/2, 1/4) for both
        assert result.average_strategy[n][0][-3:] == pytest.approx([0.25, 0.5, 0.25], abs=0.01)


def test_checkpoints_are_log_spaced_and_end_at_the_last_iteration():
    marks = checkpoints(10_000, 16)
    assert marks[0] == 1 and marks[-1] == 10_000 and np.all(np.diff(marks) > 0) and len(marks) == 16


@pytest.mark.parametrize(
    "argv, words",
    [(["--games", "chess"], "--games"), (["--seeds", "0"], "--seeds"), (["--iterations", "0"], "--iterations")],
)
def test_bad_options_are_one_line_errors_before_any_work(tmp_path, capsys, argv, words):
    out = tmp_path / "never"
    assert main(["experiment", "abcs", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and not out.exists()
