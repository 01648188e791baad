"""Particle subgames agree with the enumerated public tree where it exists."""

import numpy as np
import pytest

from pvf.errors import PvfError
from pvf.games.features import build_feature_tables
from pvf.games.particle_tree import build_particle_tree, find_histories, history_actions
from pvf.games.public_tree import TERMINAL
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.sequence_ops import uniform_strategy
from pvf.solvers.trunk_exploitability import trunk_exploitability
from tests.conftest import GOOF4, GOOF5, KUHN, LEDUC, cached_tree


def _keys(game, n):
    """Sequence index -> ('root', infostate string) or (infostate string, action)."""
    tree, seqs = game.tree, game.players[n]
    strings = tree.infostate_strings[n]
    keys = [("root", strings[i]) for i in seqs.root_infostates]
    keys += [
        (strings[seqs.infostates[seqs.seq_info[s]]], int(seqs.seq_action[s]))
        for s in range(seqs.num_roots, seqs.num_sequences)
    ]
    return keys


def _canonical(game):
    """The sequence form as key-indexed data: payoff entries, sequence parents."""
    keys = [_keys(game, n) for n in (0, 1)]
    A = game.payoff.tocoo()
    payoff = {(keys[0][i], keys[1][j]): v for i, j, v in zip(A.row, A.col, A.data) if v != 0.0}
    parents = [
        {keys[n][s]: (keys[n][p] if p >= 0 else None) for s, p in enumerate(game.players[n].seq_parent)} for n in (0, 1)
    ]
    return payoff, parents


def _assert_same_sequence_form(full_game, particle_game):
    pa, par_a = _canonical(full_game)
    pb, par_b = _canonical(particle_game)
    assert par_a == par_b
    assert pa.keys() == pb.keys()
    for k, v in pa.items():
        assert pb[k] == pytest.approx(v, abs=1e-15, rel=1e-12)


def _root_values(game, beliefs=None, iterations=30):
    result = cfr_plus(game, iterations, root_beliefs=beliefs)
    out = []
    for n in (0, 1):
        strings = [game.tree.infostate_strings[n][i] for i in game.players[n].root_infostates]
        out.append(dict(zip(strings, result.root_values[n][0])))
    return out, float(result.value[0])


def _particles_of(tree, public_state):
    roots = tree.histories_in(public_state)
    roots = roots[tree.player[roots] != TERMINAL]
    return roots, [history_actions(tree, h) for h in roots]


@pytest.mark.parametrize("game,depth", [(KUHN, 1), (LEDUC, 2), (LEDUC, 5), (GOOF4, 1), (GOOF4, 2), (GOOF5, 2)])
def test_public_state_particles_match_the_full_tree(game, depth):
    """All histories of a public state as particles: same sequence form and CFR+ values (1e-12)."""
    tree = cached_tree(game)
    ps = tree.public_states_at_depth(depth)[-1]
    roots, particles = _particles_of(tree, ps)
    ptree = build_particle_tree(game, particles)
    proots = find_histories(ptree, particles)
    assert [history_actions(ptree, h) for h in proots] == particles
    np.testing.assert_allclose(ptree.chance_reach[proots], tree.chance_reach[roots], rtol=1e-15)
    # Rooted at the public state (beliefs per infostate) ...
    full = build_sequence_game(tree, ps)
    part = build_sequence_game(ptree, int(ptree.public_state[proots[0]]))
    _assert_same_sequence_form(full, part)
    rng = np.random.default_rng(0)
    b = [rng.random(full.players[n].num_roots) for n in (0, 1)]
    # the particle root enumeration may order infostates differently: map beliefs by string
    pb = []
    for n in (0, 1):
        by_string = dict(zip([tree.infostate_strings[n][i] for i in full.players[n].root_infostates], b[n]))
        pb.append(np.array([by_string[ptree.infostate_strings[n][i]] for i in part.players[n].root_infostates]))
    va, ua = _root_values(full, (b[0][None], b[1][None]))
    vb, ub = _root_values(part, (pb[0][None], pb[1][None]))
    assert ua == pytest.approx(ub, abs=1e-12)
    for n in (0, 1):
        assert va[n].keys() == vb[n].keys()
        for s, v in va[n].items():
            assert vb[n][s] == pytest.approx(v, abs=1e-12)
    # ... and at a chance node over the particles with random weights.
    w = rng.random(len(roots))
    full = build_sequence_game(tree, root_histories=roots, root_weights=w)
    part = build_sequence_game(ptree, root_histories=proots, root_weights=w)
    _assert_same_sequence_form(full, part)
    va, ua = _root_values(full)
    vb, ub = _root_values(part)
    assert ua == pytest.approx(ub, abs=1e-12)
    for n in (0, 1):
        for s, v in va[n].items():
            assert vb[n][s] == pytest.approx(v, abs=1e-12)


