"""Batched magnetic mirror descent (MMD) with the dilated entropy, in sequence form.

MMD (Sokota et al. 2022) is a last-iterate method: its current profile is
the solution, nothing is averaged. One iteration t = 1, 2, ... with the
schedule's (α_t, η_t), for both players *simultaneously* against the same
profile (x_t, y_t) — or, with an alternating schedule (the default),
player 2 against player 1's updated x_{t+1}, as CFR+ alternates:
  1. Immediate sequence values: q₁ = A·y_t, q₂ = −Aᵀ·x_t (x_{t+1}), plus the
     leaf evaluator's counterfactual values scattered into their parent
     sequences (one evaluator call per iteration; two when alternating).
  2. Each player takes the proximal step
         x_{t+1} = argmax_x  η⟨q, x⟩ − ηα·ψ(x) − B_ψ(x; x_t)
     with ψ the dilated entropy ψ(x) = Σ_I x_{p(I)} Σ_a π(a|I) log π(a|I)
     (the magnet is the uniform strategy, through ψ itself). It has a closed
     form, one bottom-up pass over the player's levels:
         h(I,a) = [η q(I,a) + log π_t(a|I)] / (1 + ηα) + Σ_{J below (I,a)} V(J)
         V(I)   = log Σ_a exp h(I,a)
         π_{t+1}(·|I) = softmax h(I,·)
     i.e. per decision point π' ∝ [π · exp(η Q)]^(1/(1+ηα)) with
     Q(I,a) = q(I,a) + (1+ηα)/η · Σ_J V(J) the soft (entropy-regularised)
     counterfactual value of (I,a).
Simultaneous, this is OpenSpiel's `MMDDilatedEnt.update_sequences` (mmd_dilated.py), whose
gradient log(x(I,a)/x(p(I))) + 1 − |children| is log π_t(a|I) plus
constants that cancel in V; its payoff matrix is A, its default stepsize
η = α / max|A|². Two differences, both outside what OpenSpiel reaches: an
infostate whose parent has zero reach still takes the step above (OpenSpiel
drops log π_t there), and infostates frozen to σ keep it, passing up
V(I) = Σ_a σ_a h(I,a) + ηα/(1+ηα)·H(σ) with h computed without log π_t (the
prox step restricted to the frozen strategy).

Units. A fixed schedule's α and η are OpenSpiel's: payoff units of A. The
named annealed schedules are relative to the payoff scale s = max|A|
(α_t = a·s/t^p, η_t = e/(s·t^q)), so one set of constants suits games of any
payoff scale; in these units OpenSpiel's default stepsize is e = a. With
root beliefs, each problem's α and η are also rescaled as if the opponent's
beliefs had maximum 1: the iterates do not depend on the scale of either
belief vector, and the full game (beliefs 1) is unchanged. A game rooted at
several public states (the union of leaf subgames that dataset targets
solve at once) is several independent games: s and the belief scale are
taken per root public state, so each subgame follows exactly the iterates
it would follow alone.

Result. `mmd` returns a `SolverResult` whose *average_* fields hold the last
iterate (MMD's solution, nothing is averaged): `average_strategy` ==
`current_strategy` is the current behaviour strategy, `average_realization`
its realization plan, and `root_values` == `current_root_values` its root
counterfactual values. Code written for CFR+'s average therefore gets MMD's
last iterate unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.interface import Frozen, LeafEvaluator, LeafQueries, SolverResult, check_beliefs, profile_root_values
from pvf.solvers.sequence_form import PlayerSequences, SequenceGame
from pvf.solvers.sequence_ops import realization_plan, uniform_strategy

MAX_CONSTANT = 1e6  # alpha or stepsize beyond it overflow the update's products (1e308 gave NaN strategies)


@dataclass(frozen=True)
class Schedule:
    """MMD's temperature α_t and stepsize η_t at iteration t = 1, 2, ...

    α_t = alpha·u / t^alpha_decay and η_t = stepsize / (u·t^stepsize_decay),
    with u = max|A| if `relative` (annealed schedules: one set of constants
    for games of any payoff scale), else u = 1 (OpenSpiel's units). A missing
    stepsize is OpenSpiel's default alpha / max|A|² (in relative units: alpha).
    alternating: player 2 steps against player 1's updated strategy (as in
    CFR+) instead of simultaneously (OpenSpiel's MMDDilatedEnt).
    """

    alpha: float
    stepsize: float | None = None
    alpha_decay: float = 0.0
    stepsize_decay: float = 0.0
    relative: bool = False
    alternating: bool = False

    def __post_init__(self):
        if not (math.isfinite(self.alpha) and 0 <= self.alpha <= MAX_CONSTANT):
            raise PvfError(f"MMD alpha must be finite and non-negative, at most {MAX_CONSTANT:g}, got {self.alpha}")
        if self.stepsize is not None and not (math.isfinite(self.stepsize) and 0 < self.stepsize <= MAX_CONSTANT):
            raise PvfError(f"MMD stepsize must be finite and positive, at most {MAX_CONSTANT:g}, got {self.stepsize}")
        if self.stepsize is None and self.alpha == 0:
            raise PvfError(
                "MMD with alpha 0 needs an explicit stepsize (the default stepsize is proportional to alpha)"
            )

    def at(self, t: int, scale: float | np.ndarray) -> tuple[float | np.ndarray, float | np.ndarray]:
        """(α_t, η_t) for a game whose payoff scale max|A| is `scale` (a float, or one per component)."""
        u = scale if self.relative else 1.0
        alpha = self.alpha * u / t**self.alpha_decay
        if self.stepsize is None:
            eta = alpha / scale**2
        else:
            eta = self.stepsize / (u * t**self.stepsize_decay)
        return alpha, eta


# Named schedules (relative units; docs/guide.md, "Magnetic mirror descent", has the
# measurements). "alternating" is the default: α_t = 0.1·s/√t, η_t =
# 20/(s·√t), alternating updates; Leduc NashConv 0.019 after 1,000
# iterations, the lowest of those measured. "sqrt" is the best simultaneous
# one found (α_t = 0.5·s/√t, η_t = 3/(s·√t): 0.131), "paper" the
# update-equivalence paper's α_t = η_t = 1/√t (0.305). A constant η with
# α_t → 0 diverges after about 2,000 iterations: η must shrink with α.
# "fixed" (OpenSpiel's MMDDilatedEnt, simultaneous) needs an alpha.
SCHEDULES: dict[str, Schedule] = {
    "alternating": Schedule(
        alpha=0.1, stepsize=20.0, alpha_decay=0.5, stepsize_decay=0.5, relative=True, alternating=True
    ),
    "sqrt": Schedule(alpha=0.5, stepsize=3.0, alpha_decay=0.5, stepsize_decay=0.5, relative=True),
    "paper": Schedule(alpha=1.0, stepsize=1.0, alpha_decay=0.5, stepsize_decay=0.5, relative=True),
}
DEFAULT_SCHEDULE = "alternating"
SCHEDULE_NAMES = ("fixed", *SCHEDULES)


def make_schedule(name: str | None = None, alpha: float | None = None, stepsize: float | None = None) -> Schedule:
    """A named schedule, or "fixed" with `alpha`; `alpha`/`stepsize` override a named schedule's constants.

    Without a name: "fixed" if `alpha` is given (OpenSpiel's MMDDilatedEnt(alpha, stepsize)), else the default.
    """
    if name is None:
        name = "fixed" if alpha is not None else DEFAULT_SCHEDULE
    if name == "fixed":
        if alpha is None:
            raise PvfError("the fixed MMD schedule needs an alpha (e.g. --alpha 0.05)")
        return Schedule(float(alpha), None if stepsize is None else float(stepsize))
    if name not in SCHEDULES:
        raise PvfError(f"unknown MMD schedule {name!r}; choose one of: {', '.join(SCHEDULE_NAMES)}")
    return replace(
        SCHEDULES[name],
        **({} if alpha is None else {"alpha": float(alpha)}),
        **({} if stepsize is None else {"stepsize": float(stepsize)}),
    )


class _FrozenPart:
    """One player's frozen infostates: their strategy σ [S, B] and entropy H(σ) [I, B]."""

    def __init__(self, seqs: PlayerSequences, frozen: Frozen, batch: int):
        R = seqs.num_roots
        info_mask = np.asarray(frozen.mask, dtype=bool)
        self.info_mask = info_mask[:, None]  # [I, 1]
        self.seq_mask = np.zeros((seqs.num_sequences, 1), dtype=bool)
        self.seq_mask[R:, 0] = info_mask[seqs.seq_info[R:]]
        strat = np.asarray(frozen.strategy, dtype=np.float64)
        sigma = strat[:, None] * np.ones((1, batch)) if strat.ndim == 1 else strat.T.copy()
        self.sigma = np.where(self.seq_mask, sigma, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(self.sigma > 0, self.sigma * np.log(self.sigma), 0.0)
        self.entropy = np.zeros((seqs.num_infostates, batch))
        if seqs.num_infostates:
            self.entropy = -np.add.reduceat(plogp[R:], seqs.info_start - R, axis=0)


def _prox_step(
    seqs: PlayerSequences,
    q: np.ndarray,
    logp: np.ndarray,
    alpha: np.ndarray,
    eta: np.ndarray,
    frozen: _FrozenPart | None,
) -> tuple[np.ndarray, np.ndarray]:
    """One dilated-entropy MMD step for one player, bottom-up; returns (strategy, log strategy), both [S, B].

    q: [S, B] immediate sequence values; logp: [S, B] log π_t (0 on roots and frozen rows);
    alpha, eta: [1, B] or [S, B].
    """
    k = 1.0 / (1.0 + eta * alpha)
    h = k * (eta * q + logp)
    per_row = k.shape[0] > 1
    strat = np.ones_like(q)
    new_logp = np.zeros_like(q)
    for lv in reversed(seqs.levels):
        block = h[lv.seq_lo : lv.seq_hi]
        m = np.maximum.reduceat(block, lv.starts, axis=0)
        e = np.exp(block - m[lv.seq_info])
        total = np.add.reduceat(e, lv.starts, axis=0)
        v = m + np.log(total)
        strat[lv.seq_lo : lv.seq_hi] = e / total[lv.seq_info]
        new_logp[lv.seq_lo : lv.seq_hi] = block - v[lv.seq_info]
        if frozen is not None:
            sl = slice(lv.seq_lo, lv.seq_hi)
            sigma = frozen.sigma[sl]
            k_info = k[sl][lv.starts] if per_row else k
            v_frozen = (
                np.add.reduceat(sigma * block, lv.starts, axis=0)
                + (1.0 - k_info) * frozen.entropy[lv.info_lo : lv.info_hi]
            )
            v = np.where(frozen.info_mask[lv.info_lo : lv.info_hi], v_frozen, v)
            strat[sl] = np.where(frozen.seq_mask[sl], sigma, strat[sl])
            new_logp[sl] = np.where(frozen.seq_mask[sl], 0.0, new_logp[sl])
        if len(lv.group_starts) == lv.info_hi - lv.info_lo:
            h[lv.group_parents] += v
        else:
            h[lv.group_parents] += np.add.reduceat(v, lv.group_starts, axis=0)
    return strat, new_logp


def payoff_scale(game: SequenceGame) -> float:
    """max|A| of the (sub)game, 1 where it has no terminal payoffs."""
    return float(_Components(game).payoff_scale.max())


class _Components:
    """The independent games under a root: one per public state of the root infostates.

    of_sequence: per player [S_n] component of each sequence.
    of_root: per player [R_n] component of each root sequence.
    payoff_scale: [K] max|A| over each component's payoffs (1 where it has none).
    """

    def __init__(self, game: SequenceGame):
        tree = game.tree
        publics = [tree.infostate_public_state[n][p.root_infostates] for n, p in enumerate(game.players)]
        labels = np.unique(np.concatenate(publics))
        self.count = len(labels)
        self.of_root = [np.searchsorted(labels, ps) for ps in publics]
        self.of_sequence = []
        for p, roots in zip(game.players, self.of_root):
            comp = np.empty(p.num_sequences, dtype=np.int64)
            comp[: p.num_roots] = roots
            for lv in p.levels:
                comp[lv.seq_lo : lv.seq_hi] = comp[lv.seq_parent]
            self.of_sequence.append(comp)
        coo = game.payoff.tocoo()
        scale = np.zeros(self.count)
        np.maximum.at(scale, self.of_sequence[0][coo.row], np.abs(coo.data))
        self.payoff_scale = np.where(scale > 0, scale, 1.0)

    def belief_scale(self, n: int, beliefs: np.ndarray) -> np.ndarray:
        """[K, B] each component's largest root belief of player n, 1 where all are zero."""
        m = np.zeros((self.count, beliefs.shape[1]))
        np.maximum.at(m, self.of_root[n], beliefs)
        return np.where(m > 0, m, 1.0)

    def per_sequence(self, n: int, values: np.ndarray) -> np.ndarray:
        """[1, B] or [S_n, B] a [K, B] array on player n's sequences."""
        return values if self.count == 1 else values[self.of_sequence[n]]


def mmd(
    game: SequenceGame,
    iterations: int,
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
    frozen: tuple[Frozen | None, Frozen | None] = (None, None),
    leaf_evaluator: LeafEvaluator | None = None,
    callback: Callable[[int], None] | None = None,
    schedule: Schedule | None = None,
) -> SolverResult:
    """Run `iterations` of MMD on `game` for a batch of root beliefs; the result holds the last iterate.

    root_beliefs: (b1 [B, R1], b2 [B, R2]) reaches of the root infostates; None for the full game.
    frozen: per player, infostates held to a fixed strategy.
    leaf_evaluator: required when the game is depth-limited.
    callback: called with the iteration number after each iteration.
    schedule: α_t and η_t (default: `SCHEDULES[DEFAULT_SCHEDULE]`).
    """
    if iterations < 1:
        raise PvfError(f"iterations must be at least 1, got {iterations}")
    schedule = make_schedule() if schedule is None else schedule
    b1, b2 = check_beliefs(game, root_beliefs)
    B = b1.shape[1]
    p1, p2 = game.players
    leaves = LeafQueries(game, leaf_evaluator)
    parts = [None if f is None or not np.any(f.mask) else _FrozenPart(p, f, B) for p, f in zip(game.players, frozen)]
    comps = _Components(game)
    scale = comps.payoff_scale[:, None]  # [K, 1]
    # Per problem and component, the opponent's largest belief: q scales with it (module docstring, "Units").
    opp_scale = [comps.belief_scale(1, b2), comps.belief_scale(0, b1)]  # [K, B]
    strat, logp = [], []
    for p, part in zip(game.players, parts):
        s = uniform_strategy(p, B)
        lp = np.log(s)
        if part is not None:
            s = np.where(part.seq_mask, part.sigma, s)
            lp = np.where(part.seq_mask, 0.0, lp)
        strat.append(s)
        logp.append(lp)
    x = realization_plan(p1, strat[0], b1)
    y = realization_plan(p2, strat[1], b2)
    for t in range(1, iterations + 1):
        alpha, eta = schedule.at(t, scale)
        leaf = leaves.values(x, y)
        q1 = game.payoff @ y
        q2 = -(game.payoff_t @ x)  # against x_t: simultaneous (OpenSpiel's order)
        for n, q in ((0, q1), (1, q2)):
            if n == 1 and schedule.alternating:  # against x_{t+1}, as CFR+
                leaf = leaves.values(x, y)
                q = -(game.payoff_t @ x)
            if leaf is not None:
                q += leaf[n]
            c = opp_scale[n]
            a_n = comps.per_sequence(n, alpha * c)
            e_n = comps.per_sequence(n, eta / c)
            strat[n], logp[n] = _prox_step(game.players[n], q, logp[n], a_n, e_n, parts[n])
            if n == 0:
                x = realization_plan(p1, strat[0], b1)
        y = realization_plan(p2, strat[1], b2)
        if callback is not None:
            callback(t)
    root, value = profile_root_values(game, strat, (b1, b2), leaves)
    return SolverResult.from_columns(strat, (x, y), strat, root, root, value, iterations)
