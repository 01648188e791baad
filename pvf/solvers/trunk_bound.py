"""Certified bounds on trunk exploitability where the exact LP does not fit.

`pvf.solvers.trunk_exploitability` computes expl = −V₁ − V₂ exactly, V_n
being what player n guarantees while playing the trunk strategy at its
trunk infostates, by one LP per player. Its size grows with the game's;
particle-restricted games with many particles outgrow it. Here, per
player n:
  1. CFR+ (`iterations`) runs on the game with n's trunk infostates frozen
     to the trunk strategy (`cfr_plus(..., frozen=...)`); its averages are
     x̄ (n's, agreeing with the trunk) and ȳ (the opponent's).
  2. g_n = what x̄ guarantees: minus the opponent's exact best-response
     value against it. Since x̄ is one of the strategies V_n maximises
     over, g_n ≤ V_n.
  3. h_n = the best n can do against ȳ while still playing the trunk
     strategy at its trunk infostates (a best response with expectations
     instead of maxima at those infostates, `best_response_value(...,
     held=...)`). Since V_n's minimiser could play
     ȳ, V_n ≤ h_n.
Hence −h₁ − h₂ ≤ expl ≤ −g₁ − g₂, whatever the number of iterations: both
ends are exact best responses to given strategies, nothing is estimated.
The width Σ_n (h_n − g_n) is the two frozen games' duality gap (CFR+'s
average converges, so it shrinks as `iterations` grows). A figure reported
from this module is the upper end, `upper`, with its gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvf.solvers.best_response import best_response_value
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import Frozen
from pvf.solvers.sequence_form import SequenceGame
from pvf.solvers.trunk_exploitability import checked_inputs

DEFAULT_BOUND_ITERATIONS = 1000


@dataclass(frozen=True)
class TrunkBound:
    """Certified bounds on one trunk strategy's exploitability (NashConv convention).

    lower, upper: −h₁ − h₂ ≤ exploitability ≤ −g₁ − g₂ (module docstring).
    guaranteed: (g₁, g₂); attainable: (h₁, h₂); iterations: CFR+ iterations per frozen game.
    """

    lower: float
    upper: float
    guaranteed: tuple[float, float]
    attainable: tuple[float, float]
    iterations: int

    @property
    def gap(self) -> float:
        """upper − lower, the two frozen games' duality gap."""
        return self.upper - self.lower


def trunk_exploitability_bounds(
    game: SequenceGame,
    strategies: tuple[np.ndarray, np.ndarray],
    trunk_masks: tuple[np.ndarray, np.ndarray],
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
    iterations: int = DEFAULT_BOUND_ITERATIONS,
) -> TrunkBound:
    """Bounds on the trunk exploitability `trunk_exploitability` computes exactly (same arguments).

    game: the subgame solved to the end; strategies: per player [S_n] behaviour strategy (read at trunk
    infostates); trunk_masks: per player [I_n] bool; root_beliefs: one pair (b1 [R1], b2 [R2]) or None.
    """
    b1, b2 = checked_inputs(game, strategies, trunk_masks, root_beliefs)
    beliefs = (b1.T, b2.T)
    guaranteed, attainable = [], []
    for n in (0, 1):
        frozen = [None, None]
        frozen[n] = Frozen(np.asarray(trunk_masks[n], dtype=bool), np.asarray(strategies[n], dtype=np.float64))
        result = cfr_plus(game, iterations, root_beliefs=beliefs, frozen=(frozen[0], frozen[1]))
        mine, theirs = (
            result.average_strategy[n][0],
            result.average_strategy[1 - n][0],
        )  # mine: the trunk strategy where frozen
        guaranteed.append(-float(best_response_value(game, 1 - n, mine, beliefs)[0]))
        attainable.append(float(best_response_value(game, n, theirs, beliefs, held=Frozen(frozen[n].mask, mine))[0]))
    return TrunkBound(
        lower=-attainable[0] - attainable[1],
        upper=-guaranteed[0] - guaranteed[1],
        guaranteed=(guaranteed[0], guaranteed[1]),
        attainable=(attainable[0], attainable[1]),
        iterations=iterations,
    )
