"""The re-solving agent's exact exploitability over leaf evaluators, depth limits and iterations (`pvf play`'s table).

For each agent SPEC (pvf.agents.spec) of a game:
  1. the agent's policy in both seats by one walk of the public tree per
     seat (`pvf.agents.resolving.agent_policy`), judged by OpenSpiel's
     `nash_conv`; the trunk exploitability of its first solve (its trunk
     from the initial state, same leaves and iterations) beside it;
  2. full-game CFR+ given the same wall-clock time as the agent's walk
     (iterations = walk seconds / CFR+'s seconds per iteration, measured
     here) and its NashConv: what the compute would buy without a value
     function;
  3. one CSV row per SPEC, appended as soon as it is measured, so that a
     rerun skips the SPECs already in the CSV (resumable); then a PNG of
     NashConv against seconds per solve, one marker per leaf evaluator.

    python -m pvf.experiments.agent_table --game leduc --out docs/figures/agents/agents-leduc.csv \
        [--agents "oracle;resolve:gadget=off;targets;zero;runs/x.ckpt;particles:k=16"] [--seeds 3]

A `particles:` SPEC (the agent on particle beliefs, `pvf.agents.particle_agent`)
gets one row per seed of its beliefs (`--seeds`), and no first-solve figure.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyspiel
from matplotlib.figure import Figure

from pvf.agents.particle_agent import particle_policy
from pvf.agents.resolving import agent_policy
from pvf.agents.spec import ParticleAgentSpec, make_particle_planner, make_planner, parse_agent
from pvf.games.public_tree import PublicTree, build_public_tree
from pvf.module_main import run_module
from pvf.results import write_csv
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.tabular import to_openspiel
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate

DEFAULT_AGENTS = (
    "oracle",
    "resolve:leaves=oracle,gadget=off",
    "resolve:leaves=oracle,iterations=300",
    "targets",
    "zero",
)


def measure_agent(tree: PublicTree, text: str, seed: int = 0) -> dict[str, Any]:
    """One row: the agent of SPEC `text` judged exactly, its first solve, and full-game CFR+ in the same time
    (a particle agent: its beliefs' `seed`, and no first-solve figure)."""
    spec = parse_agent(text)
    if isinstance(spec, ParticleAgentSpec):
        return measure_particle_agent(tree, text, spec, seed)
    planner = make_planner(spec, tree)
    start = time.perf_counter()
    policy, solves = agent_policy(tree, planner)
    seconds = time.perf_counter() - start
    trunk = build_trunk(tree, planner.depth)
    evaluator = planner.evaluator(trunk) if trunk.game.leaf_public_states.size else None
    first = solve_and_evaluate(trunk, evaluator, planner.iterations, solver=planner.solver)
    cfr_iterations, cfr_nash_conv = cfr_in_time(tree, seconds)
    return {
        "game": tree.game_string,
        "agent": text,
        "spec": spec.label,
        "leaves": leaves_name(spec.leaves),
        "evaluator": evaluator_kind(spec.leaves),
        "depth": planner.depth,
        "iterations": planner.iterations,
        "gadget": int(planner.gadget),
        "nash_conv": float(pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(policy))),
        "first_solve_trunk_exploitability": first.exploitability.exploitability,
        "solves": solves,
        "seconds": seconds,
        "seconds_per_solve": seconds / max(solves, 1),
        "cfr_iterations_same_time": cfr_iterations,
        "cfr_nash_conv_same_time": cfr_nash_conv,
    }


