"""History sampling by a strategy: unbiased particle beliefs, checked against the enumerated public tree."""

import numpy as np
import pytest

from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError
from pvf.games.history_sampling import continuations, play_to_depth, sample_particles
from pvf.games.particle_tree import find_histories, history_actions
from pvf.games.public_tree import CHANCE, TERMINAL
from tests.conftest import GOOF4, GOOF5, LEDUC, cached_tree


def exact_reach(tree, strategy):
    """[H, 3] chance, player-1 and player-2 reach of every history under the lazy strategy, via the tree's arrays."""
    reach = np.ones((tree.num_histories, 3))
    for h in range(1, tree.num_histories):
        p = tree.parent[h]
        reach[h] = reach[p]
        who = tree.player[p]
        if who == CHANCE:
            reach[h, 0] *= tree.chance_prob[h]
        else:
            i = tree.infostate[p, who]
            actions = tree.infostate_actions[who][i]
            probs = strategy(tree.infostate_strings[who][i], len(actions))
            reach[h, 1 + who] *= probs[actions.index(tree.action[h])]
    return reach


@pytest.mark.parametrize("game,depth,K,samples", [(GOOF4, 2, 4, 3000), (GOOF5, 2, 8, 2000), (LEDUC, 3, 4, 3000)])
def test_mean_particle_beliefs_are_the_exact_beliefs(game, depth, K, samples):
    """Mean over samples of Σ_k w_k·1(h_k ∈ I) = Σ_{h∈I} π(h) for every infostate I of the public state.

    Tolerance: 4.5 standard errors of the mean (plus 1e-12), per infostate of both players.
    """
    tree = cached_tree(game)
    strategy = LazyTrunkStrategy(seed=3, trunk_id=5, config=SamplingConfig())
    rng = np.random.default_rng(0)
    public_history = play_to_depth(tree.loaded, strategy, depth, rng)
    root = find_histories(tree, [public_history])[0]
    ps = tree.public_state[root]
    members = tree.histories_in(ps)
    members = members[tree.player[members] != TERMINAL]
    reach = exact_reach(tree, strategy)
    joint = reach.prod(axis=1)
    estimates = np.zeros((samples, len(members)))
    position = {tuple(history_actions(tree, h)): j for j, h in enumerate(members)}
    dead = 0
    for s in range(samples):
        sample = sample_particles(tree.loaded, strategy, public_history, K, rng)
        dead += sample.dead
        slots = [position[p] for p in sample.particles]
        np.testing.assert_allclose(sample.own_reach, reach[members[slots]][:, 1:], rtol=1e-12)
        estimates[s, slots] += sample.weights
    for n in (0, 1):
        infos, where = np.unique(tree.infostate[members, n], return_inverse=True)
        per_info = np.zeros((samples, len(infos)))
        np.add.at(per_info.T, where, estimates.T)
        exact = np.bincount(where, weights=joint[members], minlength=len(infos))
        mean, se = per_info.mean(axis=0), per_info.std(axis=0) / np.sqrt(samples)
        assert np.all(np.abs(mean - exact) <= 4.5 * se + 1e-12), (game, n, np.max(np.abs(mean - exact) / (se + 1e-30)))
    # the whole public state's mass too (the weights are not self-normalised)
    total = estimates.sum(axis=1)
    assert abs(total.mean() - joint[members].sum()) <= 4.5 * total.std() / np.sqrt(samples) + 1e-12


def test_public_states_are_drawn_by_their_reach():
    tree = cached_tree(GOOF4)
    strategy = LazyTrunkStrategy(seed=0, trunk_id=1, config=SamplingConfig())
    joint = exact_reach(tree, strategy).prod(axis=1)
    ps_at = tree.public_states_at_depth(2)
    hist = np.flatnonzero(np.isin(tree.public_state, ps_at) & (tree.player != TERMINAL))
    hist = hist[tree.depth[hist] == 2]
    first_turn = hist[tree.player[hist] == 0]
    p = np.array([joint[first_turn][tree.public_state[first_turn] == s].sum() for s in ps_at])
    rng = np.random.default_rng(1)
    M = 4000
    drawn = [
        tree.public_state[find_histories(tree, [play_to_depth(tree.loaded, strategy, 2, rng)])[0]] for _ in range(M)
    ]
    freq = np.array([np.mean(np.asarray(drawn) == s) for s in ps_at])
    assert p.sum() == pytest.approx(1.0)
    assert np.all(np.abs(freq - p) <= 4.5 * np.sqrt(p * (1 - p) / M) + 1.0 / M)


def test_a_sample_is_a_function_of_the_seed_and_ids():
    tree = cached_tree(GOOF5)
    runs = []
    for _ in range(2):
        strategy = LazyTrunkStrategy(seed=7, trunk_id=2, config=SamplingConfig())
        rng = np.random.default_rng(11)
        h = play_to_depth(tree.loaded, strategy, 3, rng)
        runs.append(sample_particles(tree.loaded, strategy, h, 16, rng))
    assert runs[0].particles == runs[1].particles
    np.testing.assert_array_equal(runs[0].weights, runs[1].weights)
    with pytest.raises(PvfError, match="at least 1"):
        sample_particles(
            tree.loaded, runs[0] and LazyTrunkStrategy(0, 0, SamplingConfig()), runs[0].public_history, 0, rng
        )


def test_continuations_advance_one_move_of_the_original_game():
    """A Goofspiel round is both bids, its probability each player's factor times the other's; a chance move has
    no player factor."""
    strategy = LazyTrunkStrategy(seed=3, trunk_id=1, config=SamplingConfig())
    steps = continuations(cached_tree(GOOF5).loaded, (), strategy)
    assert len(steps) == 25 and all(len(s.actions) == 2 and not s.terminal for s in steps)
    assert sum(s.probability for s in steps) == pytest.approx(1.0)
    for s in steps:
        assert s.probability == pytest.approx(s.own[0] * s.own[1])
    deals = continuations(cached_tree(LEDUC).loaded, (), strategy)
    assert len(deals) == 6 and all(len(s.actions) == 1 and np.array_equal(s.own, [1.0, 1.0]) for s in deals)
    assert sum(s.probability for s in deals) == pytest.approx(1.0)
