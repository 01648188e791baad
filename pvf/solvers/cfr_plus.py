"""Batched CFR+ in sequence form, on a full game, a subgame or a depth-limited trunk.

Variant (Tammelin 2014, as in OpenSpiel's CFRPlusSolver): regret matching+,
alternating updates, linear averaging. One iteration t = 1, 2, ...:
  1. Player 1's strategy is regret matching+ on its clipped regrets; its
     realization plan x goes top-down, one gather per level.
  2. Player 1's immediate sequence values are A·y plus the leaf evaluator's
     counterfactual values scattered into their parent sequences; they are
     propagated bottom-up (one `reduceat` per level) while the regrets take
     q(I,a) − v(I) and are clipped at zero. x is added to the average
     realization plan with weight t.
  3. The same for player 2 against player 1's *updated* strategy, with
     values −Aᵀ·x.
Infostates frozen to a given strategy keep it. The average strategy is the
behaviour strategy of the weighted average realization plan.

With a `Gadget` (re-solving, Burch et al. 2014; DeepStack) one player's root
reach is not given: at each of its root infostates it chooses, by regret
matching+ on the two, between following into the subgame (its
counterfactual value there) and terminating with a given value (its value
in the solve this one continues); its root reach in the next iteration is
the probability of following. A strategy that holds the other player's
values below those given is then safe to play in place of the old one.

Everything carries a batch dimension B: B pairs of root beliefs over the
same (sub)game are solved at once, and a depth-limited trunk queries its
leaf evaluator for all leaf public states and all B problems in one call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.interface import Frozen, LeafEvaluator, LeafQueries, SolverResult, check_beliefs, profile_root_values
from pvf.solvers.sequence_form import SequenceGame
from pvf.solvers.sequence_ops import (
    behaviour_from_realization,
    expected_values,
    realization_plan,
    regret_matching_plus,
    uniform_strategy,
)


def _frozen_rows(game: SequenceGame, n: int, frozen: Frozen | None, batch: int):
    """(row indices [K], fixed strategy [K, B]) of frozen sequences, or None."""
    if frozen is None or not np.any(frozen.mask):
        return None
    seqs = game.players[n]
    R = seqs.num_roots
    rows = R + np.flatnonzero(np.asarray(frozen.mask)[seqs.seq_info[R:]])
    strat = np.asarray(frozen.strategy, dtype=np.float64)
    fixed = strat[rows][:, None] * np.ones((1, batch)) if strat.ndim == 1 else strat[:, rows].T.copy()
    return rows, fixed


@dataclass(frozen=True)
class Gadget:
    """`player`'s root reach chosen by the re-solving gadget; `values` [B, R] its counterfactual values at its
    root infostates in the solve this one continues (what terminating pays), in the payoff's units (chance reach
    and the other player's root reach included)."""

    player: int
    values: np.ndarray


