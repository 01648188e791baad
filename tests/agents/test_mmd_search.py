"""MMD search: its action values against OpenSpiel's expectation of uniform play, its update against the optimality
conditions of the MMD objective, and the paper's claim (it lowers the uniform blueprint's exploitability by more
than a third) judged exactly by OpenSpiel's `nash_conv` in Goofspiel-4; a greedier blueprint's posterior, action
values and update against the same definitions under its softmax policy."""

import json
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability

from pvf.agents.matches import agent_bots, opponent_bots, play_games
from pvf.agents.mmd_search import MMDSearch, search_policy
from pvf.agents.spec import MMDSearchSpec, parse_agent
from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import DRAW, replay, rules_of
from pvf.games.goofspiel_posterior import infostate_of, sample_hidden_bids
from pvf.games.loading import load_game
from pvf.games.particle_tree import history_actions
from pvf.games.rollouts import history_paths
from pvf.solvers.tabular import to_openspiel
from tests.conftest import GOOF4, GOOF5, cached_tree
from tests.games.test_rollouts import openspiel_greedy_value, state_after

GREED = 1.3  # Goofspiel-4's points descend: each bid card c with probability ∝ exp(1.3·c)


def softmax_probability(state: pyspiel.State, action: int, tilt: float = GREED) -> float:
    """The greedy policy's probability of `action` among the legal bids at `state` (∝ exp(tilt·card))."""
    weights = np.exp(tilt * np.array(state.legal_actions(), dtype=float))
    return float(np.exp(tilt * action) / weights.sum())


def openspiel_action_values(tree, infostate: int, player: int, tilt: float = 0.0) -> dict[int, float]:
    """{card: player's expected return} of playing the card, then the softmax policy with `tilt` by both (0:
    uniform play), over the infostate's histories weighted by the opponent's probability of its bids under that
    policy (the blueprint's posterior) and the opponent's current bid drawn from it, by OpenSpiel's states."""
    game = tree.loaded.sequential
    opponent = 1 - player
    members = np.flatnonzero(tree.infostate[:, player] == infostate)
    weighted: dict[int, float] = {}
    total = 0.0
    for path in history_paths(tree, members).tolist():
        start = path if player == 0 else path[:-1]  # the round's start
        weight, state = 1.0, game.new_initial_state()
        for a in start:
            if state.current_player() == opponent:
                weight *= softmax_probability(state, a, tilt)
            state.apply_action(a)
        total += weight
        for a in state_after(game, path).legal_actions():
            if player == 0:
                after = state.child(a)
                pairs = [(softmax_probability(after, b, tilt), after.child(b)) for b in after.legal_actions()]
            else:
                pairs = [(softmax_probability(state, b, tilt), state.child(b).child(a)) for b in state.legal_actions()]
            sign = 1.0 if player == 0 else -1.0
            value = sum(p * sign * openspiel_greedy_value(c, tilt) for p, c in pairs)
            weighted[a] = weighted.get(a, 0.0) + weight * value
    return {a: v / total for a, v in weighted.items()}


def decision_infostates(tree, player: int) -> list[int]:
    return np.unique(tree.infostate[tree.player == player, player]).tolist()


def test_action_values_are_openspiels_where_the_infostate_fixes_the_hidden_bids():
    """Infostates whose rounds were all draws (the opponent's bids are then known), both seats, every round:
    the values equal OpenSpiel's exactly (rollouts are exact with four cards)."""
    tree = cached_tree(GOOF4)
    rules = rules_of(tree.loaded)
    search = MMDSearch(rules, samples=3)
    checked = 0
    for player in (0, 1):
        for i in decision_infostates(tree, player):
            history = tuple(history_actions(tree, int(tree.infostate_history[player][i])))
            rounds = len(history) // 2
            if any(o != DRAW for o in replay(rules, history[: 2 * rounds]).outcomes):
                continue
            actions, q = search.action_values(history, player)
            expected = openspiel_action_values(tree, i, player)
            np.testing.assert_allclose(q, [expected[a] for a in actions.tolist()], atol=1e-12)
            checked += 1
    assert checked >= 8


def test_action_values_converge_to_openspiels_over_sampled_beliefs():
    """Player 2's infostates after a decided first round (the opponent's first bid hidden): 2,000 samples, each
    value within 4.5 standard errors (returns in [-1, 1]) of OpenSpiel's average over the infostate."""
    tree = cached_tree(GOOF4)
    search = MMDSearch(rules_of(tree.loaded), samples=2000)
    at_level = np.flatnonzero(tree.level == 3)
    for i in np.unique(tree.infostate[at_level, 1]).tolist()[::3]:
        history = tuple(history_actions(tree, int(tree.infostate_history[1][i])))
        actions, q = search.action_values(history, 1)
        expected = openspiel_action_values(tree, i, 1)
        assert np.abs(q - [expected[a] for a in actions.tolist()]).max() < 4.5 / np.sqrt(2000)


