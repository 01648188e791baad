"""Sequence-form maximin LP (von Stengel 1996), the one LP behind the oracle and trunk exploitability.

For a two-player zero-sum sequence game with root beliefs, the maximiser's
realization plan x ≥ 0 and free duals v of the minimiser's sequence
constraints F·y = f (f = the minimiser's root beliefs):
  1. E·x = e: x's root sequences equal the maximiser's root beliefs e, each
     infostate's sequences sum to its parent's; an infostate frozen to a
     strategy π fixes x(I,a) = π(I,a)·x(parent(I)) instead.
  2. The minimiser's best response is dualised:
     min_y xᵀA y = max_v fᵀv s.t. Fᵀv ≤ Aᵀx (one row per minimiser sequence).
  3. Maximise fᵀv over (x, v) with HiGHS (scipy's `linprog`).
The optimum is the maximiser's guaranteed value; the multipliers of the
inequalities of step 2 are the minimiser's minimax realization plan y.
The constraint matrices are built once; a solve only changes e and f.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from pvf.solvers.sequence_form import PlayerSequences, SequenceGame


def sequence_constraints(seqs: PlayerSequences) -> sp.csr_matrix:
    """[R + I, S] rows: x[root r] = e_r; Σ_a x(I,a) − x(parent(I)) = 0."""
    R, I, S = seqs.num_roots, seqs.num_infostates, seqs.num_sequences
    rows = [np.arange(R), R + seqs.seq_info[R:], R + np.arange(I)]
    cols = [np.arange(R), np.arange(R, S), seqs.info_parent]
    vals = [np.ones(R), np.ones(S - R), -np.ones(I)]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(R + I, S))


class MaximinLP:
    """max_x min_y xᵀ·A·y for `maximiser` (A = the game's payoff from its side).

    frozen: [I_max] bool, infostates of the maximiser fixed to `strategy`
        ([S_max] behaviour strategy, read on frozen infostates); None: all free.
    """

    def __init__(
        self, game: SequenceGame, maximiser: int, frozen: np.ndarray | None = None, strategy: np.ndarray | None = None
    ):
        mx, mn = game.players[maximiser], game.players[1 - maximiser]
        payoff = game.payoff if maximiser == 0 else -game.payoff_t
        self.sizes = (mx.num_sequences, mx.num_roots, mn.num_roots)
        E, F = sequence_constraints(mx), sequence_constraints(mn)
        self.num_duals = F.shape[0]
        Rx = mx.num_roots
        frozen = np.zeros(mx.num_infostates, dtype=bool) if frozen is None else np.asarray(frozen, dtype=bool)
        keep = np.concatenate([np.ones(Rx, dtype=bool), ~frozen])
        fz_rows = Rx + np.flatnonzero(frozen[mx.seq_info[Rx:]])
        strat = np.zeros(mx.num_sequences) if strategy is None else np.asarray(strategy, dtype=np.float64)
        Fz = sp.csr_matrix(
            (
                np.concatenate([np.ones(len(fz_rows)), -strat[fz_rows]]),
                (np.concatenate([np.arange(len(fz_rows))] * 2), np.concatenate([fz_rows, mx.seq_parent[fz_rows]])),
            ),
            shape=(len(fz_rows), mx.num_sequences),
        )
        a_eq_x = sp.vstack([E[keep], Fz])
        self.num_eq = a_eq_x.shape[0]
        self.a_eq = sp.hstack([a_eq_x, sp.csr_matrix((a_eq_x.shape[0], self.num_duals))]).tocsr()
        self.a_ub = sp.hstack([-sp.csr_matrix(payoff).T, F.T]).tocsr()
        self.b_ub = np.zeros(mn.num_sequences)
        self.bounds = [(0, None)] * mx.num_sequences + [(None, None)] * self.num_duals

    def solve(self, b_max: np.ndarray, b_min: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(value, x [S_max], y [S_min]) for root beliefs b_max [R_max], b_min [R_min]."""
        S, R, _ = self.sizes
        b_eq = np.concatenate([b_max, np.zeros(self.num_eq - R)])
        c = np.concatenate([np.zeros(S), -np.concatenate([b_min, np.zeros(self.num_duals - len(b_min))])])
        res = linprog(c, A_ub=self.a_ub, b_ub=self.b_ub, A_eq=self.a_eq, b_eq=b_eq, bounds=self.bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"sequence-form LP failed: {res.message}")
        return float(-res.fun), np.maximum(res.x[:S], 0.0), np.maximum(-res.ineqlin.marginals, 0.0)
