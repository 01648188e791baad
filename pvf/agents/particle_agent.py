"""The re-solving agent on particles: a depth-limited solve of the PBS its particle beliefs induce, at every move.

Where public states cannot be enumerated the agent holds its beliefs as
particles (`pvf.agents.particle_beliefs`). At each of its decisions, at its
infostate I in the public state S at the start of move r:
  1. Beliefs: the sample of S and the sample of I, filtered from the
     agent's last decision's samples by the moves seen since (or drawn
     afresh at its first decision, or regenerated where too few survive),
     by the strategies it computed so far (`StrategyMemory`).
  2. The subgame: the PBS the particles induce (every history joining two
     particle infostates, weighed by the exact reaches of the memory:
     `pvf.solvers.particle_settings`, as the particle datasets and sweeps
     build it), the trunk from r to the planner's depth limit: a fixed move
     (`depth`; from there on, to the end of the game) or `horizon` moves
     below r; from move `endgame` on, to the end of the game. The particle
     tree stops at the limit unless the leaves are the exact oracle, which
     solves the game below them.
  3. Solved by CFR+ (or another registered solver: with MMD's last iterate
     this is decision-time MMD search on the particle subgame, its magnet
     the uniform strategy) with the leaf evaluator at the depth limit (the exact
     oracle; a trained particle or attention network, in the game-root
     convention it was trained in; the value of random play from each
     leaf history, uniform or greedier, `pvf.games.rollouts`; a constant). With a horizon
     the leaves of successive solves lie at successive moves, and a net
     values only the move it was trained at: each solve takes the nets of
     its leaves' move (`move_leaves`), else the fallback `leaves`.
  4. The memory takes the solution's strategy at every infostate of the
     trunk (both players; an infostate it holds keeps its strategy); the
     agent acts by its strategy at I. By default (`replan="horizon"`) it
     follows that strategy at its next decisions while the trunk holds
     them, and solves again where play leaves the trunk (its samples then
     filtered through the rounds between at once), as the exact-range
     agent does; `replan="every"` solves at every decision.
Each decision's generator is seeded by the agent's seed and I's
information-state string, and its inputs come from the agent's decision
before it on I's path, so a decision is a function of I: `particle_policy`
walks every infostate of a seat in a game small enough to enumerate and
assembles the policy the agent plays, judged exactly (OpenSpiel's
`nash_conv`) beside the exact-range agent (`pvf.agents.resolving`).

Safe re-solving is not kept. The gadget of the exact-range agent bounds
the opponent's values at the new root's infostates by those of the last
solve; here the new root's opponent infostates are a fresh sample, most
of them absent from the last solve (a regenerated sample shares none), so
the agent re-solves unsafely (as `resolve:gadget=off`); what that costs is
measured in Goofspiel-5 (docs/results/agents.md).

The agent plays simultaneous-move games without chance (Goofspiel, points
descending or ascending) in OpenSpiel's turn-based form, where move r
starts at the history of length 2r and player n acts at length 2r + n.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from pvf.agents.particle_beliefs import Beliefs, OwnActions, StrategyMemory, own_sample, track
from pvf.agents.resolving import REPLANS
from pvf.errors import PvfError
from pvf.games.engine import particle_engine
from pvf.games.history_sampling import ParticleSample
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import history_actions
from pvf.games.public_tree import PublicTree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import Solver
from pvf.solvers.particle_settings import setting_from_particles
from pvf.solvers.sparse_trunks import LeafFactory, select_histories, sparse_trunk_strategy
from pvf.solvers.trunk_solver import player_policies


@dataclass(frozen=True)
class ParticlePlanner:
    """How the particle agent solves.

    particles: K, draws per sample; min_live: fewer distinct particles after filtering regenerate (0: the
        public sample never does, the unbiased filter; the sample of the agent's infostate always keeps one).
    depth: move number of the trunk leaves; a move at or beyond it is solved to the end of the game.
    horizon: instead, the trunk leaves lie this many moves below each solve's root move (None: `depth`).
    endgame: solves at this move or later go to the end of the game, whatever the depth limit (where the endgame's
        particle subgame is small: in Goofspiel-13 at K = 16 from move 9, not 8); None: never.
    leaves: the leaf evaluator of a setting's sparse trunk (unused where a solve reaches the end).
    move_leaves: instead, for a solve whose trunk leaves lie at one of these moves, that move's evaluator in the
        game-root convention (the nets trained at that move; `pvf.agents.spec`: `leaves=` nets with a horizon).
    below_leaves: the particle tree holds the game below the trunk's leaves (the exact oracle solves it);
        False: it stops at the depth limit.
    game_root: the evaluator takes the game-root convention of a trained network (`ScaledEvaluator`).
    iterations: CFR+ iterations per solve; explore: the memory's mix with uniform (`StrategyMemory`).
    solver: the trunk solver (`pvf.solvers.registry`; default CFR+, its average strategy).
    engine: the particle engine ("auto", "native", "openspiel"; the same decisions from each).
    replan: "horizon" (follow the last solve's strategy where its trunk holds the agent's infostate, solve
        again where play leaves it) or "every" (solve at every decision).
    """

    particles: int
    depth: int | None
    leaves: LeafFactory
    horizon: int | None = None
    endgame: int | None = None
    move_leaves: Mapping[int, LeafFactory] = field(default_factory=dict)
    below_leaves: bool = True
    game_root: bool = False
    iterations: int = 100
    min_live: int = 1
    explore: float = 0.01
    engine: str = "auto"
    replan: str = "horizon"
    solver: Solver = cfr_plus


@dataclass(frozen=True, eq=False)
class ParticleDecision:
    """The agent's decision at one of its infostates, and what the next decision on its path starts from.

    infostate: the agent's decision string there (the key of `ParticleResolver.cache`).
    strategy: {action: probability} at the infostate; memory: the strategies known after this solve;
    public, own: the samples of the public state and (unscaled, `own_sample`) of the infostate;
    own_reach: π_i of the infostate; taken: {the agent's past decision strings: index of the action taken}.
    covers: the agent's decision strings in the trunk of the solve it follows (`replan="horizon"`).
    """

    infostate: str
    strategy: dict[int, float]
    memory: StrategyMemory
    public: ParticleSample | None
    own: ParticleSample | None
    own_reach: float
    taken: dict[str, int]
    covers: frozenset[str] = frozenset()


@dataclass
class ParticleResolver:
    """The particle agent of one seat: its decision at each of its infostates, each computed once (`decide`)."""

    loaded: LoadedGame
    planner: ParticlePlanner
    seat: int
    seed: int = 0
    cache: dict[str, ParticleDecision] = field(default_factory=dict)
    solves: int = 0
    regenerations: int = 0

    def __post_init__(self) -> None:
        random_order = self.loaded.original.get_parameters().get("points_order") == "random"
        if not self.loaded.simultaneous or random_order:
            raise PvfError(
                f"the particle agent plays simultaneous-move games without chance (Goofspiel, points descending "
                f"or ascending), not {self.loaded.game_string}; use the exact-range agent (`--agent resolve:...`)"
            )
        if self.planner.particles < 1 or self.planner.min_live < 0:
            raise PvfError("the particle agent needs at least one particle and min_live >= 0")
        if (self.planner.depth is None) == (self.planner.horizon is None):
            raise PvfError("the particle agent's depth limit is a move (depth) or moves ahead (horizon), one of them")
        if self.planner.horizon is not None and self.planner.horizon < 1:
            raise PvfError(f"the particle agent's horizon is at least one move, not {self.planner.horizon}")
        if self.planner.replan not in REPLANS:
            raise PvfError(f"replan is one of {', '.join(REPLANS)}, not {self.planner.replan!r}")
        self.engine = particle_engine(self.loaded, self.planner.engine)
        self.moves = int(self.loaded.sequential.max_game_length()) // 2

    def decide(self, history: tuple[int, ...]) -> ParticleDecision:
        """The decision at the agent's infostate at `history` (a sequential-game history where the seat acts;
        only its public observations and the seat's own actions are read); an empty strategy where the seat's
        own reach of the infostate is zero (it never plays there)."""
        history = tuple(int(a) for a in history)
        if len(history) % 2 != self.seat:
            raise PvfError(f"player {self.seat + 1} does not act after {len(history)} actions")
        key = self.engine.information_state_string(history, self.seat)
        if key in self.cache:
            return self.cache[key]
        move = len(history) // 2
        memory, taken, own_reach = StrategyMemory(explore=self.planner.explore), {}, 1.0
        public = own = None
        if move > 0:
            before = history[: 2 * (move - 1) + self.seat]
            last = self.decide(before)
            memory, public, own, own_reach, taken = last.memory, last.public, last.own, 0.0, last.taken
            if last.own_reach > 0.0:
                legal = sorted(last.strategy)
                k = legal.index(history[len(before)])
                taken = {**last.taken, last.infostate: k}
                own_reach = last.own_reach * float(memory(last.infostate, len(legal))[k])
        if own_reach <= 0.0:  # the seat never reaches this infostate: its strategy there changes nothing
            decision = ParticleDecision(key, {}, memory, public, own, 0.0, taken)
        elif move > 0 and self.planner.replan == "horizon" and key in last.covers:
            strategy = _normalised(memory.policy[key])  # the samples are filtered at the next solve, rounds at once
            decision = ParticleDecision(key, strategy, memory, public, own, own_reach, taken, last.covers)
        else:
            decision = self._solve(history, key, memory, public, own, own_reach, taken)
        self.cache[key] = decision
        return decision

    def _solve(
        self,
        history: tuple[int, ...],
        key: str,
        memory: StrategyMemory,
        public: ParticleSample | None,
        own: ParticleSample | None,
        own_reach: float,
        taken: dict[str, int],
    ) -> ParticleDecision:
        planner, move = self.planner, len(history) // 2
        start = history[: 2 * move]
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, self.seat, *_digest(key)]))
        public, regenerated = track(self.engine, memory, public, start, planner.particles, rng, planner.min_live)
        own, again = track(  # never empty: the agent acts at I
            self.engine, OwnActions(memory, taken), own, start, planner.particles, rng, max(planner.min_live, 1)
        )
        self.regenerations += int(regenerated) + int(again)
        at_start = self.engine.information_state_string(start, self.seat)
        beliefs = Beliefs(public, own_sample(own, self.seat, own_reach), self.seat, at_start)
        particles, _, own_reaches = beliefs.particles(self.engine)
        depth = move + planner.horizon if planner.horizon is not None else planner.depth
        if move >= depth or depth > self.moves or (planner.endgame is not None and move >= planner.endgame):
            depth = self.moves + 1  # to the end of the game
        setting = setting_from_particles(
            self.loaded, particles, own_reaches, move, depth, "induced", planner.engine, planner.below_leaves
        )
        leaves, game_root = planner.leaves, planner.game_root
        if depth in planner.move_leaves:
            leaves, game_root = planner.move_leaves[depth], True
        trunk, strategies = sparse_trunk_strategy(
            setting,
            select_histories(setting, fraction=1.0),
            leaves(setting),
            planner.iterations,
            game_root,
            planner.solver,
        )
        self.solves += 1
        policies = [
            {info: {int(a): p for a, p in probs.items()} for info, probs in policy.items()}
            for policy in player_policies(trunk, strategies)
        ]
        if key not in policies[self.seat]:
            raise PvfError(f"the particle subgame lacks the agent's infostate {key!r}")
        memory = memory.extended({**policies[0], **policies[1]})
        strategy = _normalised(policies[self.seat][key])
        return ParticleDecision(key, strategy, memory, public, own, own_reach, taken, frozenset(policies[self.seat]))


def _normalised(probs: dict[int, float]) -> dict[int, float]:
    total = sum(probs.values())
    if total <= 0:
        return {a: 1.0 / len(probs) for a in probs}
    return {a: p / total for a, p in probs.items()}


def _digest(text: str) -> list[int]:
    """Four 32-bit words of the SHA-256 of `text` (a stable seed: Python's hash() is salted per process)."""
    raw = hashlib.sha256(text.encode()).digest()
    return [int.from_bytes(raw[i : i + 4], "little") for i in range(0, 16, 4)]


def particle_policy(
    tree: PublicTree, planner: ParticlePlanner, seed: int = 0
) -> tuple[dict[str, dict[int, float]], dict[str, int]]:
    """The particle agent's strategy at every decision infostate of an enumerable game in both seats,
    `{information-state string: {action: probability}}`, and counts (solves, regenerations, decisions)."""
    policy: dict[str, dict[int, float]] = {}
    counts = {"solves": 0, "regenerations": 0, "decisions": 0}
    for seat in (0, 1):
        resolver = ParticleResolver(tree.loaded, planner, seat, seed)
        infostates = np.unique(tree.infostate[tree.player == seat, seat])
        for i in infostates.tolist():
            history = tuple(history_actions(tree, int(tree.infostate_history[seat][i])))
            actions = tree.infostate_actions[seat][i]
            policy[tree.infostate_strings[seat][i]] = resolver.decide(history).strategy or {
                int(a): 1.0 / len(actions) for a in actions
            }
        counts["solves"] += resolver.solves
        counts["regenerations"] += resolver.regenerations
        counts["decisions"] += len(resolver.cache)
    return policy, counts
