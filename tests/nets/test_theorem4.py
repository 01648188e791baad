"""Theorem 4: the constructed particle net equals the positional net it came from."""

import pytest
import torch

from pvf.nets import PositionalVF, particle_from_positional

K, FP, NUM_PUBLIC, F, B = 5, 3, 3, 20, 64  # S = NUM_PUBLIC * K = 15 infostates <= F


@pytest.fixture
def setup():
    torch.manual_seed(0)
    pos = PositionalVF(public_dim=FP, num_slots=K).double()
    num_infostates = NUM_PUBLIC * K
    features = torch.randn(num_infostates, F, dtype=torch.float64)
    # Public state p owns infostates p*K .. p*K+K-1; each gets its own slot.
    slot_of = torch.randperm(K).repeat(NUM_PUBLIC)
    particle = particle_from_positional(pos, features, slot_of)
    # A batch of PBSs: a public state each, its public features and beliefs.
    g = torch.Generator().manual_seed(1)
    which = torch.randint(NUM_PUBLIC, (B,), generator=g)
    infostates = which.unsqueeze(1) * K + torch.arange(K)  # [B, K] particles
    beliefs = torch.rand(B, K, generator=g, dtype=torch.float64)
    public = torch.randn(B, FP, generator=g, dtype=torch.float64)
    return pos, particle, features, slot_of, infostates, beliefs, public


def compare(pos, particle, features, slot_of, infostates, beliefs, public, mask):
    slots = slot_of[infostates]  # [B, N]
    slot_beliefs = torch.zeros(B, K, dtype=torch.float64).scatter(1, slots, torch.where(mask, beliefs, 0.0))
    expected = pos(slot_beliefs, public).gather(1, slots)
    got = particle(beliefs, features[infostates], public, mask)
    assert (got[mask] - expected[mask]).abs().max() < 1e-10
    assert torch.all(got[~mask] == 0)


def test_full_beliefs(setup):
    pos, particle, features, slot_of, infostates, beliefs, public = setup
    compare(pos, particle, features, slot_of, infostates, beliefs, public, torch.ones(B, K, dtype=torch.bool))


def test_subset_of_particles(setup):
    pos, particle, features, slot_of, infostates, beliefs, public = setup
    mask = torch.rand(B, K, generator=torch.Generator().manual_seed(2)) < 0.5
    compare(pos, particle, features, slot_of, infostates, beliefs, public, mask)


def test_shuffled_particles(setup):
    pos, particle, features, slot_of, infostates, beliefs, public = setup
    perm = torch.randperm(K)
    compare(pos, particle, features, slot_of, infostates[:, perm], beliefs, public, torch.ones(B, K, dtype=torch.bool))


def test_basis_is_one_hot_slot(setup):
    _, particle, features, slot_of, *_ = setup
    basis = particle.change_basis(features)
    assert (basis - torch.nn.functional.one_hot(slot_of, K).double()).abs().max() < 1e-12


def test_dependent_features_rejected():
    pos = PositionalVF(public_dim=FP, num_slots=K).double()
    features = torch.randn(4, 3, dtype=torch.float64)  # 4 infostates in 3 dims
    with pytest.raises(ValueError, match="linearly dependent"):
        particle_from_positional(pos, features, torch.tensor([0, 1, 2, 3]))
