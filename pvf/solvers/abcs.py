"""ABCs: Boltzmann Q-learning and CFR in one sampled learner, on the public tree's arrays.

ABCs (Adaptive Branching through Child stationarity; D'Amico-Wong, Zhang,
Lanctot and Parkes, "Easy as ABCs", 2024) keeps one table of average
Q-values per player, Q(s, a) over its sequences (s, a), and a visit count
CNT(s) per infostate. Histories are the public tree's (`PublicTree`),
infostates and sequences the `SequenceGame`'s, so the result is an ordinary
`SolverResult`. One iteration n = 1, 2, ... runs, for player p = 1 then
p = 2 (player 2 sees player 1's updated tables, as in alternating ES-MCCFR):
  1. With probability `check_probability` (0.05) every stationarity verdict
     is forgotten; each (s, a) is re-tested when next asked (step 4).
  2. From the root, chance and the opponent are sampled (the opponent from
     its current policy, step 3) until p acts at a history h of infostate s.
  3. p's current policy at s: if every (s, a) tests stationary, Boltzmann
     on the average Q-values, softmax(Q(s, ·) / τ_n) with the stationary
     temperature τ_n = 0.99^⌊n/20⌋; otherwise Hedge on the cumulative
     Q-values, softmax(Q(s, ·) · CNT(s)) (nonstationary temperature 1).
     CNT(s) += 1 and a trajectory action a_traj is drawn from the policy.
  4. Every action a is tried: one child is sampled below (s, a) (chance and
     opponent moves as in step 2, down to p's next infostate s' or a
     terminal, reward r). Its category (the history reached, or the reward
     at a terminal) joins the last `window` (1000) categories seen after
     (s, a). (s, a) is *nonstationary* when a chi-squared test of the
     older half of those against the newer half (Pearson, Yates-corrected
     2×2 as scipy's `chi2_contingency`) gives p < `significance` (0.05);
     with fewer than `min_samples` (10) it is stationary.
  5. The child is expanded (steps 3-6 recursively at s') if a = a_traj or
     (s, a) is nonstationary. The target of (s, a) is r at a terminal; else
     with a* = argmax Q(s', ·) before this iteration's update of s',
       stationary (s, a):    r + Q(s', a*)                (BQL's bootstrap)
       nonstationary (s, a): r + T(s', a*)                (MAX-CFR's update)
     where T(s', a*) is the target s' just gave a* in its own step 6, i.e.
     Q_old(s', a*) + CNT(s')·ΔQ(s', a*): the paper's correction
     "∇ += CNT(s')·∇_{s', a*}", which recovers a sampled value of the
     current iteration instead of the average.
  6. Q(s, a) += (target(s, a) − Q(s, a)) / CNT(s) for every a, and the
     policy of step 3 is added to s's cumulative policy.
The solution is the average policy: each infostate's cumulative policy
normalised (uniform where never visited), as the authors' code averages it
(one weight per visit). With every (s, a) nonstationary ABCs is MAX-CFR
(`MAX_CFR`: every child expanded, Hedge everywhere), the paper's variant
of external-sampling MCCFR (its appendix C).

As the paper's practical version (its appendix E): one Q-table for both
kinds of update, a fixed significance level, no ε-exploration; the window
of 1000 and the 10-sample minimum are the authors' code's. Perfect recall
means an infostate is reached at most once per traversal, so the authors'
guard against expanding an infostate twice (for Cartpole) is not needed.

`BQLLearner` is the paper's multi-agent Boltzmann Q-learning baseline: one
trajectory per player and iteration, at each of p's infostates an action
from softmax(Q(s, ·) / τ_n), τ_n = 10·0.99^⌊n/50⌋ (actions never tried
first), Q(s, a) ← Q(s, a) + (r + max Q(s', ·) − Q(s, a)) / CNT(s, a).

Sampling uses `random.Random(seed)`: the same seed gives the same run.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import chdtrc

from pvf.errors import PvfError
from pvf.games.public_tree import CHANCE, TERMINAL
from pvf.solvers.interface import Frozen, LeafEvaluator, SolverResult, profile_root_values
from pvf.solvers.sequence_form import SequenceGame
from pvf.solvers.sequence_ops import realization_plan


@dataclass(frozen=True)
class Temperature:
    """τ_n = start · decay^⌊n / every⌋ at iteration n."""

    start: float
    decay: float
    every: int

    def at(self, n: int) -> float:
        return self.start * self.decay ** (n // self.every)


@dataclass(frozen=True)
class ABCsSettings:
    """ABCs' hyper-parameters (the paper's table 2; window and minimum from the authors' code).

    significance: the chi-squared test's level α_s: (s, a) is nonstationary when p < α_s.
    check_probability: per iteration, the chance that all verdicts are recomputed when next asked.
    window: the most recent child categories kept per (s, a).
    min_samples: below this many categories (s, a) counts as stationary.
    stationary_temperature: τ_n of Boltzmann exploration at stationary infostates.
    always_nonstationary: treat every (s, a) as nonstationary (MAX-CFR).
    """

    significance: float = 0.05
    check_probability: float = 0.05
    window: int = 1000
    min_samples: int = 10
    stationary_temperature: Temperature = Temperature(1.0, 0.99, 20)
    always_nonstationary: bool = False


ABCS = ABCsSettings()
MAX_CFR = ABCsSettings(always_nonstationary=True)
BQL_TEMPERATURE = Temperature(10.0, 0.99, 50)  # the paper's table 1


@dataclass(frozen=True, eq=False)
class SampledTree:
    """The public tree as Python lists for one-history-at-a-time sampling (H histories).

    player: [H] player to move (0, 1, CHANCE or TERMINAL).
    children: [H] child histories; at a decision history in the order of its infostate's sequences.
    chance_probs: [H] probabilities of the children at chance histories (empty elsewhere).
    infostate: [H] the acting player's decision-infostate position in the `SequenceGame` (-1 elsewhere).
    reward: [H] player 1's (zero-sum normalised) utility at terminals, 0 elsewhere.
    category: [H] what the stationarity test records on reaching the history: the history
        itself, or at a terminal its utility (terminals of equal utility share a category).
    starts, sizes: per player [I_n] first sequence and number of actions of each decision infostate.
    """

    player: list[int]
    children: list[list[int]]
    chance_probs: list[list[float]]
    infostate: list[int]
    reward: list[float]
    category: list[int]
    starts: tuple[list[int], list[int]]
    sizes: tuple[list[int], list[int]]


def sampled_tree(game: SequenceGame) -> SampledTree:
    """The lists ABCs and BQL walk, for a whole game (`build_sequence_game(tree)`)."""
    tree = game.tree
    H = tree.num_histories
    if len(game.histories) != H or game.players[0].num_roots != 1 or game.has_leaves:
        raise PvfError("ABCs and BQL sample whole games; build the sequence game at the root without a depth limit")
    parent = tree.parent
    order = np.argsort(parent, kind="stable")
    bounds = np.searchsorted(parent[order], np.arange(H + 1))
    children = [order[bounds[h] : bounds[h + 1]].tolist() for h in range(H)]
    infostate = [-1] * H
    for n in (0, 1):
        seqs = game.players[n]
        position = {int(i): k for k, i in enumerate(seqs.infostates)}
        for h in np.flatnonzero(tree.player == n).tolist():
            k = position[int(tree.infostate[h, n])]
            lo, size = int(seqs.info_start[k]), int(seqs.info_size[k])
            by_action = {int(tree.action[c]): c for c in children[h]}
            children[h] = [by_action[int(a)] for a in seqs.seq_action[lo : lo + size]]
            infostate[h] = k
    chance_probs = [tree.chance_prob[c].tolist() if tree.player[h] == CHANCE else [] for h, c in enumerate(children)]
    terminal = tree.player == TERMINAL
    utilities, which = np.unique(tree.utility[terminal], return_inverse=True)
    category = np.arange(H)
    category[terminal] = H + which
    return SampledTree(
        player=tree.player.tolist(),
        children=children,
        chance_probs=chance_probs,
        infostate=infostate,
        reward=np.where(terminal, tree.utility, 0.0).tolist(),
        category=category.tolist(),
        starts=(game.players[0].info_start.tolist(), game.players[1].info_start.tolist()),
        sizes=(game.players[0].info_size.tolist(), game.players[1].info_size.tolist()),
    )


def _softmax(values: Sequence[float], scale: float) -> list[float]:
    top = max(values)
    weights = [math.exp((v - top) * scale) for v in values]
    total = sum(weights)
    return [w / total for w in weights]


def _draw(rng: random.Random, probs: Sequence[float]) -> int:
    u, acc = rng.random(), 0.0
    for i, p in enumerate(probs):
        acc += p
        if u < acc:
            return i
    return len(probs) - 1


def chi_squared_p_value(older: Mapping[int, int], newer: Mapping[int, int]) -> float:
    """p-value of Pearson's test that two samples of categories, given as counts, share one distribution.

    The 2×C contingency table of the counts (categories with a positive count in either); Yates'
    continuity correction when C = 2, as `scipy.stats.chi2_contingency`; 1 when C = 1 or a sample is empty.
    """
    categories = older.keys() | newer.keys()
    C = len(categories)
    n1, n2 = sum(older.values()), sum(newer.values())
    if C < 2 or n1 == 0 or n2 == 0:
        return 1.0
    total = n1 + n2
    statistic = 0.0
    for c in categories:
        column = older.get(c, 0) + newer.get(c, 0)
        for observed, row in ((older.get(c, 0), n1), (newer.get(c, 0), n2)):
            expected = row * column / total
            gap = abs(observed - expected)
            if C == 2:
                gap -= min(0.5, gap)
            statistic += gap * gap / expected
    return float(chdtrc(C - 1, statistic))


class Halves:
    """The last `size` categories seen after one (s, a), oldest first, with the counts of the older half
    (the first ⌊len/2⌋) and of the newer half, kept as categories arrive."""

    __slots__ = ("items", "size", "older", "newer", "split")

    def __init__(self, size: int):
        self.items: deque[int] = deque()
        self.size = size
        self.older: dict[int, int] = {}
        self.newer: dict[int, int] = {}
        self.split = 0  # len(older half)

    def add(self, category: int) -> None:
        items = self.items
        if len(items) == self.size:
            _take(self.older, items.popleft())
            self.split -= 1
        items.append(category)
        self.newer[category] = self.newer.get(category, 0) + 1
        while self.split < len(items) // 2:
            moved = items[self.split]
            _take(self.newer, moved)
            self.older[moved] = self.older.get(moved, 0) + 1
            self.split += 1

    def __len__(self) -> int:
        return len(self.items)


def _take(counts: dict[int, int], category: int) -> None:
    if counts[category] == 1:
        del counts[category]
    else:
        counts[category] -= 1


class _Learner:
    """What ABCs and BQL share: per player Q-values and cumulative policy [S_n], counts, the sampling walk."""

    def __init__(self, game: SequenceGame, seed: int):
        self.game = game
        self.tree = sampled_tree(game)
        self.rng = random.Random(seed)
        self.q = [[0.0] * p.num_sequences for p in game.players]
        self.cumulative = [[0.0] * p.num_sequences for p in game.players]
        self.iteration = 0
        self.nodes_touched = 0

    def policy(self, p: int, k: int) -> list[float]:
        raise NotImplementedError

    def descend(self, h: int, p: int) -> tuple[int, float]:
        """From history h, sample chance and the opponent down to p's next decision or a terminal:
        (that history, p's reward there)."""
        t = self.tree
        while True:
            self.nodes_touched += 1
            who = t.player[h]
            if who == p:
                return h, 0.0
            if who == TERMINAL:
                return h, t.reward[h] if p == 0 else -t.reward[h]
            if who == CHANCE:
                h = t.children[h][_draw(self.rng, t.chance_probs[h])]
            else:
                h = t.children[h][_draw(self.rng, self.policy(who, t.infostate[h]))]

    def average_strategy(self) -> tuple[np.ndarray, np.ndarray]:
        """Per player [S_n] the average policy: cumulative policy normalised per infostate, uniform if unvisited."""
        out = []
        for p in (0, 1):
            cumulative = np.asarray(self.cumulative[p])
            strat = np.ones(len(cumulative))
            for lo, size in zip(self.tree.starts[p], self.tree.sizes[p]):
                total = cumulative[lo : lo + size].sum()
                strat[lo : lo + size] = cumulative[lo : lo + size] / total if total > 0 else 1.0 / size
            out.append(strat)
        return out[0], out[1]

    def current_strategy(self) -> tuple[np.ndarray, np.ndarray]:
        """Per player [S_n] the current policy (step 3's, at every infostate)."""
        out = []
        for p in (0, 1):
            strat = np.ones(self.game.players[p].num_sequences)
            for k, (lo, size) in enumerate(zip(self.tree.starts[p], self.tree.sizes[p])):
                strat[lo : lo + size] = self.policy(p, k)
            out.append(strat)
        return out[0], out[1]


class ABCsLearner(_Learner):
    """ABCs (or, with `MAX_CFR`, MAX-CFR) on a whole game; `iterate()` runs one iteration (module docstring)."""

    def __init__(self, game: SequenceGame, seed: int = 0, settings: ABCsSettings = ABCS):
        super().__init__(game, seed)
        self.settings = settings
        self.count = [[0] * p.num_infostates for p in game.players]
        self.seen = [[Halves(settings.window) for _ in range(p.num_sequences)] for p in game.players]
        self.verdict: list[list[bool | None]] = [[None] * p.num_sequences for p in game.players]
        self.temperature = settings.stationary_temperature.at(0)
        self.tests = 0
        self.nonstationary_verdicts = 0

    def stationary(self, p: int, seq: int) -> bool:
        """Whether (s, a) = sequence `seq` of player p tests stationary (step 4), remembered until step 1 forgets."""
        if self.settings.always_nonstationary:
            return False
        verdict = self.verdict[p][seq]
        if verdict is None:
            seen = self.seen[p][seq]
            if len(seen) < self.settings.min_samples:
                verdict = True
            else:
                verdict = chi_squared_p_value(seen.older, seen.newer) >= self.settings.significance
                self.tests += 1
                self.nonstationary_verdicts += not verdict
            self.verdict[p][seq] = verdict
        return verdict

    def policy(self, p: int, k: int) -> list[float]:
        lo, size = self.tree.starts[p][k], self.tree.sizes[p][k]
        values = self.q[p][lo : lo + size]
        if all(self.stationary(p, lo + j) for j in range(size)):
            return _softmax(values, 1.0 / self.temperature)
        return _softmax(values, float(self.count[p][k]))

    def iterate(self) -> None:
        self.iteration += 1
        s = self.settings
        self.temperature = s.stationary_temperature.at(self.iteration)
        if self.rng.random() < s.check_probability:
            self.verdict = [[None] * len(v) for v in self.verdict]
        for p in (0, 1):
            h, _ = self.descend(0, p)
            if self.tree.player[h] == p:
                self.visit(h, p)

    def visit(self, h: int, p: int) -> list[float]:
        """Steps 3-6 at p's decision history h; returns the targets of its actions."""
        t = self.tree
        k = t.infostate[h]
        lo, size = t.starts[p][k], t.sizes[p][k]
        q = self.q[p]
        pi = self.policy(p, k)
        self.count[p][k] += 1
        visits = self.count[p][k]
        chosen = _draw(self.rng, pi)
        targets = [0.0] * size
        for j in range(size):
            child, reward = self.descend(t.children[h][j], p)
            self.seen[p][lo + j].add(t.category[child])
            if t.player[child] == TERMINAL:
                targets[j] = reward
                continue
            lo2, size2 = t.starts[p][t.infostate[child]], t.sizes[p][t.infostate[child]]
            below = q[lo2 : lo2 + size2]
            best = max(range(size2), key=below.__getitem__)
            nonstationary = not self.stationary(p, lo + j)
            if nonstationary or j == chosen:
                child_targets = self.visit(child, p)
                targets[j] = reward + (child_targets[best] if nonstationary else below[best])
            else:
                targets[j] = reward + below[best]
        cumulative = self.cumulative[p]
        for j in range(size):
            q[lo + j] += (targets[j] - q[lo + j]) / visits
            cumulative[lo + j] += pi[j]
        return targets


class BQLLearner(_Learner):
    """Multi-agent Boltzmann Q-learning on trajectories (the paper's BQL baseline; module docstring)."""

    def __init__(self, game: SequenceGame, seed: int = 0, temperature: Temperature = BQL_TEMPERATURE):
        super().__init__(game, seed)
        self.schedule = temperature
        self.temperature = temperature.at(0)
        self.tried = [[0] * p.num_sequences for p in game.players]

    def policy(self, p: int, k: int) -> list[float]:
        lo, size = self.tree.starts[p][k], self.tree.sizes[p][k]
        untried = [1.0 if c == 0 else 0.0 for c in self.tried[p][lo : lo + size]]
        if any(untried):
            return [u / sum(untried) for u in untried]
        return _softmax(self.q[p][lo : lo + size], 1.0 / self.temperature)

    def iterate(self) -> None:
        self.iteration += 1
        self.temperature = self.schedule.at(self.iteration)
        t = self.tree
        for p in (0, 1):
            h, _ = self.descend(0, p)
            q, cumulative, tried = self.q[p], self.cumulative[p], self.tried[p]
            while t.player[h] == p:
                k = t.infostate[h]
                lo, size = t.starts[p][k], t.sizes[p][k]
                pi = self.policy(p, k)
                for j in range(size):
                    cumulative[lo + j] += pi[j]
                j = _draw(self.rng, pi)
                child, reward = self.descend(t.children[h][j], p)
                if t.player[child] == p:
                    lo2, size2 = t.starts[p][t.infostate[child]], t.sizes[p][t.infostate[child]]
                    reward += max(q[lo2 : lo2 + size2])
                tried[lo + j] += 1
                q[lo + j] += (reward - q[lo + j]) / tried[lo + j]
                h = child


def abcs(
    game: SequenceGame,
    iterations: int,
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
    frozen: tuple[Frozen | None, Frozen | None] = (None, None),
    leaf_evaluator: LeafEvaluator | None = None,
    callback: Callable[[int], None] | None = None,
    seed: int = 0,
    settings: ABCsSettings = ABCS,
) -> SolverResult:
    """Run `iterations` of ABCs (module docstring) on a whole game; its solution is the average policy.

    A sampled solver of whole games: root beliefs, frozen infostates and leaf evaluators are refused.
    seed: the sampling seed. settings: `ABCS` (the paper's) or `MAX_CFR`.
    callback: called with the iteration number after each iteration.
    Returns a batch of one: strategies [1, S_n], value [1].
    """
    if iterations < 1:
        raise PvfError(f"iterations must be at least 1, got {iterations}")
    if root_beliefs is not None or any(f is not None and np.any(f.mask) for f in frozen) or leaf_evaluator is not None:
        raise PvfError("abcs solves whole games only: no root beliefs, frozen infostates or leaf evaluator")
    learner = ABCsLearner(game, seed, settings)
    for t in range(1, iterations + 1):
        learner.iterate()
        if callback is not None:
            callback(t)
    return learner_result(learner)


def learner_result(learner: ABCsLearner | BQLLearner) -> SolverResult:
    """A learner's average and current policies as a `SolverResult` (batch of one)."""
    game = learner.game
    ones = (np.ones((1, 1)), np.ones((1, 1)))
    average = [s[:, None] for s in learner.average_strategy()]
    current = [s[:, None] for s in learner.current_strategy()]
    realization = [realization_plan(p, s, b) for p, s, b in zip(game.players, average, ones)]
    root_average, value = profile_root_values(game, average, ones)
    root_current, _ = profile_root_values(game, current, ones)
    return SolverResult.from_columns(
        average, realization, current, root_average, root_current, value, learner.iteration
    )
