"""The trunk's network evaluators feed a net exactly what training fed it.

For every PBS of one trunk strategy of a dataset, the leaf reaches are put
together from the file's rows and evaluated with `NetworkEvaluator`; the
values must equal the net's predictions on the training batch of the same
rows (`Architecture.encode_batch`), infostate by infostate, for every architecture, with
raw beliefs and with normalised ones (predictions then times the
opponent's belief mass in the public state).
"""

from dataclasses import replace

import numpy as np
import pytest
import torch

from pvf.datasets.generate import generate
from pvf.datasets.layout import DataLayout
from pvf.datasets.reader import PBSDataset
from pvf.datasets.spec import GenerationSpec
from pvf.games.features import build_feature_tables
from pvf.solvers.trunk_solver import build_trunk
from pvf.trainers.data import PbsCollate, PbsTorchDataset
from pvf.valuefn import ARCHITECTURES, NetworkEvaluator
from pvf.valuefn.registry import make_architecture
from tests.conftest import GOOF4, LEDUC, cached_tree


@pytest.fixture(scope="module", params=[(LEDUC, 7), (GOOF4, 2)], ids=["leduc", "goofspiel4"])
def small_file(request, tmp_path_factory):
    game, depth = request.param
    path = tmp_path_factory.mktemp("data") / "data.h5"
    generate(GenerationSpec(game=game, depth=depth, num_trunks=2, cfr_iterations=5, seed=1), path, progress=False)
    return game, depth, path


def _joint_inputs(tree, features, rows, sample):
    """Each row's counterfactual reach Σ_{h∈s} π_c(h)·b_{−n}(h) and mean opponent features over the enumerated
    public state's histories, from the rows' beliefs (what a particle file stores for its rows)."""
    player, index, belief = rows["player"], rows["index"], rows["belief"]
    reach, opponent = np.zeros(len(player)), np.zeros((len(player), features.private[0].shape[1]))
    for i in np.unique(sample):
        mine = np.flatnonzero(sample == i)
        where = [{int(index[r]): r for r in mine if player[r] == n} for n in (0, 1)]
        pub = int(tree.infostate_public_state[int(player[mine[0]])][int(index[mine[0]])])
        for h in tree.histories_in(pub):
            r = [where[n].get(int(tree.infostate[h, n])) for n in (0, 1)]
            for n in (0, 1):
                if r[n] is not None and r[1 - n] is not None:
                    weight = tree.chance_reach[h] * belief[r[1 - n]]
                    reach[r[n]] += weight
                    opponent[r[n]] += weight * features.private[1 - n][int(tree.infostate[h, 1 - n])]
    opponent[reach > 0] /= reach[reach > 0, None]
    return reach, opponent


@pytest.mark.parametrize("normalize", [False, True], ids=["raw", "normalised"])
@pytest.mark.parametrize("name", list(ARCHITECTURES))
@pytest.mark.parametrize("joint", [False, True], ids=["plain", "reach-and-opponent"])
def test_evaluator_matches_the_training_batch(small_file, name, normalize, joint):
    """joint: particle nets also take each row's counterfactual reach and mean opponent features, given to the
    training batch as a particle file stores them (computed here over the enumerated tree) and computed by the
    trunk's leaves (`TrunkLeaves`)."""
    game, depth, path = small_file
    if joint and name == "positional":
        pytest.skip("positional nets take neither input")
    layout = DataLayout.from_file(path, normalize=normalize)
    layout = replace(layout, reach_feature=joint, opponent_feature=joint)
    torch.manual_seed(0)
    arch = make_architecture(name)
    net = arch.build(layout).eval()
    tree = cached_tree(game)
    trunk = build_trunk(tree, depth)
    features = build_feature_tables(tree)
    evaluator = NetworkEvaluator(trunk, net, arch, layout, features)
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
    ours = np.where(
        player == 0, values[0][0, np.where(player == 0, where, 0)], values[1][0, np.where(player == 1, where, 0)]
    )
    collated = PbsCollate()([PbsTorchDataset(path, rows)[i] for i in range(len(rows))])
    if joint:
        collated["cf_reach"], collated["cf_opponent"] = _joint_inputs(
            tree, features, {"player": player, "index": index, "belief": belief}, sample
        )
    batch = arch.encode_batch(collated, layout)
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


def _scale_in_place(params):
    with torch.no_grad():
        for p in params:
            p.mul_(1.5)


def _fused_adam_step(params):
    """pvf's optimizer: writes the weights without bumping their version counters."""
    optimizer = torch.optim.Adam(params, lr=0.05, fused=True)
    for p in params:
        p.grad = torch.ones_like(p)
    optimizer.step()


def _write_data(params):
    for p in params:
        p.data.mul_(1.5)  # `.data` has its own version counter


@pytest.mark.parametrize(
    "change", [_scale_in_place, _fused_adam_step, _write_data], ids=["in-place", "fused-adam", "data"]
)
@pytest.mark.parametrize("stacked", [False, True], ids=["net", "stacked"])
def test_particle_basis_is_recomputed_when_the_weights_change(small_file, stacked, change):
    """The leaf encoder keeps the Deep-Sets basis of the trunk's fixed features between queries; any change
    of the weights (an optimizer step, fused or not, `load_state_dict`, a write through `.data`) must give
    what a fresh evaluator gives."""
    from pvf.nets.stacked import StackedNets

    game, depth, path = small_file
    tree = cached_tree(game)
    trunk, features, layout = build_trunk(tree, depth), build_feature_tables(tree), DataLayout.from_file(path)
    encoding = make_architecture("particle")
    nets = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        nets.append(encoding.build(layout))
    net = StackedNets(nets) if stacked else nets[0]
    B = 2 if stacked else 1
    evaluator = NetworkEvaluator(trunk, net, encoding, layout, features)
    rng = np.random.default_rng(0)
    reaches = [rng.random((B, size)) for size in evaluator.leaves.sizes]
    first = evaluator(*reaches)
    for a, b in zip(evaluator(*reaches), first):
        np.testing.assert_array_equal(a, b)
    change(list(net.parameters()))
    changed = evaluator(*reaches)
    fresh = NetworkEvaluator(trunk, net, encoding, layout, features)(*reaches)
    for a, b, old in zip(changed, fresh, first):
        np.testing.assert_array_equal(a, b)
        assert not np.allclose(a, old)


@pytest.mark.parametrize("name", ["particle", "attention"])
def test_per_query_inputs_are_each_querys_own(small_file, name):
    """Nets that take per-query inputs (counterfactual reach, mean opponent features) get them written into one
    buffer per problem count, beside the trunk's fixed features: a query after others, or after a query of
    another problem count, must give bit for bit what a fresh evaluator gives."""
    game, depth, path = small_file
    tree = cached_tree(game)
    trunk, features = build_trunk(tree, depth), build_feature_tables(tree)
    layout = replace(DataLayout.from_file(path), reach_feature=True, opponent_feature=True)
    torch.manual_seed(0)
    arch = make_architecture(name)
    net = arch.build(layout).eval()
    evaluator = NetworkEvaluator(trunk, net, arch, layout, features)
    rng = np.random.default_rng(3)
    queries = [[rng.random((b, size)) for size in evaluator.leaves.sizes] for b in (1, 1, 3, 1)]
    for reaches in queries:
        ours = evaluator(*reaches)
        fresh = NetworkEvaluator(trunk, net, arch, layout, features)(*reaches)
        for a, b in zip(ours, fresh):
            np.testing.assert_array_equal(a, b)
    assert not np.allclose(evaluator(*queries[0])[0], evaluator(*queries[1])[0])
