"""Belief normalisation: value functions see each player's beliefs as a distribution.

In the subgame of a PBS, scaling player n's beliefs by α changes neither the
equilibrium (CFR+'s iterates are scale-invariant too) nor n's own
counterfactual values, and scales the opponent's by α (they carry n's
reach). With belief masses m_n = Σ b_n over the public state:
    cfv_n(b₁, b₂) = m_{−n} · cfv_n(b₁/m₁, b₂/m₂).
So a network can take b_n / m_n and predict cfv_n / m_{−n}; the caller
multiplies back by m_{−n}. This removes a product the net would otherwise
have to learn (DeepStack normalises its ranges for the same reason). A
player with zero mass gets zero beliefs, and the opponent's values are 0.
"""

from __future__ import annotations

import numpy as np


def normalize_beliefs(
    belief: np.ndarray, player: np.ndarray, group: np.ndarray, num_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per (group, player) normalised beliefs and the scale of each infostate's value.

    belief, player, group: [M] one row per infostate; `group` numbers the PBS
        (public state of a sample) the row belongs to, in [0, num_groups).
    Returns (normalised beliefs [M], value scale [M] = the opponent's mass m_{−n}).
    """
    belief = np.asarray(belief)
    player = np.asarray(player, dtype=np.int64)
    key = 2 * np.asarray(group, dtype=np.int64) + player
    mass = np.bincount(key, weights=belief, minlength=2 * num_groups)
    own = mass[key]
    normalised = np.divide(belief, own, out=np.zeros_like(belief), where=own > 0)
    scale = mass[key ^ 1].astype(belief.dtype, copy=False)
    return normalised, scale
