"""Attention particle value function: a set transformer over (belief, features) infostate rows.

Input is a padded set of N particles (infostates) per sample; `mask` marks
the real ones. With d = `dim`, one forward pass:

1. token_j = embed([belief_j, features_j]): `[B, N, d]`, one Linear layer
   shared by every particle.
2. `num_blocks` self-attention blocks (pre-norm transformer encoder:
   token += MHA(LN(token)) over the real particles only; token +=
   MLP(LN(token))). Padding is masked out of every key, so real particles
   never see it, and no order is assumed: the blocks are permutation-
   equivariant.
3. context = attention pooling: one learned query attends over the real
   tokens (`[B, d]`), invariant to particle order. The query is the weight
   of a bias-free `Linear(1, d)` applied to a constant 1 (initialised to
   zeros), so that every parameter sits in a Linear or LayerNorm layer and
   an ensemble of these nets stacks as batched products
   (`pvf.nets.stacked`, "bmm"); checkpoints that stored it as the
   parameter `pool_query` `[1, 1, d]` load unchanged.
4. y = regression([context, public]): `[B, d]`, an MLP like the Deep-Sets
   net's regression.
5. value_j = ⟨y, basis(token_j)⟩ with basis a shared Linear `[d] -> [d]`
   (the projection output of `pvf.nets.deep_sets`). Padded particles get 0.

Masked scores are set to the dtype's lowest value before the softmax, so a
set with no real particle gives finite (ignored) values instead of NaN.
Default sizes (d = 64, 2 blocks, 4 heads, regression 3 layers of width
128) give about as many parameters as the Deep-Sets net on Leduc (~1.3×).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn.utils import skip_init

from pvf.nets.mlp import ConfigurableModule, activation_class, build_mlp


class _MaskedAttention(nn.Module):
    """Multi-head attention of `queries [B, Q, d]` over `tokens [B, N, d]`; keys where `mask` is False are ignored."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim ({dim}) must be a multiple of heads ({heads})")
        self.heads = heads
        self.query = nn.Linear(dim, dim)
        self.key_value = nn.Linear(dim, 2 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, queries: Tensor, tokens: Tensor, mask: Tensor) -> Tensor:
        B, Q, d = queries.shape
        N, h = tokens.shape[1], self.heads
        q = self.query(queries).reshape(B, Q, h, d // h).transpose(1, 2)  # [B, h, Q, d/h]
        k, v = self.key_value(tokens).reshape(B, N, 2, h, d // h).permute(2, 0, 3, 1, 4)  # [B, h, N, d/h] each
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h)  # [B, h, Q, N]
        scores = scores.masked_fill(~mask[:, None, None, :], torch.finfo(scores.dtype).min)
        attended = torch.softmax(scores, dim=-1) @ v  # [B, h, Q, d/h]
        return self.out(attended.transpose(1, 2).reshape(B, Q, d))


class _Block(nn.Module):
    """Pre-norm transformer encoder block over a masked set."""

    def __init__(self, dim: int, heads: int, hidden: int, activation: str):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = _MaskedAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), activation_class(activation)(), nn.Linear(hidden, dim))

    def forward(self, tokens: Tensor, mask: Tensor) -> Tensor:
        x = self.norm1(tokens)
        tokens = tokens + self.attention(x, x, mask)
        return tokens + self.mlp(self.norm2(tokens))


class AttentionVF(ConfigurableModule):
    """`forward(beliefs [B, N], features [B, N, F], public [B, Fp], mask [B, N]) -> values [B, N]`."""

    def __init__(
        self,
        feature_dim: int,
        public_dim: int,
        dim: int = 64,
        num_blocks: int = 2,
        heads: int = 4,
        block_hidden_multiplier: float = 2.0,
        regression_layers: int = 3,
        regression_hidden_width: int | None = 128,
        regression_hidden_multiplier: float = 2.0,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        activation_class(activation)  # an unknown name fails before any layer is built
        if num_blocks < 0 or dim < 1 or heads < 1:
            raise ValueError(f"need dim >= 1, heads >= 1 and num_blocks >= 0, got {dim}, {heads}, {num_blocks}")
        self._config: dict[str, Any] = {
            "feature_dim": feature_dim,
            "public_dim": public_dim,
            "dim": dim,
            "num_blocks": num_blocks,
            "heads": heads,
            "block_hidden_multiplier": block_hidden_multiplier,
            "regression_layers": regression_layers,
            "regression_hidden_width": regression_hidden_width,
            "regression_hidden_multiplier": regression_hidden_multiplier,
            "activation": activation,
        }
        hidden = max(1, round(block_hidden_multiplier * dim))
        self.embed = nn.Linear(feature_dim + 1, dim)
        self.blocks = nn.ModuleList(_Block(dim, heads, hidden, activation) for _ in range(num_blocks))
        self.norm = nn.LayerNorm(dim)
        self.pool_query = skip_init(nn.Linear, 1, dim, bias=False)  # no random draw: the init that follows is as before
        nn.init.zeros_(self.pool_query.weight)
        self.pool = _MaskedAttention(dim, heads)
        self.regression = build_mlp(
            dim + public_dim, dim, regression_layers, regression_hidden_multiplier, regression_hidden_width, activation
        )
        self.basis = nn.Linear(dim, dim)

    def forward(self, beliefs: Tensor, features: Tensor, public: Tensor, mask: Tensor) -> Tensor:
        """beliefs: [B, N] reach of each particle's infostate; features: [B, N, F];
        public: [B, Fp]; mask: [B, N] bool, True for real particles.
        Returns values [B, N], exactly 0 where `mask` is False."""
        tokens = self.embed(torch.cat([beliefs.unsqueeze(-1), features], dim=-1))  # [B, N, d]
        for block in self.blocks:
            tokens = block(tokens, mask)
        tokens = self.norm(tokens)
        query = self.pool_query(tokens.new_ones(tokens.shape[0], 1, 1))  # [B, 1, d], the learned query
        context = self.pool(query, tokens, mask).squeeze(1)  # [B, d]
        y = self.regression(torch.cat([context, public], dim=-1))  # [B, d]
        values = (self.basis(tokens) * y.unsqueeze(1)).sum(dim=-1)
        return torch.where(mask, values, 0.0)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        """Checkpoints written before the query became a Linear hold `pool_query` `[1, 1, d]`: the same numbers."""
        old = state_dict.pop(prefix + "pool_query", None)
        if old is not None:
            state_dict[prefix + "pool_query.weight"] = old.reshape(-1, 1)
        super()._load_from_state_dict(state_dict, prefix, *args)
