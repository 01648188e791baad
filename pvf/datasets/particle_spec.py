"""Where scripts written before the two kinds of dataset shared one spec import the particle spec from.

A particle dataset's spec is a `GenerationSpec` with its particle part set
(`pvf.datasets.spec`); `ParticleSpec(...)` builds one from the flat
arguments of the earlier type.
"""

from pvf.datasets.spec import DEFAULT_MAX_SUBGAME_HISTORIES, ROWS, SUBGAMES, ParticleOptions, ParticleSpec

__all__ = ["DEFAULT_MAX_SUBGAME_HISTORIES", "ROWS", "SUBGAMES", "ParticleOptions", "ParticleSpec"]
