"""Array primitives on one player's sequence tree, batched over B beliefs.

All arrays are sequence-major, [S, B] (S sequences, B problems), so that a
sparse payoff product A @ Y is one CSR × dense call. Per level of the
player's sequence tree each primitive is one gather or one `reduceat`:
  - regret_matching_plus: behaviour strategy from clipped regrets.
  - realization_plan: top-down, x[σ] = x[parent(σ)] · π(σ).
  - expected_values / best_response_values: bottom-up, an infostate's value
    is the π-weighted (or maximal) value of its sequences, added into its
    parent sequence's value.
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
    totals = np.add.reduceat(pos, seqs.info_start - R, axis=0)  # [I, B]
    per_seq = totals[seqs.seq_info[R:]]
    sizes = seqs.info_size[seqs.seq_info[R:]][:, None].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        strat[R:] = np.where(per_seq > 0, pos / per_seq, 1.0 / sizes)
    return strat


def realization_plan(seqs: PlayerSequences, strat: np.ndarray, root_reach: np.ndarray) -> np.ndarray:
    """[S, B] realization plan from a behaviour strategy [S, B] and root reaches [R, B]."""
    x = np.empty_like(strat)
    x[: seqs.num_roots] = root_reach
    parent = seqs.seq_parent
    for _, _, lo, hi, _, _ in seqs.levels:
        x[lo:hi] = x[parent[lo:hi]] * strat[lo:hi]
    return x


def behaviour_from_realization(seqs: PlayerSequences, x: np.ndarray) -> np.ndarray:
    """[S, B] behaviour strategy of a realization plan; uniform where the infostate is unreached."""
    R = seqs.num_roots
    strat = np.ones_like(x)
    par = x[seqs.seq_parent[R:]]
    sizes = seqs.info_size[seqs.seq_info[R:]][:, None].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        strat[R:] = np.where(par > 0, x[R:] / par, 1.0 / sizes)
    return strat


def expected_values(seqs: PlayerSequences, strat: np.ndarray, q: np.ndarray, regrets: np.ndarray | None = None) -> np.ndarray:
    """Propagate sequence values bottom-up under `strat`, in place; returns q.

    q: [S, B] on entry the immediate counterfactual value of each sequence
       (terminals and leaves directly below it); on exit its full value.
    regrets: [S, B] if given, the instantaneous regrets q(I,a) − v(I) are added
       to it and it is clipped at zero (the regret-matching+ update).
    """
    for lo, hi, slo, shi, gstart, gparent in reversed(seqs.levels):
        starts = seqs.info_start[lo:hi] - slo
        block = q[slo:shi]
        v = np.add.reduceat(strat[slo:shi] * block, starts, axis=0)  # [I_L, B]
        if regrets is not None:
            r = regrets[slo:shi]
            r += block - v[seqs.seq_info[slo:shi] - lo]
            np.maximum(r, 0.0, out=r)
        q[gparent] += np.add.reduceat(v, gstart, axis=0)
    return q


def best_response_values(seqs: PlayerSequences, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best-response propagation, in place: each infostate takes its best sequence.

    q: [S, B] immediate values on entry, best-response values on exit.
    Returns (q, choice) with choice [I, B] the index of the best sequence of each infostate.
    """
    choice = np.zeros((seqs.num_infostates, q.shape[1]), dtype=np.int64)
    for lo, hi, slo, shi, gstart, gparent in reversed(seqs.levels):
        starts = seqs.info_start[lo:hi] - slo
        block = q[slo:shi]
        v = np.maximum.reduceat(block, starts, axis=0)
        is_best = block >= v[seqs.seq_info[slo:shi] - lo]
        # first best sequence of each infostate
        idx = np.arange(slo, shi)[:, None] * np.ones((1, q.shape[1]), dtype=np.int64)
        masked = np.where(is_best, idx, np.iinfo(np.int64).max)
        choice[lo:hi] = np.minimum.reduceat(masked, starts, axis=0)
        q[gparent] += np.add.reduceat(v, gstart, axis=0)
    return q, choice
