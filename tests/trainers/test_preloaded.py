"""Preloaded training sets: a gather reads exactly the rows of the dense padded sets, in far less memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pvf.trainers.ensemble as ensemble
from pvf.trainers.data import PbsTorchDataset, num_samples
from pvf.trainers.ensemble import EnsembleTrainer
from pvf.trainers.preloaded import EncodedSamples, Preloaded

DEFAULT_CHUNK = ensemble.ENCODE_CHUNK


def padded_cat(parts: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Members' batches back to back, zero-padded along axis 1 to the widest (the dense reference)."""
    out = {}
    for key in parts[0]:
        tensors = [p[key] for p in parts]
        if tensors[0].dim() >= 2:
            width = max(t.shape[1] for t in tensors)
            tensors = [torch.nn.functional.pad(t, (0, 0) * (t.dim() - 2) + (0, width - t.shape[1])) for t in tensors]
        out[key] = torch.cat(tensors)
    return out


def assert_gathers_equal(
    preloaded: Preloaded | EncodedSamples, dense: dict[str, torch.Tensor], dtype: torch.dtype
) -> None:
    index = torch.randperm(len(next(iter(dense.values()))), generator=torch.Generator().manual_seed(0))
    batch = preloaded.select(index)
    assert batch.keys() == dense.keys()
    for key, value in dense.items():
        expected = value.to(dtype) if value.is_floating_point() else value
        assert torch.equal(batch[key], expected[index]), key


def member(samples: int, width: int, seed: int) -> dict[str, torch.Tensor]:
    """A synthetic encoded set: features [n, width, 5] of a few repeated rows, zero beyond each set's size."""
    g = torch.Generator().manual_seed(seed)
    rows = torch.randint(0, 3, (7, 5), generator=g).float()
    features = rows[torch.randint(0, 7, (samples, width), generator=g)]
    mask = torch.arange(width) < torch.randint(1, width + 1, (samples, 1), generator=g)
    return {"features": features * mask.unsqueeze(-1), "mask": mask, "public": torch.rand(samples, 3, generator=g)}


def test_sources_of_different_widths_gather_their_padded_rows():
    """Three sources, the second in two chunks of different widths (5 and 9 particles)."""
    parts = [member(30, 6, 0), member(12, 5, 1), member(8, 9, 3), member(25, 4, 2)]
    sources = [[parts[0]], [parts[1], parts[2]], [parts[3]]]
    samples = EncodedSamples(sources, torch.device("cpu"), torch.float64)
    assert_gathers_equal(samples, padded_cat(parts), torch.float64)
    assert list(samples.offsets) == [0, 30, 50]
    assert samples.rows["features"].dtype == torch.int32 and samples.rows["features"].shape == (75, 9)
    features = padded_cat(parts)["features"]
    assert len(samples.tables["features"]) == len(torch.unique(features.reshape(-1, 5), dim=0))  # each row once


def test_members_of_one_file_share_its_samples(leduc_files):
    """Three members on one file: its samples encoded once (for every trainer of the process), each member's
    batch its own training rows; a rewritten file is encoded again."""
    paths = [leduc_files[0]] * 3
    trainer = EnsembleTrainer.from_files(paths, "positional", [0, 1, 2], 4, batch_size=8, dtype=torch.float64)
    samples = trainer.preloaded.samples
    assert list(samples.offsets) == [0] and len(samples.rows["public"]) == num_samples(trainer.data[0].path)
    alone = EnsembleTrainer.from_files(paths[:1], "positional", [1], 4, batch_size=8, dtype=torch.float64)
    assert alone.preloaded.samples is samples  # another trainer of the same file and encoding
    positions = [np.arange(5), np.arange(3, 8), np.arange(2)]
    batch = trainer.preloaded.gather(positions)
    dense = [trainer.encode(d.dataset.__getitems__(p)) for d, p in zip(trainer.data, positions)]
    for key, value in padded_cat(dense).items():
        assert torch.equal(batch[key], value.to(torch.float64) if value.is_floating_point() else value), key
    assert not np.array_equal(trainer.data[0].rows, trainer.data[1].rows)  # each member its own split


@pytest.mark.parametrize("chunk", [7, DEFAULT_CHUNK])
def test_a_particle_ensemble_gathers_its_dense_sets(goofspiel_files, monkeypatch, chunk):
    """Encoded in chunks of 7 samples (the sets hold 32-36) or whole: the whole sets' dense rows all the same."""
    monkeypatch.setattr(ensemble, "ENCODE_CHUNK", chunk)
    trainer = EnsembleTrainer.from_files(goofspiel_files, "particle", [0, 1, 2], 4, batch_size=8, dtype=torch.float64)
    files = [PbsTorchDataset(d.path, np.arange(num_samples(d.path))) for d in trainer.data]
    dense = padded_cat([trainer.encode(f.__getitems__(np.arange(len(f)))) for f in files])  # the files' samples
    assert_gathers_equal(trainer.preloaded.samples, dense, torch.float64)
    offsets = trainer.preloaded.samples.offsets
    expected = np.concatenate([o + d.rows for o, d in zip(offsets, trainer.data)])  # each member's training rows
    assert torch.equal(
        trainer.preloaded.index([np.arange(len(d.rows)) for d in trainer.data]), torch.from_numpy(expected)
    )
    assert set(trainer.preloaded.samples.tables) == {"features"}  # beliefs, targets, mask and public stay dense
    if chunk == DEFAULT_CHUNK:
        table, index = trainer.preloaded.samples.tables["features"], trainer.preloaded.samples.rows["features"]
        stored = table.numel() * table.element_size() + index.numel() * index.element_size()
        assert stored * 3 < dense["features"].numel() * 8  # dense float64; at paper scale 25x (docs/ensembles.md)
