"""The re-solving agent on particle beliefs: judged by OpenSpiel's `nash_conv` against the exact-range agent, its
decisions a function of its infostate (any walk order, either engine, the bot), and its SPECs."""

import json
import re
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

from pvf.agents.bot import ParticleBot
from pvf.agents.particle_agent import ParticlePlanner, ParticleResolver, particle_policy
from pvf.agents.resolving import agent_policy
from pvf.agents.spec import ParticleAgentSpec, make_particle_planner, make_planner, parse_agent
from pvf.errors import PvfError
from pvf.games.particle_tree import history_actions
from pvf.solvers.evaluators import ConstantEvaluator, ExactEvaluator
from pvf.solvers.tabular import to_openspiel
from tests.conftest import GOOF4, GOOF5, cached_tree


def _planner(k, engine="auto"):
    return ParticlePlanner(particles=k, depth=1, leaves=lambda setting: ExactEvaluator, engine=engine)


def _nash_conv(tree, policy):
    return pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(policy))


def test_particles_play_goofspiel4_about_as_well_as_exact_ranges():
    """K = 16 particles: NashConv within 1.5x the exact-range agent that re-solves without the gadget (which is
    what the particle agent does), both with oracle leaves at move 1 and 100 iterations; K = 1 is far worse."""
    tree = cached_tree(GOOF4)
    exact, _ = agent_policy(tree, make_planner(parse_agent("resolve:depth=1,gadget=off"), tree))
    particles, counts = particle_policy(tree, _planner(16))
    single, _ = particle_policy(tree, _planner(1))
    assert counts["decisions"] == len(particles) > counts["solves"] > 0
    assert _nash_conv(tree, particles) <= 1.5 * _nash_conv(tree, exact)
    assert _nash_conv(tree, single) > 10 * _nash_conv(tree, exact)


def test_a_decision_is_a_function_of_the_infostate():
    """The same strategies whatever order the infostates are visited in, with either engine, and from the bot."""
    tree = cached_tree(GOOF4)
    walked, _ = particle_policy(tree, _planner(4))
    for engine, order in (("native", -1), ("openspiel", 1)):
        for seat in (0, 1):
            resolver = ParticleResolver(tree.loaded, _planner(4, engine), seat)
            infostates = np.unique(tree.infostate[tree.player == seat, seat])[::order]
            for i in infostates[: 60 if engine == "openspiel" else None]:
                history = tuple(history_actions(tree, int(tree.infostate_history[seat][i])))
                strategy = resolver.decide(history).strategy
                if strategy:
                    assert strategy == walked[tree.infostate_strings[seat][i]]
    rng = np.random.default_rng(0)
    bots = [ParticleBot(ParticleResolver(tree.loaded, _planner(4), seat)) for seat in (0, 1)]
    for _ in range(20):
        state = tree.loaded.sequential.new_initial_state()
        while not state.is_terminal():
            seat = state.current_player()
            probs, _ = bots[seat].step_with_policy(state)
            assert dict(probs) == walked[state.information_state_string(seat)]
            state.apply_action(int(rng.choice(state.legal_actions())))


def test_particle_specs_and_their_refusals():
    assert parse_agent("particles") == ParticleAgentSpec()
    assert parse_agent("particles:k=4,depth=1,min_live=0,explore=0,engine=native,replan=every") == ParticleAgentSpec(
        k=4, depth=1, min_live=0, explore=0.0, engine="native", replan="every"
    )
    assert parse_agent("particles:leaves=rollout,horizon=2") == ParticleAgentSpec(leaves="rollout", horizon=2)
    greedy = parse_agent("particles:leaves=rollout,horizon=1,greed=0.25")
    assert greedy.greed == 0.25 and greedy.label.endswith(",greed=0.25") and parse_agent(greedy.label) == greedy
    mmd = parse_agent("particles:leaves=zero,horizon=1,solver=mmd")
    assert mmd.solver == "mmd" and mmd.label.endswith(",solver=mmd")
    assert make_particle_planner(mmd, cached_tree(GOOF4).loaded).solver.func.__name__ == "mmd"
    for bad, message in [
        ("particles:leaves=targets", "oracle, zero, rollout or a .ckpt"),
        ("particles:depth=1,horizon=1", "not both"),
        ("particles:horizon=0", "horizon must be positive"),
        ("particles:k=0", "k must be positive"),
        ("particles:min_live=-1", "min_live must be non-negative"),
        ("particles:explore=2", "explore is a probability"),
        ("particles:engine=fast", "engine takes one of"),
        ("particles:solver=lp", "solver takes one of"),
        ("particles:gadget=on", "is not KEY=VALUE"),
        ("particles:leaves=rollout,greed=-1", "greed is a number"),
        ("particles:leaves=zero,horizon=1,greed=1", "needs leaves=rollout or fallback=rollout"),
    ]:
        with pytest.raises(PvfError, match=message):
            parse_agent(bad)
    with pytest.raises(PvfError, match="simultaneous-move games without chance"):
        ParticleResolver(cached_tree("kuhn_poker").loaded, _planner(4), 0)
    with pytest.raises(PvfError, match="no default depth limit"):
        make_particle_planner(ParticleAgentSpec(), cached_tree(GOOF4).loaded)


