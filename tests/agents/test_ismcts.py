"""The IS-MCTS opponent's resampler: uniform over the histories of the searcher's infostate (Goofspiel-4's
public tree enumerates them), or their posterior under a greedier random opponent, its tilted rollouts' values
against an expectation walked on OpenSpiel's states, and OpenSpiel's Python IS-MCTS bot plays Goofspiel with
them."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from pvf.agents.ismcts import GoofspielResampler, TiltedRolloutEvaluator, ismcts_bot
from pvf.agents.matches import openspiel_bot
from pvf.agents.spec import IsmctsSpec, parse_ismcts
from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import rules_of
from pvf.games.loading import load_game
from pvf.games.rollouts import bid_tilt, history_paths
from tests.agents.test_mmd_search import softmax_probability
from tests.games.test_rollouts import openspiel_greedy_value, state_after


def tilted_probability(game: pyspiel.Game, path, player: int, tilt: float) -> float:
    """The probability of the opponent's actions on `path` when it bids card a with probability ∝ exp(tilt·a)
    among its legal actions (walked on OpenSpiel's states; the searcher's own actions are given)."""
    state, probability = game.new_initial_state(), 1.0
    for a in path:
        if state.current_player() != player:
            probability *= softmax_probability(state, a, tilt)
        state.apply_action(a)
    return probability


@pytest.mark.parametrize("level,greed", [(2, 0.0), (3, 0.0), (4, 0.0), (5, 0.0), (3, 1.0), (4, 1.0), (5, 0.5)])
def test_resampled_worlds_follow_the_posterior_of_the_infostate(goof4, level, greed):
    """At every level, the infostate of the acting player with the most histories: 4,000 draws, each in the
    infostate, each history drawn within 5 standard errors of its share: uniform (greed 0), or its opponent
    actions' probability under the greedier random player, normalised over the infostate."""
    game = goof4.loaded.sequential
    tilt = bid_tilt(rules_of(goof4.loaded), greed)
    resampler = GoofspielResampler(rules_of(goof4.loaded), game, seed=level, tilt=tilt)
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
    prior = {p: tilted_probability(game, p, player, tilt) for p in paths}
    for path, count in counts.items():
        share = prior[path] / sum(prior.values())
        assert abs(count / draws - share) < 5 * np.sqrt(share * (1 - share) / draws)
    if greed:
        assert max(prior.values()) > 2 * min(prior.values())  # the tilt matters at this infostate


@pytest.mark.parametrize("tilt", [0.0, 1.5])
def test_tilted_rollouts_estimate_the_greedier_players_value(tilt):
    """From Goofspiel-4's root and after one round: the mean of 4,000 rollouts within 5 standard errors of the
    expectation walked exactly on OpenSpiel's states; the prior is uniform over the legal actions. After the
    round the tilt turns player 1's expectation from -0.22 to +0.33, so rollouts that ignored it would fail."""
    game = load_game("goofspiel4").sequential
    evaluator = TiltedRolloutEvaluator(tilt, np.random.RandomState(0))
    for path in ([], [0, 3]):
        state = state_after(game, path)
        returns = np.array([evaluator.evaluate(state)[0] for _ in range(4000)])
        assert abs(returns.mean() - openspiel_greedy_value(state, tilt)) < 5 * returns.std() / np.sqrt(len(returns))
        assert evaluator.prior(state) == [(a, 1.0 / len(state.legal_actions())) for a in state.legal_actions()]
    assert openspiel_greedy_value(state, 1.5) - openspiel_greedy_value(state, 0.0) > 0.5


def test_ismcts_options_parse_and_refuse_naming_the_problem():
    assert parse_ismcts("ismcts") == IsmctsSpec(sims=1000, greed=0.0)
    assert parse_ismcts("ismcts:sims=20,greed=0.5") == IsmctsSpec(sims=20, greed=0.5)
    for bad, problem in (
        ("ismcts:sims=0", "sims must be positive"),
        ("ismcts:sims=2.5", "sims takes an integer"),
        ("ismcts:greed=-1", "greed is a number β ≥ 0"),
        ("ismcts:greed=inf", "greed is a number β ≥ 0"),
        ("ismcts:greed=x", "greed takes a number"),
        ("ismcts:depth=2", "KEY one of sims, greed"),
        ("ismcts:sims=5,sims=6", "gives sims twice"),
    ):
        with pytest.raises(PvfError, match=f"^opponent '{bad}'.*{problem}"):
            parse_ismcts(bad)
    with pytest.raises(PvfError, match="not Goofspiel"):
        openspiel_bot("ismcts:greed=1", load_game("kuhn_poker"), 0, 0)


@pytest.mark.parametrize("greed", [0.0, 0.5])
def test_openspiels_ismcts_plays_goofspiel_with_the_resampler(greed):
    """Against the uniform random bot, 20 games of Goofspiel-5, seats swapped: IS-MCTS (200 simulations; uniform
    or greedier opponent model) wins on average (a search that ignored its infostate or crashed would not)."""
    loaded = load_game("goofspiel5")
    game = loaded.sequential
    returns = []
    for i in range(20):
        seat = i % 2
        bots = [pyspiel.make_uniform_random_bot(p, 100 + i) for p in (0, 1)]
        bots[seat] = ismcts_bot(loaded, seat, 200, seed=i, greed=greed)
        returns.append(pyspiel.evaluate_bots(game.new_initial_state(), bots, i)[seat])
    assert np.mean(returns) > 0.3


def test_ismcts_refuses_other_games():
    with pytest.raises(PvfError, match="plays Goofspiel"):
        ismcts_bot(load_game("kuhn_poker"), 0, 10, 0)
