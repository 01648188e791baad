"""Batches from a PBS file: both architectures encode the same infostates; trunk split; spawn safety."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from pvf.datasets.layout import DataLayout
from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError
from pvf.trainers.data import PbsCollate, PbsTorchDataset, split_by_trunk
from pvf.trainers.datamodule import PbsDataModule
from pvf.valuefn.registry import make_architecture


def encode(layout, samples, normalize=True):
    """Both architectures' batches of the same samples: {"positional": ..., "particle": ...}."""
    layout = dataclasses.replace(layout, normalize=normalize)
    rows = PbsCollate()(samples)
    return {name: make_architecture(name).encode_batch(rows, layout) for name in ("positional", "particle")}


def test_layout_of_leduc_depth_7(leduc_file):
    layout = DataLayout.from_file(leduc_file)
    assert (layout.game, layout.depth, layout.target) == ("leduc_poker", 7, "average")
    assert (layout.public_dim, layout.private_dim, layout.num_slots) == (22, 6, 10)
    assert layout.max_slots == (5, 5)  # 5 private cards besides the public one
    assert DataLayout.from_dict(layout.to_dict()) == layout


def test_both_architectures_encode_the_same_infostates(leduc_file):
    layout = DataLayout.from_file(leduc_file)
    rows = np.arange(7)
    dataset = PbsTorchDataset(leduc_file, rows)
    both = encode(layout, [dataset[i] for i in range(len(rows))], normalize=False)
    slots = both["positional"]
    batch = {
        **both["particle"],
        "slot_beliefs": slots["slot_beliefs"],
        "slot_targets": slots["targets"],
        "slot_mask": slots["mask"],
    }
    B, N, S = 7, 10, layout.num_slots
    assert batch["features"].shape == (B, N, 30)
    assert batch["slot_beliefs"].shape == batch["slot_targets"].shape == batch["slot_mask"].shape == (B, S)
    with PBSDataset(leduc_file) as ds:
        for b, row in enumerate(rows):
            lo, hi = ds.offset[row], ds.offset[row + 1]
            player, slot = ds.player[lo:hi], ds.slot[lo:hi]
            n = hi - lo
            np.testing.assert_allclose(batch["beliefs"][b, :n], ds.belief[lo:hi], rtol=1e-6)
            np.testing.assert_allclose(batch["targets"][b, :n], ds.target[lo:hi], rtol=1e-6)
            positions = slot + np.where(player == 1, layout.max_slots[0], 0)
            np.testing.assert_allclose(batch["slot_beliefs"][b, positions], ds.belief[lo:hi], rtol=1e-6)
            np.testing.assert_allclose(batch["slot_targets"][b, positions], ds.target[lo:hi], rtol=1e-6)
            assert batch["slot_mask"][b].sum() == batch["mask"][b].sum() == n
            features = batch["features"][b, :n].numpy()
            np.testing.assert_array_equal(
                features[:, :22], np.broadcast_to(ds.public_features[ds.public_state[row]], (n, 22))
            )
            for j in range(n):
                np.testing.assert_array_equal(features[j, 22:28], ds.private_features[player[j]][ds.index[lo + j]])
            np.testing.assert_array_equal(features[:, 28:], np.eye(2)[player])


def test_normalised_batches_undo_to_the_raw_values(leduc_file):
    layout = DataLayout.from_file(leduc_file)
    dataset = PbsTorchDataset(leduc_file, np.arange(20))
    samples = [dataset[i] for i in range(20)]
    raw = encode(layout, samples, normalize=False)["positional"]
    norm = encode(layout, samples, normalize=True)["positional"]
    K1 = layout.max_slots[0]
    for b in range(20):
        mass = [raw["slot_beliefs"][b, :K1].sum(), raw["slot_beliefs"][b, K1:].sum()]
        for n, sl in enumerate((slice(0, K1), slice(K1, None))):
            if mass[n] > 0:
                assert float(norm["slot_beliefs"][b, sl].sum()) == pytest.approx(1.0, abs=1e-5)
            np.testing.assert_allclose(norm["targets"][b, sl] * mass[1 - n], raw["targets"][b, sl], atol=1e-6)