def test_the_update_maximises_the_mmd_objective():
    """π' maximises ⟨π', q⟩ − KL(π', π)/η − α KL(π', ρ) with π = ρ uniform: q − (1/η + α) log π' is the same for
    every action (the objective's stationarity condition on the simplex)."""
    tree = cached_tree(GOOF4)
    search = MMDSearch(rules_of(tree.loaded), samples=10, eta=5.0, alpha=0.3)
    history = (3, 1)
    actions, q = search.action_values(history, 0)
    strategy = search.strategy(history, 0)
    stationary = q - (1 / search.eta + search.alpha) * np.log([strategy[a] for a in actions.tolist()])
    assert np.ptp(stationary) < 1e-12
    assert np.ptp(q) > 0.01  # the test is not vacuous


def test_mmd_search_lowers_the_uniform_blueprints_exploitability_by_more_than_a_third():
    """The paper's claim (table 3, there by approximate best responses): here exact, OpenSpiel's nash_conv of the
    assembled policy, Goofspiel-4, step size 5; its own default step size 50 plays nearly greedily and is more
    exploitable than the blueprint."""
    tree = cached_tree(GOOF4)
    game = tree.loaded.sequential
    uniform = exploitability.nash_conv(game, openspiel_policy.UniformRandomPolicy(game))
    rules = rules_of(tree.loaded)
    searched = pyspiel.nash_conv(game, to_openspiel(search_policy(tree, MMDSearch(rules, samples=10, eta=5.0))))
    greedy = pyspiel.nash_conv(game, to_openspiel(search_policy(tree, MMDSearch(rules, samples=10))))
    assert searched < uniform * 2 / 3
    assert greedy > uniform


