"""Positional value function: one input and one output slot per infostate.

The game's infostates of both players are enumerated once; within a public
state every infostate owns a fixed slot in `[0, num_slots)`, and slots that
the public state does not use hold zero belief. The network is:

1. x = [beliefs, public]: `[B, K + Fp]`, beliefs first (so the input is the
   same shape as the particle net's `[context, public]`, see Theorem 4).
2. values = MLP(x): `[B, K]`, `num_layers` Linear layers (paper, app. F:
   5 layers, i.e. 4 hidden layers of width 5 x input, ReLU).

Values at unused slots are meaningless; losses must mask them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from pvf.nets.mlp import ConfigurableModule, build_mlp


class PositionalVF(ConfigurableModule):
    """`forward(beliefs [B, K], public [B, Fp]) -> values [B, K]`."""

    def __init__(
        self,
        public_dim: int,
        num_slots: int,
        num_layers: int = 5,
        hidden_multiplier: float = 5.0,
        hidden_width: int | None = None,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self._config: dict[str, Any] = {
            "public_dim": public_dim,
            "num_slots": num_slots,
            "num_layers": num_layers,
            "hidden_multiplier": hidden_multiplier,
            "hidden_width": hidden_width,
            "activation": activation,
        }
        self.public_dim = public_dim
        self.num_slots = num_slots
        self.mlp = build_mlp(num_slots + public_dim, num_slots, num_layers, hidden_multiplier, hidden_width, activation)

    def forward(self, beliefs: Tensor, public: Tensor) -> Tensor:
        """beliefs: [B, K] reach of the infostate in each slot (0 where unused);
        public: [B, Fp] public-state features. Returns values [B, K]."""
        return self.mlp(torch.cat([beliefs, public], dim=-1))
