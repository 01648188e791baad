"""A particle file read in blocks of samples (for files larger than memory) serves the rows the whole file serves;
an epoch visits each block once; validation is whole blocks' trunks; non-finite features are found where read."""

from __future__ import annotations

import pickle

import h5py
import numpy as np
import pytest
import torch

import pvf.trainers.data as data
from pvf.datasets.generate import generate
from pvf.datasets.particle_spec import ParticleSpec
from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError
from pvf.trainers.data import BlockShuffle, PbsTorchDataset, num_samples, split_by_block
from pvf.trainers.datamodule import PbsDataModule
from tests.conftest import GOOF5

SPEC = ParticleSpec(
    GOOF5, depth=2, num_trunks=13, particles=6, cfr_iterations=20, task_size=5, rows="children", target="best_response"
)


@pytest.fixture(scope="module")
def particle_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("blocks") / "g5.h5"
    generate(SPEC, path, progress=False)
    return path


def assert_rows_equal(got, expected):
    assert got.keys() == expected.keys()
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


@pytest.mark.parametrize("block_samples", [1, 4, 13, 20])
def test_blocks_serve_the_rows_the_whole_file_serves(particle_file, block_samples):
    """Batches in an epoch's block order, some straddling two blocks: every column equal to the whole file's."""
    rows = np.arange(num_samples(particle_file))
    whole = PbsTorchDataset(particle_file, rows, "best_response")
    blocks = PbsTorchDataset(particle_file, rows, "best_response", block_samples)
    with h5py.File(particle_file) as f:  # the file has the particle columns the blocks must slice
        assert f["infostates/cf_opponent"].shape[1] > 0 and "infostates/cf_reach" in f
    torch.manual_seed(0)
    order = list(BlockShuffle(blocks.blocks(), blocks.expect))
    visits = list(dict.fromkeys(blocks.blocks()[order].tolist()))
    for start in range(0, len(order), 3):
        batch = order[start : start + 3]
        assert_rows_equal(blocks.__getitems__(batch), whole.__getitems__(batch))
        current = blocks._block[0]
        if current != visits[-1]:  # the block after this one in the epoch's order is being read ahead
            assert blocks._next[0] == visits[visits.index(current) + 1]
    assert_rows_equal(blocks[7], whole[7])
    with h5py.File(particle_file) as f:  # and both are the file's own rows
        lo, hi = f["samples/offset"][7], f["samples/offset"][8]
        player, index = f["infostates/player"][lo:hi], f["infostates/index"][lo:hi]
        private = np.stack([f[f"features/private/{n}"][i] for n, i in zip(player, index)])
        np.testing.assert_array_equal(blocks[7]["private"], private)
        np.testing.assert_array_equal(blocks[7]["cf_opponent"], f["infostates/cf_opponent"][lo:hi])
        np.testing.assert_array_equal(blocks[7]["target"], f["infostates/target"][lo:hi].astype(np.float32))
    assert blocks._block[0] == 7 // block_samples  # one block held: the last one read
    assert len(blocks._block[1].public) <= block_samples  # its own samples' public features (one each here)


def test_block_shuffle_visits_each_block_once_an_epoch():
    blocks = np.repeat([3, 0, 2, 1, 5], [4, 1, 6, 3, 2])
    torch.manual_seed(1)
    first, second = list(BlockShuffle(blocks)), list(BlockShuffle(blocks))
    torch.manual_seed(1)
    assert list(BlockShuffle(blocks)) == first  # seed_everything repeats an epoch
    assert first != second
    for order in (first, second):
        assert sorted(order) == list(range(len(blocks)))
        visited = blocks[order]
        assert np.count_nonzero(visited[1:] != visited[:-1]) == 4  # five blocks, each entered once


def test_validation_is_whole_blocks_and_shares_no_trunk():
    trunk = np.repeat(np.arange(10), 3)  # trunks straddle blocks of 4 samples
    train, val = split_by_block(trunk, 4, 0.25, seed=3)
    assert np.intersect1d(trunk[train], trunk[val]).size == 0
    assert sorted(np.concatenate([train, val])) == list(range(30))
    blocks = np.unique(val // 4)
    whole_blocks = [b for b in blocks if set(range(4 * b, min(4 * b + 4, 30))) <= set(val)]
    assert len(whole_blocks) == 2  # round(0.25 · 8 blocks); the rest of val: their trunks' samples next door
    assert set(trunk[val]) == set(trunk[np.concatenate([np.arange(4 * b, min(4 * b + 4, 30)) for b in whole_blocks])])
    with pytest.raises(PvfError, match="pass a smaller data.block_samples"):
        split_by_block(trunk, 30, 0.25, seed=0)  # one block


def test_a_large_file_trains_from_blocks(particle_file, monkeypatch):
    """Past `IN_MEMORY_BYTES` the data module reads blocks by default: an epoch yields each training sample once,
    from at most one block at a time."""
    monkeypatch.setattr(data, "IN_MEMORY_BYTES", 0)
    with PBSDataset(particle_file) as ds:
        monkeypatch.setattr(data, "BLOCK_BYTES", 3 * data.column_bytes(ds) // ds.num_samples + 1)
    module = PbsDataModule(str(particle_file), batch_size=2, val_fraction=0.3)
    module.setup()
    assert module.train_set.block_samples == 3
    whole = PbsTorchDataset(particle_file, module.train_set.rows, module.layout.target)
    batches = list(module.train_dataloader())
    expected = whole.__getitems__(np.arange(len(whole)))
    for key in ("counts", "target", "belief"):  # each training sample once, in a shuffled order
        got = np.concatenate([batch[key] for batch in batches])
        np.testing.assert_array_equal(np.sort(got), np.sort(expected[key]))
    val_blocks = np.unique(module.val_set.rows // 3)
    assert len(val_blocks) <= 3  # round(0.3 · 5 blocks) = 2, and at most one neighbour for a straddling trunk


def test_non_finite_private_features_are_found_where_read(particle_file, tmp_path):
    broken = tmp_path / "broken.h5"
    broken.write_bytes(particle_file.read_bytes())
    with h5py.File(broken, "r+") as f:
        f["features/private/0"][2, 0] = np.nan
    with PBSDataset(broken) as ds:  # opens: the private tables are not read at the open
        with pytest.raises(PvfError, match="features/private/0 holds non-finite values; the file is corrupted"):
            _ = ds.private_features
    with pytest.raises(PvfError, match="features/private/0 holds non-finite values"):
        PbsTorchDataset(broken, np.arange(13), "best_response", 13)[0]


def test_a_pickled_block_dataset_reads_no_block_ahead(particle_file):
    """A DataLoader worker's copy is not told the epoch's order, so it reads only the blocks it is asked for."""
    rows = np.arange(num_samples(particle_file))
    blocks = PbsTorchDataset(particle_file, rows, "best_response", 4)
    first = blocks.__getitems__([0, 1])
    assert blocks._next[0] == 1  # the file's order by default: block 1 read ahead
    clone = pickle.loads(pickle.dumps(blocks))
    assert_rows_equal(clone.__getitems__([0, 1]), first)
    assert clone._next is None and clone._block[0] == 0
