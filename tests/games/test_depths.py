"""`pvf describe`'s per-depth sizes against a direct OpenSpiel walk and the paper's counts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import pyspiel
import pytest

from pvf.games.depths import depth_sizes, same_beliefs_warning
from pvf.games.loading import load_game
from tests.conftest import GOOF4, KUHN, LEDUC, cached_tree


def _walk(game: pyspiel.Game) -> tuple[dict, dict, set]:
    """Per move number: non-terminal states, and each player's information-state strings; the
    move numbers at which a player acts."""
    states, infos, acting = defaultdict(int), defaultdict(lambda: (set(), set())), set()
    stack = [game.new_initial_state()]
    while stack:
        s = stack.pop()
        if s.is_terminal():
            continue
        d = s.move_number()
        states[d] += 1
        for n in (0, 1):
            try:
                infos[d][n].add(s.information_state_string(n))
            except pyspiel.SpielError:  # Kuhn has none at its chance nodes
                infos[d][n].add(None)
        if not s.is_chance_node():
            acting.add(d)
        stack.extend(s.child(a) for a in s.legal_actions())
    return states, infos, acting


@pytest.mark.parametrize("game", ["kuhn_poker", "leduc_poker"])
def test_sizes_match_openspiel(game):
    tree = cached_tree(game)
    states, infos, acting = _walk(pyspiel.load_game(game))
    sizes = depth_sizes(tree)
    compared = 0
    assert [s.depth for s in sizes] == sorted(d for d in states if d >= 1)
    for s in sizes:
        assert s.histories == states[s.depth]
        if None not in infos[s.depth][0]:
            assert s.infostates == (len(infos[s.depth][0]), len(infos[s.depth][1]))
            compared += 1
        assert s.decisions_before == any(d < s.depth for d in acting)
    assert compared >= len(sizes) - 2  # all but the chance-dealing moves


def test_leduc_paper_depth():
    """The paper's Leduc depth 5 is move 7: 54 public states, at most 5 infostates each (one per private card)."""
    seven = {s.depth: s for s in depth_sizes(cached_tree("leduc_poker"))}[7]
    assert (seven.public_states, seven.max_infostates) == (54, (5, 5))


def test_describe_warns_where_every_sample_is_identical():
    proc = subprocess.run(
        [sys.executable, "-m", "pvf.cli", "describe", "kuhn_poker", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["histories"] == 58
    by_depth = {d["depth"]: d for d in out["depths"]}
    assert by_depth[2]["public_states"] == 1 and not by_depth[2]["decisions_before"]
    assert [w.split(":")[0] for w in out["warnings"]] == ["move 1", "move 2"]
    text = subprocess.run(
        [sys.executable, "-m", "pvf.cli", "describe", "kuhn_poker"], capture_output=True, text=True, timeout=120
    )
    assert text.returncode == 0 and "warning: move 2: no player acts before it" in text.stdout


@pytest.mark.parametrize("game", [KUHN, LEDUC, GOOF4])
def test_the_warning_without_the_tree_is_the_warning_from_the_tree(game):
    """`pvf generate` warns from a walk of the first moves; `pvf describe` from the enumerated tree: they agree."""
    loaded = load_game(game)
    for sizes in depth_sizes(cached_tree(game)):
        assert (same_beliefs_warning(loaded, sizes.depth) is None) == (sizes.warning() is None), sizes.depth
