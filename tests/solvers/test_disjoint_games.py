"""Disjoint games solved as one block-diagonal game: every game's numbers, bit for bit, as its own solve gives them."""

import numpy as np
import pytest

from pvf.errors import PvfError
from pvf.solvers.best_response import best_response_root_values
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.disjoint_games import DisjointGames
from pvf.solvers.guarded_values import best_response_targets
from pvf.solvers.sequence_form import build_sequence_game
from tests.conftest import GOOF4, KUHN, LEDUC, cached_tree

BATCH = 2


def _problems():
    """Games of three trees (a full game, subgames at public states, a chance root over histories), with beliefs
    [B, R_n] (zeros among them) and each root's public state."""
    rng = np.random.default_rng(3)
    kuhn, leduc, goof = cached_tree(KUHN), cached_tree(LEDUC), cached_tree(GOOF4)
    games = [build_sequence_game(kuhn)]
    games += [build_sequence_game(leduc, int(ps)) for ps in leduc.public_states_at_depth(3)[:3]]
    roots = goof.histories_in(int(goof.public_states_at_depth(2)[0]))
    games.append(build_sequence_game(goof, root_histories=roots, root_weights=rng.uniform(0.1, 1, len(roots))))
    games.append(build_sequence_game(kuhn))
    problems = []
    for game in games:
        beliefs = []
        for p in game.players:
            b = rng.uniform(0, 1, (BATCH, p.num_roots))
            b[rng.uniform(size=b.shape) < 0.3] = 0.0
            beliefs.append(b)
        groups = tuple(game.tree.infostate_public_state[n][game.players[n].root_infostates] for n in (0, 1))
        problems.append((game, (beliefs[0], beliefs[1]), groups))
    return problems


def test_cfr_plus_on_the_union_is_each_games_own_to_the_last_bit():
    problems = _problems()
    joined = DisjointGames([g for g, _, _ in problems])
    beliefs = joined.join_roots([b for _, b, _ in problems])
    union = cfr_plus(joined.game, 30, root_beliefs=beliefs)
    parts = zip(problems, joined.split(union.root_values), joined.split(union.current_root_values))
    values = []
    for g, ((game, b, _), average, current) in enumerate(parts):
        own = cfr_plus(game, 30, root_beliefs=b)
        values.append(own.value)
        for n in (0, 1):
            np.testing.assert_array_equal(average[n], own.root_values[n])
            np.testing.assert_array_equal(current[n], own.current_root_values[n])
            at = joined.sequence_of[n][g]
            np.testing.assert_array_equal(union.average_strategy[n][:, at], own.average_strategy[n])
            np.testing.assert_array_equal(union.average_realization[n][:, at], own.average_realization[n])
    # the one number that couples the games: player 1's value is their sum
    np.testing.assert_allclose(union.value, np.sum(values, axis=0), rtol=0, atol=1e-12)


def test_best_responses_on_the_union_are_each_games_own_to_the_last_bit():
    problems = _problems()
    joined = DisjointGames([g for g, _, _ in problems])
    beliefs = joined.join_roots([b for _, b, _ in problems])
    groups = joined.join_labels([groups for _, _, groups in problems])
    union = cfr_plus(joined.game, 20, root_beliefs=beliefs)
    guarded = joined.split(best_response_targets(joined.game, cfr_plus, 20, beliefs, groups, solved=union))
    x, y = (p.T for p in union.average_realization)
    plain = joined.split(best_response_root_values(joined.game, x, y))
    for (game, b, own_groups), union_guarded, union_plain in zip(problems, guarded, plain):
        own = cfr_plus(game, 20, root_beliefs=b)
        expected_guarded = best_response_targets(game, cfr_plus, 20, b, own_groups, solved=own)
        expected_plain = best_response_root_values(game, *(p.T for p in own.average_realization))
        for n in (0, 1):
            np.testing.assert_array_equal(union_guarded[n], expected_guarded[n])
            np.testing.assert_array_equal(union_plain[n], expected_plain[n])


def test_labels_of_different_games_never_coincide():
    joined = DisjointGames([g for g, _, _ in _problems()[:3]])
    labels = joined.join_labels([(np.array([0, 2]), np.array([1])), (np.array([0]), np.zeros(0, int)), ([5], [0])])
    np.testing.assert_array_equal(labels[0], [0, 2, 3, 4 + 5])
    np.testing.assert_array_equal(labels[1], [1, 4])


def test_depth_limited_games_and_no_games_are_refused():
    with pytest.raises(PvfError, match="depth-limited"):
        DisjointGames([build_sequence_game(cached_tree(LEDUC), depth_limit=3)])
    with pytest.raises(PvfError, match="no games"):
        DisjointGames([])
