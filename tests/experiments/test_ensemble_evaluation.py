"""Batched evaluation of an ensemble: row s of a query is member s's, and each member's trunk
exploitability equals the one-member-at-a-time solve (exact LP both ways)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pvf.datasets.layout import DataLayout
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import build_public_tree
from pvf.nets.stacked import StackedNets
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate
from pvf.trainers.ensemble import build_member
from pvf.valuefn.ensemble_evaluator import ensemble_evaluator, ensemble_trunk_exploitability
from pvf.valuefn.evaluator import NetworkEvaluator
from pvf.valuefn.registry import ARCHITECTURES, make_architecture

MEMBERS = 3
ITERATIONS = 30


@pytest.fixture(scope="module")
def leduc():
    tree = build_public_tree("leduc_poker")
    trunk = build_trunk(tree, 7)
    features = build_feature_tables(tree)
    slots = tuple(int(np.diff(trunk.game.leaf_offsets[n]).max()) for n in (0, 1))
    layout = DataLayout(tree.game_string, 7, "average", features.public_dim, features.private_dim, slots)
    return trunk, features, layout


def members(architecture, layout):
    return [build_member(architecture, layout, seed).net.eval() for seed in range(MEMBERS)]


def network_evaluator(trunk, net, architecture, layout, features):
    return NetworkEvaluator(trunk, net, make_architecture(architecture), layout, features)


@pytest.mark.parametrize(
    "architecture, backend",
    [
        ("positional", "bmm"),
        ("positional", "vmap"),
        ("particle", "bmm"),
        ("particle", "vmap"),
        ("attention", "bmm"),
        ("attention", "vmap"),
    ],
)
def test_row_s_is_valued_by_member_s(leduc, architecture, backend):
    trunk, features, layout = leduc
    nets = members(architecture, layout)
    batched = ensemble_evaluator(
        trunk, StackedNets(nets, backend).eval(), make_architecture(architecture), layout, features
    )
    rng = np.random.default_rng(0)
    reach = [rng.random((MEMBERS, len(trunk.game.leaf_infostates[n]))) for n in (0, 1)]
    v1, v2 = batched(*reach)
    for s, net in enumerate(nets):
        alone = network_evaluator(trunk, net, architecture, layout, features)
        a1, a2 = alone(reach[0][s : s + 1], reach[1][s : s + 1])
        np.testing.assert_allclose(v1[s], a1[0], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(v2[s], a2[0], rtol=1e-5, atol=1e-7)
    assert not np.allclose(v1[0], v1[1])  # the members do differ


@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
def test_member_exploitabilities_equal_separate_solves(leduc, architecture):
    trunk, features, layout = leduc
    nets = members(architecture, layout)
    together = ensemble_trunk_exploitability(
        trunk, StackedNets(nets), make_architecture(architecture), layout, features, ITERATIONS
    )
    for net, result in zip(nets, together):
        alone = solve_and_evaluate(trunk, network_evaluator(trunk, net, architecture, layout, features), ITERATIONS)
        assert result.exploitability == pytest.approx(alone.exploitability.exploitability, abs=1e-6)
    assert len({round(r.exploitability, 6) for r in together}) == MEMBERS


def test_evaluator_refuses_another_batch_size(leduc):
    trunk, features, layout = leduc
    batched = ensemble_evaluator(
        trunk, StackedNets(members("positional", layout)), make_architecture("positional"), layout, features
    )
    reach = [np.ones((1, len(trunk.game.leaf_infostates[n]))) for n in (0, 1)]
    with pytest.raises(ValueError, match="takes 3 problems"):
        batched(*reach)


def test_training_mode_is_restored(leduc):
    trunk, features, layout = leduc
    stacked = StackedNets(members("positional", layout)).train()
    ensemble_trunk_exploitability(trunk, stacked, make_architecture("positional"), layout, features, 2)
    assert stacked.training and torch.is_grad_enabled()


class InFloat64(torch.nn.Module):
    """`net` run in float64 on the encoder's float32 inputs (outputs back in float32)."""

    def __init__(self, net: torch.nn.Module):
        super().__init__()
        self.net = net.double()
        self.num_members = getattr(net, "num_members", 1)

    def forward(self, *args):
        return self.net(*[a.double() if a.is_floating_point() else a for a in args]).float()


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "architecture, backend", [("positional", "bmm"), ("particle", "bmm"), ("attention", "bmm"), ("attention", "vmap")]
)
def test_in_float64_batched_and_separate_solves_agree_to_the_lp(leduc, architecture, backend, device):
    """In float32 a batched forward may round differently from a single one (vmap's kernels, a
    GPU's), and 100 CFR+ iterations amplify that (measured: attention 3e-4 on CPU, positional
    0.024 on an H200); in float64 the difference is the LPs' own accuracy, so it is rounding."""
    trunk, features, layout = leduc
    nets = members(architecture, layout)
    stacked = InFloat64(StackedNets(nets, backend)).to(device).eval()
    together = ensemble_trunk_exploitability(trunk, stacked, make_architecture(architecture), layout, features, 100)
    for net, result in zip(nets, together):
        alone = solve_and_evaluate(
            trunk, network_evaluator(trunk, InFloat64(net).to(device).eval(), architecture, layout, features), 100
        )
        assert result.exploitability == pytest.approx(alone.exploitability.exploitability, abs=1e-8)
