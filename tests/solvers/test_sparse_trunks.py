"""Sparse particle trunks: the setting, the belief/value conversion, fraction 1.0 = the plain trunk."""

import numpy as np
import pytest
import torch

from pvf.datasets.layout import DataLayout
from pvf.games.features import build_feature_tables
from pvf.nets import ParticleVF
from pvf.solvers.evaluators import ExactEvaluator
from pvf.solvers.interface import profile_root_values
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.sequence_ops import uniform_strategy
from pvf.solvers.sparse_trunks import (
    leaf_scales,
    select_histories,
    solve_sparse_trunk,
    sparse_setting,
    sparse_trunk,
    uniform_exploitability,
)
from pvf.solvers.tabular import to_tabular
from pvf.solvers.trunk_solver import build_trunk, evaluate_trunk, solve_trunk
from pvf.valuefn import ARCHITECTURES, NetworkEvaluator
from tests.conftest import GOOF5, LEDUC, cached_tree


def network_evaluator(trunk, net, tables, name="particle", slots=(0, 0)):
    """`net` at the trunk's leaves through the architecture `name`'s encoding, raw beliefs."""
    layout = DataLayout(
        trunk.tree.game_string, 0, "average", tables.public_dim, tables.private_dim, tuple(slots), normalize=False
    )
    return NetworkEvaluator(trunk, net, ARCHITECTURES[name](), layout, tables)


@pytest.fixture(scope="module")
def leduc_setting():
    return sparse_setting(cached_tree(LEDUC), root_move=5, depth=7)


def test_leduc_support_is_the_authors(leduc_setting):
    assert leduc_setting.num_root_histories == 330
    assert leduc_setting.num_histories == 290


def test_selection_keeps_the_heaviest(leduc_setting):
    kept = select_histories(leduc_setting, fraction=0.3, seed=0)
    assert len(kept) == 87  # ⌈0.3 · 290⌉
    w = leduc_setting.weights
    assert w[kept].min() >= np.delete(w, kept).max() * (1 - 1e-9)
    two = select_histories(leduc_setting, count=2, seed=0)
    assert leduc_setting.player_node[two].all() and len(two) == 2
    assert set(select_histories(leduc_setting, fraction=1.0, seed=3)) == set(range(290))


def _particle_net(tree):
    tables = build_feature_tables(tree)
    torch.manual_seed(0)
    net = ParticleVF(feature_dim=tables.public_dim + tables.private_dim + 2, public_dim=tables.public_dim, basis_dim=10)
    return net.eval(), tables


def test_fraction_one_equals_the_unsparsified_trunk(leduc):
    """Roots right after the deals: the sparse machinery at fraction 1.0 is the trunk from the initial state."""
    net, tables = _particle_net(leduc)
    setting = sparse_setting(leduc, root_move=2, depth=7, equilibrium_iterations=100)
    assert setting.num_histories == 30
    result = solve_sparse_trunk(
        setting, select_histories(setting, fraction=1.0), lambda t: network_evaluator(t, net, tables), 50
    )
    plain = build_trunk(leduc, 7)
    strategies = solve_trunk(plain, network_evaluator(plain, net, tables), 50)
    sparse_policy = to_tabular(sparse_trunk(setting, result.kept).game, result.strategies)
    plain_policy = to_tabular(plain.game, strategies)
    assert sparse_policy.keys() == plain_policy.keys()
    for key, probs in plain_policy.items():
        assert sparse_policy[key] == pytest.approx(probs, abs=1e-9)
    expected = evaluate_trunk(plain, strategies).exploitability
    assert result.exploitability.exploitability == pytest.approx(expected, abs=1e-8)