def test_the_command_plays_particles_without_the_public_tree_and_judges_them():
    command = [sys.executable, "-m", "pvf.cli", "play", "--game", "goofspiel4", "--agent", "particles:k=4,depth=1"]
    played = json.loads(
        subprocess.run(
            [*command, "--opponent", "random", "--games", "6", "--json"], capture_output=True, check=True
        ).stdout
    )
    assert played["games"] == 6 and played["seconds_per_move"] > 0
    judged = subprocess.run(
        [
            sys.executable,
            "-m",
            "pvf.cli",
            "play",
            "exploitability",
            "--game",
            "goofspiel4",
            "--agent",
            "particles:k=4,depth=1",
            "--json",
        ],
        capture_output=True,
        check=True,
    )
    report = json.loads(judged.stdout)
    tree = cached_tree(GOOF4)
    assert report["nash_conv"] == pytest.approx(_nash_conv(tree, particle_policy(tree, _planner(4))[0]), abs=1e-12)
    assert report["pvf_nash_conv"] == pytest.approx(report["nash_conv"], abs=1e-9)
    refused = subprocess.run(
        [sys.executable, "-m", "pvf.cli", "play", "--game", "leduc", "--agent", "particles", "--opponent", "random"],
        capture_output=True,
    )
    assert refused.returncode == 2 and b"simultaneous-move" in refused.stderr and b"Traceback" not in refused.stderr


def test_a_tree_cut_at_the_depth_limit_solves_as_the_whole_one():
    """Leaves that need no subgame (zero, here) solve the same trunk whether the particle tree stops at the depth
    limit or holds the game below it: the same policy to 1e-12, whichever way the limit is given."""
    tree = cached_tree(GOOF4)
    zero = lambda setting: lambda trunk: ConstantEvaluator(0.0)  # noqa: E731
    whole, _ = particle_policy(tree, ParticlePlanner(particles=8, depth=2, leaves=zero, below_leaves=True))
    planner = make_particle_planner(parse_agent("particles:k=8,leaves=zero,depth=2"), tree.loaded)
    assert not planner.below_leaves  # zero leaves need no subgame: the SPEC's planner cuts the tree
    cut, _ = particle_policy(tree, planner)
    assert cut.keys() == whole.keys()
    for key, probs in whole.items():
        assert probs.keys() == cut[key].keys()
        assert max(abs(p - cut[key][a]) for a, p in probs.items()) < 1e-12


def test_rollout_leaves_look_one_move_ahead_and_beat_uniform_play():
    """Goofspiel-4, leaves one move ahead of every solve valued by uniform play from there: the assembled policy's
    exact expected return against the uniform policy (OpenSpiel's `expected_returns`, both seats) is positive and
    higher than with zero leaves, which see nothing beyond the horizon."""
    tree = cached_tree(GOOF4)
    game = tree.loaded.sequential
    uniform = pyspiel.UniformRandomPolicy(game)

    def against_uniform(spec: str) -> float:
        policy, counts = particle_policy(tree, make_particle_planner(parse_agent(spec), tree.loaded))
        assert counts["solves"] > 1
        agent = to_openspiel(policy)
        root = game.new_initial_state()
        seats = [[agent, uniform], [uniform, agent]]
        return sum(pyspiel.expected_returns(root, seats[s], -1, False)[s] for s in (0, 1)) / 2

    rollout = against_uniform("particles:k=8,leaves=rollout,horizon=1")
    assert rollout > 0.3
    assert rollout > against_uniform("particles:k=8,leaves=zero,horizon=1") + 0.1


