"""Step 1 of particle sample i: its trunk strategy, its generator and the K particles it draws.

Trunk strategy i (`LazyTrunkStrategy(seed, i)`) is played to the public
state's move (`depth`, or `depth` − 1 for children rows) and K particles of
the public state reached are drawn with their importance weights
(`pvf.games.history_sampling`, through the spec's particle engine). With
`public_states="undecided"` (children rows) the trunk strategy is played
again from the same stream until the history reached is one where the trunk
matters (`pvf.solvers.particle_settings.play_until_trunk_matters`, as the
particle-trunk sweep draws its roots): in Goofspiel-13 at move 9, 17.5% of random
plays are, and nets trained on all of them err 3–5× more on those than on
the rest (docs/results/particles.md).
A sample whose first play matters is the "all" sample, bit for bit. The
generator is `default_rng(SeedSequence(seed, spawn_key=(i,)))`, so a
sample depends on (spec, i) only, never on the worker or task. Where every
draw dies the K particles are drawn again from the same stream; where a
children sample's parents have no child both players can reach
(`pvf.datasets.particle_children.NoLiveChildren`: the game ends at move
`depth`, or one player's belief is 0 in every child public state) the
trunk strategy plays again from the same stream (`play_again`).
"""

from __future__ import annotations

import numpy as np

from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.spec import GenerationSpec
from pvf.games.engine import ParticleEngine, live_particles
from pvf.games.history_sampling import ParticleSample
from pvf.solvers.particle_settings import play_until_trunk_matters


def played_history(
    spec: GenerationSpec, game: ParticleEngine, sample_id: int
) -> tuple[tuple[int, ...], LazyTrunkStrategy, np.random.Generator]:
    """(the history trunk strategy i plays to the sample's move, replayed where `public_states` asks, the strategy,
    generator i after the play) of a particle spec's sample i."""
    strategy = LazyTrunkStrategy(spec.seed, sample_id, spec.sampling)
    rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(sample_id,)))
    return play_again(spec, game, strategy, rng), strategy, rng


def play_again(
    spec: GenerationSpec, game: ParticleEngine, strategy: LazyTrunkStrategy, rng: np.random.Generator
) -> tuple[int, ...]:
    """The history `strategy` plays to the sample's move from `rng` as it stands (`played_history`'s play; a
    children sample whose parents have no live children plays again from the same stream)."""
    options = spec.particles
    at = spec.depth - 1 if options.rows == "children" else spec.depth
    if options.public_states == "undecided":
        hint = "; use --public-states all or another --depth"
        return play_until_trunk_matters(game, strategy, at, spec.depth, rng, hint)
    return game.play_to_depth(strategy, at, rng)


def draw_particles(
    spec: GenerationSpec, game: ParticleEngine, sample_id: int
) -> tuple[ParticleSample, LazyTrunkStrategy, np.random.Generator]:
    """(the particles, trunk strategy i, generator i after the draw) of a particle spec's sample i."""
    history, strategy, rng = played_history(spec, game, sample_id)
    return live_particles(game, strategy, history, spec.particles.count, rng), strategy, rng
