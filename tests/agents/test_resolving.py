"""The continual re-solving agent: its assembled policy is the one its bot plays state by state, a solve to the
end equals OpenSpiel's CFR+, and the gadget keeps re-solving safe (judged by OpenSpiel's `nash_conv`)."""

import json
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, exploitability

from pvf.agents.bot import ResolvingBot
from pvf.agents.resolving import agent_policy
from pvf.agents.spec import AgentSpec, make_planner, parse_agent
from pvf.errors import PvfError
from pvf.games.public_tree import build_public_tree
from pvf.solvers.tabular import load_policy, to_openspiel
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate


@pytest.fixture(scope="module")
def kuhn():
    return build_public_tree("kuhn_poker")


def _nash_conv(tree, policy):
    return pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(policy))


def _brute_force(tree, planner):
    """Every state of the game walked in OpenSpiel, each decision asked of a fresh bot of the acting seat."""
    policy, bots = {}, {}

    def visit(state):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                visit(state.child(action))
            return
        player = state.current_player()
        bot = ResolvingBot(tree, planner, player)
        bots[player] = bot
        policy[state.information_state_string()] = bot.action_probabilities(state)
        for action in state.legal_actions():
            visit(state.child(action))

    visit(tree.loaded.sequential.new_initial_state())
    return policy


@pytest.mark.parametrize("gadget", ["on", "off"])
def test_the_walk_assembles_what_the_bot_plays_at_every_state(kuhn, gadget):
    planner = make_planner(parse_agent(f"resolve:depth=3,iterations=20,gadget={gadget}"), kuhn)
    policy, _ = agent_policy(kuhn, planner)
    assert policy == _brute_force(kuhn, planner)
    assert len(policy) == 12


def test_a_solve_to_the_end_is_openspiels_cfr_plus(kuhn):
    """Depth at the first decision: one solve of the whole game, 100 CFR+ iterations, as OpenSpiel's solver."""
    policy, solves = agent_policy(kuhn, make_planner(parse_agent("resolve:depth=2,iterations=100"), kuhn))
    solver = cfr.CFRPlusSolver(kuhn.loaded.sequential)
    for _ in range(100):
        solver.evaluate_and_update_policy()
    reference = exploitability.nash_conv(kuhn.loaded.sequential, solver.average_policy())
    assert solves == 2  # one per seat (the gadget never fires: nothing is below the first solve)
    assert _nash_conv(kuhn, policy) == pytest.approx(reference, abs=1e-9)


def test_the_gadget_makes_re_solving_safe(kuhn):
    """Trunk to P1's first move, oracle leaves: re-solving with the gadget stays within 2x the first solve's
    trunk exploitability; without it (the opponent's range taken as given) it is 27x."""
    trunk = build_trunk(kuhn, 3)
    from pvf.solvers.evaluators import ExactEvaluator

    first = solve_and_evaluate(trunk, ExactEvaluator(trunk), 100).exploitability.exploitability
    safe, _ = agent_policy(kuhn, make_planner(parse_agent("resolve:depth=3"), kuhn))
    unsafe, _ = agent_policy(kuhn, make_planner(parse_agent("resolve:depth=3,gadget=off"), kuhn))
    assert _nash_conv(kuhn, safe) < 2 * first
    assert _nash_conv(kuhn, unsafe) > 20 * first


def test_leduc_with_oracle_leaves_is_within_twice_its_first_solve():
    tree = build_public_tree("leduc_poker")
    planner = make_planner(parse_agent("oracle"), tree)
    assert planner.depth == 7
    policy, _ = agent_policy(tree, planner)
    trunk = build_trunk(tree, 7)
    first = solve_and_evaluate(trunk, planner.evaluator(trunk), 100).exploitability.exploitability
    assert first == pytest.approx(0.077, abs=0.001)  # the paper-scale oracle figure
    assert _nash_conv(tree, policy) < 2 * first


