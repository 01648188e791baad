"""Theorem 4 (paper, app. E): a particle net can represent any positional net.

Given a positional net with K slots and the feature vectors of all S
infostates of the game (rows of `features`, linearly independent, so S <= F):

1. Let E be the [S, K] one-hot matrix with E[s, slot_of[s]] = 1.
2. Solve features @ W^T = E for the change-basis weight W [K, F]. Rows of
   `features` are independent, so the minimum-norm solution
   W^T = pinv(features) @ E solves it exactly. (The paper writes the same
   matrix as F (F^T F)^-1 E with F = features^T.)
3. Change basis = that single bias-free Linear layer: basis_s = e_slot(s).
   The context sum_s belief_s * e_slot(s) is then the positional input's
   belief block, and [context, public] is the positional input.
4. Regression = the positional MLP, weights copied.
5. The projection <y, e_slot(s)> reads the positional output at slot(s).

So for any subset of a public state's infostates, the particle net equals
the positional net evaluated with zero belief in the missing slots.
"""

from __future__ import annotations

import torch
from torch import Tensor

from pvf.nets.deep_sets import ParticleVF
from pvf.nets.mlp import hidden_size
from pvf.nets.positional_mlp import PositionalVF


def particle_from_positional(pos: PositionalVF, features: Tensor, slot_of: Tensor) -> ParticleVF:
    """A `ParticleVF` computing exactly what `pos` computes.

    pos: the positional net (K = pos.num_slots slots, Fp public features).
    features: [S, F] feature vector of every infostate of the game; rows must
        be linearly independent.
    slot_of: [S] long, the positional slot of each infostate.
    The result has pos's dtype and device.
    """
    num_infostates, feature_dim = features.shape
    if slot_of.shape != (num_infostates,):
        raise ValueError(f"slot_of must have shape [{num_infostates}], got {list(slot_of.shape)}")
    param = next(pos.parameters())
    feats = features.to(dtype=param.dtype, device=param.device)
    if int(torch.linalg.matrix_rank(feats)) < num_infostates:
        raise ValueError("feature vectors of the infostates are linearly dependent; Theorem 4 needs full rank")

    cfg = pos.config
    particle = ParticleVF(
        feature_dim=feature_dim,
        public_dim=pos.public_dim,
        basis_dim=pos.num_slots,
        basis_layers=1,
        regression_layers=cfg["num_layers"],
        regression_hidden_width=hidden_size(
            pos.num_slots + pos.public_dim, cfg["hidden_multiplier"], cfg["hidden_width"]
        ),
        activation=cfg["activation"],
        output="projection",
    ).to(dtype=param.dtype, device=param.device)

    one_hot = torch.nn.functional.one_hot(slot_of.to(param.device), pos.num_slots).to(param.dtype)  # [S, K]
    weight_t = torch.linalg.pinv(feats) @ one_hot  # [F, K]
    with torch.no_grad():
        basis_layer = particle.change_basis[0]
        basis_layer.weight.copy_(weight_t.T)
        basis_layer.bias.zero_()
    particle.regression.load_state_dict(pos.mlp.state_dict())
    return particle
