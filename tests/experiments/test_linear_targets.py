"""App. D / fig. 2: projection learns linear targets exactly, concatenation does not."""

import argparse
import csv
import json

import pytest

from pvf.commands import experiment
from pvf.errors import PvfError
from pvf.experiments.linear_targets import run_linear_targets


def test_projection_reaches_round_off_and_concatenation_plateaus():
    # About 10 s on 2 cores; 1,200 steps leave a wide margin (seeds 0-3 end <= 1e-16).
    curves = run_linear_targets(
        n=10, samples=50, steps=1200, seed=0, variants=["linear", "projection", "concatenation-1"]
    )
    assert list(curves) == ["linear", "projection", "concatenation-1"]
    assert all(len(c) == 1200 for c in curves.values())
    assert curves["linear"][-1] <= 1e-8
    assert curves["projection"][-1] <= 1e-8
    assert curves["concatenation-1"][-1] >= 100 * curves["projection"][-1]


def test_same_seed_same_curves_whichever_variants_run():
    both = run_linear_targets(n=4, samples=8, steps=20, seed=3, variants=["linear", "projection"])
    alone = run_linear_targets(n=4, samples=8, steps=20, seed=3, variants=["projection"])
    assert (both["projection"] == alone["projection"]).all()


def namespace(tmp_path, **overrides) -> argparse.Namespace:
    args = dict(n=3, samples=6, steps=5, lr=1e-2, random_basis=True, out=tmp_path / "out", seed=0, json=True)
    args.update(overrides)
    return argparse.Namespace(**args)


def test_command_writes_csv_png_and_json(tmp_path, capsys):
    assert experiment.run(namespace(tmp_path)) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary["final_mse"]) == {"linear", "projection", "concatenation-1", "concatenation-2"}
    with open(tmp_path / "out" / "linear_targets.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 * 5
    assert rows[0].keys() == {"step", "variant", "loss"}
    last = {r["variant"]: float(r["loss"]) for r in rows if r["step"] == "4"}
    assert last == summary["final_mse"]
    assert (tmp_path / "out" / "linear_targets.png").read_bytes().startswith(b"\x89PNG")


def test_command_prints_table(tmp_path, capsys):
    assert experiment.run(namespace(tmp_path, json=False, steps=2)) == 0
    out = capsys.readouterr().out
    assert "final training MSE" in out and "concatenation-2" in out


@pytest.mark.parametrize("bad", [{"n": 0}, {"steps": 0}, {"samples": 0}, {"lr": 0.0}])
def test_bad_input_is_pvf_error(tmp_path, bad):
    with pytest.raises(PvfError):
        experiment.run(namespace(tmp_path, **bad))


def test_parser_registers_linear():
    parser = argparse.ArgumentParser()
    experiment.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["experiment", "linear", "--n", "4", "--steps", "7", "--json"])
    assert (args.n, args.steps, args.json, args.func) == (4, 7, True, experiment.run)