@pytest.mark.parametrize("level", [3, 4])
def test_a_greedy_blueprints_posterior_is_the_softmax_policys(level):
    """Goofspiel-5, the acting player's infostate with the most histories at the level: 20,000 draws of the
    opponent's hidden bids, each sequence within 5 standard errors of its share Σ over the infostate's histories
    of the opponent's softmax probability of its bids (walked on OpenSpiel's states), and tilt 0 still uniform."""
    goof5 = cached_tree(GOOF5)
    game = goof5.loaded.sequential
    rules = rules_of(goof5.loaded)
    player = level % 2
    at_level = np.flatnonzero((goof5.level == level) & (goof5.player == player))
    infostates, sizes = np.unique(goof5.infostate[at_level, player], return_counts=True)
    members = at_level[goof5.infostate[at_level, player] == infostates[np.argmax(sizes)]]
    exact: dict[tuple[int, ...], float] = {}
    for path in history_paths(goof5, members).tolist():
        weight, state = 1.0, game.new_initial_state()
        for a in path:
            if state.current_player() == 1 - player:
                weight *= softmax_probability(state, a)
            state.apply_action(a)
        hidden = tuple(path[1 - player :: 2][: level // 2])
        exact[hidden] = exact.get(hidden, 0.0) + weight
    assert len(exact) > 3
    total = sum(exact.values())
    own, outcomes = infostate_of(rules, path, player)
    draws, rng = 20_000, np.random.default_rng(level)
    for tilt, share in ((GREED, {k: v / total for k, v in exact.items()}), (0.0, dict.fromkeys(exact, 1 / len(exact)))):
        counts: dict[tuple[int, ...], int] = {}
        for _ in range(draws):
            key = tuple(sample_hidden_bids(rules, player, own, outcomes, rng, tilt))
            counts[key] = counts.get(key, 0) + 1
        assert set(counts) <= set(share)
        error = {k: np.sqrt(p * (1 - p) / draws) for k, p in share.items()}
        assert max(abs(counts.get(k, 0) / draws - p) / error[k] for k, p in share.items()) < 5
    assert np.ptp(list(share.values())) == 0 and np.ptp(list(exact.values())) > 0.01 * total


def test_a_greedy_blueprints_action_values_are_openspiels():
    """Greed 1.3 in Goofspiel-4: where all rounds were draws (hidden bids known) the values equal OpenSpiel's
    expectation under the softmax policy exactly; after a decided first round 2,000 posterior samples give it
    within 4.5 standard errors."""
    tree = cached_tree(GOOF4)
    rules = rules_of(tree.loaded)
    exact_search, sampled_search = MMDSearch(rules, samples=3, greed=GREED), MMDSearch(rules, 2000, greed=GREED)
    checked = 0
    for player in (0, 1):
        for i in decision_infostates(tree, player):
            history = tuple(history_actions(tree, int(tree.infostate_history[player][i])))
            rounds = len(history) // 2
            draws_only = all(o == DRAW for o in replay(rules, history[: 2 * rounds]).outcomes)
            if not draws_only and not (player == 1 and tree.level[tree.infostate_history[1][i]] == 3):
                continue
            search = exact_search if draws_only else sampled_search
            actions, q = search.action_values(history, player)
            expected = [openspiel_action_values(tree, i, player, GREED)[a] for a in actions.tolist()]
            np.testing.assert_allclose(q, expected, atol=1e-12 if draws_only else 4.5 / np.sqrt(2000))
            checked += 1
    assert checked >= 12


def test_the_update_of_a_greedy_blueprint_maximises_the_mmd_objective():
    """π' maximises ⟨π', q⟩ − KL(π', π)/η − α KL(π', ρ) with π the greedy blueprint and ρ uniform:
    q + log π / η − (1/η + α) log π' is the same for every action; without the search (q = 0) π' leans to the
    blueprint."""
    tree = cached_tree(GOOF4)
    search = MMDSearch(rules_of(tree.loaded), samples=10, eta=5.0, alpha=0.3, greed=GREED)
    history = (3, 1)
    actions, q = search.action_values(history, 0)
    strategy = np.array([search.strategy(history, 0)[a] for a in actions.tolist()])
    blueprint = search.blueprint(actions)
    np.testing.assert_allclose(blueprint, np.exp(GREED * actions) / np.exp(GREED * actions).sum())
    stationary = q + np.log(blueprint) / search.eta - (1 / search.eta + search.alpha) * np.log(strategy)
    assert np.ptp(stationary) < 1e-12
    assert np.ptp(np.log(blueprint)) > 1  # the test is not the uniform one


def test_specs_matches_and_the_command():
    assert parse_agent("mmds") == MMDSearchSpec()
    assert parse_agent("mmds:k=4,eta=5,alpha=0,draws=8") == MMDSearchSpec(k=4, eta=5.0, alpha=0.0, draws=8)
    assert parse_agent("mmds:greed=0.5").label == "mmds:k=10,eta=50,alpha=0.01,draws=64,greed=0.5"
    assert parse_agent("mmds").label == "mmds:k=10,eta=50,alpha=0.01,draws=64"
    for bad, message in [
        ("mmds:greed=-1", "greed is the blueprint's"),
        ("mmds:greed=nan", "greed is the blueprint's"),
        ("mmds:eta=0", "eta must be positive"),
        ("mmds:alpha=-1", "alpha non-negative"),
        ("mmds:k=0", "k must be positive"),
        ("mmds:eta=x", "eta takes a number"),
        ("mmds:depth=2", "is not KEY=VALUE"),
    ]:
        with pytest.raises(PvfError, match=message):
            parse_agent(bad)
    loaded = load_game("goofspiel5")
    agents = agent_bots(parse_agent("mmds:eta=5"), loaded, 0)
    games = list(play_games(loaded, agents, opponent_bots("random", loaded, 0), range(4), 0))
    again = list(play_games(loaded, agents, opponent_bots("random", loaded, 0), [2, 3], 0))
    assert [g.agent_return for g in games[2:]] == [g.agent_return for g in again]
    judged = subprocess.run(
        [sys.executable, "-m", "pvf.cli", "play", "exploitability", "--game", "goofspiel4", "--agent", "mmds:eta=5"]
        + ["--json"],
        capture_output=True,
        check=True,
    )
    report = json.loads(judged.stdout)
    tree = cached_tree(GOOF4)
    policy = search_policy(tree, MMDSearch(rules_of(tree.loaded), samples=10, eta=5.0))
    assert report["nash_conv"] == pytest.approx(pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(policy)))
    assert report["pvf_nash_conv"] == pytest.approx(report["nash_conv"], abs=1e-9)
    greedy = subprocess.run(
        [sys.executable, "-m", "pvf.cli", "play", "exploitability", "--game", "goofspiel4", "--agent"]
        + ["mmds:eta=5,greed=1", "--json"],
        capture_output=True,
        check=True,
    )
    policy = search_policy(tree, MMDSearch(rules_of(tree.loaded), samples=10, eta=5.0, greed=1.0))
    greedy_conv = json.loads(greedy.stdout)["nash_conv"]
    assert greedy_conv == pytest.approx(pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(policy)))
    assert abs(greedy_conv - report["nash_conv"]) > 0.01  # the greed reaches the judged policy
    refused = subprocess.run(
        [sys.executable, "-m", "pvf.cli", "play", "--game", "kuhn_poker", "--agent", "mmds", "--opponent", "random"],
        capture_output=True,
    )
    assert refused.returncode == 2 and b"plays Goofspiel" in refused.stderr and b"Traceback" not in refused.stderr
