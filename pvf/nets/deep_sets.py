"""Particle value function: a Deep Sets network over (belief, features) pairs.

Input is a padded set of N particles (infostates) per sample; `mask` marks
the real ones. With K = `basis_dim`, one forward pass (paper, sec. 5.2):

1. basis_j = change_basis(features_j): `[B, N, K]`, one shared MLP applied
   to each particle's feature vector (public, private and player one-hot
   features, concatenated by the caller); on a CPU it runs once per
   distinct feature row (`pvf.nets.distinct_rows`: particles repeat across
   a batch's PBSs, Goofspiel-5's 2,560 rows of a batch are 260 distinct).
2. coordinate_j = belief_j * basis_j: `[B, N, K]`; padded particles give 0.
3. context = sum_j coordinate_j: `[B, K]`, invariant to particle order.
4. y = regression([context, public]): `[B, K]`, an MLP shaped like the
   positional net (`[B, K + Fp] -> [B, K]`).
5. value_j = <y, basis_j> (`output="projection"`), or for
   `output="concatenation"` (app. C) value_j = projection_regression(
   [basis_j, y]), an MLP `[2K] -> [1]` (`projection_layers`, default 2,
   hidden width 2K as in app. C's construction). Padded particles get 0.
6. With `basis_skip=True` (needs `private_dim` = Fq) each basis adds a
   linear map of the particle's private features placed in its player's
   block (`[2·Fq]`: private ⊗ player one-hot), orthogonally initialised:
   the rows of a public state then have linearly independent inputs to
   the basis (Leduc's [public, private, player] rows have rank 6 of 10, so
   the plain basis is full-rank only through its nonlinearity).
7. With `reach_output=True` the last feature of each particle is its
   counterfactual reach c_j (`pvf.valuefn.encoding`), and value_j is c_j
   times step 5's output: the net predicts value per unit of reach, which
   |value_j| <= c_j * max|u| bounds, instead of a value that spans orders
   of magnitude across a PBS's rows.
8. With `rollout_residual=True` the features end with [mean rollout value
   ū_j, reach c_j] (`pvf.valuefn.encoding`), and value_j adds c_j·ū_j, the
   value of random play from the particle's histories: the net predicts
   the difference from that baseline, which an untrained net (output 0)
   already equals.

Paper's text (app. F): change basis 3 layers of width 3 x input, regression
as the positional net (5 layers, width 5 x input). Authors' run: change
basis 4 layers, regression K -> 3K -> 3K -> K (`regression_layers=3,
regression_hidden_width=3*K`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from pvf.nets.distinct_rows import row_wise
from pvf.nets.mlp import ConfigurableModule, build_mlp

OUTPUTS = ("projection", "concatenation")


class ParticleVF(ConfigurableModule):
    """`forward(beliefs [B, N], features [B, N, F], public [B, Fp], mask [B, N]) -> values [B, N]`."""

    def __init__(
        self,
        feature_dim: int,
        public_dim: int,
        basis_dim: int,
        basis_layers: int = 3,
        basis_hidden_multiplier: float = 3.0,
        regression_layers: int = 5,
        regression_hidden_multiplier: float = 5.0,
        activation: str = "relu",
        output: str = "projection",
        basis_hidden_width: int | None = None,
        regression_hidden_width: int | None = None,
        projection_layers: int = 2,
        projection_hidden_multiplier: float = 1.0,
        projection_hidden_width: int | None = None,
        reach_output: bool = False,
        norm: bool = False,
        basis_skip: bool = False,
        private_dim: int | None = None,
        rollout_residual: bool = False,
    ) -> None:
        super().__init__()
        if output not in OUTPUTS:
            raise ValueError(f"unknown output {output!r}; choose from {OUTPUTS}")
        if basis_skip and private_dim is None:
            raise ValueError("basis_skip needs private_dim, the width of the private features")
        self._config: dict[str, Any] = {
            "feature_dim": feature_dim,
            "public_dim": public_dim,
            "basis_dim": basis_dim,
            "basis_layers": basis_layers,
            "basis_hidden_multiplier": basis_hidden_multiplier,
            "regression_layers": regression_layers,
            "regression_hidden_multiplier": regression_hidden_multiplier,
            "activation": activation,
            "output": output,
            "basis_hidden_width": basis_hidden_width,
            "regression_hidden_width": regression_hidden_width,
            "projection_layers": projection_layers,
            "projection_hidden_multiplier": projection_hidden_multiplier,
            "projection_hidden_width": projection_hidden_width,
            "reach_output": reach_output,
            "norm": norm,
            "basis_skip": basis_skip,
            "private_dim": private_dim,
            "rollout_residual": rollout_residual,
        }
        self.reach_output = reach_output
        self.rollout_residual = rollout_residual
        self.output = output
        self.change_basis = build_mlp(
            feature_dim, basis_dim, basis_layers, basis_hidden_multiplier, basis_hidden_width, activation, norm
        )
        self.regression = build_mlp(
            basis_dim + public_dim,
            basis_dim,
            regression_layers,
            regression_hidden_multiplier,
            regression_hidden_width,
            activation,
            norm,
        )
        self.projection_regression = (
            build_mlp(
                2 * basis_dim,
                1,
                projection_layers,
                projection_hidden_multiplier,
                projection_hidden_width,
                activation,
                norm,
            )
            if output == "concatenation"
            else None
        )
        self.private = (public_dim, private_dim)
        self.skip = nn.Linear(2 * private_dim, basis_dim, bias=False) if basis_skip else None
        if self.skip is not None:
            nn.init.orthogonal_(self.skip.weight)

    def forward(self, beliefs: Tensor, features: Tensor, public: Tensor, mask: Tensor) -> Tensor:
        """beliefs: [B, N] reach of each particle's infostate;
        features: [B, N, F] per-infostate feature vectors (the last: the counterfactual reach, with `reach_output`);
        public: [B, Fp] public-state features;
        mask: [B, N] bool, True for real particles, False for padding.
        Returns values [B, N], exactly 0 where `mask` is False."""
        return self.head(beliefs, self.basis(features), features, public, mask)

    def basis(self, features: Tensor) -> Tensor:
        """Step 1 alone: features [B, N, F] -> basis [B, N, K] (a trunk's leaves reuse it while the weights stay)."""
        B, N, F = features.shape
        rows = features.reshape(B * N, F)
        basis = row_wise(self.change_basis, rows)
        if self.skip is not None:
            start, width = self.private
            private, player = rows[:, start : start + width], rows[:, start + width : start + width + 2]
            basis = basis + self.skip((player.unsqueeze(-1) * private.unsqueeze(-2)).reshape(B * N, 2 * width))
        return basis.reshape(B, N, -1)

    def head(self, beliefs: Tensor, basis: Tensor, features: Tensor, public: Tensor, mask: Tensor) -> Tensor:
        """Steps 2-5, 7 and 8 from `basis` [B, N, K] = `self.basis(features)` (steps 1 and 6); the rest as
        `forward`'s."""
        keep = mask.unsqueeze(-1)
        coordinates = torch.where(keep, beliefs.unsqueeze(-1) * basis, 0.0)
        context = coordinates.sum(dim=1)  # [B, K]
        y = self.regression(torch.cat([context, public], dim=-1))  # [B, K]
        if self.projection_regression is None:
            values = (basis * y.unsqueeze(1)).sum(dim=-1)
        else:
            pairs = torch.cat([basis, y.unsqueeze(1).expand_as(basis)], dim=-1)  # [B, N, 2K]
            values = self.projection_regression(pairs).squeeze(-1)
        if self.reach_output:
            values = values * features[..., -1]
        if self.rollout_residual:
            values = values + features[..., -1] * features[..., -2]
        return torch.where(mask, values, 0.0)
