"""The public tree against OpenSpiel and the paper's counts."""

import numpy as np
import pyspiel
import pytest

from pvf.errors import PvfError
from pvf.games import public_tree
from pvf.games.loading import load_game
from pvf.games.public_tree import CHANCE, TERMINAL, build_public_tree, estimate_histories
from tests.conftest import GOOF5, cached_tree


def test_kuhn_counts_and_strings(kuhn):
    assert kuhn.num_histories == 58
    assert kuhn.is_decision(0).sum() == 6 and kuhn.is_decision(1).sum() == 6
    game = pyspiel.load_game("kuhn_poker")
    expected = set()
    for h in np.flatnonzero((kuhn.player == 0) | (kuhn.player == 1)):
        expected.add(kuhn.state_at(h).information_state_string())
    names = {kuhn.infostate_strings[n][i] for n in (0, 1) for i in np.flatnonzero(kuhn.is_decision(n))}
    assert names == expected
    assert kuhn.loaded.sequential.num_distinct_actions() == game.num_distinct_actions()


def test_leduc_paper_counts(leduc):
    # 936 decision infostates; 54 non-terminal public states at move 7 (paper's depth 5).
    assert leduc.is_decision(0).sum() + leduc.is_decision(1).sum() == 936
    assert len(leduc.public_states_at_depth(7)) == 54


def test_goofspiel5_paper_counts():
    tree = cached_tree(GOOF5)
    assert len(tree.public_states_at_depth(2)) == 9  # win/tie/loss twice
    assert len(tree.public_states_at_depth(1)) == 3


def test_arrays_are_consistent(leduc):
    t = leduc
    assert np.all(t.parent[1:] < np.arange(1, t.num_histories))  # parents first
    # chance probabilities of each chance node sum to one
    chance_nodes = np.flatnonzero(t.player == CHANCE)
    sums = np.bincount(t.parent[1:], weights=t.chance_prob[1:], minlength=t.num_histories)
    assert np.allclose(sums[chance_nodes], 1.0)
    # every history of a public state has the same move number; infostates stay in one public state
    assert np.all(t.public_state_depth[t.public_state] == t.depth)
    for n in (0, 1):
        live = t.infostate[:, n] >= 0
        assert np.all(t.infostate_public_state[n][t.infostate[live, n]] == t.public_state[live])
    # terminal utilities match OpenSpiel's returns
    for h in np.flatnonzero(t.player == TERMINAL)[:50]:
        assert t.utility[h] == pytest.approx(t.state_at(h).returns()[0])


def test_goofspiel_turn_based_rounds(goof4):
    # each round is player 1 then player 2; both moves of a round have the same move number
    p2 = np.flatnonzero(goof4.player == 1)
    assert np.all(goof4.player[goof4.parent[p2]] == 0)
    assert np.all(goof4.depth[p2] == goof4.depth[goof4.parent[p2]])
    # player 2 does not see player 1's bid: its infostate is shared by all of player 1's bids
    first_p2 = p2[goof4.level[p2] == 1]
    assert len(np.unique(goof4.infostate[first_p2, 1])) == 1


@pytest.mark.parametrize(
    "game, message",
    [
        ("no_such_game", "unknown game"),
        ("kuhn_poker(players=3)", "3 players"),
        ("goofspiel(num_cards=x)", "cannot load game"),
    ],
)
def test_bad_games(game, message):
    with pytest.raises(PvfError, match=message):
        build_public_tree(game)


def test_size_cap():
    with pytest.raises(PvfError, match="max-histories"):
        build_public_tree("leduc_poker", max_histories=1000)


def test_cap_is_exact_and_bounds_the_frontier(monkeypatch):
    """Histories are counted when generated: no more than the cap ever exist, queue included."""
    assert build_public_tree("kuhn_poker", max_histories=58).num_histories == 58
    made = []
    child = public_tree.child
    monkeypatch.setattr(public_tree, "child", lambda *a: made.append(1) or child(*a))
    with pytest.raises(PvfError, match="more than 57 histories"):
        build_public_tree("kuhn_poker", max_histories=57)
    assert len(made) < 57
    made.clear()
    with pytest.raises(PvfError, match="--max-histories"):
        build_public_tree("leduc_poker", max_histories=1000)
    assert len(made) < 1000


@pytest.mark.parametrize("cap", [0, -5])
def test_cap_must_be_positive(cap):
    with pytest.raises(PvfError, match="positive"):
        build_public_tree("kuhn_poker", max_histories=cap)


def test_size_estimate():
    """Knuth's estimate is exact on a uniform tree and close on the others we know."""
    assert estimate_histories(load_game("goofspiel4")) == pytest.approx(1077)
    for game, size in (("kuhn_poker", 58), ("leduc_poker", 9457), ("liars_dice(numdice=1,dice_sides=3)", 1147)):
        assert size / 2 < estimate_histories(load_game(game)) < 2 * size, game


def test_huge_game_refused_before_enumeration(monkeypatch):
    """OpenSpiel's default Goofspiel (13 cards, ~1e29 histories) is refused without enumerating."""
    monkeypatch.setattr(public_tree, "_enumerate", lambda *a: pytest.fail("enumerated"))
    with pytest.raises(PvfError, match=r"goofspiel has more than 2,000,000 histories \(about .*e\+29"):
        build_public_tree("goofspiel")