class UniformContinuation:
    """Counterfactual values under uniform play below the leaves: linear in the opponent's reach, unique."""

    def __init__(self, trunk):
        leaves = trunk.leaf_histories()
        self.game = build_sequence_game(trunk.tree, root_histories=leaves, root_weights=trunk.history_weights(leaves))
        self.position = [
            np.searchsorted(
                trunk.game.leaf_infostates[n],
                self.game.players[n].root_infostates,
                sorter=np.argsort(trunk.game.leaf_infostates[n]),
            )
            for n in (0, 1)
        ]
        self.order = [np.argsort(trunk.game.leaf_infostates[n]) for n in (0, 1)]
        self.sizes = [len(trunk.game.leaf_infostates[n]) for n in (0, 1)]

    def __call__(self, reach1, reach2):
        where = [self.order[n][self.position[n]] for n in (0, 1)]
        beliefs = (reach1[0, where[0]][:, None], reach2[0, where[1]][:, None])
        strategies = [uniform_strategy(p, 1) for p in self.game.players]
        (v1, v2), _ = profile_root_values(self.game, strategies, beliefs)
        out = [np.zeros((1, s)) for s in self.sizes]
        out[0][0, where[0]], out[1][0, where[1]] = v1[0], v2[0]
        return out[0], out[1]


def test_leaf_scales_convert_between_the_chance_root_and_the_game_root(leduc):
    """With every move-5 history at the root, the chance-node trunk's leaf PBSs are the game's:
    the chance trunk's own values equal σ·v(σ·ρ) of the game-root trunk (module docstring)."""
    setting = sparse_setting(leduc, root_move=5, depth=7, equilibrium_iterations=200, support_threshold=0.0)
    assert setting.num_histories == setting.num_root_histories == 330
    chance = sparse_trunk(setting, np.arange(330))
    plain = build_trunk(leduc, 7)
    s1, s2 = leaf_scales(setting, chance)
    assert s1.min() < 0.5 and s2.min() < 0.5  # the conversion is not trivial here
    rng = np.random.default_rng(0)
    r1, r2 = (rng.random((1, len(chance.game.leaf_infostates[n]))) for n in (0, 1))
    native = UniformContinuation(chance)(r1, r2)
    # The same leaf infostates in the game-root trunk (same ids; map positions by id).
    idx = [
        np.searchsorted(
            plain.game.leaf_infostates[n],
            chance.game.leaf_infostates[n],
            sorter=np.argsort(plain.game.leaf_infostates[n]),
        )
        for n in (0, 1)
    ]
    idx = [np.argsort(plain.game.leaf_infostates[n])[idx[n]] for n in (0, 1)]
    np.testing.assert_array_equal(plain.game.leaf_infostates[0][idx[0]], chance.game.leaf_infostates[0])
    p1, p2 = (np.zeros((1, len(plain.game.leaf_infostates[n]))) for n in (0, 1))
    p1[0, idx[0]], p2[0, idx[1]] = r1[0] * s1, r2[0] * s2
    game_root = UniformContinuation(plain)(p1, p2)
    np.testing.assert_allclose(native[0][0], s1 * game_root[0][0, idx[0]], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(native[1][0], s2 * game_root[1][0, idx[1]], rtol=1e-9, atol=1e-12)


def test_oracle_on_the_full_support_is_nearly_unexploitable(leduc_setting):
    kept = select_histories(leduc_setting, fraction=1.0)
    oracle = solve_sparse_trunk(leduc_setting, kept, ExactEvaluator, 30, game_root_convention=False)
    uniform = uniform_exploitability(leduc_setting)
    assert oracle.exploitability.exploitability < 0.2 * uniform.exploitability


def test_uniform_line_matches_the_authors_leduc_figure(leduc_setting):
    """The authors fixed only the root move's infostates: their uniform line was 0.0793766 (OpenSpiel convention)."""
    assert uniform_exploitability(leduc_setting, root_only=True).openspiel_convention == pytest.approx(
        0.0793766, rel=0.01
    )


@pytest.mark.slow
def test_uniform_line_matches_the_authors_goofspiel_figure():
    setting = sparse_setting(cached_tree(GOOF5), root_move=2, depth=3)
    assert setting.num_root_histories == 400
    figure = uniform_exploitability(setting).openspiel_convention
    assert figure == pytest.approx(0.419816, rel=0.01)
    assert uniform_exploitability(setting, root_only=True).openspiel_convention == pytest.approx(figure)
