"""MMD against OpenSpiel's MMDDilatedEnt: same iterates, same regularised equilibrium, NashConv → 0."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import sequence_form_utils
from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt

from pvf.errors import PvfError
from pvf.solvers import get_solver
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.evaluators import ExactEvaluator
from pvf.solvers.interface import Frozen
from pvf.solvers.mmd import Schedule, make_schedule, mmd, payoff_scale
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.tabular import from_tabular, to_openspiel, to_tabular
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate
from tests.conftest import KUHN, LEDUC, cached_tree


def _strategies(result, b=0):
    return result.average_strategy[0][b], result.average_strategy[1][b]


def _from_openspiel(game, pol):
    """pvf behaviour strategies of an open_spiel.python TabularPolicy."""
    table = {
        s: {a: float(pol.action_probability_array[i][a]) for a in np.flatnonzero(pol.legal_actions_mask[i])}
        for s, i in pol.state_lookup.items()
    }
    return from_tabular(game, table)


def _to_openspiel_sequences(tree, game, solver, strategies):
    """OpenSpiel's sequence-form vectors of a pvf profile (to load into MMDDilatedEnt)."""
    pol = os_policy.TabularPolicy(tree.loaded.sequential)
    for name, probs in to_tabular(game, strategies).items():
        row = pol.policy_for_key(name)
        for a, p in probs.items():
            row[a] = p
    return sequence_form_utils.policy_to_sequence(tree.loaded.sequential, pol, solver.infoset_actions_to_seq)


@pytest.mark.parametrize("game_string", [KUHN, LEDUC])
def test_first_iterates_are_openspiels(game_string):
    """Per-iteration α and η as the annealed schedule gives them: the same policy after each step."""
    tree = cached_tree(game_string)
    game = build_sequence_game(tree)
    schedule = make_schedule("sqrt", alpha=0.7, stepsize=3.0)
    reference = MMDDilatedEnt(tree.loaded.sequential, alpha=1.0)
    assert payoff_scale(game) == pytest.approx(np.max(np.abs(reference.payoff_mat)), rel=1e-12)
    for t in range(1, 4):
        reference.alpha, reference.stepsize = schedule.at(t, payoff_scale(game))
        reference.update_sequences()
        ours = mmd(game, t, schedule=schedule)
        theirs = _from_openspiel(game, reference.get_policies())
        for n in (0, 1):
            np.testing.assert_allclose(ours.average_strategy[n][0], theirs[n], atol=1e-12)


def test_fixed_alpha_converges_to_openspiels_qre_kuhn(kuhn):
    game = build_sequence_game(kuhn)
    reference = MMDDilatedEnt(kuhn.loaded.sequential, alpha=0.1)  # default stepsize alpha / max|A|²
    for _ in range(400):
        reference.update_sequences()
    assert reference.get_gap() < 1e-10
    ours = mmd(game, 400, schedule=make_schedule("fixed", alpha=0.1))
    theirs = _from_openspiel(game, reference.get_policies())
    for n in (0, 1):
        np.testing.assert_allclose(ours.average_strategy[n][0], theirs[n], atol=1e-6)


def test_alternating_updates_converge_to_the_same_qre(kuhn):
    """Alternating steps have the simultaneous update's fixed points: OpenSpiel's alpha-QRE."""
    game = build_sequence_game(kuhn)
    reference = MMDDilatedEnt(kuhn.loaded.sequential, alpha=0.1)
    for _ in range(400):
        reference.update_sequences()
    ours = mmd(game, 400, schedule=Schedule(alpha=0.1, alternating=True))
    theirs = _from_openspiel(game, reference.get_policies())
    for n in (0, 1):
        np.testing.assert_allclose(ours.average_strategy[n][0], theirs[n], atol=1e-6)
    first = mmd(game, 1, schedule=Schedule(alpha=0.1, alternating=True)).average_strategy[1][0]
    assert not np.allclose(first, mmd(game, 1, schedule=Schedule(alpha=0.1)).average_strategy[1][0])


def test_fixed_alpha_reaches_openspiels_fixed_point_leduc(leduc):
    """pvf's converged profile is a fixed point of OpenSpiel's update, with zero regularised gap."""
    game = build_sequence_game(leduc)
    ours = _strategies(mmd(game, 300, schedule=make_schedule("fixed", alpha=0.05)))
    reference = MMDDilatedEnt(leduc.loaded.sequential, alpha=0.05)
    reference.sequences = _to_openspiel_sequences(leduc, game, reference, ours)
    assert abs(reference.get_gap()) < 1e-8
    reference.update_sequences()
    theirs = _from_openspiel(game, reference.get_policies())
    for n in (0, 1):
        np.testing.assert_allclose(ours[n], theirs[n], atol=1e-6)


@pytest.mark.slow
def test_fixed_alpha_converges_to_openspiels_qre_leduc(leduc):
    game = build_sequence_game(leduc)
    reference = MMDDilatedEnt(leduc.loaded.sequential, alpha=0.05)
    for _ in range(150):
        reference.update_sequences()
    ours = mmd(game, 150, schedule=make_schedule("fixed", alpha=0.05))
    theirs = _from_openspiel(game, reference.get_policies())
    for n in (0, 1):
        np.testing.assert_allclose(ours.average_strategy[n][0], theirs[n], atol=1e-6)


@pytest.mark.parametrize("game_string, final", [(KUHN, 0.002), (LEDUC, 0.03)])
def test_default_schedule_nash_conv_decreases(game_string, final):
    """Judged by OpenSpiel's nash_conv.

    Measured after 1,000 iterations: Kuhn 0.0010, Leduc 0.0188 (docs/results/mmd.md).
    """
    tree = cached_tree(game_string)
    game = build_sequence_game(tree)
    figures = []
    for iterations in (10, 100, 1000):
        policy = to_openspiel(to_tabular(game, _strategies(mmd(game, iterations))))
        figures.append(pyspiel.nash_conv(tree.loaded.sequential, policy))
    assert figures[0] > figures[1] > figures[2]
    assert figures[2] < final


