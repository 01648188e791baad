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

The same pairs give what s knows of the opponent beyond c(s): the mean of
the opponent's private features q_{−n} over the histories s shares,

    q̄(s) = Σ_{h∈s} π_c(h)·b_{−n}(h)·q_{−n}(h) / c(s)   (0 where c(s) = 0),

e.g. in Goofspiel how likely each card is still in the opponent's hand
given s's bids and the public win sequence (`opponent_features`: W times
the belief-weighted features, divided by c). It is a conditional mean, so
it does not change when either belief is rescaled.

The same weights average any value of the histories: with u(h) a value of
player 1 per history (player 2's is −u(h): zero-sum), the conditional mean

    ū(s) = Σ_{h∈s} π_c(h)·b_{−n}(h)·u_n(h) / c(s)   (0 where c(s) = 0)

is what s's player expects from its histories under the opponent's belief
(`history_means` of `valued(u)`: with u the value of random play below the PBS, the
rollout input of particle nets, `pvf.games.rollouts`); c(s)·ū(s) is that
value in the targets' convention.
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
        self.columns, self.weights, self.sizes = columns, np.asarray(weights, dtype=np.float64), sizes
        self.matrix = sp.csr_matrix((self.weights, (columns[0], columns[1])), shape=sizes)
        self.matrix_t = self.matrix.T.tocsr()

    def __call__(self, b1: np.ndarray, b2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.matrix @ b2.T).T, np.asarray(self.matrix_t @ b1.T).T

    def opponent_features(
        self, b1: np.ndarray, b2: np.ndarray, q1: np.ndarray, q2: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(q̄₁ [B, J1, F], q̄₂ [B, J2, F]): each column's mean opponent features (module docstring).

        b1: [B, J1], b2: [B, J2] beliefs; q1: [J1, F], q2: [J2, F] each column's private features.
        """
        return _conditional_mean(self.matrix, b2, q2), _conditional_mean(self.matrix_t, b1, q1)

    def valued(self, values: np.ndarray) -> CounterfactualReach:
        """The same histories, each weight times `values` [H], player 1's value of the history (in the order the
        columns and weights were given): `history_means`'s numerator, built once for fixed values."""
        return CounterfactualReach(self.columns, self.weights * np.asarray(values, dtype=np.float64), self.sizes)

    def history_means(
        self, b1: np.ndarray, b2: np.ndarray, valued: CounterfactualReach
    ) -> tuple[np.ndarray, np.ndarray]:
        """(ū₁ [B, J1], ū₂ [B, J2]): each column's mean value of its histories (module docstring), for the values
        `valued = self.valued(values)` holds (player 2's value is player 1's negative).

        b1: [B, J1], b2: [B, J2] beliefs.
        """
        (t1, t2), (c1, c2) = valued(b1, b2), self(b1, b2)
        return tuple(np.divide(t, c, out=np.zeros_like(t), where=c > 0) for t, c in ((t1, c1), (-t2, c2)))


def _conditional_mean(matrix: sp.csr_matrix, belief: np.ndarray, features: np.ndarray) -> np.ndarray:
    """[B, J, F] Σ_j' M[j, j']·b[j']·q[j'] / Σ_j' M[j, j']·b[j'] for M [J, J'], b [B, J'], q [J', F]."""
    B, (J, F) = belief.shape[0], (matrix.shape[0], features.shape[1])
    weighted = (belief.T[:, :, None] * features[:, None, :]).reshape(belief.shape[1], B * F)  # [J', B·F]
    total = np.asarray(matrix @ weighted).reshape(J, B, F).transpose(1, 0, 2)
    mass = np.asarray(matrix @ belief.T).T[:, :, None]  # [B, J, 1]
    return np.divide(total, mass, out=np.zeros_like(total), where=mass > 0)
