"""`pvf.datasets.pcg64_seeding` against NumPy: the seeded state and the doubles after it, bit for bit."""

import random

import numpy as np

from pvf.datasets.pcg64_seeding import ReseededGenerator, pcg64_state


def test_the_state_is_numpys_for_seed_sequences_of_any_length():
    draw = random.Random(0)
    for trial in range(300):
        words = np.array([draw.getrandbits(32) for _ in range(draw.choice([1, 2, 4, 5, 9, 12]))], dtype=np.uint32)
        sequence = np.random.SeedSequence(words)
        expected = np.random.PCG64(sequence).state["state"]
        assert pcg64_state(sequence.pool.tolist()) == (expected["state"], expected["inc"]), trial


def test_a_reseeded_generator_draws_as_default_rng_after_any_earlier_use():
    draw = random.Random(1)
    reseeded = ReseededGenerator()
    for _ in range(200):
        sequence = np.random.SeedSequence(draw.getrandbits(96), spawn_key=(draw.getrandbits(20),))
        size = draw.randint(1, 30)
        reseeded.seeded(sequence).integers(5, size=draw.randint(0, 3), dtype=np.int32)  # may buffer a 32-bit word
        rng, fresh = reseeded.seeded(sequence), np.random.default_rng(sequence)
        np.testing.assert_array_equal(rng.random(size), fresh.random(size))
        np.testing.assert_array_equal(
            rng.integers(7, size=3, dtype=np.int32), fresh.integers(7, size=3, dtype=np.int32)
        )
