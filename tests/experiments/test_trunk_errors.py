"""`pvf.experiments.trunk_errors`: the recorded solve is the solve `pvf evaluate` reports, and the error's scale
is fixed by its two ends (an evaluator against itself: 0; the zero evaluator: 1)."""

import json

import numpy as np
import pytest

from pvf.errors import PvfError
from pvf.experiments.trunk_errors import main, near_pure, relative_errors, trajectory_errors
from pvf.experiments.trunk_report import evaluate_network
from pvf.solvers.evaluators import CFRTargetEvaluator, ConstantEvaluator, ExactEvaluator
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate
from pvf.valuefn.network import load_value_function


def test_errors_against_itself_are_zero_and_the_zero_evaluator_is_wholly_wrong(kuhn):
    trunk = build_trunk(kuhn, 3)
    oracle, targets = ExactEvaluator(trunk), CFRTargetEvaluator(trunk, 50, "best_response")
    result, errors = trajectory_errors(trunk, targets, targets, iterations=20)
    assert result.exploitability == solve_and_evaluate(trunk, targets, 20).exploitability
    assert len(errors) >= 20 and np.all(errors == 0)
    _, errors = trajectory_errors(trunk, ConstantEvaluator(), oracle, iterations=20)
    assert np.allclose(errors, 1.0)
    _, errors = trajectory_errors(trunk, targets, oracle, iterations=20)
    assert np.all((errors > 0) & (errors < 0.5))  # 50 iterations of CFR+ are near the exact values, not on them


def test_near_pure_counts_the_infostates_one_action_dominates(kuhn):
    trunk = build_trunk(kuhn, 4)
    uniform = tuple(np.ones(p.num_sequences) / 2 for p in trunk.game.players)  # Kuhn: two actions everywhere
    assert near_pure(trunk, uniform) == [0.0, 0.0]
    pure = [u.copy() for u in uniform]
    first = trunk.game.players[0]
    pure[0][first.info_start[0]], pure[0][first.info_start[0] + 1] = 0.97, 0.03
    assert near_pure(trunk, tuple(pure)) == [1 / first.num_infostates, 0.0]


def test_relative_error_pools_both_players():
    values = (np.array([[1.0, 2.0]]), np.array([[0.0]]))
    reference = (np.array([[1.0, 1.0]]), np.array([[-2.0]]))
    assert relative_errors(values, reference) == pytest.approx([3.0 / 4.0])


def test_command_reports_the_checkpoints_trunk_exploitability(kuhn_runs, kuhn_data, capsys):
    path = kuhn_runs["particle"].checkpoint
    assert main([str(path), "--data", str(kuhn_data), "--pbs", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    expected = evaluate_network(load_value_function(path), oracle=False).network.exploitability.exploitability
    assert report["trunk_exploitability"] == pytest.approx(expected, rel=1e-12)
    assert 0 < report["trunk_error"] and 0 < report["validation_error"]
    with pytest.raises(PvfError, match="no such file"):
        main(["missing.ckpt"])
    with pytest.raises(PvfError, match="one non-negative seed per checkpoint"):
        main([str(path), "--data", str(kuhn_data), "--split-seeds", "0,1"])
