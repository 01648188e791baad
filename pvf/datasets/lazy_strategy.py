"""Random trunk strategies drawn lazily, one infostate at a time, keyed by its string.

`pvf.datasets.sampling` draws a trunk strategy for every infostate of an
enumerated trunk at once. Where the trunk cannot be enumerated, the same
mix (`SamplingConfig`: uniform, pure, or mixed with kept U(0,1) weights) is
drawn only for the infostates a run visits: the infostate of trunk t with
OpenSpiel information-state string s gets the generator
`default_rng(SeedSequence(seed, spawn_key=(t, *blake2b(s))))`. Its strategy
is therefore a function of (seed, trunk id, string) alone, whatever order,
worker or resumed run visits it, and is cached per trunk. It is the
strategy particle samples are drawn by (a `pvf.games.history_sampling.Strategy`).
A Goofspiel-13 children sample meets about 250 new infostates, so the draw
is kept short: the seed sequence is built from its assembled entropy words
(NumPy's own assembly of seed and spawn key, done once per trunk: the same
generator state, 2 µs instead of 8), one generator is re-seeded in place
from the sequence's pool instead of building `default_rng`
(`pvf.datasets.pcg64_seeding`: the same state), and the mix takes its
uniforms in one call. With the kernel's string (`view_string`) a new
infostate costs 43 µs instead of 61 (median of six interleaved runs of
4,000 infostates on the 2-core container, one other job running).
"""

from __future__ import annotations

import hashlib

import numpy as np

from pvf.datasets.pcg64_seeding import ReseededGenerator
from pvf.datasets.sampling import SamplingConfig


def draw_mix(rng: np.random.Generator, size: int, config: SamplingConfig) -> np.ndarray:
    """[size] one behaviour of the authors' mix (the rules of `pvf.datasets.sampling`).

    Uniforms, in order: the kind, the pure action, `size` keep draws, `size` weights."""
    u = rng.random(2 + 2 * size).tolist()
    kind, pick = u[0], u[1]
    if kind < config.p_uniform:
        return np.full(size, 1.0 / size)
    if kind < config.p_uniform + (1.0 - config.p_uniform) * config.p_pure:
        out = np.zeros(size)
        out[min(int(pick * size), size - 1)] = 1.0
        return out
    w = np.array([weight if keep < config.p_keep else 0.0 for keep, weight in zip(u[2 : 2 + size], u[2 + size :])])
    total = w.sum()  # NumPy's summation order, as the enumerated trunk's draw
    return w / total if total > 0.0 else np.full(size, 1.0 / size)


def _words(value: int) -> list[int]:
    """A non-negative integer as NumPy's seed sequences take it: little-endian 32-bit words, at least one."""
    words = [value & 0xFFFFFFFF]
    value >>= 32
    while value:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
    return words


class LazyTrunkStrategy:
    """Trunk strategy `trunk_id` of a seeded stream: probabilities per infostate string, drawn on first use."""

    def __init__(self, seed: int, trunk_id: int, config: SamplingConfig):
        self.seed = int(seed)
        self.trunk_id = int(trunk_id)
        self.config = config
        self._cache: dict[str, np.ndarray] = {}
        # SeedSequence(seed, spawn_key=(trunk_id, *key)) assembles the entropy seed words, zero-padded to its
        # pool size, then the spawn key's words (these prefix words as bytes); each string's four key words follow.
        run = _words(self.seed)
        run += [0] * (np.random.SeedSequence(0).pool_size - len(run))
        self._prefix = np.array(run + _words(self.trunk_id), dtype="<u4").tobytes()
        self._generator = ReseededGenerator()

    def __call__(self, info_string: str, num_actions: int) -> np.ndarray:
        """[num_actions] probabilities of the legal actions (in OpenSpiel's order) at this infostate."""
        probs = self._cache.get(info_string)
        if probs is None:
            key = hashlib.blake2b(info_string.encode(), digest_size=16).digest()
            rng = self._generator.seeded(np.random.SeedSequence(np.frombuffer(self._prefix + key, "<u4")))
            probs = self._cache[info_string] = draw_mix(rng, num_actions, self.config)
        return probs
