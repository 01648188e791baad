"""Continual re-solving: a depth-limited solve at every public state of play, beliefs carried from solve to solve.

The agent's view of a game in progress is a public belief state: the public
state S reached and, per player, the reach of each of its infostates in S
under the strategies the agent computed (its own as it played them, the
opponent's as its model). At every public state where a player acts:
  1. the trunk rooted at the PBS (S, beliefs) is built down to the planner's
     depth limit, a move number (`pvf.solvers.trunk_solver.build_trunk`);
     from the depth limit on, a solve reaches the end of the game;
  2. it is solved with the planner's solver and leaf evaluator (the exact
     oracle, CFR+ targets, a trained network, a constant);
  3. the solution's strategy at S's infostates is the agent's: it acts by it
     where it is the acting player, and it is its model of the opponent where
     the opponent acts;
  4. the beliefs of each child public state are the parent's pushed through
     that strategy (`child_beliefs`; at a chance node they carry over).
By default (`replan="horizon"`) the agent follows a solve's strategy for
as long as play stays in its trunk and solves again where play leaves it,
at the trunk's leaves (DeepStack's lookahead); `replan="every"` solves
again at every public state where a player acts.
The beliefs and the last solve at S depend only on the public path to S, so one walk of the
public tree (`resolved_policy`) finds the strategy the agent plays at every
infostate, in either seat: a profile whose NashConv is the agent's
exploitability, summed over its two seats. Beliefs are reaches, not
normalised (the gadget's values are in their units); a range that is zero
everywhere in S (the opponent did what the model said it never does, or, in
the walk, a seat's own range at a public state it never reaches) is
replaced by ones. Without the gadget nothing ties a new solve to the
previous one ("unsafe" re-solving). With it (`gadget=True`, Burch et al.
2014, DeepStack), a new solve at a leaf of the last one lets the opponent,
at each of its infostates, take instead its value there in the last
solve (`pvf.solvers.cfr_plus.Gadget`); the opponent's range then comes
from the gadget, and the agent's solves depend on its seat, so the walk
runs once per seat (`agent_policy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from pvf.errors import PvfError
from pvf.games.public_tree import CHANCE, TERMINAL, PublicTree
from pvf.solvers.cfr_plus import Gadget, cfr_plus
from pvf.solvers.interface import LeafEvaluator, Solver
from pvf.solvers.trunk_solver import Trunk, build_trunk, solve_trunk

# (public state, beliefs) -> the trunk's leaf evaluator; built per solve, since it is bound to the trunk.
EvaluatorFactory = Callable[[Trunk], LeafEvaluator]
Beliefs = tuple[np.ndarray, np.ndarray]  # per player [K_n] reach of its infostates in the public state


REPLANS = ("horizon", "every")


@dataclass(frozen=True)
class Planner:
    """A re-solving planner: where its trunks stop, what values them there, how long it solves, when it re-solves.

    depth: move number of the trunk leaves; a public state at or beyond it is solved to the end of the game.
    evaluator: the leaf evaluator of a trunk (unused where a solve reaches the end).
    iterations: solver iterations per solve.
    solver: `cfr_plus`'s call signature (`pvf.solvers.registry`).
    replan: "horizon" (follow the last solve's strategy inside its trunk, solve again where play leaves it:
        at its leaves) or "every" (solve again at every public state where a player acts).
    """

    depth: int
    evaluator: EvaluatorFactory
    iterations: int
    solver: Solver
    replan: str = "horizon"
    gadget: bool = False


@dataclass(frozen=True, eq=False)
class Solve:
    """One solve: the trunk rooted at a PBS, its leaf evaluator (None without leaves) and the solver's
    strategies on it (per player [S_n])."""

    trunk: Trunk
    strategies: tuple[np.ndarray, np.ndarray]
    beliefs: Beliefs
    evaluator: LeafEvaluator | None

    def leaf_values(self, public_state: int, player: int) -> np.ndarray | None:
        """[K] `player`'s counterfactual values at its infostates of a leaf public state of the trunk (in
        `tree.public_state_infostates[player][public_state]` order): the leaf evaluator's answers averaged over
        the solve's queries, weighted as CFR+ averages its iterates; None where the public state is not a leaf."""
        game = self.trunk.game
        where = np.flatnonzero(game.leaf_public_states == public_state)
        if not isinstance(self.evaluator, AveragedLeafValues) or not where.size:
            return None
        values = self.evaluator.average(player)
        lo, hi = game.leaf_offsets[player][where[0]], game.leaf_offsets[player][where[0] + 1]
        by_infostate = dict(zip(game.leaf_infostates[player][lo:hi].tolist(), values[lo:hi]))
        return np.array([by_infostate[int(i)] for i in self.trunk.tree.public_state_infostates[player][public_state]])

    @property
    def root(self) -> int:
        return int(self.trunk.game.root_public_state)

    def covers(self, public_state: int) -> bool:
        """Whether the trunk has the decisions of `public_state` (a public state below its root, above its leaves)."""
        tree = self.trunk.tree
        return int(tree.public_state_depth[public_state]) < self.trunk.depth and self._below_root(public_state)

    def strategy_at(self, public_state: int, player: int) -> dict[int, dict[int, float]]:
        """`player`'s strategy at its infostates of `public_state`: {augmented infostate: {action: probability}}
        (a zero-reach infostate, where the solver's average is undefined, uniform)."""
        tree, seqs = self.trunk.tree, self.trunk.game.players[player]
        out = {}
        for k in np.flatnonzero(tree.infostate_public_state[player][seqs.infostates] == public_state):
            lo, size = seqs.info_start[k], seqs.info_size[k]
            probs = np.asarray(self.strategies[player][lo : lo + size], dtype=np.float64)
            probs = probs / probs.sum() if probs.sum() > 0 else np.full(size, 1.0 / size)
            out[int(seqs.infostates[k])] = {int(a): float(p) for a, p in zip(seqs.seq_action[lo : lo + size], probs)}
        return out

    def _below_root(self, public_state: int) -> bool:
        parent = self.trunk.tree.public_state_parent
        while public_state >= 0 and public_state != self.root:
            public_state = int(parent[public_state])
        return public_state == self.root


