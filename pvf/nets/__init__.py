"""Value networks (plain `torch.nn`, no Lightning).

`PositionalVF` has one input/output slot per infostate; `ParticleVF` takes a
padded set of (belief, features) infostate rows; `particle_from_positional` is
the Theorem 4 construction linking the two.
"""

from pvf.nets.deep_sets import ParticleVF
from pvf.nets.mlp import build_mlp
from pvf.nets.positional_mlp import PositionalVF
from pvf.nets.theorem4 import particle_from_positional

__all__ = ["ParticleVF", "PositionalVF", "build_mlp", "particle_from_positional"]