def measure_particle_agent(tree: PublicTree, text: str, spec: ParticleAgentSpec, seed: int) -> dict[str, Any]:
    """`measure_agent`'s row for the agent on particle beliefs (`pvf.agents.particle_agent.particle_policy`)."""
    planner = make_particle_planner(spec, tree.loaded)
    start = time.perf_counter()
    policy, counts = particle_policy(tree, planner, seed)
    seconds = time.perf_counter() - start
    cfr_iterations, cfr_nash_conv = cfr_in_time(tree, seconds)
    return {
        "game": tree.game_string,
        "agent": f"{text} seed={seed}",
        "spec": spec.label,
        "leaves": leaves_name(spec.leaves),
        "evaluator": f"particles K={spec.k}, {evaluator_kind(spec.leaves)}"
        + (f" greed {spec.greed:g}" if spec.greed else ""),
        "depth": planner.depth,
        "iterations": planner.iterations,
        "gadget": 0,
        "nash_conv": float(pyspiel.nash_conv(tree.loaded.sequential, to_openspiel(policy))),
        "first_solve_trunk_exploitability": float("nan"),
        "solves": counts["solves"],
        "seconds": seconds,
        "seconds_per_solve": seconds / max(counts["solves"], 1),
        "cfr_iterations_same_time": cfr_iterations,
        "cfr_nash_conv_same_time": cfr_nash_conv,
        "seed": seed,
        "regenerations": counts["regenerations"],
    }


def evaluator_kind(leaves: str) -> str:
    """The leaf evaluator as the figure groups it: oracle, targets, zero, "<architecture> net" for a checkpoint,
    "mean of N <architecture> nets" for several; ", p_solve P" where the data had a share P of its trunks at a
    trunk solve's queries (`pvf generate --p-solve`)."""
    if not leaves.endswith(".ckpt"):
        return leaves
    from pvf.valuefn.checkpoint import load_checkpoint

    paths = leaves.split("+")
    meta = load_checkpoint(paths[0])[1]
    kind = f"{meta.architecture} net" if len(paths) == 1 else f"mean of {len(paths)} {meta.architecture} nets"
    return kind if meta.layout.p_solve == 0 else f"{kind}, p_solve {meta.layout.p_solve:g}"


def leaves_name(leaves: str) -> str:
    """The leaves column: the checkpoints' file names (joined by +), or the evaluator's name."""
    return "+".join(Path(p).name for p in leaves.split("+")) if leaves.endswith(".ckpt") else leaves


def cfr_in_time(tree: PublicTree, seconds: float) -> tuple[int, float]:
    """Full-game CFR+ for about `seconds` (its time per iteration measured on 10 iterations): (iterations, NashConv)."""
    game = build_sequence_game(tree)
    start = time.perf_counter()
    cfr_plus(game, 10)
    per_iteration = (time.perf_counter() - start) / 10
    iterations = max(1, round(seconds / per_iteration))
    result = cfr_plus(game, iterations)
    strategies = (result.average_strategy[0][0], result.average_strategy[1][0])
    return iterations, float(nash_conv(game, strategies)[0])


