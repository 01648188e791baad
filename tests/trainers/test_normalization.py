"""Belief normalisation rests on an exact scale invariance of the subgame targets."""

import numpy as np

from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game
from pvf.valuefn.encoding import normalize_beliefs
from tests.conftest import LEDUC, cached_tree


def test_cfr_targets_scale_with_the_opponents_mass():
    tree = cached_tree(LEDUC)
    game = build_sequence_game(tree, root_public_state=int(tree.public_states_at_depth(7)[3]))
    rng = np.random.default_rng(0)
    b1, b2 = rng.random((1, game.players[0].num_roots)), rng.random((1, game.players[1].num_roots))
    base = cfr_plus(game, 100, root_beliefs=(b1, b2))
    scaled = cfr_plus(game, 100, root_beliefs=(3.0 * b1, 0.25 * b2))
    np.testing.assert_allclose(scaled.root_values[0], 0.25 * base.root_values[0], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(scaled.root_values[1], 3.0 * base.root_values[1], rtol=1e-9, atol=1e-15)


def test_normalize_beliefs_per_group_and_player():
    belief = np.array([0.2, 0.6, 0.5, 0.0, 0.0, 1.0])
    player = np.array([0, 0, 1, 0, 1, 1])
    group = np.array([0, 0, 0, 1, 1, 1])
    normalised, scale = normalize_beliefs(belief, player, group, 2)
    np.testing.assert_allclose(normalised, [0.25, 0.75, 1.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(scale, [0.5, 0.5, 0.8, 1.0, 0.0, 0.0])
