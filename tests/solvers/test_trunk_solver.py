"""Depth-limited trunk solving: full depth is the full-game solver, the oracle converges like it."""

import numpy as np
import pytest

from pvf.errors import PvfError
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.evaluators import ConstantEvaluator, ExactEvaluator
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.trunk_solver import build_trunk, evaluate_trunk, solve_and_evaluate, solve_trunk, trunk_policy
from tests.conftest import KUHN, LEDUC, cached_tree


@pytest.mark.parametrize("game_string", [KUHN, LEDUC])
def test_full_depth_trunk_is_the_full_game_solver(game_string):
    tree = cached_tree(game_string)
    trunk = build_trunk(tree, depth=100)
    assert not trunk.game.has_leaves
    strategies = solve_trunk(trunk, None, 30)
    full = build_sequence_game(tree)
    reference = cfr_plus(full, 30)
    for n in (0, 1):
        np.testing.assert_array_equal(strategies[n], reference.average_strategy[n][0])
    expected = nash_conv(full, (reference.average_strategy[0][0], reference.average_strategy[1][0]))[0]
    assert evaluate_trunk(trunk, strategies).exploitability == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("iterations", [100, pytest.param(300, marks=pytest.mark.slow)])
def test_oracle_trunk_approaches_full_game_cfr(kuhn, iterations):
    """Exact leaf values: the trunk strategy is about as good as full-game CFR+ after as many iterations.

    Not better: with equilibrium leaf values CFR+ is CFR-D (Burch et al. 2014), whose
    leaf utilities jump between iterations, while full-game CFR+ moves them smoothly.
    """
    full = build_sequence_game(kuhn)
    reference = cfr_plus(full, iterations)
    full_figure = nash_conv(full, (reference.average_strategy[0][0], reference.average_strategy[1][0]))[0]
    trunk = build_trunk(kuhn, depth=3)
    oracle = solve_and_evaluate(trunk, ExactEvaluator(trunk), iterations).exploitability.exploitability
    constant = solve_and_evaluate(trunk, ConstantEvaluator(), iterations).exploitability.exploitability
    assert full_figure < 0.003
    assert oracle == pytest.approx(full_figure, abs=0.005)
    assert constant == pytest.approx(5 / 36)  # zero leaf values: player 1 always passes and leaves 5/36


@pytest.mark.slow
def test_oracle_trunk_in_goofspiel_matches_full_game_cfr(goof4):
    full = build_sequence_game(goof4)
    reference = cfr_plus(full, 100)
    full_figure = nash_conv(full, (reference.average_strategy[0][0], reference.average_strategy[1][0]))[0]
    trunk = build_trunk(goof4, depth=2)
    oracle = solve_and_evaluate(trunk, ExactEvaluator(trunk), 100).exploitability.exploitability
    assert oracle <= 2 * full_figure + 0.005


def test_trunk_policy_names_exactly_the_trunk_infostates(leduc):
    trunk = build_trunk(leduc, depth=7)
    policy = trunk_policy(trunk, solve_trunk(trunk, ConstantEvaluator(), 2))
    expected = {
        leduc.infostate_strings[n][i]
        for n in (0, 1)
        for i in range(leduc.num_infostates(n))
        if leduc.infostate_actions[n][i] and leduc.depth[leduc.infostate_history[n][i]] < 7
    }
    assert set(policy) == expected
    assert all(abs(sum(p.values()) - 1.0) < 1e-9 for p in policy.values())


def test_trunk_rooted_at_a_pbs(leduc):
    """A trunk below a public state with beliefs: the oracle solves it to a small exploitability."""
    root = leduc.public_states_at_depth(5)[0]
    rng = np.random.default_rng(0)
    game = build_sequence_game(leduc, root_public_state=root)
    beliefs = tuple(rng.random(p.num_roots) for p in game.players)
    trunk = build_trunk(leduc, depth=7, root_public_state=root, root_beliefs=beliefs)
    constant = solve_and_evaluate(trunk, ConstantEvaluator(), 100).exploitability.exploitability
    oracle = solve_and_evaluate(trunk, ExactEvaluator(trunk), 100).exploitability.exploitability
    assert oracle < 0.05 * constant


def test_depth_limited_trunk_needs_an_evaluator(kuhn):
    with pytest.raises(PvfError, match="leaf evaluator"):
        solve_trunk(build_trunk(kuhn, depth=3), None, 1)


def test_root_beliefs_of_the_wrong_size_are_an_error(kuhn):
    with pytest.raises(PvfError, match="root beliefs"):
        build_trunk(kuhn, depth=3, root_beliefs=(np.ones(2), np.ones(1)))