def plot_agents(rows: Sequence[dict[str, Any]], path: str | Path, title: str) -> None:
    """NashConv against seconds per solve, one marker per row, a colour per leaf evaluator (gadget off: hollow;
    more iterations per solve: larger)."""
    fig = Figure(figsize=(7.5, 4.5))
    ax = fig.subplots()
    kinds = sorted({r["evaluator"] for r in rows})
    shown = set()
    for r in rows:
        i, hollow = kinds.index(r["evaluator"]), not int(r["gadget"])
        label = f"{r['evaluator']}{' (no gadget)' if hollow else ''}"
        ax.plot(
            float(r["seconds_per_solve"]),
            float(r["nash_conv"]),
            "o",
            color=f"C{i}",
            mfc="none" if hollow else f"C{i}",
            ms=5 + 3 * (int(r["iterations"]) > 100),
            label=None if label in shown else label,
        )
        shown.add(label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("seconds per solve")
    ax.set_ylabel("agent's NashConv (full game, both seats)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(f"{title}\n(large markers: more than 100 iterations per solve)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_particle_agents(
    rows: Sequence[dict[str, Any]], references: dict[str, float], path: str | Path, title: str
) -> None:
    """The particle agent's NashConv against K (mean ± std over its seeds, per SPEC without its `k`), the
    exact-range agents' figures (`references`: label -> NashConv) as horizontal lines. Where no SPEC is run
    at more than one K (SPECs that differ in another option, such as the horizon), one column per SPEC."""
    import numpy as np

    groups: dict[str, dict[int, list[float]]] = {}
    for r in rows:
        spec = parse_agent(r["agent"].rsplit(" seed=", 1)[0])
        rest = spec.label.replace(f"k={spec.k},", "")
        groups.setdefault(rest, {}).setdefault(spec.k, []).append(float(r["nash_conv"]))
    by_spec = all(len(by_k) == 1 for by_k in groups.values())
    fig = Figure(figsize=(7.5, 5.2 if by_spec else 4.5))
    ax = fig.subplots()
    for i, (label, by_k) in enumerate(sorted(groups.items())):
        ks = sorted(by_k)
        means = [np.mean(by_k[k]) for k in ks]
        stds = [np.std(by_k[k], ddof=1) if len(by_k[k]) > 1 else 0.0 for k in ks]
        x = [i] if by_spec else ks
        name = label.removeprefix("particles:") + (f" (K = {ks[0]})" if by_spec else "")
        ax.errorbar(x, means, yerr=stds, marker="o", capsize=3, color=f"C{i}", label=name)
    for j, (label, value) in enumerate(references.items()):
        ax.axhline(value, ls="--", color=f"C{len(groups) + j}", label=label)
    ax.set_yscale("log")
    if by_spec:
        fields = [label.removeprefix("particles:").split(",") for label in sorted(groups)]
        shared = set.intersection(*(set(f) for f in fields))
        ax.set_xticks(range(len(groups)), ["\n".join(x for x in f if x not in shared) or "-" for f in fields])
        ax.set_xlim(-0.5, len(groups) - 0.5)
        ax.set_xlabel("SPEC: the options that differ (mean ± std over the beliefs' seeds)")
    else:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("K (particle draws per sample)")
    ax.set_ylabel("agent's NashConv (full game, both seats)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3 if by_spec else -0.15), ncol=1)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, help="OpenSpiel game string or alias")
    parser.add_argument("--agents", default=";".join(DEFAULT_AGENTS), help="SPECs separated by ';'")
    parser.add_argument("--out", required=True, help="CSV (appended, resumable); the PNG goes beside it")
    parser.add_argument("--seeds", type=int, default=1, help="particle agents: one row per beliefs' seed 0..N-1")
    args = parser.parse_args(argv)
    out = Path(args.out)
    tree = build_public_tree(args.game)
    rows: list[dict[str, Any]] = []
    if out.exists():
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
    done = {r["agent"] for r in rows}
    runs = []
    for text in (t.strip() for t in args.agents.split(";") if t.strip()):
        particles = isinstance(parse_agent(text), ParticleAgentSpec)
        runs += [(text, seed, f"{text} seed={seed}") for seed in range(args.seeds)] if particles else [(text, 0, text)]
    for text, seed, name in runs:
        if name in done:
            continue
        row = measure_agent(tree, text, seed)
        print(
            f"{name}: NashConv {row['nash_conv']:.4f} (first solve {row['first_solve_trunk_exploitability']:.4f}; "
            f"CFR+ in the same {row['seconds']:.1f} s: {row['cfr_nash_conv_same_time']:.4f}), "
            f"{row['solves']} solves",
            flush=True,
        )
        rows.append(row)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_csv(rows, out)
    title = f"{tree.game_string}:\nthe re-solving agent's exploitability"
    if rows and all(isinstance(parse_agent(r["agent"].rsplit(" seed=", 1)[0]), ParticleAgentSpec) for r in rows):
        plot_particle_agents(rows, {}, out.with_suffix(".png"), title)
    else:
        plot_agents(rows, out.with_suffix(".png"), title)
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.agent_table")
