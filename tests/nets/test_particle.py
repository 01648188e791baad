"""ParticleVF: set semantics (order, padding, masking), variants, gradients, checkpoints."""

import json

import pytest
import torch
from torch import nn

from pvf.nets import ParticleVF

B, N, F, FP, K = 4, 6, 5, 3, 7


def make_inputs(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    beliefs = torch.rand(B, N, generator=g, dtype=torch.float64)
    features = torch.randn(B, N, F, generator=g, dtype=torch.float64)
    public = torch.randn(B, FP, generator=g, dtype=torch.float64)
    mask = torch.ones(B, N, dtype=torch.bool)
    return beliefs, features, public, mask


def make_net(output: str = "projection", **kwargs) -> ParticleVF:
    torch.manual_seed(0)
    return ParticleVF(F, FP, K, output=output, **kwargs).double()


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("output", ["projection", "concatenation"])
def test_permuting_particles_permutes_outputs(output, norm):
    net = make_net(output, norm=norm)
    beliefs, features, public, mask = make_inputs()
    perm = torch.randperm(N, generator=torch.Generator().manual_seed(3))
    out = net(beliefs, features, public, mask)
    out_perm = net(beliefs[:, perm], features[:, perm], public, mask[:, perm])
    assert out.shape == (B, N)
    torch.testing.assert_close(out_perm, out[:, perm], rtol=0, atol=1e-12)


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("output", ["projection", "concatenation"])
def test_padding_equals_smaller_set_and_padded_outputs_are_zero(output, norm):
    net = make_net(output, norm=norm)
    beliefs, features, public, _ = make_inputs()
    keep = 4
    small = net(beliefs[:, :keep], features[:, :keep], public, torch.ones(B, keep, dtype=torch.bool))
    # Padding holds garbage (even NaN) that must not leak into the context.
    beliefs[:, keep:] = float("nan")
    features[:, keep:] = float("nan")
    mask = torch.zeros(B, N, dtype=torch.bool)
    mask[:, :keep] = True
    padded = net(beliefs, features, public, mask)
    torch.testing.assert_close(padded[:, :keep], small, rtol=0, atol=1e-12)
    assert torch.equal(padded[:, keep:], torch.zeros(B, N - keep, dtype=torch.float64))


def test_ragged_masks_within_one_batch():
    net = make_net()
    beliefs, features, public, _ = make_inputs()
    mask = torch.rand(B, N, generator=torch.Generator().manual_seed(5)) < 0.6
    out = net(beliefs, features, public, mask)
    for i in range(B):
        idx = mask[i].nonzero().squeeze(-1)
        one = net(beliefs[i : i + 1, idx], features[i : i + 1, idx], public[i : i + 1], mask[i : i + 1, idx])
        torch.testing.assert_close(out[i, idx], one[0], rtol=0, atol=1e-12)
    assert torch.all(out[~mask] == 0)


def test_projection_is_inner_product_with_basis():
    net = make_net()
    beliefs, features, public, mask = make_inputs()
    basis = net.change_basis(features)
    context = (beliefs.unsqueeze(-1) * basis).sum(1)
    y = net.regression(torch.cat([context, public], -1))
    expected = torch.einsum("bnk,bk->bn", basis, y)
    torch.testing.assert_close(net(beliefs, features, public, mask), expected)


@pytest.mark.parametrize("output", ["projection", "concatenation"])
def test_reach_output_scales_each_value_by_the_last_feature(output):
    """`reach_output`: the same weights' values times each particle's last feature (its counterfactual reach), so a
    particle with reach 0 gets 0 and |value| <= reach * |per-unit output|; padding stays 0."""
    plain, scaled = make_net(output), make_net(output, reach_output=True)
    scaled.load_state_dict(plain.state_dict())
    beliefs, features, public, mask = make_inputs()
    features[..., -1] = torch.rand(B, N, dtype=torch.float64)
    features[0, 2, -1] = 0.0
    mask[1, -1] = False
    expected = plain(beliefs, features, public, mask) * features[..., -1]
    out = scaled(beliefs, features, public, mask)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-15)
    assert out[0, 2] == 0 and out[1, -1] == 0 and scaled.config["reach_output"]


@pytest.mark.parametrize("output", ["projection", "concatenation"])
def test_gradients_reach_every_parameter(output):
    net = make_net(output)
    beliefs, features, public, mask = make_inputs()
    mask[0, -1] = False
    net(beliefs, features, public, mask).pow(2).sum().backward()
    for name, p in net.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, name


