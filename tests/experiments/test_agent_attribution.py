"""Attribution of a re-solving agent's exploitability to its solves (Kuhn, trunk to move 3)."""

from __future__ import annotations

import pyspiel
import pytest

from pvf.agents.resolving import agent_policy
from pvf.agents.spec import make_planner, parse_agent
from pvf.experiments.agent_attribution import attribution, solve_groups
from pvf.solvers.tabular import to_openspiel

AGENT, REFERENCE = "resolve:leaves=zero,depth=3,iterations=20", "resolve:leaves=zero,depth=3,iterations=300"


def test_every_decision_belongs_to_one_solve_and_the_figures_are_openspiels(kuhn):
    """Each decision infostate in one group (the first solve below move 3, a re-solve at move 3 above); the rows'
    NashConv is OpenSpiel's of the assembled policy; the agent against itself has nothing to attribute."""
    groups = solve_groups(kuhn, 3)
    decisions = {s for n in (0, 1) for i, s in enumerate(kuhn.infostate_strings[n]) if kuhn.infostate_actions[n][i]}
    assert set(groups) == decisions
    assert {kuhn.public_state_depth[state] for _, state in groups.values()} == {0, 3}
    rows = attribution(kuhn, parse_agent(AGENT), parse_agent(REFERENCE))
    policy, _ = agent_policy(kuhn, make_planner(parse_agent(AGENT), kuhn))
    assert rows[0]["nash_conv"] == pytest.approx(pyspiel.nash_conv(kuhn.loaded.sequential, to_openspiel(policy)))
    assert sum(r["infostates"] for r in rows) == len(decisions)
    assert rows[0]["alone"] >= rows[-1]["alone"] and rows[0]["alone"] > 0.0
    same = attribution(kuhn, parse_agent(AGENT), parse_agent(AGENT))
    assert all(abs(r["share"]) < 1e-12 and abs(r["alone"]) < 1e-12 for r in same)
