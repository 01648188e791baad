"""The attention architecture: the particle encoding with a set transformer (`pvf.nets.set_transformer`).

Same inputs as the Deep-Sets particle net (`pvf.valuefn.particle.ParticleEncoding`:
padded, masked particles of [belief, public, private, player one-hot]);
only the network differs: self-attention blocks and attention pooling
instead of a belief-weighted sum.
"""

from __future__ import annotations

from dataclasses import dataclass

from pvf.datasets.layout import DataLayout
from pvf.nets.set_transformer import AttentionVF
from pvf.valuefn.particle import ParticleEncoding, particle_feature_dim


@dataclass(eq=False, repr=False)
class Attention(ParticleEncoding):
    """`AttentionVF(feature_dim=Fp+Fq+2, public_dim=Fp, dim=64, num_blocks=2, heads=4, ...)`."""

    name = "attention"
    net_class = AttentionVF

    dim: int = 64
    num_blocks: int = 2
    heads: int = 4
    block_hidden_multiplier: float = 2.0
    regression_layers: int = 3
    regression_hidden_width: int | None = 128
    regression_hidden_multiplier: float = 2.0
    activation: str = "relu"

    def build(self, layout: DataLayout) -> AttentionVF:
        return AttentionVF(feature_dim=particle_feature_dim(layout), public_dim=layout.public_dim, **vars(self))