def linear_shapes(module: nn.Module) -> list[tuple[int, int]]:
    return [(m.in_features, m.out_features) for m in module.modules() if isinstance(m, nn.Linear)]


def test_paper_text_layout():
    net = ParticleVF(F, FP, K)
    cb = 3 * F
    assert linear_shapes(net.change_basis) == [(F, cb), (cb, cb), (cb, K)]
    rw = 5 * (K + FP)
    assert linear_shapes(net.regression) == [(K + FP, rw)] + [(rw, rw)] * 3 + [(rw, K)]
    assert net.projection_regression is None


def test_authors_run_layout():
    net = ParticleVF(F, FP, K, basis_layers=4, regression_layers=3, regression_hidden_width=3 * K)
    assert len(linear_shapes(net.change_basis)) == 4
    assert linear_shapes(net.regression) == [(K + FP, 3 * K), (3 * K, 3 * K), (3 * K, K)]


def test_concatenation_projection_regression_layout():
    net = ParticleVF(F, FP, K, output="concatenation", projection_layers=3)
    assert linear_shapes(net.projection_regression) == [(2 * K, 2 * K), (2 * K, 2 * K), (2 * K, 1)]


def test_norm_puts_a_layer_norm_after_every_hidden_layer():
    net = ParticleVF(F, FP, K, output="concatenation", norm=True)
    for mlp in (net.change_basis, net.regression, net.projection_regression):
        kinds = [type(m).__name__ for m in mlp]
        assert kinds == ["Linear", "LayerNorm", "ReLU"] * (len(kinds) // 3) + ["Linear"]
        norms = [m.normalized_shape[0] for m in mlp if isinstance(m, nn.LayerNorm)]
        assert norms == [m.out_features for m in mlp if isinstance(m, nn.Linear)][:-1]
    assert not any(isinstance(m, nn.LayerNorm) for m in ParticleVF(F, FP, K).modules())


def test_unknown_output_rejected():
    with pytest.raises(ValueError, match="output"):
        ParticleVF(F, FP, K, output="sum")


@pytest.mark.parametrize("output", ["projection", "concatenation"])
def test_checkpoint_round_trip(tmp_path, output):
    net = make_net(output, basis_hidden_width=9, activation="gelu", norm=True)
    assert json.loads(json.dumps(net.config)) == net.config == net.hparams()
    path = tmp_path / "particle.pt"
    torch.save({"config": net.config, "state_dict": net.state_dict()}, path)
    ckpt = torch.load(path, weights_only=True)
    clone = ParticleVF.from_config(ckpt["config"]).double()
    clone.load_state_dict(ckpt["state_dict"])
    inputs = make_inputs()
    assert torch.equal(clone(*inputs), net(*inputs))


def test_basis_skip_adds_the_private_features_in_their_players_block():
    """features [public 3, private 2, player one-hot 2]: the skip sees private ⊗ player, and a set stays a set."""
    torch.manual_seed(0)
    net = ParticleVF(7, FP, K, basis_skip=True, private_dim=2).double()
    beliefs, _, public, mask = make_inputs()
    g = torch.Generator().manual_seed(1)
    player = torch.randint(0, 2, (B, N), generator=g)
    features = torch.cat(
        [
            torch.randn(B, N, 3, generator=g, dtype=torch.float64),
            torch.randn(B, N, 2, generator=g, dtype=torch.float64),
            nn.functional.one_hot(player, 2).double(),
        ],
        dim=-1,
    )
    blocks = torch.zeros(B, N, 2, 2, dtype=torch.float64)
    blocks[player == 0, 0], blocks[player == 1, 1] = features[player == 0][:, 3:5], features[player == 1][:, 3:5]
    expected = net.change_basis(features) + blocks.reshape(B, N, 4) @ net.skip.weight.T
    torch.testing.assert_close(net.basis(features), expected, rtol=0, atol=1e-12)
    weight = net.skip.weight  # [K, 4], orthonormal columns
    torch.testing.assert_close(weight.T @ weight, torch.eye(4, dtype=torch.float64), rtol=0, atol=1e-6)
    perm = torch.randperm(N, generator=torch.Generator().manual_seed(3))
    out = net(beliefs, features, public, mask)
    torch.testing.assert_close(net(beliefs[:, perm], features[:, perm], public, mask[:, perm]), out[:, perm])
    with pytest.raises(ValueError, match="private_dim"):
        ParticleVF(7, FP, K, basis_skip=True)
