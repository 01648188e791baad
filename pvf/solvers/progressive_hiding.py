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
ignores. Here every iteration is full-width, not sampled.

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


class ProgressiveHiding:
    """`runs` independent runs of Algorithm 2 on `tree` under `info_map` with penalty `penalty` (lambda),
    local learner `learner` (one of `LEARNERS`; `step` is FTRL's step size, unused by regret matching)."""

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
    ):
        if info_map not in MAPS:
            raise PvfError(f"unknown information map {info_map!r}; choose one of {', '.join(MAPS)}")
        if penalty < 0 or not np.isfinite(penalty):
            raise PvfError(f"the penalty must be a finite number >= 0, got {penalty}")
        if learner not in LEARNERS:
            raise PvfError(f"unknown learner {learner!r}; choose one of {', '.join(LEARNERS)}")
        if not step > 0 or not np.isfinite(step):
            raise PvfError(f"the FTRL step must be a finite number > 0, got {step}")
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
        self.inner = [lvl[(tree.children[lvl] >= 0).any(axis=1)] for lvl in self.levels]
        rng = np.random.default_rng(seed)
        draw = rng.gamma(1.0, size=(runs, *self.key_legal.shape)) * self.key_legal
        self.uniform = self.key_legal / self.key_legal.sum(axis=1, keepdims=True)  # [G, W]
        start = (1.0 - perturbation) * self.uniform + perturbation * draw / draw.sum(axis=2, keepdims=True)
        if learner == "ftrl":
            start = np.log(np.where(self.key_legal, start, 1.0)) / self.step_size
        self.regrets = start  # [R, G, W]

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

    def step(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One iteration (steps 1-6); returns (E_gamma[r] [R], E_mu[r] [R], violation [R], gamma [R, K, W])."""
        tree = self.tree
        mu_key = self.policy()
        mu = mu_key[:, self.relaxed]  # [R, D, W]
        edge = self.edges(mu)
        reach = self.reach(edge)
        at = reach[:, tree.decisions]  # [R, D]
        gamma_key = self.group_mean(self.original, self.to_original, at, mu)
        gamma = gamma_key[:, self.original]
        diff = (mu - gamma) * self.legal
        distance = (diff**2).sum(axis=2)  # [R, D]
        values = np.zeros_like(edge)
        values[:, : len(tree.value)] = tree.value
        penalty = np.zeros_like(edge)
        penalty[:, tree.decisions] = self.penalty * distance
        for lvl in reversed(self.inner):
            kids = self.all_children[lvl]
            values[:, lvl] = (edge[:, kids] * values[:, kids]).sum(axis=2) - penalty[:, lvl]
        q = values[:, self.child] - 2.0 * self.penalty * diff
        theta = self.group_mean(self.relaxed, self.to_relaxed, at, q)
        expected = (mu_key * theta).sum(axis=2, keepdims=True)
        self.regrets += (theta - expected) * self.key_legal
        terminal = reach[:, : len(tree.value)] @ tree.value
        projected = self.reach(self.edges(gamma))[:, : len(tree.value)] @ tree.value
        return projected, terminal, (at * distance).sum(axis=1), gamma_key


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
) -> HidingTrace:
    """`runs` runs of `iterations` iterations of progressive hiding (module docstring), their learning curves;
    `learner` "rm" (regret matching) or "ftrl" (entropic FTRL with step size `step`)."""
    if iterations < 1 or runs < 1:
        raise PvfError(f"iterations and runs must be at least 1, got {iterations} and {runs}")
    solver = ProgressiveHiding(tree, info_map, penalty, runs, seed, perturbation, learner, step)
    outcome, relaxed, violation = (np.zeros((runs, iterations)) for _ in range(3))
    gamma = np.zeros(0)
    for t in range(iterations):
        outcome[:, t], relaxed[:, t], violation[:, t], gamma = solver.step()
    return HidingTrace(outcome, relaxed, violation, gamma)
