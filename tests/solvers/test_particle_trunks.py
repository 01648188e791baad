"""Fig. 4 on a particle tree: Goofspiel-5 with all support histories as particles reproduces the sparse sweep."""

import numpy as np
import pytest
import torch

from pvf.games.features import build_feature_tables
from pvf.games.particle_tree import build_particle_tree, find_histories, history_actions
from pvf.nets import ParticleVF
from pvf.solvers.evaluators import CFRTargetEvaluator
from pvf.solvers.sparse_trunks import (
    particle_setting,
    select_histories,
    solve_sparse_trunk,
    sparse_setting,
    uniform_exploitability,
)
from tests.conftest import GOOF5, cached_tree
from tests.solvers.test_sparse_trunks import network_evaluator


@pytest.fixture(scope="module")
def settings():
    tree = cached_tree(GOOF5)
    full = sparse_setting(tree, root_move=2, depth=3, equilibrium_iterations=200)
    particles = [history_actions(tree, h) for h in full.histories]
    ptree = build_particle_tree(GOOF5, particles)
    roots = find_histories(ptree, particles)
    native = particle_setting(ptree, roots, full.weights, full.own_reach, root_move=2, depth=3)
    return full, native


class Float64(torch.nn.Module):
    """A network run in float64: the sum over particles then does not depend on their order."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner.double()

    def forward(self, *args):
        return self.inner(*(a.double() if a.is_floating_point() else a for a in args))


def _net(tables):
    torch.manual_seed(0)
    net = ParticleVF(feature_dim=tables.public_dim + tables.private_dim + 2, public_dim=tables.public_dim, basis_dim=10)
    return Float64(net).eval()


def test_particle_tree_is_much_smaller(settings):
    full, native = settings
    assert native.num_histories == full.num_histories > 50
    assert native.tree.num_histories < full.tree.num_histories / 2
    np.testing.assert_array_equal(
        [history_actions(native.tree, h) for h in native.histories],
        [history_actions(full.tree, h) for h in full.histories],
    )


def test_uniform_line_is_the_same(settings):
    full, native = settings
    for root_only in (False, True):
        assert uniform_exploitability(native, root_only).exploitability == pytest.approx(
            uniform_exploitability(full, root_only).exploitability, abs=1e-9
        )


@pytest.mark.parametrize("point", [dict(fraction=1.0), dict(fraction=0.3), dict(count=1)])
def test_sweep_points_are_the_same_with_cfr_leaf_values_and_a_network(settings, point):
    """Same trunk, same (seeded, float64) network, CFR+-solved leaves: the same figures to 1e-9.

    The LP oracle is left out on purpose: where a trunk iterate gives an infostate zero
    reach, its leaf values are not unique and the LP's choice depends on the order of
    its variables, which differs between the trees (values agree to 1e-17 at full-support reaches).
    """
    full, native = settings
    figures = []
    for setting in (full, native):
        tables = build_feature_tables(setting.tree)
        net = _net(tables)
        kept = select_histories(setting, seed=2, **point)
        oracle = solve_sparse_trunk(setting, kept, lambda t: CFRTargetEvaluator(t, 50), 20, game_root_convention=False)
        network = solve_sparse_trunk(
            setting, kept, lambda t, net=net, tables=tables: network_evaluator(t, net, tables), 20
        )
        figures.append(
            [
                oracle.exploitability.exploitability,
                oracle.root_exploitability.exploitability,
                network.exploitability.exploitability,
                network.root_exploitability.exploitability,
            ]
        )
    np.testing.assert_allclose(figures[1], figures[0], atol=1e-9, rtol=0)


def test_a_positional_network_reads_the_enumerated_slots_on_a_particle_tree(settings):
    """A positional net's inputs are slots of the enumerated tree; on the particle tree they come from
    `enumerated_slots` (infostate strings), and the sweep's figures equal the enumerated tree's to 1e-9."""
    from pvf.datasets.layout import DataLayout
    from pvf.experiments.positional_slots import enumerated_slots
    from pvf.nets import PositionalVF
    from pvf.valuefn.evaluator import NetworkEvaluator
    from pvf.valuefn.registry import ARCHITECTURES

    full, native = settings
    tree = cached_tree(GOOF5)
    states = tree.public_states_at_depth(3)
    max_slots = tuple(max(len(tree.public_state_infostates[n][p]) for p in states) for n in (0, 1))
    torch.manual_seed(0)
    figures = []
    for setting in (full, native):
        tables = build_feature_tables(setting.tree)
        torch.manual_seed(0)
        net = Float64(PositionalVF(public_dim=tables.public_dim, num_slots=sum(max_slots))).eval()
        layout = DataLayout(GOOF5, 3, "average", tables.public_dim, tables.private_dim, max_slots, normalize=False)

        def make(trunk, setting=setting, net=net, tables=tables, layout=layout):
            slots = None if setting is full else enumerated_slots(trunk, tree)
            return NetworkEvaluator(trunk, net, ARCHITECTURES["positional"](), layout, tables, slots)

        kept = select_histories(setting, seed=2, fraction=0.5)
        figures.append(solve_sparse_trunk(setting, kept, make, 20).exploitability.exploitability)
    assert figures[1] == pytest.approx(figures[0], abs=1e-9)
    assert figures[0] > 1e-3  # an untrained net: far from the oracle, so the comparison is not of zeros
