"""NumPy's `PCG64(SeedSequence(...))` seeded from the sequence's pool in pure Python, bit for bit.

A lazy trunk strategy (`pvf.datasets.lazy_strategy`) seeds a generator for
every new infostate and takes at most 2 + 2·A uniforms from it. Building
`default_rng(seed_sequence)` costs about 18 µs, most of it
`SeedSequence.generate_state` (a loop over NumPy scalars) and the new
objects; the arithmetic is a few dozen word operations. Here one `PCG64`
and its `Generator` are kept and re-seeded in place:
  1. `generate_state(4, uint64)` hashes the sequence's pool (four 32-bit
     words) into eight 32-bit words (NumPy's `bit_generator.pyx`: XOR with
     a running constant, multiply, xor-shift by 16), read as four
     little-endian 64-bit words s₀ s₁ i₀ i₁.
  2. PCG64 takes state s = s₀·2⁶⁴ + s₁ and stream i = i₀·2⁶⁴ + i₁ as NumPy's
     `pcg64_set_seed` does: increment c = 2i + 1; state 0 stepped (x ↦ a·x + c
     mod 2¹²⁸), s added, stepped again.
The resulting (state, increment) is written into the kept bit generator;
its doubles are then NumPy's own. `tests/datasets/test_pcg64_seeding.py`
checks both steps against `PCG64(SeedSequence(words)).state`.
"""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
MASK128 = (1 << 128) - 1
INIT_B, MULT_B = 0x8B51F9DD, 0x58F38DED
PCG_MULTIPLIER = (2549297995355413924 << 64) + 4865540595714422341


def _generate_state_constants() -> tuple[tuple[int, int], ...]:
    """`generate_state`'s running constant before and after each of its eight steps."""
    out, hash_const = [], INIT_B
    for _ in range(8):
        after = hash_const * MULT_B & MASK32
        out.append((hash_const, after))
        hash_const = after
    return tuple(out)


STATE_CONSTANTS = _generate_state_constants()


def pcg64_state(pool: list[int]) -> tuple[int, int]:
    """PCG64's (state, increment) when seeded by a `SeedSequence` whose pool is `pool` (four 32-bit words)."""
    words = []
    for i, (before, after) in enumerate(STATE_CONSTANTS):
        value = (pool[i & 3] ^ before) * after & MASK32
        words.append(value ^ value >> 16)
    initial = words[1] << 96 | words[0] << 64 | words[3] << 32 | words[2]
    increment = (words[5] << 97 | words[4] << 65 | words[7] << 33 | words[6] << 1 | 1) & MASK128
    return ((increment + initial) * PCG_MULTIPLIER + increment) & MASK128, increment


class ReseededGenerator:
    """One `Generator` over one `PCG64`, re-seeded in place from a `SeedSequence` per use."""

    def __init__(self):
        self.bit_generator = np.random.PCG64(0)
        self.generator = np.random.Generator(self.bit_generator)
        self._state = {"bit_generator": "PCG64", "state": {}, "has_uint32": 0, "uinteger": 0}

    def seeded(self, sequence: np.random.SeedSequence) -> np.random.Generator:
        """The generator in the state of `default_rng(sequence)` (valid until the next call)."""
        state, increment = pcg64_state(sequence.pool.tolist())
        self._state["state"] = {"state": state, "inc": increment}
        self.bit_generator.state = self._state
        return self.generator