@dataclass(frozen=True)
class Decision:
    """What the agent does at a public state: the acting player's strategy there and the solve it came from.

    strategy: {augmented infostate of `player` in the public state: {action: probability}}.
    solve: the solve whose strategy it is (a new one, or the last one where its trunk covers the public state).
    """

    public_state: int
    player: int
    strategy: dict[int, dict[int, float]]
    solve: Solve


@dataclass
class Resolver:
    """The agent's decisions at one game's public states by one planner, each computed once (`decide`).

    seat: the player the agent is, where its solves depend on it (the gadget guards the other player's values);
        None where they do not (both seats' strategies come from the same solves).
    solves: how many solves the decisions so far took.
    """

    tree: PublicTree
    planner: Planner
    seat: int | None = None
    cache: dict[int, Decision] = field(default_factory=dict)
    solves: int = 0

    def __post_init__(self) -> None:
        if self.planner.replan not in REPLANS:
            raise PvfError(f"replan is one of {', '.join(REPLANS)}, not {self.planner.replan!r}")
        if self.planner.gadget and (self.seat is None or self.planner.replan != "horizon"):
            raise PvfError("the re-solving gadget needs the agent's seat and replan='horizon'")

    def root_beliefs(self) -> Beliefs:
        """Beliefs at the initial public state: every infostate reached (reach 1), normalised."""
        root = int(self.tree.public_state[0])
        return _reached(tuple(np.ones(len(self.tree.public_state_infostates[n][root])) for n in (0, 1)))

    def decision_at(self, public_state: int) -> Decision:
        """The agent's decision at a public state where a player acts, its beliefs carried down the public path."""
        tree = self.tree
        path = [public_state]
        while tree.public_state_parent[path[-1]] >= 0:
            path.append(int(tree.public_state_parent[path[-1]]))
        beliefs, last = self.root_beliefs(), None
        for parent, child in zip(path[::-1], path[-2::-1]):
            player = acting_player(tree, parent)
            strategy = {}
            if player in (0, 1):
                decision = self.decide(parent, beliefs, last)
                strategy, last = decision.strategy, decision.solve
            beliefs = child_beliefs(tree, parent, child, beliefs, player, strategy)
        return self.decide(public_state, beliefs, last)

    def decide(self, public_state: int, beliefs: Beliefs, last: Solve | None) -> Decision:
        """The decision at `public_state` from `beliefs`, the last solve's where it covers the public state and the
        planner follows it, else a new solve's (cached by public state: the inputs are a function of it)."""
        if public_state in self.cache:
            return self.cache[public_state]
        player = acting_player(self.tree, public_state)
        if last is None or self.planner.replan == "every" or not last.covers(public_state):
            last = self._solve(public_state, beliefs, last)
        decision = Decision(public_state, player, last.strategy_at(public_state, player), last)
        self.cache[public_state] = decision
        return decision

    def _solve(self, public_state: int, beliefs: Beliefs, last: Solve | None) -> Solve:
        """A new solve at `public_state`; with the gadget, the opponent's values there in `last` guarded."""
        tree, planner = self.tree, self.planner
        beyond = int(tree.public_state_depth[public_state]) >= planner.depth
        depth = int(tree.depth.max()) + 1 if beyond else planner.depth
        trunk = build_trunk(tree, depth, root_public_state=public_state, root_beliefs=beliefs)
        evaluator = None if not trunk.game.leaf_public_states.size else AveragedLeafValues(planner.evaluator(trunk))
        solver = planner.solver
        if planner.gadget and last is not None and self.seat is not None:
            opponent = 1 - self.seat
            values = last.leaf_values(public_state, opponent)
            if values is not None:
                solver = partial(cfr_plus, gadget=Gadget(opponent, values[None]))
        strategies = solve_trunk(trunk, evaluator, planner.iterations, solver=solver)
        self.solves += 1
        return Solve(trunk, strategies, beliefs, evaluator)


