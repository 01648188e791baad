"""Batched CFR+ against OpenSpiel: NashConv, values, CFRPlusSolver, subgames."""

import numpy as np
import pyspiel
import pytest

from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import Frozen, LeafQueries, profile_root_values
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.sequence_ops import realization_plan, uniform_strategy
from pvf.solvers.tabular import from_tabular, to_openspiel, to_tabular
from pvf.solvers.trunk_exploitability import transfer_strategy
from tests.conftest import GOOF4, KUHN, LEDUC, cached_tree

LEDUC_VALUE = -0.085606424078


def _random_strategy(game, rng):
    out = []
    for p in game.players:
        s = uniform_strategy(p, 1)[:, 0]
        R = p.num_roots
        w = rng.random(p.num_sequences - R) ** 3
        sums = np.add.reduceat(w, p.info_start - R)
        s[R:] = w / sums[p.seq_info[R:]]
        out.append(s)
    return tuple(out)


def _openspiel_nash_conv(tree, game, strategies):
    return pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(to_tabular(game, strategies)))


@pytest.mark.parametrize("game_string", [KUHN, LEDUC, GOOF4])
def test_nash_conv_matches_openspiel(game_string):
    tree = cached_tree(game_string)
    game = build_sequence_game(tree)
    rng = np.random.default_rng(0)
    result = cfr_plus(game, 30)
    profiles = {
        "uniform": tuple(uniform_strategy(p, 1)[:, 0] for p in game.players),
        "random": _random_strategy(game, rng),
        "cfr+": (result.average_strategy[0][0], result.average_strategy[1][0]),
    }
    for name, strategies in profiles.items():
        ours = nash_conv(game, strategies)[0]
        assert ours == pytest.approx(_openspiel_nash_conv(tree, game, strategies), abs=1e-9), name


@pytest.mark.parametrize("game_string, expected", [(KUHN, 11 / 12), (LEDUC, 4.747222)])
def test_known_uniform_nash_conv(game_string, expected):
    game = build_sequence_game(cached_tree(game_string))
    uniform = tuple(uniform_strategy(p, 1)[:, 0] for p in game.players)
    assert nash_conv(game, uniform)[0] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("game_string, iterations", [(KUHN, 200), (LEDUC, 40), (GOOF4, 60)])
def test_no_worse_than_openspiel_cfr_plus(game_string, iterations):
    tree = cached_tree(game_string)
    game = build_sequence_game(tree)
    result = cfr_plus(game, iterations)
    ours = _openspiel_nash_conv(tree, game, (result.average_strategy[0][0], result.average_strategy[1][0]))
    solver = pyspiel.CFRPlusSolver(tree.loaded.sequential)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    theirs = pyspiel.nash_conv(tree.loaded.sequential, solver.tabular_average_policy())
    assert ours <= theirs + 1e-12


def test_known_game_values():
    kuhn = build_sequence_game(cached_tree(KUHN))
    assert cfr_plus(kuhn, 1000).value[0] == pytest.approx(-1 / 18, abs=1e-3)
    leduc = build_sequence_game(cached_tree(LEDUC))
    result = cfr_plus(leduc, 1000)
    assert result.value[0] == pytest.approx(LEDUC_VALUE, abs=1e-3)
    nc = nash_conv(leduc, (result.average_strategy[0][0], result.average_strategy[1][0]))[0]
    assert nc / 2 < 0.0003  # docs/architecture.md, reference figures: NashConv/2 of 0.00025 after 1,000 iterations


def test_policy_round_trip(kuhn):
    game = build_sequence_game(kuhn)
    result = cfr_plus(game, 50)
    strategies = (result.average_strategy[0][0], result.average_strategy[1][0])
    back = from_tabular(game, to_tabular(game, strategies))
    for a, b in zip(strategies, back):
        assert np.allclose(a, b)


def test_batch_equals_one_at_a_time(leduc):
    ps = leduc.public_states_at_depth(7)[5]
    game = build_sequence_game(leduc, root_public_state=ps)
    rng = np.random.default_rng(1)
    b1 = rng.random((4, game.players[0].num_roots))
    b2 = rng.random((4, game.players[1].num_roots))
    batch = cfr_plus(game, 50, root_beliefs=(b1, b2))
    for i in range(4):
        one = cfr_plus(game, 50, root_beliefs=(b1[i : i + 1], b2[i : i + 1]))
        assert np.allclose(batch.root_values[0][i], one.root_values[0][0], atol=1e-12)
        assert np.allclose(batch.root_values[1][i], one.root_values[1][0], atol=1e-12)
    zero_sum = np.sum(b1 * batch.root_values[0], 1) + np.sum(b2 * batch.root_values[1], 1)
    assert np.allclose(zero_sum, 0.0, atol=1e-12)


