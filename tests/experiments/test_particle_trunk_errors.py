"""`pvf.experiments.particle_trunk_errors`: the recorded solve is the sweep's, and the error's scale is fixed by
its ends (the targets against themselves: 0; the targets times 1.1: 0.1)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pvf.cli import main as cli_main
from pvf.datasets.induced_targets import induced_pbs_evaluator
from pvf.errors import PvfError
from pvf.experiments.particle_sweep import run_particle_sweep
from pvf.experiments.particle_trunk_errors import draw_report, group_sums, main, pooled
from pvf.experiments.trunk_sweep import SweepEvaluator
from pvf.games.loading import load_game
from tests.conftest import GOOF5

ITERATIONS = 20


class Scaled:
    """An evaluator's values times a factor."""

    def __init__(self, inner, factor):
        self.inner, self.factor = inner, factor

    def __call__(self, reach1, reach2):
        return tuple(v * self.factor for v in self.inner(reach1, reach2))


def test_pooled_ratios_per_player():
    values, targets = np.array([1.0, 3.0, 0.0, 5.0]), np.array([1.0, 1.0, 2.0, 4.0])
    beliefs, groups, players = np.array([0.5, 0.0, 0.0, 1.0]), np.array([0, 0, 1, 1]), np.array([0, 0, 1, 1])
    sums = group_sums(values, targets, beliefs, groups, players)
    every = np.ones(2, dtype=bool)
    assert pooled(sums, every) == pytest.approx((2 / 2 + 3 / 6) / 2)  # player 1: 2 of 2; player 2: 3 of 6
    assert pooled(sums, every, "zero") == pytest.approx((2 / 2 + 2 / 6) / 2)
    assert pooled(sums, np.array([True, False])) == pytest.approx(1.0)  # only player 1 has targets there


def test_the_targets_have_no_error_and_scaled_ones_a_tenth_and_the_solve_is_the_sweeps():
    loaded = load_game(GOOF5)

    def targets(trunk, features):
        return induced_pbs_evaluator(loaded, trunk, 100, "best_response")

    exact = draw_report(loaded, targets, "best_response", 2, 3, 4, 0, ITERATIONS)
    assert exact["error_all"] == 0.0 and exact["zero_all"] == 0.0 and len(set(exact["query"])) == 2 * ITERATIONS + 2
    off = draw_report(loaded, lambda trunk, f: Scaled(targets(trunk, f), 1.1), "best_response", 2, 3, 4, 0, ITERATIONS)
    assert off["error_all"] == pytest.approx(0.1, rel=1e-9) and 0 < off["zero_all"] < 0.1
    driven = draw_report(
        loaded, targets, "best_response", 2, 3, 4, 0, ITERATIONS, lambda trunk, f: Scaled(targets(trunk, f), 1.1)
    )  # measured at the targets' own queries: the same solve, the scaled values' error
    assert driven["exploitability"] == exact["exploitability"] and driven["error_all"] == pytest.approx(0.1, rel=1e-9)
    sweep = SweepEvaluator(lambda setting: lambda trunk: targets(trunk, None), game_root=True)
    (row,) = [
        r for r in run_particle_sweep(loaded, 2, 3, [4], [0], {"t": sweep}, iterations=ITERATIONS) if r.evaluator == "t"
    ]
    assert exact["exploitability"] == pytest.approx(row.exploitability, rel=1e-12, abs=1e-15)


def test_command_reports_each_draw_and_the_fresh_error(goof5_children_net, capsys):
    checkpoint, data = goof5_children_net
    argv = [str(checkpoint), "--game", "goofspiel5", "--root-move", "2", "--depth", "3", "--draws", "4"]
    assert main([*argv, "--seeds", "0,1", "--iterations", str(ITERATIONS), "--data", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["draws"] == 4 and len(report["exploitability"]) == 2 and report["data_samples"] == 16
    assert report["error_all"] > 0 and report["data_error"] > 0 and 0 <= report["share_both"] <= 1
    assert main([*argv, "--seeds", "0,1", "--iterations", str(ITERATIONS), "--driver", str(checkpoint), "--json"]) == 0
    driven = json.loads(capsys.readouterr().out)  # the net driving its own solve: its own figures
    assert driven["driver"] == str(checkpoint) and driven["exploitability"] == report["exploitability"]
    assert driven["error_all"] == pytest.approx(report["error_all"], rel=1e-6)  # float32 nets, queries in one batch
    twice = [*argv, "--seeds", "0,1", "--iterations", str(ITERATIONS), "--driver", str(checkpoint), "--json"]
    assert main([twice[0], *twice]) == 0  # two checkpoints at one driver's solves: each its own figures
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2 and all(line == driven for line in lines)
    with pytest.raises(PvfError, match="no such file"):
        main(["missing.ckpt", "--game", "goofspiel5", "--root-move", "2", "--depth", "3"])
    with pytest.raises(PvfError, match="comma-separated integers"):
        main([*argv[:-1], "four"])


def test_sweep_targets_of_each_kind_are_named_and_the_best_responses_are_draw_reports(tmp_path, capsys):
    """`--targets` alone is the average profile's row "targets" (the committed figures' column); `--targets
    best_response` is the row "targets best_response", whose NashConv is `draw_report`'s with those targets."""
    loaded = load_game(GOOF5)
    rows = {}
    for kind in ([], ["best_response"]):
        argv = ["experiment", "particle-trunks", "--game", "goofspiel5", "--root-move", "2", "--depth", "3"]
        argv += ["--draws", "4", "--seeds", "1", "--no-oracle", "--iterations", str(ITERATIONS), "--targets", *kind]
        assert cli_main([*argv, "--json", "--out", str(tmp_path / f"sweep{len(kind)}")]) == 0
        for point in json.loads(capsys.readouterr().out)["points"]:
            rows[point["evaluator"]] = point["exploitability_mean"]
    assert set(rows) == {"uniform", "targets", "targets best_response"}
    responses = lambda trunk, f: induced_pbs_evaluator(loaded, trunk, 100, "best_response")  # noqa: E731
    best = draw_report(loaded, responses, "best_response", 2, 3, 4, 1, ITERATIONS)  # seed 1: at seed 0 both agree
    assert rows["targets best_response"] == pytest.approx(best["exploitability"], rel=1e-12, abs=1e-15)
    assert rows["targets"] != pytest.approx(rows["targets best_response"])
