"""The attention network: a set function of the particles, blind to padding.

1. Permuting the particles permutes the values (and nothing else).
2. Padding particles, whatever their beliefs and features, change no real
   particle's value and get value 0.
(Trained, it beats the constant evaluator: tests/experiments/test_attention_training.py.)
"""

from __future__ import annotations

import pytest
import torch

from pvf.nets.set_transformer import AttentionVF

F, FP = 9, 4


def _inputs(B=3, N=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    beliefs = torch.rand(B, N, generator=g)
    features = torch.randn(B, N, F, generator=g)
    public = torch.randn(B, FP, generator=g)
    mask = torch.ones(B, N, dtype=torch.bool)
    mask[1, 4:] = False  # a shorter set
    return beliefs, features, public, mask


@pytest.fixture
def net():
    torch.manual_seed(0)
    return (
        AttentionVF(feature_dim=F, public_dim=FP, dim=16, num_blocks=2, heads=4, regression_hidden_width=32)
        .double()
        .eval()
    )


def test_permuting_particles_permutes_values(net):
    beliefs, features, public, mask = (t.double() if t.is_floating_point() else t for t in _inputs())
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    with torch.no_grad():
        values = net(beliefs, features, public, mask)
        permuted = net(beliefs[:, perm], features[:, perm], public, mask[:, perm])
    torch.testing.assert_close(permuted, values[:, perm], rtol=1e-12, atol=1e-12)


def test_padding_changes_nothing(net):
    beliefs, features, public, mask = (t.double() if t.is_floating_point() else t for t in _inputs())
    B, N = beliefs.shape
    g = torch.Generator().manual_seed(1)
    extra = 5  # padded particles with arbitrary content
    padded = (
        torch.cat([beliefs, 10 * torch.rand(B, extra, generator=g, dtype=torch.float64)], dim=1),
        torch.cat([features, 10 * torch.randn(B, extra, F, generator=g, dtype=torch.float64)], dim=1),
        public,
        torch.cat([mask, torch.zeros(B, extra, dtype=torch.bool)], dim=1),
    )
    # and the masked-out tail of sample 1 rewritten too
    padded[0][1, 4:N] = 7.0
    padded[1][1, 4:N] = -3.0
    with torch.no_grad():
        values = net(beliefs, features, public, mask)
        again = net(*padded)
    torch.testing.assert_close(again[:, :N][mask], values[mask], rtol=1e-12, atol=1e-12)
    assert (again[~padded[3]] == 0).all() and (values[~mask] == 0).all()


def test_a_set_without_particles_gives_zeros_not_nan(net):
    beliefs, features, public, mask = (t.double() if t.is_floating_point() else t for t in _inputs())
    mask[2] = False
    with torch.no_grad():
        values = net(beliefs, features, public, mask)
    assert torch.isfinite(values).all() and (values[2] == 0).all()


def test_weights_saved_with_the_query_as_a_parameter_load_and_give_the_same_values(net):
    """Before the pooling query became a bias-free Linear(1, d) it was the parameter `pool_query` [1, 1, d]:
    such a state dict loads, and the net computes what the old forward computed from it (query = that vector)."""
    torch.nn.init.normal_(net.pool_query.weight)
    old = {k: v for k, v in net.state_dict().items() if k != "pool_query.weight"}
    old["pool_query"] = net.pool_query.weight.detach().reshape(1, 1, -1).clone()
    loaded = (
        AttentionVF(feature_dim=F, public_dim=FP, dim=16, num_blocks=2, heads=4, regression_hidden_width=32)
        .double()
        .eval()
    )
    loaded.load_state_dict(old)
    inputs = tuple(t.double() if t.is_floating_point() else t for t in _inputs())
    with torch.no_grad():
        assert torch.equal(loaded(*inputs), net(*inputs))
    with torch.no_grad():  # the old forward's query was pool_query.expand(B, 1, -1)
        assert torch.equal(net.pool_query(torch.ones(3, 1, 1, dtype=torch.float64)), old["pool_query"].expand(3, 1, -1))