def test_subgame_value_matches_equilibrium_contribution(leduc):
    """A subgame solved from a near-equilibrium's beliefs has that equilibrium's value there."""
    full = build_sequence_game(leduc)
    eq = cfr_plus(full, 2000)
    eq_strat = (eq.average_strategy[0][0], eq.average_strategy[1][0])
    eq_nc = nash_conv(full, eq_strat)[0]
    x = [realization_plan(p, s[:, None], np.ones((1, 1)))[:, 0] for p, s in zip(full.players, eq_strat)]
    for ps in leduc.public_states_at_depth(5)[:6]:
        sub = build_sequence_game(leduc, root_public_state=ps)
        # root beliefs: each player's reach of the public state's infostates under the equilibrium
        beliefs = []
        for n in (0, 1):
            reach = np.zeros(sub.players[n].num_roots)
            hist = leduc.histories_in(ps)
            seq = full.history_seq[np.searchsorted(full.histories, hist), n]
            slot = {int(i): k for k, i in enumerate(sub.players[n].root_infostates)}
            for h, s in zip(hist, seq):
                reach[slot[int(leduc.infostate[h, n])]] = x[n][s]
            beliefs.append(reach[None, :])
        sub_strat = tuple(transfer_strategy(full, sub, n, eq_strat[n]) for n in (0, 1))
        _, contribution = profile_root_values(sub, [s[:, None] for s in sub_strat], (beliefs[0].T, beliefs[1].T))
        solved = cfr_plus(sub, 1000, root_beliefs=tuple(beliefs))
        sub_nc = nash_conv(sub, (solved.average_strategy[0][0], solved.average_strategy[1][0]), tuple(beliefs))[0]
        # both profiles are eps-equilibria of the subgame: values differ by at most the sum of their NashConvs
        assert abs(solved.value[0] - contribution[0]) <= eq_nc + sub_nc + 1e-9


def test_frozen_infostates_keep_their_strategy(kuhn):
    game = build_sequence_game(kuhn)
    p1 = game.players[0]
    mask = np.zeros(p1.num_infostates, dtype=bool)
    mask[:2] = True
    fixed = uniform_strategy(p1, 1)[:, 0]
    rows = np.flatnonzero(mask[p1.seq_info[p1.num_roots :]]) + p1.num_roots
    fixed[rows] = np.where(p1.seq_action[rows] == 0, 0.8, 0.2)
    result = cfr_plus(game, 100, frozen=(Frozen(mask, fixed), None))
    assert np.allclose(result.average_strategy[0][0][rows], fixed[rows])


def test_leaf_evaluator_hook(kuhn):
    """A depth-limited Kuhn trunk whose evaluator returns exact leaf values of a fixed profile
    reproduces that profile's root values."""
    full = build_sequence_game(kuhn)
    trunk = build_sequence_game(kuhn, depth_limit=3)
    uni = tuple(uniform_strategy(p, 1) for p in full.players)
    calls = []

    def exact_uniform(reach1, reach2):
        calls.append((reach1.shape, reach2.shape))
        v1, v2 = [], []
        for i, ps in enumerate(trunk.leaf_public_states):
            sl = [slice(trunk.leaf_offsets[n][i], trunk.leaf_offsets[n][i + 1]) for n in (0, 1)]
            sub = build_sequence_game(kuhn, root_public_state=ps)
            strat = [transfer_strategy(full, sub, n, uni[n][:, 0])[:, None] for n in (0, 1)]
            (c1, c2), _ = profile_root_values(sub, strat, (reach1[:, sl[0]].T, reach2[:, sl[1]].T))
            v1.append(c1)
            v2.append(c2)
        return np.concatenate(v1, 1), np.concatenate(v2, 1)

    trunk_uni = [transfer_strategy(full, trunk, n, uni[n][:, 0])[:, None] for n in (0, 1)]
    (c1, c2), value = profile_root_values(
        trunk, trunk_uni, (np.ones((1, 1)), np.ones((1, 1))), LeafQueries(trunk, exact_uniform)
    )
    (f1, f2), full_value = profile_root_values(full, list(uni), (np.ones((1, 1)), np.ones((1, 1))))
    assert value[0] == pytest.approx(full_value[0], abs=1e-12)
    assert calls and calls[0] == ((1, trunk.leaf_offsets[0][-1]), (1, trunk.leaf_offsets[1][-1]))