def _subgame_and_beliefs(tree, rng, batch):
    ps = int(tree.public_state[np.flatnonzero(tree.depth == 4)[0]])
    game = build_sequence_game(tree, root_public_state=ps)
    beliefs = tuple(rng.random((batch, p.num_roots)) for p in game.players)
    return game, beliefs


def test_batch_is_one_problem_at_a_time(leduc):
    game, beliefs = _subgame_and_beliefs(leduc, np.random.default_rng(0), 3)
    together = mmd(game, 50, root_beliefs=beliefs)
    for b in range(3):
        alone = mmd(game, 50, root_beliefs=(beliefs[0][b : b + 1], beliefs[1][b : b + 1]))
        for n in (0, 1):
            np.testing.assert_allclose(together.average_strategy[n][b], alone.average_strategy[n][0], atol=1e-12)
            np.testing.assert_allclose(together.root_values[n][b], alone.root_values[n][0], atol=1e-12)
        np.testing.assert_allclose(together.value[b], alone.value[0], atol=1e-12)


def test_iterates_do_not_depend_on_belief_scale(leduc):
    game, beliefs = _subgame_and_beliefs(leduc, np.random.default_rng(1), 2)
    base = mmd(game, 50, root_beliefs=beliefs)
    scaled = mmd(game, 50, root_beliefs=(beliefs[0] * 1e-3, beliefs[1] * 7.0))
    for n in (0, 1):
        np.testing.assert_allclose(scaled.average_strategy[n], base.average_strategy[n], atol=1e-10)


def test_subgame_values_match_cfr_plus(leduc):
    """Two solvers, one subgame: the root values of their solutions agree (zero-sum identity too)."""
    game, beliefs = _subgame_and_beliefs(leduc, np.random.default_rng(2), 2)
    ours = mmd(game, 2000, root_beliefs=beliefs)
    cfr = cfr_plus(game, 2000, root_beliefs=beliefs)
    np.testing.assert_allclose(ours.value, cfr.value, atol=2e-3)
    total = np.sum(beliefs[0] * ours.root_values[0], axis=1) + np.sum(beliefs[1] * ours.root_values[1], axis=1)
    np.testing.assert_allclose(total, 0.0, atol=1e-12)


def test_frozen_player_gets_best_responded(kuhn):
    """Player 1 frozen everywhere: player 2's MMD iterate approaches a best response."""
    game = build_sequence_game(kuhn)
    rng = np.random.default_rng(3)
    p1 = game.players[0]
    sigma = np.ones(p1.num_sequences)
    w = rng.random(p1.num_sequences - 1) + 0.1
    sigma[1:] = w / np.add.reduceat(w, p1.info_start - 1)[p1.seq_info[1:]]
    frozen = Frozen(mask=np.ones(p1.num_infostates, dtype=bool), strategy=sigma)
    result = mmd(game, 2000, frozen=(frozen, None))
    np.testing.assert_array_equal(result.average_strategy[0][0], sigma)
    strategies = _strategies(result)
    gap = nash_conv(game, strategies)[0]
    cfr = cfr_plus(game, 2000, frozen=(frozen, None))
    assert gap == pytest.approx(nash_conv(game, _strategies(cfr))[0], abs=5e-3)  # player 1's own BR gain only


def test_trunk_with_exact_leaf_values_converges(kuhn):
    full = build_sequence_game(kuhn)
    full_figure = nash_conv(full, _strategies(mmd(full, 300)))[0]
    trunk = build_trunk(kuhn, depth=3)
    oracle = solve_and_evaluate(trunk, ExactEvaluator(trunk), 300, solver=get_solver("mmd"))
    assert full_figure < 0.003  # measured 0.0018
    assert oracle.exploitability.exploitability < 2 * full_figure  # measured 0.0011


def test_registry_and_schedule_errors():
    assert get_solver("cfr+") is cfr_plus
    with pytest.raises(PvfError, match="unknown solver"):
        get_solver("cfr")
    with pytest.raises(PvfError, match="unknown MMD schedule"):
        make_schedule("linear")
    with pytest.raises(PvfError, match="needs an alpha"):
        make_schedule("fixed")
    assert make_schedule(alpha=0.05) == Schedule(alpha=0.05)  # --alpha alone: OpenSpiel's fixed-alpha MMD
    assert make_schedule(stepsize=5.0).alternating
    with pytest.raises(PvfError, match="stepsize must be finite and positive"):
        make_schedule("fixed", alpha=0.1, stepsize=-1.0)
    with pytest.raises(PvfError, match="alpha 0 needs an explicit stepsize"):
        Schedule(alpha=0.0)


def test_cfr_plus_current_strategy_has_the_current_root_values(leduc):
    """SolverResult.current_strategy is the last iterate whose root values CFR+ reports."""
    from pvf.solvers.interface import profile_root_values

    game, beliefs = _subgame_and_beliefs(leduc, np.random.default_rng(4), 2)
    result = cfr_plus(game, 20, root_beliefs=beliefs)
    strategies = [s.T for s in result.current_strategy]
    (v1, v2), _ = profile_root_values(game, strategies, (beliefs[0].T, beliefs[1].T))
    np.testing.assert_allclose(v1, result.current_root_values[0], atol=1e-14)
    np.testing.assert_allclose(v2, result.current_root_values[1], atol=1e-14)
    assert not np.allclose(result.current_strategy[0], result.average_strategy[0])