def test_an_endgame_is_solved_to_the_end_of_the_game():
    """From move `endgame` on, a solve reaches the end of the game: with endgame=0 every solve does, as with the
    depth limit at move 0 (the same policy to 1e-12); with endgame=1 the agent is a third less exploitable (OpenSpiel's
    `nash_conv`) than with zero leaves one move ahead of every solve, which sees nothing of the game's end."""
    tree = cached_tree(GOOF4)

    def policy(spec: str) -> dict:
        return particle_policy(tree, make_particle_planner(parse_agent(spec), tree.loaded))[0]

    everywhere, whole = (
        policy("particles:k=8,leaves=zero,horizon=1,endgame=0"),
        policy("particles:k=8,leaves=zero,depth=0"),
    )
    assert everywhere.keys() == whole.keys()
    for key, probs in whole.items():
        assert max(abs(p - everywhere[key][a]) for a, p in probs.items()) < 1e-12
    myopic = _nash_conv(tree, policy("particles:k=8,leaves=zero,horizon=1"))
    assert _nash_conv(tree, policy("particles:k=8,leaves=zero,horizon=1,endgame=1")) < 0.75 * myopic  # 0.75, 1.13
    spec = parse_agent("particles:horizon=1,endgame=9")
    assert spec.endgame == 9 and ",endgame=9," in spec.label and parse_agent(spec.label) == spec  # the label reads back
    with pytest.raises(PvfError, match="endgame must be non-negative"):
        parse_agent("particles:endgame=-1")


def test_a_horizon_agent_takes_each_solves_nets_from_its_leaves_move(goof5_children_net):
    """Goofspiel-5, a net trained at move 3, horizon 1: the solves at move 2 (leaves at move 3) take the net, the
    others the fallback. Along random plays, decisions before move 2 are the fallback agent's, bit for bit; at
    move 2 they are not. Without a fallback the moves no net covers are refused, as are a fallback without nets
    and a fallback under a depth limit."""
    net = str(goof5_children_net[0])
    loaded = cached_tree(GOOF5).loaded
    planners = [
        make_particle_planner(parse_agent(text), loaded)
        for text in ("particles:k=4,leaves=zero,horizon=1", f"particles:k=4,leaves={net},horizon=1,fallback=zero")
    ]
    rng = np.random.default_rng(0)
    same, differ = 0, 0
    for seat in (0, 1):
        plain, hybrid = (ParticleResolver(loaded, planner, seat) for planner in planners)
        for _ in range(3):
            state = loaded.sequential.new_initial_state()
            while len(state.history()) < 6:  # moves 0, 1, 2
                if state.current_player() == seat:
                    history = tuple(state.history())
                    a, b = plain.decide(history).strategy, hybrid.decide(history).strategy
                    if len(history) < 4:
                        assert a == b
                        same += 1
                    else:
                        differ += a != b
                state.apply_action(int(rng.choice(state.legal_actions())))
    assert same == 12 and differ >= 4
    spec = parse_agent(f"particles:k=4,leaves={net},horizon=1,fallback=rollout")
    assert parse_agent(spec.label) == spec
    cases = [
        (f"particles:k=4,leaves={net},horizon=1", "leaves at move(s) 1, 2, 4, where no net"),
        (f"particles:k=4,leaves={net}+{net},horizon=1,endgame=2", "leaves at move(s) 1, 2, where no net"),
        ("particles:k=4,leaves=rollout,horizon=1,fallback=zero", "needs .ckpt leaves and horizon"),
        (f"particles:k=4,leaves={net},depth=3,fallback=zero", "needs .ckpt leaves and horizon"),
        (f"particles:k=4,leaves={net},horizon=1,fallback=oracle", "fallback takes one of zero, rollout"),
    ]
    for text, message in cases:
        with pytest.raises(PvfError, match=re.escape(message)):
            make_particle_planner(parse_agent(text), loaded)
