"""Particle beliefs: the re-solving agent's range where public states are too large to enumerate.

The agent's beliefs at a public state S are weighted histories of S (a
`ParticleSample`) whose weights estimate without bias the reach
π(h) = π_c(h)·π₁(h)·π₂(h) of every history under the strategies the agent
computed (`StrategyMemory`: its own as it played them, its model of the
opponent; uniform at an infostate no solve of its covered):
  1. At the first public state, K draws from the initial state
     (`ParticleEngine.sample_particles`, `pvf.games.history_sampling`).
  2. At each next public state S' (an observation), K draws continue the
     last particles, each picked in proportion to its weight, among the
     continuations consistent with S' (filtering, step 4 of
     `pvf.games.history_sampling`); particles that cannot reach S' die.
  3. Where fewer than `min_live` distinct particles survive, K fresh draws
     from the initial state by the memory as it is now (regeneration; where
     all of them die, again with twice the draws, and so on). A
     regenerated particle is weighed by the strategies the agent holds now,
     also at infostates it passed before they were solved (the authors'
     open "beliefs for regenerated particles"). Filtering alone
     (`min_live=0`) and a fresh sample are each unbiased; choosing between
     them by the filtered sample's survivors is not: a filter that lost
     most of its draws tends to underestimate, and replacing exactly those
     raises the mean (in Goofspiel-5, three rounds, K = 4: the total mass
     5% high with min_live = 1, 13% with 3; tests/agents). The agent's
     solves do not use these weights, only which infostates the particles
     hold (the induced PBS weighs histories by exact reaches). An unbiased
     regeneration would weigh every draw by π(h)/q(h) under the mixture of
     the filtering and the fresh proposal, chosen from the last sample alone.
  4. The agent's own infostate I must hold particles: it acts there. A
     second sample tracks I alone: its draws play the agent's own actual
     actions (`OwnActions`) and the memory elsewhere, so every draw lands in
     I, with ratio ρ = π_c·π_o/q (o the opponent); times the agent's exact
     own reach π_i(I) it estimates π(h) for h ∈ I. The agent's beliefs
     (`Beliefs.particles`) are the first sample's particles outside I and
     the second's inside it: unbiased for every set of histories.
A sample is a function of its generator's seed and the memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pvf.errors import PvfError
from pvf.games.engine import ParticleEngine
from pvf.games.history_sampling import ParticleSample, Strategy


class StrategyMemory:
    """The strategies the agent computed: {information-state string: {action: probability}}, uniform elsewhere.

    A `pvf.games.history_sampling.Strategy`: probabilities of the legal actions in ascending order (OpenSpiel's).
    """

    def __init__(self, policy: Mapping[str, Mapping[int, float]] | None = None, explore: float = 0.0):
        if not 0.0 <= explore <= 1.0:
            raise PvfError(f"explore is a probability, got {explore}")
        self.policy: dict[str, dict[int, float]] = dict(policy or {})
        self.explore = explore

    def extended(self, policy: Mapping[str, Mapping[int, float]]) -> StrategyMemory:
        """A new memory: this one's strategies with `policy`'s added (a key already held keeps its strategy)."""
        return StrategyMemory({**policy, **self.policy}, self.explore)

    def __call__(self, info_string: str, num_actions: int) -> np.ndarray:
        """[num_actions] the strategy held (uniform where none is), mixed with uniform at rate `explore`: an
        opponent who plays what the model never does leaves particles to find."""
        uniform = np.full(num_actions, 1.0 / num_actions)
        known = self.policy.get(info_string)
        if known is None:
            return uniform
        if len(known) != num_actions:
            raise PvfError(f"the memory holds {len(known)} actions at an infostate with {num_actions}")
        probs = np.array([known[a] for a in sorted(known)], dtype=np.float64)
        total = probs.sum()
        probs = probs / total if total > 0 else uniform
        return (1.0 - self.explore) * probs + self.explore * uniform


class OwnActions:
    """The memory, except at the agent's own past infostates: there the action it took, with probability 1.

    taken: {information-state string of the agent at a past decision: index of the action among the legal ones}.
    """

    def __init__(self, memory: Strategy, taken: Mapping[str, int]):
        self.memory, self.taken = memory, dict(taken)

    def __call__(self, info_string: str, num_actions: int) -> np.ndarray:
        k = self.taken.get(info_string)
        if k is None:
            return self.memory(info_string, num_actions)
        out = np.zeros(num_actions)
        out[k] = 1.0
        return out


def track(
    engine: ParticleEngine,
    memory: Strategy,
    previous: ParticleSample | None,
    public_history: Sequence[int],
    num_particles: int,
    rng: np.random.Generator,
    min_live: int,
) -> tuple[ParticleSample, bool]:
    """Steps 1–3: the sample of `public_history`'s public state, and whether it was regenerated.

    previous: the sample of an earlier public state on the way (None: draw from the initial state).
    min_live: fewer distinct live particles after filtering than this regenerate; 0 never regenerates (an
        empty sample stays empty: the unbiased filter).
    """
    if previous is not None and (previous.particles or min_live == 0):
        if not previous.particles:
            return previous, False
        sample = engine.sample_particles(memory, public_history, num_particles, rng, start=previous)
        if len(sample.particles) >= min_live:
            return sample, False
    regenerated = previous is not None
    for attempt in range(MAX_REGENERATIONS):
        draws = num_particles << min(attempt, MAX_DOUBLINGS)
        sample = engine.sample_particles(memory, public_history, draws, rng)
        if sample.particles:
            return sample, regenerated
    raise PvfError(f"{MAX_REGENERATIONS} samples of up to {draws} draws found no history of the public state")


# Regeneration where every draw died: again with twice the draws, up to 2**MAX_DOUBLINGS times K (each sample is
# unbiased for its own number of draws; a public state that the memory reaches rarely needs more of them).
MAX_REGENERATIONS = 100
MAX_DOUBLINGS = 10


@dataclass(frozen=True)
class Beliefs:
    """The agent's particle beliefs at one public state (step 4).

    public: the sample of the public state (steps 1–3); own: the sample of the agent's infostate I
    (`own_sample`: weights and the agent's own reach multiplied by π_i(I)); player: the agent; infostate: I's
    string at the public state's histories (as `ParticleEngine.information_state_string` gives it).
    """

    public: ParticleSample
    own: ParticleSample
    player: int
    infostate: str

    def particles(self, engine: ParticleEngine) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
        """(distinct particles, their weights [P], own reaches [P, 2]): `public`'s outside I, `own`'s inside."""
        outside = [
            k
            for k, path in enumerate(self.public.particles)
            if engine.information_state_string(path, self.player) != self.infostate
        ]
        particles = [self.public.particles[k] for k in outside] + list(self.own.particles)
        weights = np.concatenate([self.public.weights[outside], self.own.weights])
        own = np.concatenate([self.public.own_reach[outside], self.own.own_reach]).reshape(-1, 2)
        return particles, weights, own


def own_sample(sample: ParticleSample, player: int, own_reach: float) -> ParticleSample:
    """A sample drawn and filtered with `OwnActions` (the agent's reach 1 by construction, so it is tracked
    unscaled) scaled to the agent's exact own reach: weights × π_i(I), own reaches' column `player` π_i(I)."""
    reach = sample.own_reach.copy()
    reach[:, player] = own_reach
    return ParticleSample(
        public_history=sample.public_history,
        particles=sample.particles,
        weights=sample.weights * own_reach,
        own_reach=reach,
        draws=sample.draws,
        dead=sample.dead,
    )
