"""Particle beliefs: filtered and regenerated samples estimate the exact range without bias, at the rate sampling
predicts, checked against the enumerated public tree of Goofspiel-5; the agent's own-infostate sample too."""

import numpy as np
import pytest

from pvf.agents.particle_beliefs import OwnActions, StrategyMemory, own_sample, track
from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError
from pvf.games.engine import particle_engine
from pvf.games.history_sampling import ParticleSample, play_to_depth
from pvf.games.particle_tree import find_histories, history_actions
from pvf.games.public_tree import TERMINAL
from tests.conftest import GOOF5, cached_tree
from tests.games.test_history_sampling import exact_reach

STRATEGY = LazyTrunkStrategy(seed=3, trunk_id=5, config=SamplingConfig())


def _setting(depth=3, seed=0):
    tree = cached_tree(GOOF5)
    history = play_to_depth(tree.loaded, STRATEGY, depth, np.random.default_rng(seed))
    root = find_histories(tree, [history])[0]
    members = tree.histories_in(tree.public_state[root])
    members = members[tree.player[members] != TERMINAL]
    return tree, history, members, exact_reach(tree, STRATEGY)


def _filtered(engine, history, K, rng, min_live, strategy=STRATEGY):
    """A sample of `history`'s public state tracked round by round from the first (filtering, regenerating)."""
    sample, regenerations = None, 0
    for r in range(1, len(history) // 2 + 1):
        sample, regenerated = track(engine, strategy, sample, history[: 2 * r], K, rng, min_live)
        regenerations += regenerated
    return sample, regenerations


def _per_infostate(tree, members, samples, player):
    """([runs, I] estimated mass of each of `player`'s infostates, [I] exact mass) over the public state."""
    infos, where = np.unique(tree.infostate[members, player], return_inverse=True)
    estimates = np.zeros((len(samples), len(infos)))
    position = {tuple(history_actions(tree, h)): j for j, h in enumerate(members)}
    for s, sample in enumerate(samples):
        for path, w in zip(sample.particles, sample.weights):
            estimates[s, where[position[path]]] += w
    return estimates, infos


def _relative_bias(runs, tree, members, joint):
    """(max over infostates of both players of |mean − exact| in standard errors, the total mass's relative bias)."""
    worst = 0.0
    for n in (0, 1):
        estimates, infos = _per_infostate(tree, members, runs, n)
        exact = np.array([joint[members[tree.infostate[members, n] == i]].sum() for i in infos])
        mean, se = estimates.mean(axis=0), estimates.std(axis=0) / np.sqrt(len(runs))
        worst = max(worst, float(np.max(np.abs(mean - exact) / (se + 1e-12))))
    total = sum(float(s.weights.sum()) for s in runs) / len(runs)
    return worst, total / joint[members].sum() - 1.0


@pytest.mark.parametrize("engine", ["native", "openspiel"])
def test_filtered_beliefs_are_unbiased(engine):
    """Mean over runs of each infostate's particle mass = its exact mass Σ_{h∈I} π(h), for both players, after
    filtering through three rounds (K = 4, min_live = 0: no regeneration). Tolerance: 4.5 standard errors."""
    tree, history, members, reach = _setting()
    engine = particle_engine(tree.loaded, engine)
    rng = np.random.default_rng(1)
    runs = [_filtered(engine, history, 4, rng, 0)[0] for _ in range(1500 if engine.name == "native" else 400)]
    assert any(not s.particles for s in runs)  # some filters lose every draw, and count as zero
    worst, _ = _relative_bias(runs, tree, members, reach.prod(axis=1))
    assert worst <= 4.5


def test_regenerating_by_the_survivors_raises_the_mean():
    """What the module docstring states: regeneration chosen by the filter's survivors is biased upwards, the
    more the more often it regenerates (K = 4; min_live = 1 regenerates where all die, 3 most of the time)."""
    tree, history, members, reach = _setting()
    engine = particle_engine(tree.loaded, "native")
    biases = []
    for min_live in (1, 3):
        rng = np.random.default_rng(1)
        runs = [_filtered(engine, history, 4, rng, min_live) for _ in range(2000)]
        biases.append(_relative_bias([s for s, _ in runs], tree, members, reach.prod(axis=1))[1])
    assert 0.02 < biases[0] < 0.09 and 0.09 < biases[1] < 0.18, biases


def test_the_error_falls_as_one_over_root_k():
    """The root-mean-square error of the infostate masses at K = 32 is about half that at K = 8 (1/√K)."""
    tree, history, members, reach = _setting()
    engine = particle_engine(tree.loaded, "native")
    joint = reach.prod(axis=1)
    rng = np.random.default_rng(2)
    errors = []
    for K in (8, 32):
        estimates, infos = _per_infostate(
            tree, members, [_filtered(engine, history, K, rng, 1)[0] for _ in range(400)], 0
        )
        exact = np.array([joint[members[tree.infostate[members, 0] == i]].sum() for i in infos])
        errors.append(np.sqrt(np.mean((estimates - exact) ** 2)))
    assert 1.6 < errors[0] / errors[1] < 2.5, errors


def test_filtering_is_the_same_draw_for_draw_in_both_engines():
    tree, history, _, _ = _setting()
    samples = [
        _filtered(particle_engine(tree.loaded, e), history, 8, np.random.default_rng(5), 2)[0]
        for e in ("native", "openspiel")
    ]
    assert samples[0].particles == samples[1].particles
    np.testing.assert_array_equal(samples[0].weights, samples[1].weights)
    np.testing.assert_array_equal(samples[0].own_reach, samples[1].own_reach)


def test_the_own_infostate_sample_estimates_the_reach_inside_it():
    """Draws that play the agent's own actions, scaled by its exact own reach, estimate π(h) for h in its
    infostate I without bias (per opponent infostate joined with I, filtered without regeneration); every draw
    lands in I."""
    tree, history, members, reach = _setting()
    engine = particle_engine(tree.loaded, "native")
    seat = 1
    own = history[seat::2]
    taken = {}
    for r in range(len(history) // 2):
        at = history[: 2 * r + seat]
        legal = sorted(tree.infostate_actions[seat][tree.infostate[find_histories(tree, [at])[0], seat]])
        taken[engine.information_state_string(at, seat)] = legal.index(own[r])
    inside = members[tree.infostate[members, seat] == tree.infostate[find_histories(tree, [history])[0], seat]]
    own_reach = reach[inside[0], 1 + seat]
    rng = np.random.default_rng(3)
    runs = [
        own_sample(_filtered(engine, history, 4, rng, 0, OwnActions(STRATEGY, taken))[0], seat, own_reach)
        for _ in range(1500)
    ]
    assert all(path[seat::2] == own for sample in runs for path in sample.particles)
    estimates, infos = _per_infostate(tree, inside, runs, 1 - seat)
    joint = reach.prod(axis=1)
    exact = np.array([joint[inside[tree.infostate[inside, 1 - seat] == i]].sum() for i in infos])
    mean, se = estimates.mean(axis=0), estimates.std(axis=0) / np.sqrt(len(runs))
    assert np.all(np.abs(mean - exact) <= 4.5 * se + 1e-12)


def test_the_memory_and_its_refusals():
    memory = StrategyMemory({"I": {3: 1.0, 1: 0.0}}, explore=0.1)
    np.testing.assert_allclose(memory("I", 2), [0.05, 0.95])
    np.testing.assert_allclose(memory("unseen", 4), [0.25] * 4)
    assert memory.extended({"I": {1: 1.0, 3: 0.0}, "J": {0: 1.0}}).policy["I"] == {3: 1.0, 1: 0.0}
    with pytest.raises(PvfError, match="holds 2 actions"):
        memory("I", 3)
    with pytest.raises(PvfError, match="probability"):
        StrategyMemory(explore=2.0)
    tree, history, _, _ = _setting()
    a, b = history[:2]
    other = (b, a) if a != b else (0, 1)  # the first round's other outcome
    for engine in ("native", "openspiel"):
        start = ParticleSample(other, [other], np.ones(1), np.ones((1, 2)), 1, 0)
        with pytest.raises(PvfError, match="not on the way"):
            particle_engine(tree.loaded, engine).sample_particles(STRATEGY, history, 4, np.random.default_rng(0), start)
