"""The IS-MCTS opponent's resampler: uniform over the histories of the searcher's infostate (Goofspiel-4's
public tree enumerates them), and OpenSpiel's Python IS-MCTS bot plays Goofspiel with it."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from pvf.agents.ismcts import GoofspielResampler, ismcts_bot
from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import rules_of
from pvf.games.loading import load_game
from pvf.games.rollouts import history_paths


def state_after(game: pyspiel.Game, path) -> pyspiel.State:
    state = game.new_initial_state()
    for a in path:
        state.apply_action(int(a))
    return state


@pytest.mark.parametrize("level", [2, 3, 4, 5])
def test_resampled_worlds_are_uniform_over_the_infostate(goof4, level):
    """At every level, the infostate of the acting player with the most histories: 4,000 draws, each in the
    infostate, each history drawn within 5 standard errors of its uniform share."""
    game = goof4.loaded.sequential
    resampler = GoofspielResampler(rules_of(goof4.loaded), game, seed=level)
    player = level % 2
    at_level = np.flatnonzero((goof4.level == level) & (goof4.player == player))
    infostates, sizes = np.unique(goof4.infostate[at_level, player], return_counts=True)
    infostate = infostates[np.argmax(sizes)]
    members = at_level[goof4.infostate[at_level, player] == infostate]
    assert len(members) > 2
    paths = {tuple(p) for p in history_paths(goof4, members).tolist()}
    state = state_after(game, next(iter(paths)))
    draws = 4000
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(draws):
        world = resampler(state, player)
        assert world.information_state_string(player) == state.information_state_string(player)
        key = tuple(world.history())
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) == paths
    share = 1.0 / len(paths)
    error = np.sqrt(share * (1 - share) / draws)
    assert max(abs(c / draws - share) for c in counts.values()) < 5 * error


def test_openspiels_ismcts_plays_goofspiel_with_the_resampler():
    """Against the uniform random bot, 20 games of Goofspiel-5, seats swapped: IS-MCTS (200 simulations) wins on
    average (a search that ignored its infostate or crashed would not)."""
    loaded = load_game("goofspiel5")
    game = loaded.sequential
    returns = []
    for i in range(20):
        seat = i % 2
        bots = [pyspiel.make_uniform_random_bot(p, 100 + i) for p in (0, 1)]
        bots[seat] = ismcts_bot(loaded, seat, 200, seed=i)
        returns.append(pyspiel.evaluate_bots(game.new_initial_state(), bots, i)[seat])
    assert np.mean(returns) > 0.3


def test_ismcts_refuses_other_games():
    with pytest.raises(PvfError, match="plays Goofspiel"):
        ismcts_bot(load_game("kuhn_poker"), 0, 10, 0)