@pytest.mark.parametrize("normalize", [False, True])
def test_batched_fetch_equals_sample_by_sample(leduc_file, normalize):
    """`__getitems__` (what the DataLoader calls) gives bit-identical batches to B `__getitem__`s."""
    layout = DataLayout.from_file(leduc_file)
    dataset = PbsTorchDataset(leduc_file, np.arange(40, 100))
    layout = dataclasses.replace(layout, normalize=normalize)
    particle = make_architecture("particle")
    collate = PbsCollate()
    indices = [5, 0, 59, 17, 17, 33]
    batched, single = collate(dataset.__getitems__(indices)), collate([dataset[i] for i in indices])
    assert batched.keys() == single.keys()
    for key in batched:
        assert batched[key].dtype == single[key].dtype and np.array_equal(batched[key], single[key]), key
    loader = DataLoader(dataset, batch_size=6, collate_fn=collate)
    features = particle.encode_batch(next(iter(loader)), layout)["features"]
    assert torch.equal(features, particle.encode_batch(collate([dataset[i] for i in range(6)]), layout)["features"])


def test_padding_is_zero_and_masked(kuhn_file):
    layout = DataLayout.from_file(kuhn_file)
    dataset = PbsTorchDataset(kuhn_file, np.arange(4))
    both = encode(layout, [dataset[i] for i in range(4)])
    batch, slots = both["particle"], both["positional"]
    for key in ("beliefs", "targets"):
        assert (batch[key][~batch["mask"]] == 0).all()
    assert (slots["slot_beliefs"][~slots["mask"]] == 0).all() and (slots["targets"][~slots["mask"]] == 0).all()
    assert (batch["features"][~batch["mask"]] == 0).all()


def test_split_keeps_each_trunk_on_one_side():
    trunk = np.repeat(np.arange(20), 54)
    train, val = split_by_trunk(trunk, 0.25, seed=3)
    assert len(train) + len(val) == len(trunk)
    assert not set(trunk[train]) & set(trunk[val])
    assert len(set(trunk[val])) == 5
    again, _ = split_by_trunk(trunk, 0.25, seed=3)
    other, _ = split_by_trunk(trunk, 0.25, seed=4)
    np.testing.assert_array_equal(train, again)
    assert not np.array_equal(train, other)


@pytest.mark.parametrize("fraction", [0.0, 1.0, 0.99])
def test_split_refuses_impossible_fractions(fraction):
    with pytest.raises(PvfError):
        split_by_trunk(np.repeat(np.arange(3), 2), fraction, seed=0)


def test_datamodule_splits_by_trunk(leduc_file):
    dm = PbsDataModule(str(leduc_file), val_fraction=0.25, batch_size=16)
    dm.setup("fit")
    with PBSDataset(leduc_file) as ds:
        trunk = ds.trunk
    assert not set(trunk[dm.train_set.rows]) & set(trunk[dm.val_set.rows])
    assert len(dm.train_set) + len(dm.val_set) == len(trunk)
    batch = next(iter(dm.train_dataloader()))
    assert batch["public"].shape == (16, 22) and len(batch["counts"]) == 16


def test_target_column_choice(kuhn_file, kuhn_current_file):
    with PBSDataset(kuhn_file) as ds:
        average, current = ds.target, ds.target_current
    assert not np.allclose(average, current)
    for target, expected in (("average", average), ("current", current)):
        sample = PbsTorchDataset(kuhn_file, np.arange(1), target)[0]
        np.testing.assert_allclose(sample["target"], expected[: len(sample["target"])], rtol=1e-6)
    with pytest.raises(PvfError, match="holds no 'average' targets"):
        DataLayout.from_file(kuhn_current_file, "average")
    assert DataLayout.from_file(kuhn_current_file, "current").target == "current"


def test_dataset_pickles_without_file_data(kuhn_file):
    dataset = PbsTorchDataset(kuhn_file, np.arange(8))
    dataset[0]  # loads the columns in this process
    assert dataset._block is not None
    clone = pickle.loads(pickle.dumps(dataset))
    assert clone._block is None
    np.testing.assert_array_equal(clone[3]["belief"], dataset[3]["belief"])


@pytest.mark.slow
def test_spawned_workers_read_the_file_themselves(kuhn_file):
    dataset = PbsTorchDataset(kuhn_file, np.arange(8))
    dataset[0]
    collate = PbsCollate()
    loader = DataLoader(dataset, batch_size=4, collate_fn=collate, num_workers=1, multiprocessing_context="spawn")
    batches = list(loader)
    assert [b["public"].shape[0] for b in batches] == [4, 4]
    assert np.array_equal(batches[0]["belief"], collate([dataset[i] for i in range(4)])["belief"])
