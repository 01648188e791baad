"""The trunk's network evaluators feed a net exactly what training fed it.

For every PBS of one trunk strategy of a dataset, the leaf reaches are put
together from the file's rows and evaluated with `NetworkEvaluator`; the
values must equal the net's predictions on the training batch of the same
rows (`Architecture.encode_batch`), infostate by infostate, for every architecture, with
raw beliefs and with normalised ones (predictions then times the
opponent's belief mass in the public state).
"""

import numpy as np
import pytest
import torch

from pvf.datasets.generate import generate
from pvf.datasets.reader import PBSDataset
from pvf.datasets.spec import GenerationSpec
from pvf.games.features import build_feature_tables
from pvf.solvers.trunk_solver import build_trunk
from pvf.trainers.data import PbsCollate, PbsTorchDataset
from pvf.datasets.layout import DataLayout
from pvf.valuefn import ARCHITECTURES, NetworkEvaluator, architecture
from tests.conftest import GOOF4, LEDUC, cached_tree


@pytest.fixture(scope="module", params=[(LEDUC, 7), (GOOF4, 2)], ids=["leduc", "goofspiel4"])
def small_file(request, tmp_path_factory):
    game, depth = request.param
    path = tmp_path_factory.mktemp("data") / "data.h5"
    generate(GenerationSpec(game=game, depth=depth, num_trunks=2, cfr_iterations=5, seed=1), path, progress=False)
    return game, depth, path


@pytest.mark.parametrize("normalize", [False, True], ids=["raw", "normalised"])
@pytest.mark.parametrize("name", list(ARCHITECTURES))
def test_evaluator_matches_the_training_batch(small_file, name, normalize):
    game, depth, path = small_file
    layout = DataLayout.from_file(path, normalize=normalize)
    torch.manual_seed(0)
    arch = architecture(name)
    net = arch.build(layout).eval()
    tree = cached_tree(game)
    trunk = build_trunk(tree, depth)
    evaluator = NetworkEvaluator(trunk, net, arch, layout, build_feature_tables(tree))
    with PBSDataset(path) as ds:
        rows = np.flatnonzero(ds.trunk == 1)
        lo, hi = ds.offset[rows[0]], ds.offset[rows[-1] + 1]
        player, index, belief, slot = ds.player[lo:hi], ds.index[lo:hi], ds.belief[lo:hi], ds.slot[lo:hi]
        sample = np.repeat(np.arange(len(rows)), np.diff(ds.offset[rows[0] : rows[-1] + 2]))
    position = [np.argsort(trunk.game.leaf_infostates[n]) for n in (0, 1)]
    where = np.empty(len(player), dtype=np.int64)
    for n in (0, 1):
        ids = trunk.game.leaf_infostates[n]
        where[player == n] = position[n][np.searchsorted(ids, index[player == n], sorter=position[n])]
    reach = [np.zeros((1, len(trunk.game.leaf_infostates[n]))) for n in (0, 1)]
    for n in (0, 1):
        reach[n][0, where[player == n]] = belief[player == n]
    values = evaluator(reach[0], reach[1])
    ours = np.where(player == 0, values[0][0, np.where(player == 0, where, 0)], values[1][0, np.where(player == 1, where, 0)])
    batch = arch.encode_batch(PbsCollate()([PbsTorchDataset(path, rows)[i] for i in range(len(rows))]), layout)
    with torch.no_grad():
        predicted, _, mask = arch.predict(net, batch)
    if name != "positional":
        theirs = predicted[mask].numpy()  # sample by sample, in file order
    else:  # the slot view, read back in file order
        theirs = predicted.numpy()[sample, slot + np.where(player == 1, layout.max_slots[0], 0)]
    if normalize:
        mass = np.zeros((len(rows), 2))
        np.add.at(mass, (sample, player), belief)
        theirs = theirs * mass[sample, 1 - player]
    # float32 rounding only (beliefs normalised in float64 at the leaves, float32 in training;
    # attention's layer norms amplify it to ~1e-6); a misrouted belief or value is off by ~1e-1.
    atol = 5e-6 if name == "attention" else 1e-7
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=atol)