def test_a_subset_of_particles_is_the_restricted_game():
    """Some histories of a Goofspiel-5 public state: the full tree restricted to them, depth-limited too."""
    tree = cached_tree(GOOF5)
    ps = tree.public_states_at_depth(2)[3]
    roots, particles = _particles_of(tree, ps)
    keep = np.random.default_rng(1).choice(len(roots), size=len(roots) // 2, replace=False)
    roots, particles = roots[keep], [particles[k] for k in keep]
    w = np.linspace(0.5, 1.5, len(roots))
    ptree = build_particle_tree(GOOF5, particles, depth_limit=4)
    proots = find_histories(ptree, particles)
    full = build_sequence_game(tree, depth_limit=4, root_histories=roots, root_weights=w)
    part = build_sequence_game(ptree, depth_limit=4, root_histories=proots, root_weights=w)
    _assert_same_sequence_form(full, part)
    for n in (0, 1):
        strings = lambda g, infos, n=n: sorted(g.tree.infostate_strings[n][i] for i in infos)  # noqa: E731
        assert strings(full, full.leaf_infostates[n][full.leaf_parent[n] >= 0]) == strings(
            part, part.leaf_infostates[n]
        )
    # the particle tree holds the particles' paths and the subgame below them, nothing else
    ancestors = set()
    for h in roots:
        while h >= 0:
            ancestors.add(int(h))
            h = tree.parent[h]
    assert ptree.num_histories == len(ancestors | set(full.histories.tolist()))


def test_exploitability_lp_runs_on_particle_subgames():
    """The trunk-exploitability LP of a uniform profile: same figure on both trees."""
    tree = cached_tree(GOOF4)
    ps = tree.public_states_at_depth(2)[0]
    roots, particles = _particles_of(tree, ps)
    ptree = build_particle_tree(GOOF4, particles)
    proots = find_histories(ptree, particles)
    w = np.full(len(roots), 0.25)
    figures = []
    for t, r in ((tree, roots), (ptree, proots)):
        g = build_sequence_game(t, root_histories=r, root_weights=w)
        uniform = tuple(uniform_strategy(g.players[n], 1)[:, 0] for n in (0, 1))
        masks = tuple(g.players[n].info_depth < 3 for n in (0, 1))  # the round below the root fixed
        ones = tuple(np.ones(g.players[n].num_roots) for n in (0, 1))
        figures.append(trunk_exploitability(g, uniform, masks, ones).exploitability)
    assert figures[0] > 0.01
    assert figures[1] == pytest.approx(figures[0], abs=1e-12)


def test_features_of_particle_infostates_are_the_full_trees():
    tree = cached_tree(LEDUC)
    ps = tree.public_states_at_depth(5)[2]
    roots, particles = _particles_of(tree, ps)
    ptree = build_particle_tree(LEDUC, particles[:7])
    full_tables, part_tables = build_feature_tables(tree), build_feature_tables(ptree)
    assert part_tables.private_encoder == full_tables.private_encoder == "observer"
    for n in (0, 1):
        for i, s in enumerate(ptree.infostate_strings[n]):
            j = tree.infostate_index(n, s)
            np.testing.assert_array_equal(part_tables.private[n][i], full_tables.private[n][j])
    for p, s in enumerate(ptree.public_state_strings):
        q = tree.public_state_strings.index(s)
        np.testing.assert_array_equal(part_tables.public[p], full_tables.public[q])


def test_bad_particles_are_refused():
    with pytest.raises(PvfError, match="not a legal action|not a chance outcome"):
        build_particle_tree(KUHN, [[0, 1, 7]])
    with pytest.raises(PvfError, match="terminal"):
        build_particle_tree(KUHN, [[0, 1, 0, 0]])
    with pytest.raises(PvfError, match="distinct"):
        build_particle_tree(KUHN, [[0, 1], [0, 1]])
    with pytest.raises(PvfError, match="at least one"):
        build_particle_tree(KUHN, [])
    with pytest.raises(PvfError, match="more than 100 histories"):
        build_particle_tree(GOOF5, [[4, 4]], max_histories=100)
    with pytest.raises(PvfError, match="not above the depth limit"):
        build_particle_tree(GOOF5, [[4, 4]], depth_limit=1)
