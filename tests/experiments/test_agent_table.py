"""The agent table: one exact row per SPEC, resumable, and its CFR+ column is OpenSpiel's CFR+ at that many
iterations."""

import csv

import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, exploitability

from pvf.datasets.generate import generate
from pvf.datasets.layout import DataLayout
from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.spec import GenerationSpec
from pvf.experiments import agent_table
from pvf.trainers.training import train_value_function


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


def test_nets_of_data_at_a_trunk_solves_queries_are_labelled_so(tmp_path, kuhn_runs):
    """A net trained on a `--p-solve` file carries the share in its checkpoint's layout, and the figure's
    evaluator column names it; a net of plain data (and checkpoints from before the field) read as 0."""
    path = tmp_path / "kuhn-solve.h5"
    spec = GenerationSpec(
        game="kuhn_poker", depth=3, num_trunks=12, cfr_iterations=20, seed=0, sampling=SamplingConfig(p_solve=0.5)
    )
    generate(spec, path, progress=False)
    assert DataLayout.from_file(path).p_solve == 0.5
    run = train_value_function(path, "positional", tmp_path / "net.ckpt", seed=0, max_steps=2, every_n_steps=None)
    assert agent_table.evaluator_kind(str(run.checkpoint)) == "positional net, p_solve 0.5"
    plain = str(kuhn_runs["positional"].checkpoint)
    assert agent_table.evaluator_kind(plain) == "positional net"
    assert agent_table.evaluator_kind(f"{run.checkpoint}+{run.checkpoint}") == "mean of 2 positional nets, p_solve 0.5"
    old = DataLayout.from_file(path).to_dict()
    del old["p_solve"]
    assert DataLayout.from_dict(old).p_solve == 0.0
