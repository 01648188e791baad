"""The native Goofspiel kernel against OpenSpiel: rules, strings, features, trees, induced PBSs, sampling."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python.observation import make_observation

from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError
from pvf.games import goofspiel_kernel as gk
from pvf.games.engine import particle_engine
from pvf.games.induced_pbs import induced_roots
from pvf.games.loading import load_game
from pvf.games.openspiel_engine import OpenSpielEngine
from pvf.games.particle_tree import build_particle_tree, find_histories, history_actions
from pvf.games.public_tree import TERMINAL

GAMES = [
    f"goofspiel(num_cards={n},imp_info=True,points_order={order})"
    for n in (4, 5, 8, 13)
    for order in ("descending", "ascending")
]
POINTS = "goofspiel(imp_info=True,num_cards=5,points_order=ascending,returns_type=point_difference)"
SMALL = [GAMES[0], GAMES[1], POINTS]  # N = 4 both orders, and N = 5 with point-difference returns
PUBLIC = dict(perfect_recall=True, public_info=True, private_info=pyspiel.PrivateInfoType.NONE)
PRIVATE = dict(perfect_recall=True, public_info=False, private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER)


def _observe(loaded, kind, state, player):
    obs = make_observation(loaded.original, pyspiel.IIGObservationType(**kind))
    obs.set_from(state, player)
    return np.concatenate([np.asarray(v, dtype=np.float32).ravel() for v in obs.dict.values()])


def _check_history(loaded, rules, path, state, original):
    """Legal actions, both information-state strings, the public observation, returns and features at one history."""
    assert gk.legal_actions(rules, path) == list(state.legal_actions())
    for n in (0, 1):
        assert gk.information_state_string(rules, path, n) == state.information_state_string(n)
    public = make_observation(loaded.original, pyspiel.IIGObservationType(**PUBLIC))
    assert gk.public_observation_string(rules, path) == public.string_from(original, 0)
    assert gk.returns(rules, path) == list(state.returns())
    row = np.array([path])
    np.testing.assert_array_equal(gk.public_features(rules, row)[0], _observe(loaded, PUBLIC, original, 0))
    for n in (0, 1):
        seen = original
        if n == 0 and len(path) % 2 == 1:  # pvf.games.features observes player 1 mid-round after the round
            seen = original.clone()
            seen.apply_actions([path[-1], original.legal_actions(1)[0]])
        np.testing.assert_array_equal(gk.private_features(rules, row, n)[0], _observe(loaded, PRIVATE, seen, n))


@pytest.mark.parametrize("game", GAMES + [POINTS])
def test_random_playouts_match_openspiel(game):
    loaded = load_game(game)
    rules = gk.rules_of(loaded)
    rng = np.random.default_rng(0)
    for _ in range(6):
        state, original, path = loaded.sequential.new_initial_state(), loaded.original.new_initial_state(), []
        while True:
            _check_history(loaded, rules, path, state, original)
            if state.is_terminal():
                break
            action = int(rng.choice(state.legal_actions()))
            path.append(action)
            state.apply_action(action)
            if len(path) % 2 == 0:
                original.apply_actions(path[-2:])


@pytest.mark.parametrize("game", SMALL)
def test_exhaustive_trees_are_openspiels(game):
    """The whole game as one particle tree (the initial state): every array, string and lookup of the walked tree."""
    loaded = load_game(game)
    native, roots = particle_engine(loaded, "native").particle_tree([()])
    walked = build_particle_tree(loaded, [()])
    _assert_same_tree(native, walked)
    assert roots.tolist() == [0]
    rules = gk.rules_of(loaded)
    for h in np.random.default_rng(1).choice(walked.num_histories, 40, replace=False):
        path = history_actions(walked, h)
        _check_history(loaded, rules, path, walked.state_at(h), walked.original_state_at(h))


def _assert_same_tree(a, b):
    for name in ("parent", "action", "level", "depth", "player", "chance_prob", "chance_reach", "utility"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("public_state", "infostate", "public_state_depth", "public_state_level", "public_state_parent"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert list(a.public_state_strings) == list(b.public_state_strings)
    assert a.utility_sum == b.utility_sum
    for n in (0, 1):
        np.testing.assert_array_equal(a.infostate_public_state[n], b.infostate_public_state[n])
        np.testing.assert_array_equal(a.infostate_history[n], b.infostate_history[n])
        assert list(a.infostate_strings[n]) == list(b.infostate_strings[n])
        assert list(a.infostate_actions[n]) == list(b.infostate_actions[n])
        assert len(a.public_state_infostates[n]) == len(b.public_state_infostates[n])
        for x, y in zip(a.public_state_infostates[n], b.public_state_infostates[n]):
            np.testing.assert_array_equal(x, y)
        some = b.infostate_strings[n][len(b.infostate_strings[n]) // 2]
        assert a.infostate_index(n, some) == b.infostate_index(n, some)


def _random_particles(loaded, rng, count, level):
    out = set()
    while len(out) < count:
        state, path = loaded.sequential.new_initial_state(), []
        while len(path) < level:
            path.append(int(rng.choice(state.legal_actions())))
            state.apply_action(path[-1])
        out.add(tuple(path))
    return sorted(out, key=lambda p: rng.random())


@pytest.mark.parametrize("game", GAMES)
def test_particle_trees_are_openspiels(game):
    """Particles at one level (the pipeline's), at mixed levels, one a prefix of another, with depth limits."""
    loaded = load_game(game)
    n = gk.rules_of(loaded).num_cards
    rng = np.random.default_rng(2)
    deep = 2 * (n - 3)  # three cards left: small subtrees below
    cases = [
        (_random_particles(loaded, rng, 6, deep), None),
        (_random_particles(loaded, rng, 6, deep) + _random_particles(loaded, rng, 3, deep + 1), None),
        (_random_particles(loaded, rng, 5, max(deep - 2, 2)), n - 2),
    ]
    mixed = _random_particles(loaded, rng, 3, deep)
    cases.append((mixed + [mixed[0][:-3]], n - 1))  # one particle is a prefix of another
    engine = particle_engine(loaded, "native")
    for particles, limit in cases:
        native, roots = engine.particle_tree(particles, depth_limit=limit)
        walked = build_particle_tree(loaded, particles, depth_limit=limit)
        _assert_same_tree(native, walked)
        np.testing.assert_array_equal(roots, find_histories(walked, particles))


@pytest.mark.parametrize(
    "particles,limit,message",
    [
        ([], None, "at least one particle"),
        ([(0, 1), (0, 1)], None, "must be distinct"),
        ([(0, 1, 0, 1)], None, r"particle \[0, 1, 0\]: 0 is not a legal action"),
        ([(0, 7)], None, "7 is not a legal action"),
        ([(0, 1, 2, 3, 1, 0)], None, "is a terminal history"),
        ([(0, 1, 2, 3, 1, 0, 3)], None, "continues past a terminal history"),
        ([(0, 1, 2, 3)], 2, "is at move 2, not above the depth limit 2"),
        ([(0, 1), (0, 2, 1)], 4, "more than 10 histories"),
    ],
)
def test_bad_particles_are_refused_as_openspiels(particles, limit, message):
    loaded = load_game(GAMES[0])
    cap = 10 if "10 histories" in message else 1000
    for engine in (particle_engine(loaded, "native"), OpenSpielEngine(loaded)):
        with pytest.raises(PvfError, match=message):
            engine.particle_tree(particles, depth_limit=limit, max_histories=cap)


@pytest.mark.parametrize("game,level", [(GAMES[0], 4), (GAMES[3], 5), (GAMES[4], 8), (GAMES[7], 20)])
def test_induced_pbss_are_openspiels(game, level):
    """Every pair of particle infostates joined in closed form: the walked join's histories, pairs and reaches."""
    loaded = load_game(game)
    engine = particle_engine(loaded, "native")
    walker = OpenSpielEngine(loaded)
    strategy = LazyTrunkStrategy(0, 3, SamplingConfig())
    rng = np.random.default_rng(4)
    for _ in range(3):
        history = engine.play_to_depth(strategy, level // 2, rng)
        sample = engine.sample_particles(strategy, history[:level], 16, rng)
        if not sample.particles:
            continue
        tree, roots = walker.particle_tree(sample.particles, depth_limit=level // 2 + 1)
        infostates = tuple(np.unique(tree.infostate[roots, n]) for n in (0, 1))
        mine, theirs = engine.induced_histories(tree, infostates), walker.induced_histories(tree, infostates)
        np.testing.assert_array_equal(mine.paths, theirs.paths)
        np.testing.assert_array_equal(mine.pairs, theirs.pairs)
        assert len(mine.paths) >= len(sample.particles)
        for a, b in zip(
            induced_roots(engine.induced_histories, tree, roots, sample.own_reach),
            induced_roots(walker.induced_histories, tree, roots, sample.own_reach),
        ):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "game,depth,draws", [(GAMES[0], 2, 8), (GAMES[3], 2, 16), (GAMES[5], 4, 16), (GAMES[6], 9, 32)]
)
def test_sampling_is_openspiels_draw_for_draw(game, depth, draws):
    """The same generator state in, the same public state, particles, weights, reaches, continuations and state out."""
    loaded = load_game(game)
    engines = (particle_engine(loaded, "native"), OpenSpielEngine(loaded))
    for trunk in range(4):
        out = []
        for engine in engines:
            strategy = LazyTrunkStrategy(1, trunk, SamplingConfig())
            rng = np.random.default_rng(trunk)
            history = engine.play_to_depth(strategy, depth, rng)
            sample = engine.sample_particles(strategy, history, draws, rng)
            steps = engine.continuations(np.array(sample.particles), strategy)
            lowest = min(set(range(gk.rules_of(loaded).num_cards)) - set(history[::2]))
            mid = engine.continuations(np.array([history + (lowest,)]), strategy)  # player 2 to bid
            out.append((history, sample, steps, mid, rng.random()))
        (h1, s1, c1, m1, u1), (h2, s2, c2, m2, u2) = out
        assert h1 == h2 and s1.particles == s2.particles and (s1.dead, s1.draws) == (s2.dead, s2.draws) and u1 == u2
        np.testing.assert_array_equal(s1.weights, s2.weights)
        np.testing.assert_array_equal(s1.own_reach, s2.own_reach)
        for a, b in ((c1, c2), (m1, m2)):
            for name in ("parent", "actions", "probability", "own", "terminal"):
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("game", [GAMES[2], GAMES[7]])
def test_features_are_the_observers(game):
    loaded = load_game(game)
    engine, walker = particle_engine(loaded, "native"), OpenSpielEngine(loaded)
    rng = np.random.default_rng(5)
    particles = _random_particles(loaded, rng, 8, 2 * (gk.rules_of(loaded).num_cards - 3))
    tree, _ = walker.particle_tree(particles)
    for level in range(tree.level.max()):
        for ps in np.unique(tree.public_state[(tree.level == level) & (tree.player != TERMINAL)])[:3]:
            infostates = tuple(tree.public_state_infostates[n][ps] for n in (0, 1))
            (p1, q1), (p2, q2) = engine.features(tree, ps, infostates), walker.features(tree, ps, infostates)
            np.testing.assert_array_equal(p1, p2)
            for a, b in zip(q1, q2):
                np.testing.assert_array_equal(a, b)


def test_engines_are_chosen_by_game():
    assert particle_engine(GAMES[0]).name == "native"
    assert particle_engine(GAMES[0], "openspiel").name == "openspiel"
    for other in ("leduc_poker", "goofspiel(num_cards=4,imp_info=True,points_order=random)"):
        assert particle_engine(other).name == "openspiel"
        with pytest.raises(PvfError, match="has no native engine"):
            particle_engine(other, "native")
    with pytest.raises(PvfError, match="unknown engine 'fast'"):
        particle_engine(GAMES[0], "fast")
