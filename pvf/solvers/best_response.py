"""Best responses and NashConv in sequence form, batched.

A best response of player n to the opponent's realization plan is one
bottom-up pass: the immediate value of each of n's sequences is a sparse
product (A·y for player 1, −Aᵀ·x for player 2); each infostate takes its best
sequence and adds that value into its parent sequence. The best-response
value is Σ_r b_n[r]·q[r] over the root sequences.

NashConv(π) = BR₁(π₂) + BR₂(π₁) − (u₁ + u₂) = BR₁(π₂) + BR₂(π₁) in a zero-sum
game. OpenSpiel's `exploitability` is NashConv / 2.
"""

from __future__ import annotations

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.interface import Frozen, LeafQueries, check_beliefs
from pvf.solvers.sequence_form import SequenceGame
from pvf.solvers.sequence_ops import best_response_values, constrained_best_response_values, realization_plan


def best_response_value(
    game: SequenceGame,
    player: int,
    opponent_strategy: np.ndarray,
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
    held: Frozen | None = None,
) -> np.ndarray:
    """[B] value of `player`'s best response to the opponent's behaviour strategy [B, S_opp] or [S_opp].

    held: the player's infostates held to a fixed strategy [S] (its expectation there, the best sequence elsewhere).
    """
    if game.has_leaves:
        raise PvfError("best responses need the game solved to the end; build it without a depth limit")
    beliefs = check_beliefs(game, root_beliefs)
    B = beliefs[0].shape[1]
    opp = 1 - player
    strat = np.asarray(opponent_strategy, dtype=np.float64)
    strat = np.broadcast_to(strat[:, None], (strat.shape[0], B)) if strat.ndim == 1 else strat.T
    reach = realization_plan(game.players[opp], np.ascontiguousarray(strat), beliefs[opp])
    q = game.payoff @ reach if player == 0 else -(game.payoff_t @ reach)
    if held is None:
        q, _ = best_response_values(game.players[player], q)
    else:
        fixed = np.broadcast_to(np.asarray(held.strategy, dtype=np.float64)[:, None], q.shape)
        q = constrained_best_response_values(game.players[player], q, np.asarray(held.mask, dtype=bool), fixed)
    R = game.players[player].num_roots
    return np.sum(beliefs[player] * q[:R], axis=0)


def best_response_root_values(
    game: SequenceGame, x: np.ndarray, y: np.ndarray, leaves: LeafQueries | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each player's best-response values at the root infostates against the other's realization plan.

    x: [S1, B], y: [S2, B] realization plans (their root rows are the beliefs) -> ([B, R1], [B, R2]).
    leaves: a depth-limited game's leaf evaluator: its values at the profile (x, y) are held fixed while each
        player responds above them (a value net's counterfactual values are best-response values of the leaf
        subgames already, so this is the best response to the other's trunk strategy and its leaf equilibria).
    """
    if game.has_leaves and leaves is None:
        raise PvfError("best responses in a depth-limited game need its leaf evaluator")
    q1, q2 = game.payoff @ y, -(game.payoff_t @ x)
    held = leaves.values(x, y) if leaves is not None else None
    if held is not None:
        q1, q2 = q1 + held[0], q2 + held[1]
    q1, _ = best_response_values(game.players[0], q1)
    q2, _ = best_response_values(game.players[1], q2)
    return q1[: game.players[0].num_roots].T, q2[: game.players[1].num_roots].T


def nash_conv(
    game: SequenceGame,
    strategies: tuple[np.ndarray, np.ndarray],
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """[B] NashConv of a behaviour profile (per player [B, S_n] or [S_n]) in the (sub)game."""
    br1 = best_response_value(game, 0, strategies[1], root_beliefs)
    br2 = best_response_value(game, 1, strategies[0], root_beliefs)
    return br1 + br2