def cfr_plus(
    game: SequenceGame,
    iterations: int,
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
    frozen: tuple[Frozen | None, Frozen | None] = (None, None),
    leaf_evaluator: LeafEvaluator | None = None,
    callback: Callable[[int], None] | None = None,
    gadget: Gadget | None = None,
) -> SolverResult:
    """Run `iterations` of CFR+ on `game` for a batch of root beliefs.

    root_beliefs: (b1 [B, R1], b2 [B, R2]) reaches of the root infostates in the
        root public state's enumeration; None for the full game (R = 1, B = 1).
    frozen: per player, infostates held to a fixed strategy.
    leaf_evaluator: required when the game is depth-limited.
    callback: called with the iteration number after each iteration.
    gadget: one player's root reach chosen by the re-solving gadget (its beliefs given here are not used;
        module docstring).
    """
    if iterations < 1:
        raise PvfError(f"iterations must be at least 1, got {iterations}")
    b1, b2 = check_beliefs(game, root_beliefs)
    B = b1.shape[1]
    p1, p2 = game.players
    leaves = LeafQueries(game, leaf_evaluator)
    fixed = [_frozen_rows(game, n, frozen[n], B) for n in (0, 1)]
    regrets = [np.zeros((p.num_sequences, B)) for p in game.players]
    avg = [np.zeros((p.num_sequences, B)) for p in game.players]
    strat = [_apply_frozen(uniform_strategy(p, B), f) for p, f in zip(game.players, fixed)]
    beliefs = [b1, b2]
    follow = None if gadget is None else _Follow(gadget, B)
    if follow is not None:  # the gadget sets its player's reach from the first iteration on
        beliefs[gadget.player] = follow.reach()
    x = realization_plan(p1, strat[0], beliefs[0])
    y = realization_plan(p2, strat[1], beliefs[1])
    for t in range(1, iterations + 1):
        # Player 1 against the current y.
        leaf = leaves.values(x, y)
        q1 = game.payoff @ y
        if leaf is not None:
            q1 += leaf[0]
        expected_values(p1, strat[0], q1, regrets[0])
        avg[0] += t * x
        strat[0] = _apply_frozen(regret_matching_plus(p1, regrets[0]), fixed[0])
        if follow is not None and follow.player == 0:
            beliefs[0] = follow.update(q1[: p1.num_roots])
        x = realization_plan(p1, strat[0], beliefs[0])
        # Player 2 against the updated x.
        leaf = leaves.values(x, y)
        q2 = -(game.payoff_t @ x)
        if leaf is not None:
            q2 += leaf[1]
        expected_values(p2, strat[1], q2, regrets[1])
        avg[1] += t * y
        strat[1] = _apply_frozen(regret_matching_plus(p2, regrets[1]), fixed[1])
        if follow is not None and follow.player == 1:
            beliefs[1] = follow.update(q2[: p2.num_roots])
        y = realization_plan(p2, strat[1], beliefs[1])
        if callback is not None:
            callback(t)
    norm = iterations * (iterations + 1) / 2.0
    avg_x, avg_y = avg[0] / norm, avg[1] / norm
    avg_strat = [behaviour_from_realization(p, a) for p, a in zip(game.players, (avg_x, avg_y))]
    # Frozen infostates may be unreached: report their fixed strategy, not uniform.
    avg_strat = [_apply_frozen(s, f) for s, f in zip(avg_strat, fixed)]
    root_avg, value = profile_root_values(game, avg_strat, (beliefs[0], beliefs[1]), leaves)
    root_cur, _ = profile_root_values(game, strat, (beliefs[0], beliefs[1]), leaves)
    return SolverResult.from_columns(avg_strat, (avg_x, avg_y), strat, root_avg, root_cur, value, iterations)


def _apply_frozen(strat: np.ndarray, fixed) -> np.ndarray:
    if fixed is not None:
        rows, values = fixed
        strat[rows] = values
    return strat


class _Follow:
    """The gadget's regrets [2, R, B] (follow, terminate) and its follow probability, the gadget player's root reach."""

    def __init__(self, gadget: Gadget, batch: int):
        values = np.asarray(gadget.values, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] != batch:
            raise PvfError(f"gadget values must be [B, R] with B = {batch}, got shape {values.shape}")
        self.player = gadget.player
        self.terminate = values.T  # [R, B]
        self.regrets = np.zeros((2, *self.terminate.shape))

    def update(self, follow_values: np.ndarray) -> np.ndarray:
        """After the player's update: regret matching+ on (follow, terminate) given the subgame's root values
        [R, B] (the last reach's); returns the next root reach [R, B]."""
        reach = self.reach()
        mixed = reach * follow_values + (1.0 - reach) * self.terminate
        self.regrets[0] = np.maximum(self.regrets[0] + follow_values - mixed, 0.0)
        self.regrets[1] = np.maximum(self.regrets[1] + self.terminate - mixed, 0.0)
        return self.reach()

    def reach(self) -> np.ndarray:
        total = self.regrets.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, self.regrets[0] / total, 0.5)
