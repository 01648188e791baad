"""Array primitives on one player's sequence tree, batched over B beliefs.

All arrays are sequence-major, [S, B] (S sequences, B problems), so that a
sparse payoff product A @ Y is one CSR × dense call. Per level of the
player's sequence tree each primitive is one gather or one `reduceat`:
  - regret_matching_plus: behaviour strategy from clipped regrets.
  - realization_plan: top-down, x[σ] = x[parent(σ)] · π(σ).
  - expected_values / best_response_values: bottom-up, an infostate's value
    is the π-weighted (or maximal) value of its sequences, added into its
    parent sequence's value; constrained_best_response_values mixes the
    two (π-weighted at infostates held to π, maximal elsewhere).
"""

from __future__ import annotations

import numpy as np

from pvf.solvers.sequence_form import PlayerSequences


def uniform_strategy(seqs: PlayerSequences, batch: int) -> np.ndarray:
    """[S, B] the uniform behaviour strategy (root rows are 1)."""
    strat = np.ones((seqs.num_sequences, batch))
    R = seqs.num_roots
    strat[R:] /= seqs.info_size[seqs.seq_info[R:]][:, None]
    return strat


def regret_matching_plus(seqs: PlayerSequences, regrets: np.ndarray) -> np.ndarray:
    """[S, B] behaviour strategy proportional to positive regrets; uniform where none are positive."""
    R = seqs.num_roots
    strat = np.ones_like(regrets)
    if seqs.num_infostates == 0:
        return strat
    pos = np.maximum(regrets[R:], 0.0)
    totals = np.add.reduceat(pos, seqs.info_start - R, axis=0)[seqs.seq_info[R:]]  # [S - R, B]
    positive = totals > 0
    np.divide(pos, totals, out=strat[R:], where=positive)
    strat[R:] = np.where(positive, strat[R:], _inverse_sizes(seqs))
    return strat


def _inverse_sizes(seqs: PlayerSequences) -> np.ndarray:
    """[S - R, 1] one over the number of actions of each decision sequence's infostate."""
    return 1.0 / seqs.info_size[seqs.seq_info[seqs.num_roots :]][:, None]


def realization_plan(seqs: PlayerSequences, strat: np.ndarray, root_reach: np.ndarray) -> np.ndarray:
    """[S, B] realization plan from a behaviour strategy [S, B] and root reaches [R, B]."""
    x = np.empty_like(strat)
    x[: seqs.num_roots] = root_reach
    for lv in seqs.levels:
        np.multiply(x[lv.seq_parent], strat[lv.seq_lo : lv.seq_hi], out=x[lv.seq_lo : lv.seq_hi])
    return x


def behaviour_from_realization(seqs: PlayerSequences, x: np.ndarray) -> np.ndarray:
    """[S, B] behaviour strategy of a realization plan; uniform where the infostate is unreached."""
    R = seqs.num_roots
    strat = np.ones_like(x)
    par = x[seqs.seq_parent[R:]]
    with np.errstate(invalid="ignore", divide="ignore"):
        strat[R:] = np.where(par > 0, x[R:] / par, _inverse_sizes(seqs))
    return strat


def expected_values(
    seqs: PlayerSequences, strat: np.ndarray, q: np.ndarray, regrets: np.ndarray | None = None
) -> np.ndarray:
    """Propagate sequence values bottom-up under `strat`, in place; returns q.

    q: [S, B] on entry the immediate counterfactual value of each sequence
       (terminals and leaves directly below it); on exit its full value.
    regrets: [S, B] if given, the instantaneous regrets q(I,a) − v(I) are added
       to it and it is clipped at zero (the regret-matching+ update).
    """
    for lv in reversed(seqs.levels):
        block = q[lv.seq_lo : lv.seq_hi]
        v = np.add.reduceat(strat[lv.seq_lo : lv.seq_hi] * block, lv.starts, axis=0)  # [I_L, B]
        if regrets is not None:
            r = regrets[lv.seq_lo : lv.seq_hi]
            r += block - v[lv.seq_info]  # r + (q − v): OpenSpiel's order, so iterates match it to the last digits
            np.maximum(r, 0.0, out=r)
        _add_to_parents(q, lv, v)
    return q


def _add_to_parents(q: np.ndarray, lv, v: np.ndarray) -> None:
    """q[parent(I)] += v(I) for the level's infostates (sorted by parent)."""
    if len(lv.group_starts) == lv.info_hi - lv.info_lo:  # every parent distinct
        q[lv.group_parents] += v
    else:
        q[lv.group_parents] += np.add.reduceat(v, lv.group_starts, axis=0)


def best_response_values(seqs: PlayerSequences, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best-response propagation, in place: each infostate takes its best sequence.

    q: [S, B] immediate values on entry, best-response values on exit.
    Returns (q, choice) with choice [I, B] the index of the first best sequence of each infostate.
    """
    choice = np.zeros((seqs.num_infostates, q.shape[1]), dtype=np.int64)
    for lv in reversed(seqs.levels):
        block = q[lv.seq_lo : lv.seq_hi]
        v = np.maximum.reduceat(block, lv.starts, axis=0)
        idx = np.arange(lv.seq_lo, lv.seq_hi)[:, None]
        masked = np.where(block >= v[lv.seq_info], idx, np.iinfo(np.int64).max)
        choice[lv.info_lo : lv.info_hi] = np.minimum.reduceat(masked, lv.starts, axis=0)
        _add_to_parents(q, lv, v)
    return q, choice


def constrained_best_response_values(
    seqs: PlayerSequences, q: np.ndarray, frozen: np.ndarray, strat: np.ndarray
) -> np.ndarray:
    """The best response that must play `strat` at `frozen` infostates, in place; returns q.

    q: [S, B] immediate values on entry, values on exit; frozen: [I] bool;
    strat: [S, B] behaviour strategy, read at frozen infostates only.
    """
    for lv in reversed(seqs.levels):
        block = q[lv.seq_lo : lv.seq_hi]
        best = np.maximum.reduceat(block, lv.starts, axis=0)
        held = np.add.reduceat(strat[lv.seq_lo : lv.seq_hi] * block, lv.starts, axis=0)
        _add_to_parents(q, lv, np.where(frozen[lv.info_lo : lv.info_hi, None], held, best))
    return q
