"""Preloaded training sets: a gather reads exactly the rows of the dense padded sets, in far less memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pvf.trainers.ensemble as ensemble
from pvf.trainers.ensemble import EnsembleTrainer
from pvf.trainers.preloaded import Preloaded

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


def assert_gathers_equal(preloaded: Preloaded, dense: dict[str, torch.Tensor], dtype: torch.dtype) -> None:
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


def test_members_of_different_widths_gather_their_padded_rows():
    """Three members, the second in two chunks of different widths (5 and 9 particles)."""
    parts = [member(30, 6, 0), member(12, 5, 1), member(8, 9, 3), member(25, 4, 2)]
    members = [[parts[0]], [parts[1], parts[2]], [parts[3]]]
    preloaded = Preloaded(members, torch.device("cpu"), torch.float64)
    assert_gathers_equal(preloaded, padded_cat(parts), torch.float64)
    assert list(preloaded.offsets) == [0, 30, 50]
    assert preloaded.rows["features"].dtype == torch.int32 and preloaded.rows["features"].shape == (75, 9)
    features = padded_cat(parts)["features"]
    assert len(preloaded.tables["features"]) == len(torch.unique(features.reshape(-1, 5), dim=0))  # each row once


@pytest.mark.parametrize("chunk", [7, DEFAULT_CHUNK])
def test_a_particle_ensemble_gathers_its_dense_sets(goofspiel_files, monkeypatch, chunk):
    """Encoded in chunks of 7 samples (the sets hold 32-36) or whole: the whole sets' dense rows all the same."""
    monkeypatch.setattr(ensemble, "ENCODE_CHUNK", chunk)
    trainer = EnsembleTrainer.from_files(goofspiel_files, "particle", [0, 1, 2], 4, batch_size=8, dtype=torch.float64)
    dense = padded_cat([trainer.encode(d.dataset.__getitems__(np.arange(len(d.rows)))) for d in trainer.data])
    assert_gathers_equal(trainer.preloaded, dense, torch.float64)
    assert set(trainer.preloaded.tables) == {"features"}  # beliefs, targets, mask and public stay dense
    if chunk == DEFAULT_CHUNK:
        table, index = trainer.preloaded.tables["features"], trainer.preloaded.rows["features"]
        stored = table.numel() * table.element_size() + index.numel() * index.element_size()
        assert stored * 3 < dense["features"].numel() * 8  # dense float64; at paper scale 25x (docs/ensembles.md)
