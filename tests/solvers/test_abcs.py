"""ABCs (pvf.solvers.abcs): BQL's optimum on a stationary chain, Nash on Kuhn, the chi-squared test, refusals."""

from __future__ import annotations

import json
import random
from collections import Counter, deque

import numpy as np
import pyspiel
import pytest
from scipy.stats import chi2_contingency

from pvf.cli import main
from pvf.errors import PvfError
from pvf.games.public_tree import build_public_tree
from pvf.solvers.abcs import MAX_CFR, ABCsLearner, BQLLearner, Halves, abcs, chi_squared_p_value, learner_result
from pvf.solvers.registry import SOLVERS
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.tabular import load_policy, to_openspiel, to_tabular
from pvf.solvers.trunk_solver import build_trunk

# One player (player 2 never acts), chance in two places: L pays 1 or 0 by a coin (0.5); R then a pays 0.6,
# R then b flips a coin to a last choice u (2) / d (-1) or to 0. The optimum is R, b, u, worth 1.
CHAIN = """EFG 2 R "a one-player chain" { "Player 1" "Player 2" } ""

p "" 1 1 "s0" { "L" "R" } 0
c "" 1 "c1" { "h" 0.5 "t" 0.5 } 0
t "" 1 "o1" { 1.0, -1.0 }
t "" 2 "o2" { 0.0, 0.0 }
p "" 1 2 "s1" { "a" "b" } 0
t "" 3 "o3" { 0.6, -0.6 }
c "" 2 "c2" { "x" 0.5 "y" 0.5 } 0
p "" 1 3 "s2" { "u" "d" } 0
t "" 4 "o4" { 2.0, -2.0 }
t "" 5 "o5" { -1.0, 1.0 }
t "" 6 "o6" { 0.0, 0.0 }
"""


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    path = tmp_path_factory.mktemp("abcs") / "chain.efg"
    path.write_text(CHAIN)
    return build_sequence_game(build_public_tree(f"efg_game(filename={path})"))


@pytest.fixture(scope="module")
def kuhn():
    return build_sequence_game(build_public_tree("kuhn_poker"))


def _greedy(learner, game) -> list[int]:
    """Player 1's argmax-Q action (its OpenSpiel action) at each decision infostate."""
    seqs = game.players[0]
    return [
        int(seqs.seq_action[lo + np.argmax(learner.q[0][lo : lo + size])])
        for lo, size in zip(seqs.info_start, seqs.info_size)
    ]


def test_on_a_stationary_chain_abcs_learns_bqls_optimal_policy_at_bql_like_cost(chain):
    learners = {"abcs": ABCsLearner(chain, seed=0), "bql": BQLLearner(chain, seed=0)}
    for learner in learners.values():
        for _ in range(2000):
            learner.iterate()
    optimum = [1, 3, 4]  # R at s0, b at s1, u at s2 (efg_game numbers actions across the game: L R a b u d)
    for name, learner in learners.items():
        assert _greedy(learner, chain) == optimum, name
        root = chain.players[0].info_start[0]
        assert max(learner.q[0][root : root + 2]) == pytest.approx(1.0, abs=0.1), name
    abcs_learner = learners["abcs"]
    # The detector rejects stationarity at about its significance level only (false positives), and ABCs
    # expands about one child per infostate: within a factor of A = 2 of BQL's cost (the paper's theorem 4.5).
    assert abcs_learner.nonstationary_verdicts <= 0.1 * abcs_learner.tests
    assert abcs_learner.nodes_touched < 2 * learners["bql"].nodes_touched
    assert learner_result(abcs_learner).value[0] > 0.6  # the average policy, uniform at first, is on its way


def test_bql_fails_on_kuhn_where_max_cfr_converges(kuhn):
    game = pyspiel.load_game("kuhn_poker")
    found = {}
    for name, learner in (("bql", BQLLearner(kuhn, seed=1)), ("max-cfr", ABCsLearner(kuhn, seed=1, settings=MAX_CFR))):
        for _ in range(3000):
            learner.iterate()
        found[name] = pyspiel.nash_conv(game, to_openspiel(to_tabular(kuhn, learner.average_strategy())))
    assert found["max-cfr"] < 0.1 < 0.3 < found["bql"]


def test_the_same_seed_gives_the_same_run_and_another_seed_another(kuhn):
    runs = [abcs(kuhn, 300, seed=s).average_strategy[0] for s in (4, 4, 5)]
    assert np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[0], runs[2])


def test_halves_and_the_p_value_agree_with_scipy_on_a_sliding_window():
    rng = random.Random(1)
    for trial in range(200):
        size = rng.choice([10, 11, 50])
        halves, window = Halves(size), deque(maxlen=size)
        for _ in range(rng.randint(2, 120)):
            category = rng.choice([3, 7, 9, 12][: rng.randint(1, 4)])
            halves.add(category)
            window.append(category)
        seen = list(window)
        older, newer = Counter(seen[: len(seen) // 2]), Counter(seen[len(seen) // 2 :])
        assert (dict(older), dict(newer), len(halves)) == (halves.older, halves.newer, len(seen)), trial
        categories = sorted(set(seen))
        expected = 1.0
        if len(categories) > 1:
            expected = chi2_contingency([[older[c] for c in categories], [newer[c] for c in categories]])[1]
        assert chi_squared_p_value(halves.older, halves.newer) == pytest.approx(expected, abs=1e-9), trial


def test_abcs_refuses_what_it_cannot_sample(kuhn):
    trunk = build_trunk(build_public_tree("kuhn_poker"), 3)
    with pytest.raises(PvfError, match="whole games only"):
        abcs(trunk.game, 10, leaf_evaluator=lambda r1, r2: (0 * r1, 0 * r2))
    with pytest.raises(PvfError, match="whole games only"):
        abcs(kuhn, 10, root_beliefs=(np.ones((1, 1)), np.ones((1, 1))))
    with pytest.raises(PvfError, match="at least 1"):
        abcs(kuhn, 0)


def test_pvf_solve_abcs_reaches_nashconv_005_on_kuhn_and_its_policy_round_trips(tmp_path, capsys):
    path = tmp_path / "abcs.json"
    assert main(["solve", "kuhn_poker", "--solver", "abcs", "--save-policy", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["iterations"] == SOLVERS["abcs"].default_iterations  # its own default, not CFR+'s
    assert out["nash_conv"] <= 0.05
    openspiel = pyspiel.nash_conv(pyspiel.load_game("kuhn_poker"), to_openspiel(load_policy(path)))
    assert out["nash_conv"] == pytest.approx(openspiel, abs=1e-9)
    assert main(["solve", "kuhn_poker", "--solver", "abcs", "--iterations", "200", "--seed", "3", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["solve", "kuhn_poker", "--solver", "abcs", "--iterations", "200", "--seed", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nash_conv"] == first["nash_conv"]  # --seed reaches the solver
