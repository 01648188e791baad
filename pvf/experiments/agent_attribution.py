"""Where a re-solving agent's exploitability comes from: its policy with one solve's decisions replaced.

For an agent A and a reference agent R (e.g. the same planner with the
exact oracle at its leaves) in a game whose public tree can be enumerated:
  1. both policies assembled over the whole game (`agent_policy`) and judged
     by OpenSpiel's `nash_conv`;
  2. A's decision infostates grouped by the solve that set them: with the
     trunk leaves at move d and re-solving where play leaves the trunk
     (`replan=horizon`), an infostate at move r was set by the solve rooted
     at its public state's ancestor at move ⌊r/d⌋·d (the first solve for
     r < d; one group per seat where the gadget makes each seat solve for
     itself);
  3. per group, two hybrids judged by `nash_conv`: A with R's strategy at
     the group's infostates (`share` = NashConv(A) − NashConv(hybrid), what
     replacing that solve alone removes) and R with A's strategy there
     (`alone` = NashConv(hybrid) − NashConv(R), what that solve alone
     adds). Neither need add up to the gap (best responses interact), but
     together they show which solves carry it.
One CSV row per group, largest `alone` first.

    python -m pvf.experiments.agent_attribution --game goofspiel5 --agent runs/x.ckpt --reference oracle \\
        --out docs/figures/agents/attribution-goofspiel5.csv
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import pyspiel

from pvf.agents.resolving import agent_policy
from pvf.agents.spec import AgentSpec, make_planner, parse_agent
from pvf.errors import PvfError
from pvf.games.public_tree import PublicTree, build_public_tree
from pvf.module_main import run_module
from pvf.results import write_csv
from pvf.solvers.tabular import to_openspiel


def solve_groups(tree: PublicTree, depth: int) -> dict[str, tuple[int, int]]:
    """{infostate string: (seat, root public state of the solve that set it)} over both players' decisions."""
    groups = {}
    for n in (0, 1):
        for i, string in enumerate(tree.infostate_strings[n]):
            if not tree.infostate_actions[n][i]:
                continue
            state = int(tree.infostate_public_state[n][i])
            root_move = (int(tree.public_state_depth[state]) // depth) * depth
            while tree.public_state_depth[state] > root_move or (
                tree.public_state_parent[state] >= 0
                and tree.public_state_depth[tree.public_state_parent[state]] == root_move
            ):
                state = int(tree.public_state_parent[state])  # up to the first public state of move root_move
            groups[string] = (n, state)
    return groups


def attribution(tree: PublicTree, agent: AgentSpec, reference: AgentSpec) -> list[dict]:
    """One row per solve group (module docstring), largest `alone` first."""
    planner = make_planner(agent, tree)
    policy, _ = agent_policy(tree, planner)
    oracle, _ = agent_policy(tree, make_planner(reference, tree))
    game = tree.loaded.sequential
    judge = lambda p: float(pyspiel.nash_conv(game, to_openspiel(p)))  # noqa: E731
    total, reference_total = judge(policy), judge(oracle)
    by_group: dict[tuple[int, int], list[str]] = {}
    for string, group in solve_groups(tree, planner.depth).items():
        by_group.setdefault(group, []).append(string)
    rows = []
    for (seat, state), strings in by_group.items():
        value = judge({**policy, **{s: oracle[s] for s in strings}})
        alone = judge({**oracle, **{s: policy[s] for s in strings}})
        rows.append(
            {
                "seat": seat + 1,
                "root_move": int(tree.public_state_depth[state]),
                "public_state": tree.public_state_strings[state].replace("\n", " "),
                "infostates": len(strings),
                "nash_conv": total,
                "reference_nash_conv": reference_total,
                "hybrid_nash_conv": value,
                "share": total - value,
                "alone": alone - reference_total,
            }
        )
    return sorted(rows, key=lambda r: -r["alone"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, help="OpenSpiel game string or alias (enumerable)")
    parser.add_argument("--agent", required=True, help="the agent SPEC (an exact-range re-solving agent)")
    parser.add_argument("--reference", default="oracle", help="the reference agent SPEC (default oracle)")
    parser.add_argument("--out", required=True, help="CSV, one row per solve")
    args = parser.parse_args(argv)
    agent, reference = parse_agent(args.agent), parse_agent(args.reference)
    if not isinstance(agent, AgentSpec) or not isinstance(reference, AgentSpec):
        raise PvfError("attribution compares exact-range agents (resolve:... SPECs), not particle ones")
    rows = attribution(build_public_tree(args.game), agent, reference)
    write_csv(rows, args.out)
    print(f"NashConv {rows[0]['nash_conv']:.4f}, reference {rows[0]['reference_nash_conv']:.4f}; solves adding most:")
    for r in rows[:8]:
        print(
            f"  seat {r['seat']} move {r['root_move']} ({r['infostates']} infostates) "
            f"alone {r['alone']:+.4f}, share {r['share']:+.4f}: " + r["public_state"]
        )
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.agent_attribution")
