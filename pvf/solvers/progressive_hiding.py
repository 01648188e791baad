"""Progressive hiding (Heymann & Lanctot, AAMAS 2025, Algorithm 2) with regret matching or FTRL, batched over runs.

The two players of a common-payoff game form one team player. The team
learns under a relaxed information map X~ (finer than the real one X, e.g.
private cards revealed: `pvf.games.team_tree.MAPS`), with a quadratic
penalty on its policy's distance to the policy's projection onto the
implementable policies (those that are functions of X: non-anticipativity).
The local no-regret learner at every relaxed key is one of `LEARNERS`:
  - "rm": regret matching, CFR's (the paper's choice for Cooperative
    Matching Pennies, "a Monte-Carlo version of CFR", and Tiny Bridge);
  - "ftrl": follow the regularised leader with entropic regularisation (the
    paper's choice for Trade Comm): the policy is softmax(step * the key's
    cumulative rewards) over its legal actions, a constant `step`.
Both read one accumulator per key and action, the cumulative regrets: they
differ from the cumulative rewards by a constant per key, which softmax
ignores. An iteration is full-width (`sampling="full"`, steps 5-6 below)
or one sampled episode per run (`sampling="outcome"`, "Sampled episodes"
below).

This runs on `pvf.games.team_tree.TeamTree`, not on pvf's public trees and
sequence-form games: those are two-player zero-sum, per-player infostates,
while here one team decides under information maps that need not have
perfect recall, so the solver is separate from the particle pipeline.

One iteration t, for R independent runs at once (arrays [R, ...]):
  1. Decide: at every relaxed key g, the learner on its cumulative regrets
     R(g) gives mu^t(g): regret matching, R(g)^+ normalised (uniform where no
     regret is positive), or FTRL, softmax(step R(g)); every decision node h
     plays mu^t(X~(h)).
  2. Reach: P(h), the probability of reaching h under chance and mu^t.
  3. Project (eq. 4): gamma(x) = E[mu^t(X~(h)) | X(h) = x] under P, for every
     original infostate x: an implementable policy (where mu^t never reaches
     x, its histories are weighted by chance alone).
  4. Penalty (eq. 7): l(h) = lambda ||mu^t(h) - gamma(X(h))||^2 at every
     decision node.
  5. Values: W(h) = the expected payoff below h minus the penalties of the
     later decisions (the current decision's own included), under mu^t;
     action d at h is worth Q(h, d) = W(h.d) - 2 lambda (mu^t(h) - gamma(h))_d,
     the reward plus the gradient of -l(h) at mu^t (the linearised penalty).
  6. Observe: the reward of key g is theta(g) = E[Q(h, .) | X~(h) = g] under
     P (the paper's conditional expectation, as in its section 2.7 CFR;
     chance-weighted where P(g) = 0), and the learner adds
     theta(g) - <mu^t(g), theta(g)> to g's regrets R(g).
The learning outcome is E_{gamma^t}[r], the payoff of the projected
(implementable) policy of the current iterate: what the paper plots. With
lambda = 0 this is the plain learner on the relaxed game (projected
afterwards); on the "original" map gamma = mu^t, the penalty vanishes and,
with regret matching, it is CFR on the team game (each player an independent
CFR learner).

Sampled episodes (outcome sampling, Lanctot et al. 2009): steps 1-4 as
above (the projection gamma and the penalties are the policy's, exact);
then each run plays one episode z from the root, chance by its
probabilities and every decision by q = (1 - explore) mu^t + explore
uniform, and only the keys z visits learn. Walking z back up:
W~(z) = r(z); at a decision node h where z took action a,
W~(h) = -l(h) + (mu(h, a) / q(h, a)) W~(h.a), and
Q~(h, d) = [d = a] W~(h.a) / q(h, a) - 2 lambda (mu^t(h) - gamma(h))_d,
an unbiased estimate of step 5's Q(h, .) given that z reaches h (at chance
nodes W~ passes up unchanged). Its key g = X~(h) adds w (Q~ - <mu^t(g), Q~>)
to its regrets, where the weight w is
  - "conditional" (default): 1, the paper's conditional expectation of
    step 6 estimated from the one episode (self-normalised importance
    sampling: for a key of one node, the estimate is unbiased given the
    visit);
  - "counterfactual": pi_-i(h) / q(h), the reach of h by chance and the
    partner over the probability that the episode reaches h, so that the
    expected update is the counterfactual regret pi_-i(h) (Q - <mu, Q>) of
    OS-MCCFR (Lanctot et al.'s sampled counterfactual regret).
The paper's Cooperative Matching Pennies runs "a Monte-Carlo version of
CFR" for 400 episodes without saying which; docs/results/progressive-hiding.md
compares both weights.

Runs start from random policies: the first decision at every key is
(1 - p) uniform + p times a Dirichlet(1) draw, p = `perturbation` (the same
draws for both learners: the cumulative regrets start as that policy for
regret matching, as its log divided by the step for FTRL, so that either
learner's first decision is that policy). p = 1 is a uniformly random
policy, the paper's "randomized initial policy" (Trade Comm); a small p
breaks the symmetry between actions that the paper's sampled episodes break
in Cooperative Matching Pennies, where a uniform start and full-width
updates would keep Alice uniform forever.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from pvf.errors import PvfError
from pvf.games.team_tree import MAPS, TeamTree

PERTURBATION = 1.0
LEARNERS = ("rm", "ftrl")
SAMPLINGS = ("full", "outcome")
WEIGHTS = ("conditional", "counterfactual")
EXPLORE = 0.6  # OS-MCCFR's exploration, OpenSpiel's outcome_sampling_mccfr default


@dataclass(frozen=True)
class HidingTrace:
    """R runs of T iterations.

    outcome: [R, T] E_{gamma^t}[r], the payoff of the projected policy after iteration t's decision.
    relaxed: [R, T] E_{mu^t}[r], the payoff of the relaxed policy itself (it may use revealed information).
    violation: [R, T] E_{mu^t}[sum_h ||mu^t(h) - gamma^t(h)||^2] over the decisions on the way (no lambda).
    final_policy: [R, K, W] gamma at the last iteration, per original infostate.
    """

    outcome: np.ndarray
    relaxed: np.ndarray
    violation: np.ndarray
    final_policy: np.ndarray


@dataclass(frozen=True)
class Iterate:
    """Steps 1-4 of one iteration, for R runs: what steps 5-6 and the learning curves read.

    mu_key: [R, G, W] mu^t per relaxed key; mu: [R, D, W] at each decision node.
    edge, reach: [R, N + 1] the probability of the edge into each node and of reaching it under mu^t.
    at: [R, D] the reach of each decision node.
    gamma_key: [R, K, W] the projection per original infostate; gamma: [R, D, W] at each decision node.
    diff: [R, D, W] mu^t - gamma at each decision node (0 past the legal actions); distance: [R, D] its squared norm.
    """

    mu_key: np.ndarray
    mu: np.ndarray
    edge: np.ndarray
    reach: np.ndarray
    at: np.ndarray
    gamma_key: np.ndarray
    gamma: np.ndarray
    diff: np.ndarray
    distance: np.ndarray


class ProgressiveHiding:
    """`runs` independent runs of Algorithm 2 on `tree` under `info_map` with penalty `penalty` (lambda),
    local learner `learner` (one of `LEARNERS`; `step` is FTRL's step size, unused by regret matching),
    full-width iterations or one sampled episode per run and iteration (`sampling`, one of `SAMPLINGS`; then
    `explore` and `weight`, one of `WEIGHTS`: module docstring)."""

    def __init__(
        self,
        tree: TeamTree,
        info_map: str,
        penalty: float,
        runs: int,
        seed: int,
        perturbation: float = PERTURBATION,
        learner: str = "rm",
        step: float = 1.0,
        sampling: str = "full",
        explore: float = EXPLORE,
        weight: str = "conditional",
    ):
        if info_map not in MAPS:
            raise PvfError(f"unknown information map {info_map!r}; choose one of {', '.join(MAPS)}")
        if penalty < 0 or not np.isfinite(penalty):
            raise PvfError(f"the penalty must be a finite number >= 0, got {penalty}")
        if learner not in LEARNERS:
            raise PvfError(f"unknown learner {learner!r}; choose one of {', '.join(LEARNERS)}")
        if not step > 0 or not np.isfinite(step):
            raise PvfError(f"the FTRL step must be a finite number > 0, got {step}")
        if sampling not in SAMPLINGS:
            raise PvfError(f"unknown sampling {sampling!r}; choose one of {', '.join(SAMPLINGS)}")
        if not 0.0 <= explore <= 1.0:
            raise PvfError(f"the exploration must be in [0, 1], got {explore}")
        if weight not in WEIGHTS:
            raise PvfError(f"unknown weight {weight!r}; choose one of {', '.join(WEIGHTS)}")
        self.sampling, self.explore, self.weight = sampling, float(explore), weight
        self.tree, self.penalty, self.runs = tree, float(penalty), runs
        self.learner, self.step_size = learner, float(step)
        width = tree.width
        self.legal = np.arange(width) < tree.actions[:, None]  # [D, W]
        self.relaxed = tree.keys[info_map]
        self.original = tree.keys["original"]
        self.to_relaxed = _membership(self.relaxed, tree.key_counts[info_map])
        self.to_original = _membership(self.original, tree.key_counts["original"])
        self.key_legal = np.zeros((tree.key_counts[info_map], width), dtype=bool)
        self.key_legal[self.relaxed] = self.legal
        n = len(tree.depth)
        kids = tree.children[tree.decisions, :width]  # [D, W]
        self.child = np.where(kids >= 0, kids, n)  # padding points at an extra zero column
        self.all_children = np.where(tree.children >= 0, tree.children, n)
        self.levels = [np.flatnonzero(tree.depth == lvl) for lvl in range(int(tree.depth.max()) + 1)]
        self.decision_row = np.full(n, -1)  # node -> its row in `decisions`, -1 at chance and terminal nodes
        self.decision_row[tree.decisions] = np.arange(len(tree.decisions))
        self.inner = [lvl[(tree.children[lvl] >= 0).any(axis=1)] for lvl in self.levels]
        rng = np.random.default_rng(seed)
        draw = rng.gamma(1.0, size=(runs, *self.key_legal.shape)) * self.key_legal
        self.uniform = self.key_legal / self.key_legal.sum(axis=1, keepdims=True)  # [G, W]
        start = (1.0 - perturbation) * self.uniform + perturbation * draw / draw.sum(axis=2, keepdims=True)
        if learner == "ftrl":
            start = np.log(np.where(self.key_legal, start, 1.0)) / self.step_size
        self.regrets = start  # [R, G, W]
        self.rng = rng  # the episodes' draws follow the initial policies'

    def policy(self) -> np.ndarray:
        """mu^t per relaxed key, [R, G, W] (step 1)."""
        if self.learner == "ftrl":
            logits = np.where(self.key_legal, self.step_size * self.regrets, -np.inf)
            weights = np.exp(logits - logits.max(axis=2, keepdims=True))
            return weights / weights.sum(axis=2, keepdims=True)
        positive = np.maximum(self.regrets, 0.0) * self.key_legal
        total = positive.sum(axis=2, keepdims=True)
        return np.where(total > 0, positive / np.where(total > 0, total, 1.0), self.uniform)

    def edges(self, at_decisions: np.ndarray) -> np.ndarray:
        """[R, N + 1] probability of the edge into each node when decision nodes play `at_decisions` [R, D, W]."""
        edge = np.tile(np.append(self.tree.chance_prob, 0.0), (self.runs, 1))
        edge[:, self.child[self.legal]] = at_decisions[:, self.legal]
        return edge

    def reach(self, edge: np.ndarray) -> np.ndarray:
        """[R, N + 1] probability of reaching each node (step 2)."""
        reach = np.zeros_like(edge)
        reach[:, self.levels[0]] = 1.0
        for lvl in self.levels[1:]:
            reach[:, lvl] = reach[:, self.tree.parent[lvl]] * edge[:, lvl]
        return reach

    def group_mean(
        self, keys: np.ndarray, membership: sparse.csr_matrix, weights: np.ndarray, values: np.ndarray
    ) -> np.ndarray:
        """E[values | group] under `weights` [R, D] (chance-weighted for groups of zero weight): [R, K, W].

        keys: [D] each decision node's group; membership: `_membership(keys, K)`."""
        empty = (membership @ weights.T).T <= 0.0  # [R, K]
        weights = np.where(empty[:, keys], self.tree.chance_reach, weights)
        mass = (membership @ weights.T).T
        runs, d_count, width = values.shape
        flat = (weights[:, :, None] * values).transpose(1, 0, 2).reshape(d_count, runs * width)
        summed = np.asarray(membership @ flat).reshape(-1, runs, width).transpose(1, 0, 2)
        return summed / mass[:, :, None]

    def iterate(self) -> Iterate:
        """Steps 1-4 at the current regrets."""
        mu_key = self.policy()
        mu = mu_key[:, self.relaxed]  # [R, D, W]
        edge = self.edges(mu)
        reach = self.reach(edge)
        at = reach[:, self.tree.decisions]  # [R, D]
        gamma_key = self.group_mean(self.original, self.to_original, at, mu)
        gamma = gamma_key[:, self.original]
        diff = (mu - gamma) * self.legal
        return Iterate(mu_key, mu, edge, reach, at, gamma_key, gamma, diff, (diff**2).sum(axis=2))

    def step(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One iteration (steps 1-6); returns (E_gamma[r] [R], E_mu[r] [R], violation [R], gamma [R, K, W])."""
        tree = self.tree
        it = self.iterate()
        if self.sampling == "full":
            self.regrets += self.full_width_regrets(it)
        else:
            self.add_episode_regrets(it)
        terminal = it.reach[:, : len(tree.value)] @ tree.value
        projected = self.reach(self.edges(it.gamma))[:, : len(tree.value)] @ tree.value
        return projected, terminal, (it.at * it.distance).sum(axis=1), it.gamma_key

    def full_width_regrets(self, it: Iterate) -> np.ndarray:
        """Steps 5-6, every history: the regret increments [R, G, W]."""
        tree, edge, diff = self.tree, it.edge, it.diff
        values = np.zeros_like(edge)
        values[:, : len(tree.value)] = tree.value
        penalty = np.zeros_like(edge)
        penalty[:, tree.decisions] = self.penalty * it.distance
        for lvl in reversed(self.inner):
            kids = self.all_children[lvl]
            values[:, lvl] = (edge[:, kids] * values[:, kids]).sum(axis=2) - penalty[:, lvl]
        q = values[:, self.child] - 2.0 * self.penalty * diff
        theta = self.group_mean(self.relaxed, self.to_relaxed, it.at, q)
        expected = (it.mu_key * theta).sum(axis=2, keepdims=True)
        return (theta - expected) * self.key_legal

    def episodes(self, mu: np.ndarray) -> tuple[list[tuple[np.ndarray, ...]], np.ndarray]:
        """One episode per run from the root (module docstring): (per step down, (the decision row of each run's
        node, -1 at chance nodes and after the episode ended [R]; the child slot taken [R]; its probability under
        q [R] and under mu^t [R], 1 at chance nodes), the terminal node each run reached [R])."""
        tree, runs = self.tree, self.runs
        rows = np.arange(runs)
        node = np.zeros(runs, dtype=np.int64)
        width = self.legal.shape[1]
        steps = []
        for _ in range(len(self.levels) - 1):
            kids = tree.children[node]  # [R, C]
            going = (kids >= 0).any(axis=1)
            if not going.any():
                break
            row = self.decision_row[node]
            decides = going & (row >= 0)
            legal = self.legal[np.maximum(row, 0)]  # [R, W]
            on_policy = mu[rows, np.maximum(row, 0)]  # [R, W]
            behaviour = (1.0 - self.explore) * on_policy + self.explore * legal / legal.sum(axis=1, keepdims=True)
            probs = np.where(kids >= 0, tree.chance_prob[np.maximum(kids, 0)], 0.0)
            probs[decides] = 0.0
            probs[decides, :width] = behaviour[decides]
            probs[~going] = 0.0
            probs[~going, 0] = 1.0
            cumulative = probs.cumsum(axis=1)
            slot = (cumulative > self.rng.random(runs)[:, None] * cumulative[:, -1:]).argmax(axis=1)
            at_slot = np.minimum(slot, width - 1)
            q = np.where(decides, behaviour[rows, at_slot], 1.0)
            p = np.where(decides, on_policy[rows, at_slot], 1.0)
            steps.append((np.where(decides, row, -1), slot, q, p))
            node = np.where(going, kids[rows, slot], node)
        return steps, node

    def add_episode_regrets(self, it: Iterate) -> None:
        """Steps 5-6 on one sampled episode per run: adds each visited key's weighted regrets."""
        mu, diff, distance = it.mu, it.diff, it.distance
        path, terminal = self.episodes(mu)
        runs, rows = self.runs, np.arange(self.runs)
        actor = self.tree.player
        before = []  # pi_-i(h) / q(h) for each player i acting at h, per step down: [R, 2]
        weight = np.ones((runs, 2))
        for row, _, q, p in path:
            before.append(weight.copy())
            decides = row >= 0
            mover = actor[np.maximum(row, 0)]
            for player in (0, 1):
                own = decides & (mover == player)
                weight[:, player] *= np.where(own, 1.0 / q, np.where(decides, p / q, 1.0))
        tail = self.tree.value[terminal].astype(float)  # W~ of the node below, [R]
        for (row, slot, q, p), reach in zip(reversed(path), reversed(before)):
            decides = row >= 0
            d = np.maximum(row, 0)
            q_tilde = -2.0 * self.penalty * diff[rows, d]  # [R, W]
            q_tilde[rows, np.minimum(slot, q_tilde.shape[1] - 1)] += np.where(decides, tail / q, 0.0)
            regret = (q_tilde - (mu[rows, d] * q_tilde).sum(axis=1, keepdims=True)) * self.legal[d]
            if self.weight == "counterfactual":
                regret *= reach[rows, actor[d]][:, None]
            visited = np.flatnonzero(decides)
            np.add.at(self.regrets, (visited, self.relaxed[d[visited]]), regret[visited])
            tail = np.where(decides, -self.penalty * distance[rows, d] + p / q * tail, tail)


def _membership(keys: np.ndarray, count: int) -> sparse.csr_matrix:
    """[K, D] 0/1 matrix: row k marks the decision nodes of key k."""
    return sparse.csr_matrix((np.ones(len(keys)), (keys, np.arange(len(keys)))), shape=(count, len(keys)))


def progressive_hiding(
    tree: TeamTree,
    info_map: str,
    penalty: float,
    iterations: int,
    runs: int,
    seed: int,
    perturbation: float = PERTURBATION,
    learner: str = "rm",
    step: float = 1.0,
    sampling: str = "full",
    explore: float = EXPLORE,
    weight: str = "conditional",
) -> HidingTrace:
    """`runs` runs of `iterations` iterations of progressive hiding (module docstring), their learning curves;
    `learner` "rm" (regret matching) or "ftrl" (entropic FTRL with step size `step`); `sampling` "full" or
    "outcome" (one episode per run and iteration, `explore` and `weight` as `ProgressiveHiding`'s)."""
    if iterations < 1 or runs < 1:
        raise PvfError(f"iterations and runs must be at least 1, got {iterations} and {runs}")
    solver = ProgressiveHiding(
        tree, info_map, penalty, runs, seed, perturbation, learner, step, sampling, explore, weight
    )
    outcome, relaxed, violation = (np.zeros((runs, iterations)) for _ in range(3))
    gamma = np.zeros(0)
    for t in range(iterations):
        outcome[:, t], relaxed[:, t], violation[:, t], gamma = solver.step()
    return HidingTrace(outcome, relaxed, violation, gamma)
