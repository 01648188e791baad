"""Counterfactual reach at a particle trunk's leaves: what a reach-taking network is given there."""

import numpy as np
import pytest

from pvf.datasets.particle_children import induced_subgames
from pvf.datasets.sampling import SamplingConfig
from pvf.experiments.particle_sweep import particle_trunk_setting
from pvf.games.engine import particle_engine
from pvf.games.features import build_feature_tables
from pvf.games.loading import load_game
from pvf.solvers.sparse_trunks import select_histories, sparse_trunk
from pvf.valuefn.leaves import TrunkLeaves
from tests.conftest import GOOF5, LEDUC, cached_tree


@pytest.mark.parametrize("game, root_move, depth", [(GOOF5, 2, 3), (LEDUC, 3, 5)])
def test_leaf_reach_is_the_enumerated_reach_of_the_leaf_pbs(game, root_move, depth):
    """Random leaf beliefs: each leaf infostate's reach (`TrunkLeaves.cf_reach`, over the trunk's leaf histories)
    equals Σ_{h∈s} π_c(h)·b_{−n}(h) over the enumerated public tree's histories (beliefs zero on infostates the trunk
    lacks), and the reach of the PBS those beliefs induce (`LeafSubgames.reach`, what the datasets compute); the mean
    opponent features (`TrunkLeaves.cf_opponent`) equal Σ_{h∈s} π_c(h)·b_{−n}(h)·q_{−n}(h) / reach over the same
    histories, q the enumerated tree's private features."""
    loaded = load_game(game)
    setting = particle_trunk_setting(loaded, root_move, depth, draws=16, seed=1, reference=SamplingConfig())
    trunk = sparse_trunk(setting, select_histories(setting, fraction=1.0))
    leaves = TrunkLeaves(trunk, build_feature_tables(trunk.tree))
    leaf = trunk.game.leaf_infostates
    rng = np.random.default_rng(0)
    beliefs = [rng.uniform(0.1, 1.0, size=(2, len(leaf[n]))) for n in (0, 1)]
    flat = np.concatenate([beliefs[0], beliefs[1], np.zeros((2, 1))], axis=1)
    got = leaves.cf_reach(flat)
    assert np.all(got[:, -1] == 0)
    induced = induced_subgames(particle_engine(loaded), trunk.tree, leaf).reach(*beliefs)
    np.testing.assert_allclose(got[:, : leaves.pad], np.concatenate(induced, axis=1), rtol=0, atol=1e-12)

    full = cached_tree(game)
    features = build_feature_tables(full)
    index = [{s: i for i, s in enumerate(full.infostate_strings[n])} for n in (0, 1)]
    column = [{index[n][trunk.tree.infostate_strings[n][j]]: c for c, j in enumerate(leaf[n])} for n in (0, 1)]
    expected = [np.zeros((2, len(leaf[n]))) for n in (0, 1)]
    opponent = [np.zeros((2, len(leaf[n]), features.private[1 - n].shape[1])) for n in (0, 1)]
    publics = {int(full.infostate_public_state[0][j]) for j in column[0]}
    for pub in publics:
        for h in full.histories_in(pub):
            c = [column[n].get(int(full.infostate[h, n])) for n in (0, 1)]
            if c[0] is None or c[1] is None:
                continue
            for n in (0, 1):
                weight = full.chance_reach[h] * beliefs[1 - n][:, c[1 - n]]
                expected[n][:, c[n]] += weight
                opponent[n][:, c[n]] += weight[:, None] * features.private[1 - n][int(full.infostate[h, 1 - n])]
    np.testing.assert_allclose(got[:, : leaves.pad], np.concatenate(expected, axis=1), rtol=0, atol=1e-12)
    for n in (0, 1):
        np.divide(opponent[n], expected[n][:, :, None], out=opponent[n], where=expected[n][:, :, None] > 0)
    means = leaves.cf_opponent(flat)
    assert means.shape == (2, leaves.pad + 1, features.private[0].shape[1]) and np.all(means[:, -1] == 0)
    np.testing.assert_allclose(means[:, : leaves.pad], np.concatenate(opponent, axis=1), rtol=0, atol=1e-12)
    assert np.any((means > 0) & (means < 1))
    assert np.count_nonzero(expected[0]) > 0
