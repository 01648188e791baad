"""The MMD-search step-size experiment: each blueprint's NashConv against OpenSpiel's for the softmax policy built
on its own states, the searcher's rows against `search_policy` judged by `nash_conv`, and a rerun that adds only
the rows it lacks."""

import csv

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability

from pvf.agents.mmd_search import MMDSearch, search_policy
from pvf.experiments.mmds_step_size import main
from pvf.games.goofspiel_kernel import rules_of
from pvf.solvers.tabular import to_openspiel
from tests.conftest import GOOF4, cached_tree


def softmax_policy(game: pyspiel.Game, tilt: float) -> openspiel_policy.TabularPolicy:
    """Each player bids card a with probability ∝ exp(tilt·a) among its legal bids, at every infostate."""
    policy = openspiel_policy.TabularPolicy(game)
    for row in policy.state_lookup.values():
        legal = policy.states[row].legal_actions()
        weights = np.exp(tilt * np.array(legal, dtype=float))
        policy.action_probability_array[row] = 0.0
        policy.action_probability_array[row, legal] = weights / weights.sum()
    return policy


def test_blueprints_and_searchers_rows(tmp_path):
    out = tmp_path / "mmds.csv"
    argv = ["--game", GOOF4, "--out", str(out), "--etas", "5", "--samples", "3", "--seeds", "1", "--greed", "0,1"]
    assert main(argv) == 0
    rows = list(csv.DictReader(open(out, newline="")))
    assert [(float(r["greed"]), float(r["eta"])) for r in rows] == [(0.0, 5.0), (1.0, 5.0)]
    tree = cached_tree(GOOF4)
    game = tree.loaded.sequential
    uniform = exploitability.nash_conv(game, openspiel_policy.UniformRandomPolicy(game))
    greedy = exploitability.nash_conv(game, softmax_policy(game, 1.0))  # points descend: tilt +β
    assert float(rows[0]["blueprint_nash_conv"]) == pytest.approx(uniform, abs=1e-12)
    assert float(rows[1]["blueprint_nash_conv"]) == pytest.approx(greedy, abs=1e-12)
    assert abs(greedy - uniform) > 0.05
    searched = search_policy(tree, MMDSearch(rules_of(tree.loaded), samples=3, eta=5.0, greed=1.0))
    assert float(rows[1]["nash_conv"]) == pytest.approx(pyspiel.nash_conv(game, to_openspiel(searched)), abs=1e-12)
    assert (tmp_path / "mmds.png").stat().st_size > 0
    argv[argv.index("0,1")] = "0,1,2"
    assert main(argv) == 0
    again = list(csv.DictReader(open(out, newline="")))
    assert again[:2] == rows and [float(r["greed"]) for r in again] == [0.0, 1.0, 2.0]
