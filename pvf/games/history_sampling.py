"""Histories of a game sampled by a strategy: a public state played to, K weighted histories of it.

A strategy is any callable `strategy(information_state_string, num_actions)
-> [num_actions] probabilities` (`Strategy`; the datasets' random trunk
strategies are one), used for both players. Let π(h) = π_c(h)·π₁(h)·π₂(h)
be the reach of history h under it. Histories leave this module as action
sequences of the sequential (turn-based) game, with reaches:
  1. The public state. `play_to_depth` plays the strategy (and chance) from
     the initial state until the first history at move number ≥ D; its
     public state S has probability P(S) = Σ_{h∈S} π(h). A play that ends
     before move D is redrawn from the same stream, so S is drawn from P
     conditioned on the game lasting D moves.
  2. The particles. Rejection (replaying π until it lands in S) dies with
     depth, so `sample_particles` builds each particle move by move of the
     ORIGINAL game (a simultaneous Goofspiel round is player 1's bid and
     player 2's bid together, `continuations`): at prefix g, every
     continuation c by one move gets weight p(c) = Π of the strategy (or
     chance) probabilities of its actions, and only continuations whose
     public observation equals S's at that move are kept. One is drawn with
     probability p(c)/Z(g), Z(g) = Σ_kept p. In Goofspiel this draws each
     round's bid pair from the strategies conditioned on that round's public
     outcome (win, lose, draw). The proposal of a history h ∈ S is q(h) =
     π(h)/Π_t Z(g_t), so its importance ratio is ρ(h) = π(h)/q(h) = Π_t Z(g_t).
     A prefix with Z = 0 (no continuation fits S, e.g. player 1 must win a
     round holding only low cards) is a dead particle: ρ = 0.
  3. The estimator. K independent particles h_1..h_K get weights
     w_k = ρ(h_k)/K (equal histories merged, their weights summed). For any
     set A of histories of S, E[Σ_k w_k·1(h_k ∈ A)] = Σ_{h∈A} q(h)ρ(h) =
     Σ_{h∈A} π(h): the weights are an unbiased estimate of the reach of
     every history, hence of every infostate's belief mass Σ_{h∈I} π(h)
     (the sum of its particles' weights, the paper's sec. 5.1). A chance
     node over the particles with these weights is, in expectation, the
     payoff matrix of the PBS's subgame. Each particle also carries each
     player's own reach π_n(h) (exact, the same for all of an infostate's
     histories by perfect recall), the belief the value networks take.
  4. Filtering (`start`: particles w_j of an earlier public state S0 on the
     way to S, an unbiased estimate of the reach of S0's histories). Each of
     the K draws picks a particle j with probability w_j/W, W = Σ_j w_j, and
     continues it move by move as in step 2; its ratio starts at W. Given
     the earlier sample, E[W·ρ·1(h ∈ A)] = Σ_j w_j·Σ_{h∈A below j} π(h)/π(j),
     whose expectation is Σ_{h∈A} π(h): still unbiased (sequential
     importance resampling; the re-solving agent's beliefs, `pvf.agents`).
Every draw comes from the caller's generator, so a sample is a function of
that generator's seed and the strategy alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pvf.errors import PvfError
from pvf.games.loading import LoadedGame
from pvf.games.walk import Node, child, node_at, public_observer, root_node

MAX_PLAYS = 1000


def draw_index(weights: np.ndarray, rng: np.random.Generator, total: float | None = None) -> int:
    """An index i drawn with probability weights[i] / total by one uniform (inverse CDF over `weights: [n]`).

    total: Σ weights where the caller has it (default `weights.sum()`). The index is clamped to n - 1: rounding can
    put the draw at the end of the cumulative sum. Both particle engines draw through here, so they stay draw for
    draw and float for float the same.
    """
    if total is None:
        total = weights.sum()
    return min(int(np.searchsorted(np.cumsum(weights), rng.random() * total, side="right")), len(weights) - 1)


class Strategy(Protocol):
    """A behaviour strategy of both players, looked up by information-state string."""

    def __call__(self, info_string: str, num_actions: int) -> np.ndarray:
        """[num_actions] probabilities of the legal actions (in OpenSpiel's order) at this infostate."""
        ...


@dataclass(frozen=True)
class ParticleSample:
    """K particles of one public state.

    public_history: the played history that chose the public state (sequential-game actions).
    particles: [K'] distinct live particles (action sequences), in first-drawn order.
    weights: [K'] w = Σ ρ/K over the draws that gave the particle.
    own_reach: [K', 2] each player's own reach π_n of each particle.
    draws: K, the number of draws; dead: draws with ρ = 0.
    """

    public_history: tuple[int, ...]
    particles: list[tuple[int, ...]]
    weights: np.ndarray
    own_reach: np.ndarray
    draws: int
    dead: int

    @classmethod
    def from_draws(
        cls,
        public_history: Sequence[int],
        draws: Iterable[tuple[Sequence[int], float, Sequence[float]]],
        num_particles: int,
    ) -> ParticleSample:
        """Step 3: K draws (path, ρ, own reach [2]) merged into distinct particles; ρ = 0 is a dead draw."""
        found: dict[tuple[int, ...], int] = {}
        weights: list[float] = []
        own_reach: list[Sequence[float]] = []
        dead = 0
        for path, rho, own in draws:
            if rho == 0.0:
                dead += 1
                continue
            slot = found.setdefault(tuple(path), len(weights))
            if slot == len(weights):
                weights.append(0.0)
                own_reach.append(own)
            weights[slot] += rho / num_particles
        return cls(
            public_history=tuple(public_history),
            particles=list(found),
            weights=np.asarray(weights, dtype=np.float64),
            own_reach=np.asarray(own_reach, dtype=np.float64).reshape(-1, 2),
            draws=num_particles,
            dead=dead,
        )


@dataclass(frozen=True)
class Continuation:
    """One way to advance a history by one move of the original game.

    actions: the sequential-game actions (two for a simultaneous round: player 1's bid, player 2's).
    probability: the product of the strategy's (or chance's) probabilities of the actions.
    own: [2] each player's factor of it (1 for a player who does not act).
    terminal: whether the history it reaches is terminal.
    """

    actions: tuple[int, ...]
    probability: float
    own: np.ndarray
    terminal: bool


@dataclass(frozen=True)
class Continuations:
    """Every one-move continuation of a batch of histories, each history's in `continuations` order.

    parent: [C] position of the continued history in the batch (ascending).
    actions: [C, m] the sequential-game actions (every continuation of a batch has the same length m).
    probability: [C]; own: [C, 2]; terminal: [C] bool: as `Continuation`'s.
    """

    parent: np.ndarray
    actions: np.ndarray
    probability: np.ndarray
    own: np.ndarray
    terminal: np.ndarray


def _policy_probs(node: Node, strategy: Strategy) -> list[tuple[int, float, int]]:
    """(action, probability, player or -1 for chance) at a node of the sequential game."""
    state = node.state
    if state.is_chance_node():
        return [(a, p, -1) for a, p in state.chance_outcomes()]
    player = state.current_player()
    actions = state.legal_actions()
    probs = strategy(state.information_state_string(player), len(actions))
    return [(a, float(p), player) for a, p in zip(actions, probs)]


def play_to_depth(loaded: LoadedGame, strategy: Strategy, depth: int, rng: np.random.Generator) -> tuple[int, ...]:
    """Play the strategy to the first history at move number ≥ depth (step 1); its action sequence."""
    for _ in range(MAX_PLAYS):
        node, path = root_node(loaded), []
        while not node.state.is_terminal() and not (node.original.move_number() >= depth and node.pending < 0):
            options = _policy_probs(node, strategy)
            p = np.array([o[1] for o in options])
            a = options[draw_index(p, rng)][0]
            path.append(a)
            node = child(node, a, loaded.simultaneous)
        if not node.state.is_terminal():
            return tuple(path)
    raise PvfError(f"{MAX_PLAYS} plays of the trunk strategy all ended before move {depth}; choose a smaller depth")


def _node_continuations(
    node: Node, loaded: LoadedGame, strategy: Strategy
) -> list[tuple[tuple[int, ...], float, np.ndarray, Node]]:
    """Every way to advance one move of the original game: (actions, probability, own factors [2], node)."""
    out = []
    for a, p, who in _policy_probs(node, strategy):
        after = child(node, a, loaded.simultaneous)
        own = np.ones(2)
        if who >= 0:
            own[who] = p
        if loaded.simultaneous and after.pending >= 0:  # player 1 has bid; player 2 completes the round
            for b, p2, who2 in _policy_probs(after, strategy):
                own2 = own.copy()
                own2[who2] = p2
                out.append(((a, b), p * p2, own2, child(after, b, True)))
        else:
            out.append(((a,), p, own, after))
    return out


def continuations(loaded: LoadedGame, history: Sequence[int], strategy: Strategy) -> list[Continuation]:
    """Every way to advance `history` (sequential-game actions) by one move of the original game."""
    history = [int(a) for a in history]
    return [
        Continuation(actions, p, own, node.state.is_terminal())
        for actions, p, own, node in _node_continuations(node_at(loaded, history), loaded, strategy)
    ]


def batch_continuations(loaded: LoadedGame, histories: np.ndarray, strategy: Strategy) -> Continuations:
    """`continuations` of every history of `histories` [P, L] (one move of equal length each), as arrays."""
    steps = [(k, step) for k, history in enumerate(histories) for step in continuations(loaded, history, strategy)]
    widths = {len(step.actions) for _, step in steps}
    if len(widths) > 1:
        raise PvfError("the histories of one batch must continue by moves of one length (one public state's)")
    width = widths.pop() if widths else 0
    return Continuations(
        parent=np.array([k for k, _ in steps], dtype=np.int64),
        actions=np.array([step.actions for _, step in steps], dtype=np.int64).reshape(len(steps), width),
        probability=np.array([step.probability for _, step in steps], dtype=np.float64),
        own=np.array([step.own for _, step in steps], dtype=np.float64).reshape(len(steps), 2),
        terminal=np.array([step.terminal for _, step in steps], dtype=bool),
    )


def sample_particles(
    loaded: LoadedGame,
    strategy: Strategy,
    public_history: tuple[int, ...],
    num_particles: int,
    rng: np.random.Generator,
    start: ParticleSample | None = None,
) -> ParticleSample:
    """K particles of the public state of `public_history` with unbiased weights (steps 2–3).

    start: particles of an earlier public state on the way to it (step 4); None draws from the initial state.
    """
    if num_particles < 1:
        raise PvfError(f"the number of particles must be at least 1, got {num_particles}")
    observer = public_observer(loaded)
    if observer is None:
        raise PvfError(f"{loaded.game_string} has no public observer; particle sampling needs one")
    node = root_node(loaded)
    target = [observer.string_from(node.original, 0)]
    for a in public_history:
        node = child(node, a, loaded.simultaneous)
        target.append(observer.string_from(node.original, 0))
    length = len(public_history)

    prefixes = prefixes_of(start, length, lambda path: observer.string_from(node_at(loaded, path).original, 0), target)

    def draws() -> Iterator[tuple[tuple[int, ...], float, np.ndarray]]:
        for _ in range(num_particles):
            if prefixes is None:
                node, path, rho, own = root_node(loaded), (), 1.0, np.ones(2)
            else:
                path, rho, own = prefixes.draw(rng)
                node = node_at(loaded, path)
            while len(path) < length:
                kept = [
                    c
                    for c in _node_continuations(node, loaded, strategy)
                    if len(path) + len(c[0]) <= length
                    and observer.string_from(c[3].original, 0) == target[len(path) + len(c[0])]
                ]
                p = np.array([c[1] for c in kept])
                Z = float(p.sum())
                if Z <= 0.0:
                    rho = 0.0
                    break
                actions, _, factors, node = kept[draw_index(p, rng, Z)]
                path, rho, own = path + actions, rho * Z, own * factors
            yield path, rho, own

    return ParticleSample.from_draws(public_history, draws(), num_particles)


@dataclass(frozen=True)
class Prefixes:
    """Step 4's starting points: an earlier sample's particles, drawn in proportion to their weights.

    particles: [P] action sequences; weights: [P] their weights w; own_reach: [P, 2].
    """

    particles: list[tuple[int, ...]]
    weights: np.ndarray
    own_reach: np.ndarray

    def draw(self, rng: np.random.Generator) -> tuple[tuple[int, ...], float, np.ndarray]:
        """(a particle drawn with probability w_j / W, the starting ratio W, its own reach [2])."""
        total = float(self.weights.sum())
        j = draw_index(self.weights, rng, total)
        return self.particles[j], total, self.own_reach[j].copy()


def prefixes_of(
    start: ParticleSample | None, length: int, observation: Callable[[tuple[int, ...]], object], target: Sequence
) -> Prefixes | None:
    """The `Prefixes` of `start` (None for None), checked to lie on the way to the target public state:
    `observation(path)` of each particle must be `target[len(path)]`."""
    if start is None:
        return None
    if not start.particles:
        raise PvfError("the earlier sample has no live particle to continue; draw a fresh sample")
    for path in start.particles:
        if len(path) > length or observation(tuple(path)) != target[len(path)]:
            raise PvfError(f"particle {list(path)} is not on the way to the public state of the history asked for")
    return Prefixes([tuple(p) for p in start.particles], start.weights, start.own_reach)
