"""Uniform-play values from OpenSpiel's own rules, and the leaf evaluator built on them."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from pvf.games.goofspiel_kernel import rules_of
from pvf.games.loading import load_game
from pvf.games.rollouts import history_paths, play_values
from pvf.solvers.evaluators import HistoryValueEvaluator
from pvf.solvers.interface import LeafQueries, profile_root_values
from pvf.solvers.sequence_ops import uniform_strategy
from pvf.solvers.trunk_solver import build_trunk
from tests.conftest import GOOF4

DIFFERENCE = "goofspiel(num_cards=4,imp_info=True,points_order=ascending,returns_type=point_difference)"


def openspiel_uniform_value(state: pyspiel.State) -> float:
    """Player 1's expected return of uniform random play from `state` (turn-based), by OpenSpiel's rules."""
    if state.is_terminal():
        return state.returns()[0]
    actions = state.legal_actions()
    return sum(openspiel_uniform_value(state.child(a)) for a in actions) / len(actions)


def openspiel_greedy_value(state: pyspiel.State, tilt: float) -> float:
    """Player 1's expected return from `state` when each player bids card a with probability ∝ exp(tilt·a) among
    its legal bids, round by round (the definition, by OpenSpiel's rules)."""
    if state.is_terminal():
        return state.returns()[0]
    actions = state.legal_actions()  # bids are the cards: action a bids card a
    weights = np.exp(tilt * np.array(actions, dtype=float))
    values = [openspiel_greedy_value(state.child(a), tilt) for a in actions]
    return float(weights @ values / weights.sum())


def state_after(game: pyspiel.Game, path: list[int]) -> pyspiel.State:
    state = game.new_initial_state()
    for a in path:
        state.apply_action(a)
    return state


def paths_at_round_starts(game: pyspiel.Game, rounds: int) -> list[list[int]]:
    """Every action path of the turn-based game to the start of round `rounds`."""
    paths: list[list[int]] = [[]]
    for _ in range(2 * rounds):
        paths = [p + [a] for p in paths for a in state_after(game, p).legal_actions()]
    return paths


@pytest.mark.parametrize("game_string", [GOOF4, DIFFERENCE])
def test_exact_values_are_openspiels_expected_returns(game_string):
    """Every history at the start of rounds 0, 1, 2 and 3 (the terminals): the exact value is OpenSpiel's uniform
    expectation."""
    loaded = load_game(game_string)
    rules = rules_of(loaded)
    game = loaded.sequential
    for rounds in (0, 1, 2, 3):
        paths = paths_at_round_starts(game, rounds)
        ours = play_values(rules, np.array(paths).reshape(len(paths), -1), None)
        theirs = [openspiel_uniform_value(state_after(game, p)) for p in paths]
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


@pytest.mark.parametrize("game_string", [GOOF4, DIFFERENCE])
def test_greedy_exact_values_are_the_softmax_policys_expected_returns(game_string):
    """With greed β each round's bid is a softmax over the cards in hand (exp(β·c) descending, exp(−β·c)
    ascending): the Plackett–Luce weights of whole bid orders give OpenSpiel's expectation under that policy."""
    loaded = load_game(game_string)
    rules = rules_of(loaded)
    tilt = 1.3 if rules.order == "descending" else -1.3
    game = loaded.sequential
    for rounds in (0, 1, 2):
        paths = paths_at_round_starts(game, rounds)
        ours = play_values(rules, np.array(paths).reshape(len(paths), -1), None, greed=1.3)
        theirs = [openspiel_greedy_value(state_after(game, p), tilt) for p in paths]
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
        uniform = play_values(rules, np.array(paths).reshape(len(paths), -1), None)
        assert rounds == 0 or np.abs(ours - uniform).max() > 0.05  # at the root both hands are alike: value 0


@pytest.mark.parametrize("greed", [0.0, 1.3])
def test_sampled_values_converge_to_the_exact_ones(greed):
    loaded = load_game(GOOF4)
    rules = rules_of(loaded)
    paths = np.array(paths_at_round_starts(loaded.sequential, 1))
    exact = play_values(rules, paths, None, greed=greed)
    draws = 4000
    sampled = play_values(rules, paths, draws, np.random.default_rng(0), greed)
    assert np.abs(sampled - exact).max() < 4.5 / np.sqrt(draws)  # win-loss returns: standard error ≤ 1/√R
    again = play_values(rules, paths, draws, np.random.default_rng(0), greed)
    np.testing.assert_array_equal(sampled, again)


@pytest.mark.parametrize("draws", [None, 7])
@pytest.mark.parametrize("greed", [0.0, 1.3])
def test_values_do_not_depend_on_how_many_bids_are_gathered_at_a_time(monkeypatch, draws, greed):
    """Hands-and-scores are valued a chunk at a time; one at a time gives the same values bit for bit (the same
    draws, the same sums), so the agents' logged games replay whatever the chunk size."""
    from pvf.games import rollouts

    loaded = load_game(GOOF4)
    rules = rules_of(loaded)
    paths = np.array(paths_at_round_starts(loaded.sequential, 1))
    whole = play_values(rules, paths, draws, np.random.default_rng(3), greed)
    monkeypatch.setattr(rollouts, "CHUNK_ELEMENTS", 1)
    one_by_one = play_values(rules, paths, draws, np.random.default_rng(3), greed)
    assert whole.tobytes() == one_by_one.tobytes()


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_trunk_with_uniform_play_leaves_values_uniform_play_as_openspiel(goof4, which):
    """Trunks from each public state after round 1 (player 1 won, lost, drew it) to move 2, all beliefs 1, exact
    uniform-play leaf values: the uniform profile's root value is the sum over the public state's histories of
    OpenSpiel's expected return of uniform play from them; player 2's root values sum to its negation."""
    public_state = int(goof4.public_states_at_depth(1)[which])
    R = [len(goof4.public_state_infostates[n][public_state]) for n in (0, 1)]
    trunk = build_trunk(goof4, 2, root_public_state=public_state, root_beliefs=(np.ones(R[0]), np.ones(R[1])))
    leaves = trunk.leaf_histories()
    values = play_values(rules_of(goof4.loaded), history_paths(goof4, leaves), None)
    evaluator = HistoryValueEvaluator(trunk, values)
    strategies = [uniform_strategy(p, 1) for p in trunk.game.players]
    beliefs = (trunk.root_beliefs[0][:, None], trunk.root_beliefs[1][:, None])
    (_, cfv2), value = profile_root_values(trunk.game, strategies, beliefs, LeafQueries(trunk.game, evaluator))
    roots = np.flatnonzero((goof4.public_state == public_state) & (goof4.player == 0))
    game = goof4.loaded.sequential
    expected = sum(openspiel_uniform_value(state_after(game, p)) for p in history_paths(goof4, roots).tolist())
    assert abs(expected) > 1.0 or which == 0  # the round's winner is ahead (the first public state: a draw)
    np.testing.assert_allclose(value, [expected], atol=1e-12)
    np.testing.assert_allclose(cfv2.sum(), -expected, atol=1e-12)
