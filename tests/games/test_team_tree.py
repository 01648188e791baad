"""Trade Comm (m, n) as a team tree (pvf.games.team_tree.trade_comm_efg): for m = n it is OpenSpiel's
trade_comm(num_items=n) node for node; the paper's (3, 2) has its size and a policy that always trades."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pvf.errors import PvfError
from pvf.games.team_tree import build_team_tree
from pvf.solvers.progressive_hiding import progressive_hiding


def test_trade_comm_2_2_is_openspiels_tree_node_for_node():
    ours = build_team_tree("trade_comm_mn(messages=2,items=2)")
    theirs = build_team_tree("trade_comm(num_items=2)")
    for field in dataclasses.fields(theirs):
        if field.name == "game":
            continue
        mine, reference = getattr(ours, field.name), getattr(theirs, field.name)
        if isinstance(reference, dict):
            assert mine.keys() == reference.keys(), field.name
            for name in reference:
                np.testing.assert_array_equal(mine[name], reference[name], err_msg=f"{field.name} {name}")
        else:
            np.testing.assert_array_equal(mine, reference, err_msg=field.name)
    for info_map, penalty in (("original", 0.0), ("cheated", 1.0)):
        for learner in ("rm", "ftrl"):
            a = progressive_hiding(ours, info_map, penalty, 20, 3, seed=2, learner=learner, step=0.5)
            b = progressive_hiding(theirs, info_map, penalty, 20, 3, seed=2, learner=learner, step=0.5)
            np.testing.assert_array_equal(a.outcome, b.outcome)


def _signalling_value(tree, messages, items):
    """The payoff of the implementable policy 'say your item, then ask for yours against the one you heard'.

    Every decision is read from the path of local actions (deal, m1, m2, trade 1); checks that the policy
    is a function of the original information map, i.e. implementable."""
    row = {int(node): d for d, node in enumerate(tree.decisions)}
    chosen: dict[int, int] = {}

    def value(node, path):
        if node not in row:
            kids = [int(c) for c in tree.children[node] if c >= 0]
            if not kids:
                return float(tree.value[node])
            return sum(tree.chance_prob[c] * value(c, (*path, k)) for k, c in enumerate(kids))
        s1, s2 = divmod(path[0], items)
        turn = len(path) - 1
        if turn < 2:  # say your item: m1 = s1, m2 = s2
            mine = (s1, s2)[turn]
        elif turn == 2:  # give s1, ask for the item m2 named
            mine = s1 * items + path[2]
        else:  # give s2, ask for the item m1 named
            mine = s2 * items + path[1]
        assert mine < tree.actions[row[node]]
        key = int(tree.keys["original"][row[node]])
        assert chosen.setdefault(key, mine) == mine  # the same action wherever the player knows the same
        return value(int(tree.children[node, mine]), (*path, mine))

    assert messages >= items
    return value(0, ())


def test_trade_comm_3_2_has_its_size_and_an_optimum_of_1():
    tree = build_team_tree("trade_comm_mn(messages=3,items=2)")
    # root, 4 deals, 4 * 3 first messages, 4 * 9 second, 4 * 9 * 4 first trades, 4 * 9 * 16 second
    assert len(tree.depth) == 1 + 4 + 12 + 36 + 144 + 576 == 773
    assert len(tree.decisions) == 4 + 12 + 36 + 144
    assert tree.key_counts == {"original": 2 + 6 + 18 + 18, "cheated": 4 + 12 + 36 + 36, "recall": 196}
    assert tree.value.max() == 1.0  # no policy can earn more than 1 ...
    assert _signalling_value(tree, 3, 2) == pytest.approx(1.0, abs=1e-12)  # ... and one earns it everywhere


def test_trade_comm_needs_a_message_and_an_item():
    with pytest.raises(PvfError, match="at least 1 message"):
        build_team_tree("trade_comm_mn(messages=0,items=2)")
