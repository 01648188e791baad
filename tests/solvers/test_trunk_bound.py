"""Certified trunk-exploitability bounds (CFR+ with the trunk frozen, exact best responses) against the exact LP
and OpenSpiel's NashConv."""

import numpy as np
import pyspiel
import pytest

from pvf.errors import PvfError
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.sequence_ops import uniform_strategy
from pvf.solvers.tabular import to_openspiel, to_tabular
from pvf.solvers.trunk_bound import trunk_exploitability_bounds
from pvf.solvers.trunk_exploitability import trunk_exploitability, trunk_infostate_mask
from tests.conftest import KUHN, LEDUC, cached_tree


@pytest.mark.parametrize("game_string", [KUHN, LEDUC])
def test_a_whole_game_trunk_is_pinned_to_openspiels_nash_conv(game_string):
    """With every infostate frozen the guaranteed values are exact best responses: the upper end is NashConv for
    any iteration count, and the lower end (the opponents' CFR+ averages in place of best responses) closes on it."""
    tree = cached_tree(game_string)
    game = build_sequence_game(tree)
    result = cfr_plus(game, 15)
    strategies = (result.average_strategy[0][0], result.average_strategy[1][0])
    expected = pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(to_tabular(game, strategies)))
    short, long = (
        trunk_exploitability_bounds(game, strategies, trunk_infostate_mask(game, 10**6), iterations=i)
        for i in (3, 1000)
    )
    assert short.upper == pytest.approx(expected, abs=1e-9) and long.upper == pytest.approx(expected, abs=1e-9)
    assert short.lower <= long.lower <= expected + 1e-9 and long.gap < 0.01


@pytest.mark.parametrize("depth", [3, 5, 7])
def test_bounds_bracket_the_exact_lp_and_close_on_it(leduc, depth):
    """Leduc, random trunk strategies cut at several depths: lower ≤ LP ≤ upper at every iteration count, and
    the gap shrinks towards the LP value as CFR+ converges."""
    game = build_sequence_game(leduc)
    rng = np.random.default_rng(depth)
    strategies = []
    for p in game.players:
        s = uniform_strategy(p, 1)[:, 0] * rng.random(p.num_sequences)
        totals = np.add.reduceat(s[p.num_roots :], p.info_start - p.num_roots)[p.seq_info[p.num_roots :]]
        s[p.num_roots :] /= totals
        strategies.append(s)
    masks = trunk_infostate_mask(game, depth)
    exact = trunk_exploitability(game, tuple(strategies), masks).exploitability
    gaps = []
    for iterations in (10, 100, 1000):
        bound = trunk_exploitability_bounds(game, tuple(strategies), masks, iterations=iterations)
        assert bound.lower - 1e-9 <= exact <= bound.upper + 1e-9
        gaps.append(bound.gap)
    assert gaps[2] < gaps[0] and gaps[2] < 0.02


def test_a_depth_limited_game_is_refused(leduc):
    game = build_sequence_game(leduc, depth_limit=5)
    uniform = tuple(uniform_strategy(p, 1)[:, 0] for p in game.players)
    with pytest.raises(PvfError, match="solved to the end"):
        trunk_exploitability_bounds(game, uniform, trunk_infostate_mask(game, 3))
