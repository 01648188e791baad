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
"""

from __future__ import annotations

import hashlib

import numpy as np

from pvf.datasets.sampling import SamplingConfig


def string_key(text: str) -> tuple[int, ...]:
    """Four 32-bit words of the BLAKE2b digest of `text` (a spawn key that does not depend on Python's hash seed)."""
    digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def draw_mix(rng: np.random.Generator, size: int, config: SamplingConfig) -> np.ndarray:
    """[size] one behaviour of the authors' mix (the rules of `pvf.datasets.sampling`)."""
    kind, pick = rng.random(), rng.random()
    keep, weight = rng.random(size), rng.random(size)
    if kind < config.p_uniform:
        return np.full(size, 1.0 / size)
    if kind < config.p_uniform + (1.0 - config.p_uniform) * config.p_pure:
        out = np.zeros(size)
        out[min(int(pick * size), size - 1)] = 1.0
        return out
    w = np.where(keep < config.p_keep, weight, 0.0)
    total = w.sum()
    return w / total if total > 0.0 else np.full(size, 1.0 / size)


class LazyTrunkStrategy:
    """Trunk strategy `trunk_id` of a seeded stream: probabilities per infostate string, drawn on first use."""

    def __init__(self, seed: int, trunk_id: int, config: SamplingConfig):
        self.seed = int(seed)
        self.trunk_id = int(trunk_id)
        self.config = config
        self._cache: dict[str, np.ndarray] = {}

    def __call__(self, info_string: str, num_actions: int) -> np.ndarray:
        """[num_actions] probabilities of the legal actions (in OpenSpiel's order) at this infostate."""
        probs = self._cache.get(info_string)
        if probs is None:
            rng = np.random.default_rng(
                np.random.SeedSequence(self.seed, spawn_key=(self.trunk_id, *string_key(info_string)))
            )
            probs = self._cache[info_string] = draw_mix(rng, num_actions, self.config)
        return probs
