"""Counterfactual reach: how much chance and opponent belief an infostate's histories carry.

In a PBS with beliefs b_n over infostates, infostate s of player n has

    c(s) = Σ_{h∈s} π_c(h)·b_{−n}(s_{−n}(h)),

the counterfactual value s would have if every terminal paid 1, so a value
v(s) = Σ_{h∈s} π_c(h)·b_{−n}(h)·u_n(h) (the targets' convention) obeys
|v(s)| ≤ c(s)·max|u|. Which opponent infostates share a history with s is a
pairwise relation (in Goofspiel: whose bids agree with the public win
sequence round by round), which a Deep-Sets network's pooled context
cannot compute; given c(s) as an input it need not (docs/particles.md
measures the difference). One sparse matrix W [J₁, J₂], W[s₁, s₂] =
Σ π_c(h) over the histories joining s₁ and s₂, gives both players':
c₁ = b₂·Wᵀ, c₂ = b₁·W.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class CounterfactualReach:
    """`reach(b1 [B, J1], b2 [B, J2]) -> (c1 [B, J1], c2 [B, J2])` for histories given by their infostate columns.

    columns: per player [H] the column (0 … J_n − 1) of each history's infostate.
    weights: [H] each history's chance reach π_c(h).
    sizes: (J1, J2) columns per player.
    """

    def __init__(self, columns: tuple[np.ndarray, np.ndarray], weights: np.ndarray, sizes: tuple[int, int]):
        self.matrix = sp.csr_matrix((np.asarray(weights, dtype=np.float64), (columns[0], columns[1])), shape=sizes)
        self.matrix_t = self.matrix.T.tocsr()

    def __call__(self, b1: np.ndarray, b2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.matrix @ b2.T).T, np.asarray(self.matrix_t @ b1.T).T
