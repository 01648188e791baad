"""Random trunk strategies: valid, reproducible per trunk id, the configured mix, correct reaches."""

from __future__ import annotations

import numpy as np
import pytest

from pvf.datasets.sampling import SamplingConfig, leaf_beliefs, sample_trunk_strategies
from pvf.errors import PvfError
from pvf.solvers.sequence_form import build_sequence_game


@pytest.fixture(scope="module")
def trunk(leduc):
    return build_sequence_game(leduc, depth_limit=7)


def _per_infostate_sums(seqs, strat):
    R = seqs.num_roots
    return np.add.reduceat(strat[R:], seqs.info_start - R, axis=0)


def test_strategies_are_distributions(trunk):
    strats = sample_trunk_strategies(trunk, np.arange(40), seed=3, config=SamplingConfig())
    for seqs, s in zip(trunk.players, strats):
        assert s.shape == (seqs.num_sequences, 40)
        assert np.all(s >= 0) and np.all(s[: seqs.num_roots] == 1)
        np.testing.assert_allclose(_per_infostate_sums(seqs, s), 1.0, rtol=0, atol=1e-12)


def test_a_trunk_depends_on_seed_and_id_only(trunk):
    cfg = SamplingConfig()
    batch = sample_trunk_strategies(trunk, np.array([5, 9, 2]), seed=11, config=cfg)
    alone = sample_trunk_strategies(trunk, np.array([9]), seed=11, config=cfg)
    for n in (0, 1):
        np.testing.assert_array_equal(batch[n][:, 1], alone[n][:, 0])
        assert not np.array_equal(batch[n][:, 0], batch[n][:, 1])
    other_seed = sample_trunk_strategies(trunk, np.array([9]), seed=12, config=cfg)
    assert not np.array_equal(other_seed[0], alone[0])


def test_mix_frequencies(trunk):
    """Share of uniform / pure infostates matches the configured mix (binomial, 6 sigma)."""
    cfg = SamplingConfig(p_uniform=0.2, p_pure=0.3, p_keep=1.0)
    seqs = trunk.players[0]
    strat = sample_trunk_strategies(trunk, np.arange(300), seed=0, config=cfg)[0]
    R = seqs.num_roots
    multi = np.flatnonzero(seqs.info_size > 1)
    is_pure = np.maximum.reduceat(strat[R:], seqs.info_start - R, axis=0)[multi] == 1.0
    is_uniform = np.isclose(strat[seqs.info_start[multi]], 1.0 / seqs.info_size[multi][:, None])
    n = is_pure.size
    for observed, p in ((is_pure.mean(), 0.8 * 0.3), (is_uniform.mean(), 0.2)):
        assert abs(observed - p) < 6 * np.sqrt(p * (1 - p) / n)


def test_no_kept_action_means_uniform(trunk):
    strat = sample_trunk_strategies(trunk, np.arange(3), seed=0, config=SamplingConfig(0.0, 0.0, 0.0))[1]
    np.testing.assert_array_equal(strat, sample_trunk_strategies(trunk, np.arange(3), 0, SamplingConfig(1.0, 0, 0))[1])


def test_bad_mix_is_refused():
    with pytest.raises(PvfError, match="p_keep"):
        SamplingConfig(p_keep=1.5)


def test_leaf_beliefs_are_products_along_histories(leduc, trunk):
    """Independent check: walk each leaf infostate's history up to the root multiplying own action probabilities."""
    strats = sample_trunk_strategies(trunk, np.arange(4), seed=1, config=SamplingConfig())
    beliefs = leaf_beliefs(trunk, strats)
    for n in (0, 1):
        seqs = trunk.players[n]
        seq_of = {}
        for k, info in enumerate(seqs.infostates):
            for j, a in enumerate(leduc.infostate_actions[n][info]):
                seq_of[(int(info), a)] = seqs.info_start[k] + j
        for col, info in enumerate(trunk.leaf_infostates[n]):
            h = int(leduc.infostate_history[n][info])
            expected = np.ones(4)
            while leduc.parent[h] >= 0:
                p = int(leduc.parent[h])
                if leduc.player[p] == n:
                    expected = expected * strats[n][seq_of[(int(leduc.infostate[p, n]), int(leduc.action[h]))]]
                h = p
            np.testing.assert_allclose(beliefs[n][:, col], expected, rtol=1e-12)


@pytest.mark.parametrize("config", [SamplingConfig(), SamplingConfig(0.2, 0.5, 0.3), SamplingConfig(0.0, 0.0, 0.0)])
def test_lazy_strategies_are_the_documented_draw(config):
    """`LazyTrunkStrategy` assembles the seed words itself: the generator of
    `default_rng(SeedSequence(seed, spawn_key=(t, *blake2b words)))`, four draws, bit for bit."""
    import hashlib

    from pvf.datasets.lazy_strategy import LazyTrunkStrategy

    def documented(seed, trunk, text, size):
        digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
        key = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(trunk, *key)))
        kind, pick = rng.random(), rng.random()
        keep, weight = rng.random(size), rng.random(size)
        if kind < config.p_uniform:
            return np.full(size, 1.0 / size)
        if kind < config.p_uniform + (1.0 - config.p_uniform) * config.p_pure:
            out = np.zeros(size)
            out[min(int(pick * size), size - 1)] = 1.0
            return out
        w = np.where(keep < config.p_keep, weight, 0.0)
        return w / w.sum() if w.sum() > 0.0 else np.full(size, 1.0 / size)

    for seed, trunk in [(0, 0), (7, 3), (2**32, 2**33 + 1), (2**70 + 5, 12)]:
        strategy = LazyTrunkStrategy(seed, trunk, config)
        for i in range(60):
            text, size = f"Current player: {i % 2}\nP0 hand: {i}", 1 + i % 13
            np.testing.assert_array_equal(strategy(text, size), documented(seed, trunk, text, size))