def test_specs_and_their_refusals(tmp_path):
    assert parse_agent("oracle") == AgentSpec()
    assert parse_agent("resolve:leaves=zero,depth=4,iterations=7,gadget=off,replan=every") == AgentSpec(
        "zero", 4, 7, "cfr+", False, "every"
    )
    for bad, message in [
        ("nets", "leaves are oracle"),
        ("resolve:depth=x", "depth takes an integer"),
        ("resolve:iterations=0", "iterations must be positive"),
        ("resolve:speed=1", "is not KEY=VALUE"),
        ("resolve:depth=3,depth=4", "gives depth twice"),
        ("resolve:solver=mmd", "the gadget needs solver=cfr"),
        (str(tmp_path / "missing.ckpt"), "no checkpoint file"),
    ]:
        with pytest.raises(PvfError, match=message):
            parse_agent(bad)
    with pytest.raises(PvfError, match="no default depth limit"):
        make_planner(parse_agent("oracle"), build_public_tree("kuhn_poker"))


def test_the_command_prints_and_saves_the_judged_policy(tmp_path):
    out = tmp_path / "agent.json"
    command = [sys.executable, "-m", "pvf.cli", "play", "exploitability", "--game", "kuhn_poker"]
    result = subprocess.run(
        [*command, "--agent", "resolve:depth=3", "--save-policy", str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(result.stdout)
    tree = build_public_tree("kuhn_poker")
    assert report["nash_conv"] == pytest.approx(_nash_conv(tree, load_policy(out)), abs=1e-12)
    assert report["pvf_nash_conv"] == pytest.approx(report["nash_conv"], abs=1e-9)
    refused = subprocess.run([*command, "--agent", "resolve:depth=3", "--opponent", "random"], capture_output=True)
    assert refused.returncode == 2 and b"drop --opponent" in refused.stderr


def test_matches_agree_with_the_exact_expected_return_and_every_openspiel_bot_plays(kuhn):
    """The match mean against the uniform bot lies within its 95% interval's reach of the return computed exactly
    from the assembled policy (OpenSpiel's `expected_returns`, both seats); `ismcts` and `mcts` play too."""
    command = [sys.executable, "-m", "pvf.cli", "play", "--game", "kuhn_poker", "--agent", "resolve:depth=3", "--json"]
    report = json.loads(
        subprocess.run([*command, "--opponent", "random", "--games", "1000"], capture_output=True, check=True).stdout
    )
    policy, _ = agent_policy(kuhn, make_planner(parse_agent("resolve:depth=3"), kuhn))
    agent = to_openspiel(policy)
    uniform = pyspiel.UniformRandomPolicy(kuhn.loaded.sequential)
    root = kuhn.loaded.sequential.new_initial_state()
    exact = [
        pyspiel.expected_returns(root, [agent, uniform] if seat == 0 else [uniform, agent], -1, False)[seat]
        for seat in (0, 1)
    ]
    expected = (exact[0] + exact[1]) / 2
    assert expected > 0.1
    assert abs(report["mean_return"] - expected) < 1.5 * report["ci95"]
    for bot in ("ismcts", "mcts"):
        played = json.loads(
            subprocess.run([*command, "--opponent", bot, "--games", "4"], capture_output=True, check=True).stdout
        )
        assert played["games"] == 4 and played["opponent"] == bot


def test_several_checkpoints_at_the_leaves_give_the_mean_of_their_values(kuhn, kuhn_runs, tmp_path):
    """`leaves=A.ckpt+B.ckpt`: the planner's leaf values are the mean of each net's, infostate by infostate; a
    missing one of them is named."""
    paths = [kuhn_runs["particle"].checkpoint, kuhn_runs["positional"].checkpoint]
    both = make_planner(parse_agent(f"resolve:leaves={'+'.join(paths)},depth=3"), kuhn)
    alone = [make_planner(parse_agent(f"resolve:leaves={p},depth=3"), kuhn) for p in paths]
    trunk = build_trunk(kuhn, 3)
    rng = np.random.default_rng(0)
    reach = [rng.random((2, len(trunk.game.leaf_infostates[n]))) for n in (0, 1)]
    mean = both.evaluator(trunk)(*reach)
    single = [p.evaluator(trunk)(*reach) for p in alone]
    for n in (0, 1):
        np.testing.assert_allclose(mean[n], (single[0][n] + single[1][n]) / 2, atol=1e-12)
    with pytest.raises(PvfError, match="no checkpoint file"):
        parse_agent(f"resolve:leaves={paths[0]}+{tmp_path / 'missing.ckpt'}")
