"""PositionalVF: layer layout from config, input order, checkpoint round trip."""

import json

import torch
from torch import nn

from pvf.nets import PositionalVF


def linear_shapes(module: nn.Module) -> list[tuple[int, int]]:
    return [(m.in_features, m.out_features) for m in module.modules() if isinstance(m, nn.Linear)]


def test_paper_layout_five_layers_width_five_times_input():
    net = PositionalVF(public_dim=4, num_slots=6)
    width = 5 * (6 + 4)
    assert linear_shapes(net) == [(10, width), (width, width), (width, width), (width, width), (width, 6)]
    assert sum(isinstance(m, nn.ReLU) for m in net.modules()) == 4


def test_absolute_width_and_activation():
    net = PositionalVF(public_dim=2, num_slots=3, num_layers=3, hidden_width=7, activation="tanh")
    assert linear_shapes(net) == [(5, 7), (7, 7), (7, 3)]
    assert sum(isinstance(m, nn.Tanh) for m in net.modules()) == 2


def test_forward_shape_and_beliefs_come_first():
    torch.manual_seed(0)
    net = PositionalVF(public_dim=3, num_slots=5, num_layers=1)
    beliefs, public = torch.rand(8, 5), torch.rand(8, 3)
    out = net(beliefs, public)
    assert out.shape == (8, 5)
    layer = net.mlp[0]
    expected = beliefs @ layer.weight[:, :5].T + public @ layer.weight[:, 5:].T + layer.bias
    torch.testing.assert_close(out, expected)


def test_config_is_json_and_checkpoint_round_trips(tmp_path):
    torch.manual_seed(1)
    net = PositionalVF(public_dim=3, num_slots=4, num_layers=4, hidden_multiplier=2.5, activation="elu")
    assert json.loads(json.dumps(net.config)) == net.config == net.hparams()
    path = tmp_path / "pos.pt"
    torch.save({"config": net.config, "state_dict": net.state_dict()}, path)
    ckpt = torch.load(path, weights_only=True)
    clone = PositionalVF.from_config(ckpt["config"])
    clone.load_state_dict(ckpt["state_dict"])
    beliefs, public = torch.rand(5, 4), torch.rand(5, 3)
    assert torch.equal(clone(beliefs, public), net(beliefs, public))
