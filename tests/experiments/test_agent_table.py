"""The agent table: one exact row per SPEC, resumable, and its CFR+ column is OpenSpiel's CFR+ at that many
iterations."""

import csv

import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, exploitability

from pvf.experiments import agent_table


def test_rows_resume_and_the_cfr_column_is_openspiels(tmp_path, monkeypatch):
    out = tmp_path / "agents-kuhn.csv"
    specs = "resolve:depth=3;resolve:depth=3,gadget=off"
    assert agent_table.main(["--game", "kuhn_poker", "--agents", specs, "--out", str(out)]) == 0
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert [r["agent"] for r in rows] == specs.split(";")
    safe, unsafe = (float(r["nash_conv"]) for r in rows)
    assert safe < 2 * float(rows[0]["first_solve_trunk_exploitability"]) < unsafe
    assert out.with_suffix(".png").exists()
    game = pyspiel.load_game("kuhn_poker")
    solver = cfr.CFRPlusSolver(game)
    for _ in range(int(rows[0]["cfr_iterations_same_time"])):
        solver.evaluate_and_update_policy()
    reference = exploitability.nash_conv(game, solver.average_policy())
    assert float(rows[0]["cfr_nash_conv_same_time"]) == pytest.approx(reference, abs=1e-9)
    monkeypatch.setattr(agent_table, "measure_agent", lambda *a: pytest.fail("a finished SPEC was measured again"))
    assert agent_table.main(["--game", "kuhn_poker", "--agents", specs, "--out", str(out)]) == 0
