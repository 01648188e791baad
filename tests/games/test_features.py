"""Feature tables: pinned sizes, infostates told apart, fallbacks, speed."""

import time

import numpy as np
import pytest

from pvf.games import features
from pvf.games.features import build_feature_tables
from pvf.games.public_tree import TERMINAL, build_public_tree

GAMES = ["kuhn_poker", "leduc_poker", "goofspiel4", "goofspiel5"]

# (Fp, Fq): OpenSpiel's observers less the observing player's one-hot. The
# authors' Leduc 24/8 are our 22/6 plus that one-hot in each; Goofspiel has none.
SIZES = {"kuhn_poker": (6, 3), "leduc_poker": (22, 6), "goofspiel4": (46, 20), "goofspiel5": (67, 30)}


@pytest.fixture(scope="module", params=GAMES)
def built(request):
    tree = build_public_tree(request.param)
    return request.param, tree, build_feature_tables(tree)


def _assert_tables_fit(tree, tables):
    assert tables.public.shape == (tree.num_public_states, tables.public_dim)
    for n in (0, 1):
        assert tables.private[n].shape == (tree.num_infostates(n), tables.private_dim)
        assert tables.private[n].dtype == np.float32
    assert tables.public.dtype == np.float32


def _assert_infostates_distinct(tree, tables):
    for n in (0, 1):
        for infos in tree.public_state_infostates[n]:
            rows = tables.private[n][infos]
            assert len(np.unique(rows, axis=0)) == len(infos)


def test_sizes_match_the_observers(built):
    name, tree, tables = built
    _assert_tables_fit(tree, tables)
    assert (tables.public_dim, tables.private_dim) == SIZES[name]
    assert tables.public_encoder == tables.private_encoder == features.OBSERVER
    described = tables.describe()
    assert described["public_dim"] == sum(size for _, size in described["public_fields"])
    assert described["private_dim"] == sum(size for _, size in described["private_fields"])


def test_infostates_of_a_player_differ_within_a_public_state(built):
    _, tree, tables = built
    _assert_infostates_distinct(tree, tables)


def test_non_terminal_public_states_of_a_level_differ(built):
    # Leduc's betting tensor has no fold bit: terminal public states may coincide.
    _, tree, tables = built
    live = np.zeros(tree.num_public_states, dtype=bool)
    live[tree.public_state[tree.player != TERMINAL]] = True
    for level in np.unique(tree.public_state_level):
        ps = np.flatnonzero((tree.public_state_level == level) & live)
        assert len(np.unique(tables.public[ps], axis=0)) == len(ps)


def test_public_features_do_not_depend_on_the_observing_player():
    tables = build_feature_tables(build_public_tree("leduc_poker"))
    assert [name for name, _ in tables.public_fields] == ["community_card", "betting"]
    assert [name for name, _ in tables.private_fields] == ["private_card"]


def test_kuhn_private_features_are_the_card():
    tree = build_public_tree("kuhn_poker")
    tables = build_feature_tables(tree)
    for n in (0, 1):
        for i, s in enumerate(tree.infostate_strings[n]):
            state = tree.state_at(int(tree.infostate_history[n][i]))
            if state.is_chance_node() and len(state.history()) < 2:
                continue  # cards not dealt to this player yet
            card = state.history()[n]
            assert tables.private[n][i].tolist() == np.eye(3)[card].tolist(), s


def test_goofspiel_mid_round_infostate_holds_the_pending_bid():
    tree = build_public_tree("goofspiel4")
    tables = build_feature_tables(tree)
    mid = np.flatnonzero((tree.player == 1) & (tree.depth == 0))  # player 1 has bid in round 1
    bids = tables.private[0][tree.infostate[mid, 0]]
    hands = {name: size for name, size in tables.private_fields}["player_hand"]
    actions = bids[:, hands : hands + 4]  # first row of the own action sequence
    assert actions.argmax(axis=1).tolist() == tree.action[mid].tolist()
    assert actions.sum(axis=1).tolist() == [1.0] * len(mid)


def test_fallbacks_without_observers(monkeypatch):
    monkeypatch.setattr(features, "_observer", lambda game, kind: None)
    tree = build_public_tree("leduc_poker")
    tables = build_feature_tables(tree)
    assert tables.public_encoder == features.POSITION_ONE_HOT
    assert tables.private_encoder == features.SLOT_ONE_HOT
    _assert_tables_fit(tree, tables)
    _assert_infostates_distinct(tree, tables)
    assert (tables.public.sum(axis=1) == 1).all()


def test_fallback_tables_stay_small(monkeypatch):
    """Over the one-hot budget the fallbacks switch to binary digits: still distinct, far smaller."""
    monkeypatch.setattr(features, "_observer", lambda game, kind: None)
    monkeypatch.setattr(features, "MAX_ONE_HOT_ENTRIES", 1000)
    tree = build_public_tree("leduc_poker")
    tables = build_feature_tables(tree)
    assert tables.public_encoder == features.POSITION_BINARY
    widest = np.bincount(tree.public_state_level).max()
    assert tables.public_dim == int(widest - 1).bit_length()
    for level in np.unique(tree.public_state_level):
        codes = tables.public[tree.public_state_level == level]
        assert len(np.unique(codes, axis=0)) == len(codes)
    _assert_tables_fit(tree, tables)
    _assert_infostates_distinct(tree, tables)


@pytest.mark.slow  # 14 s; test_fallback_tables_stay_small runs the same code on Leduc by default
def test_liars_dice_without_observers_fits_in_memory():
    """Liar's Dice (one die of 6 faces each) has no public observer: 151,518 public states,
    34,056 on one level; its one-hot table would take 19 GiB."""
    tree = build_public_tree("liars_dice")
    tables = build_feature_tables(tree)
    assert tables.public_encoder == features.POSITION_BINARY
    assert tables.public.shape == (151_518, 16)
    assert tables.public.nbytes + sum(p.nbytes for p in tables.private) < 50_000_000


def test_builds_in_a_few_seconds():
    tree = build_public_tree("goofspiel5")
    start = time.perf_counter()
    build_feature_tables(tree)
    assert time.perf_counter() - start < 5.0