class AveragedLeafValues:
    """A leaf evaluator that also keeps the weighted mean of its answers for problem 0: the leaf counterfactual
    values of a solve, averaged as CFR+ averages its iterates (query k, two per iteration, weighs k // 2 + 1).
    The gadget's values are these (DeepStack's averaged values), not one answer at the final average strategy,
    where a leaf PBS's solution is a best response to that one range."""

    def __init__(self, evaluator: LeafEvaluator):
        self.evaluator = evaluator
        self.calls = 0
        self.weight = 0.0
        self.sums: list[np.ndarray] | None = None

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values = self.evaluator(reach1, reach2)
        w = self.calls // 2 + 1
        self.calls += 1
        self.weight += w
        first = [np.asarray(v, dtype=np.float64)[0] for v in values]
        self.sums = [w * f for f in first] if self.sums is None else [s + w * f for s, f in zip(self.sums, first)]
        return values

    def average(self, player: int) -> np.ndarray:
        """[J_player] the weighted mean of the answers for `player`'s leaf infostates."""
        if self.sums is None:
            raise PvfError("the leaf evaluator was never queried")
        return self.sums[player] / self.weight


def acting_player(tree: PublicTree, public_state: int) -> int:
    """The player to move in the public state (0, 1, CHANCE or TERMINAL); the same at all its histories."""
    return int(tree.player[tree.histories_in(public_state)[0]])


def child_beliefs(
    tree: PublicTree,
    parent: int,
    child: int,
    beliefs: Beliefs,
    player: int,
    strategy: dict[int, dict[int, float]],
) -> Beliefs:
    """Beliefs at `child` from the parent's: each infostate's reach is its parent infostate's, times the
    probability of its own action where its player moved (`strategy` of `player` at the parent); normalised.

    beliefs: per player [K_n] over `tree.public_state_infostates[n][parent]`. Returns the same over `child`'s.
    """
    out = []
    for n in (0, 1):
        position = {int(i): k for k, i in enumerate(tree.public_state_infostates[n][parent])}
        reach = []
        for infostate in tree.public_state_infostates[n][child]:
            history = int(tree.infostate_history[n][infostate])
            above = int(tree.parent[history])
            value = beliefs[n][position[int(tree.infostate[above, n])]]
            if n == player:
                value *= strategy[int(tree.infostate[above, n])].get(int(tree.action[history]), 0.0)
            reach.append(value)
        out.append(np.asarray(reach, dtype=np.float64))
    return _reached((out[0], out[1]))


def agent_policy(tree: PublicTree, planner: Planner) -> tuple[dict[str, dict[int, float]], int]:
    """The agent's strategy at every decision infostate of the game in both seats (`resolved_policy`), and the
    number of solves it took: one walk where the seats share their solves, else one per seat."""
    if not planner.gadget:
        resolver = Resolver(tree, planner)
        return resolved_policy(resolver), resolver.solves
    policy, solves = {}, 0
    for seat in (0, 1):
        resolver = Resolver(tree, planner, seat)
        policy.update(resolved_policy(resolver, seat))
        solves += resolver.solves
    return policy, solves


def resolved_policy(resolver: Resolver, seat: int | None = None) -> dict[str, dict[int, float]]:
    """The agent's strategy at every decision infostate of the game, `{infostate string: {action: probability}}`
    (OpenSpiel's strings), by one walk of the public tree (module docstring): the infostates of `seat`, or of
    both players where seat is None."""
    tree = resolver.tree
    children: dict[int, list[int]] = {}
    for s in range(tree.num_public_states):
        if tree.public_state_parent[s] >= 0:
            children.setdefault(int(tree.public_state_parent[s]), []).append(s)
    policy: dict[str, dict[int, float]] = {}
    stack: list[tuple[int, Beliefs, Solve | None]] = [(int(tree.public_state[0]), resolver.root_beliefs(), None)]
    while stack:
        state, beliefs, last = stack.pop()
        player = acting_player(tree, state)
        if player == TERMINAL:
            continue
        strategy = {}
        if player != CHANCE:
            decision = resolver.decide(state, beliefs, last)
            strategy, last = decision.strategy, decision.solve
            if seat is None or seat == player:
                for infostate, probs in strategy.items():
                    policy[tree.infostate_strings[player][infostate]] = probs
        for child in children.get(state, []):
            stack.append((child, child_beliefs(tree, state, child, beliefs, player, strategy), last))
    return policy


def _reached(beliefs: Beliefs) -> Beliefs:
    """Each player's reach as it is (the gadget's values are in its units), all ones where it is zero everywhere."""
    out = []
    for b in beliefs:
        b = np.asarray(b, dtype=np.float64)
        out.append(b if b.sum() > 0 else np.ones(b.size))
    return out[0], out[1]
