"""`pvf experiment leaf-targets`: the trunk with the training targets themselves at the leaves."""

import json

import pytest

from pvf.cli import main
from pvf.experiments.leaf_targets import EVALUATORS
from pvf.games.public_tree import build_public_tree
from pvf.solvers.evaluators import ExactEvaluator
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate


def test_json_lists_every_evaluator_and_the_oracle_matches_a_direct_solve(capsys):
    assert (
        main(
            [
                "experiment",
                "leaf-targets",
                "--game",
                "kuhn_poker",
                "--depth",
                "3",
                "--cfr-iterations",
                "200",
                "--iterations",
                "50",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    figures = out["trunk_exploitability"]
    assert list(figures) == list(EVALUATORS)
    trunk = build_trunk(build_public_tree("kuhn_poker"), 3)
    assert figures["exact"] == pytest.approx(
        solve_and_evaluate(trunk, ExactEvaluator(trunk), 50).exploitability.exploitability
    )
    # Any of the target recipes is far closer to the oracle than the zero evaluator is.
    for name in ("cfr_average", "cfr_current", "cfr_best_response"):
        assert abs(figures[name] - figures["exact"]) < 0.1 * figures["constant"]
    assert all(r["openspiel"] == pytest.approx(r["trunk_exploitability"] / 2) for r in out["rows"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--game", "kuhn_poker", "--depth", "30"], "no leaves"),
        (["--game", "no_such_game"], "unknown game"),
        (["--game", "kuhn_poker", "--depth", "3", "--cfr-iterations", "0"], "--cfr-iterations"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, message):
    assert main(["experiment", "leaf-targets", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and captured.err.count("\n") == 1
