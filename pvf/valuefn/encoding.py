"""The pieces of a PBS's encoding that every architecture shares (numpy, no torch).

A PBS reaches a network as rows, one per infostate (`PbsRows`: training
batches from a file; the leaves of a trunk build the same rows). Three
conventions are fixed here, once, for training and for the leaves alike:

1. Belief normalisation. In the subgame of a PBS, scaling player n's
   beliefs by α changes neither the equilibrium (CFR+'s iterates are
   scale-invariant too) nor n's own counterfactual values, and scales the
   opponent's by α (they carry n's reach). With belief masses
   m_n = Σ b_n over the public state:
       cfv_n(b₁, b₂) = m_{−n} · cfv_n(b₁/m₁, b₂/m₂).
   So a network takes b_n / m_n and predicts cfv_n / m_{−n}; the caller
   multiplies back by m_{−n} (`normalize_beliefs`). DeepStack normalises its
   ranges for the same reason. A player with zero mass gets zero beliefs,
   and the opponent's values are 0.
2. Slots (`input_slot`): player 1's infostate in slot k of its public
   state is input slot k, player 2's is K1max + k.
3. Infostate-row features (`infostate_row_features`): [public, private, player one-hot],
   for data with mean opponent features (`DataLayout.opponent_feature`)
   those next (a conditional mean: no scaling), then for data with rollout
   values (`DataLayout.rollout_input`) the infostate's mean rollout value
   cf_rollout / cf_reach (a conditional mean too), and last, for data with a
   counterfactual-reach column (`DataLayout.reach_feature`), the
   infostate's counterfactual reach scaled as its target is (divided by the
   opponent's mass when normalised), so |target| ≤ reach·max|u|.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import numpy as np

PLAYER_FEATURES = 2  # the player one-hot appended to every infostate's features


class PbsRows(TypedDict):
    """B PBSs' infostates back to back (n = Σ counts; each PBS lists player 1's first)."""

    counts: np.ndarray  # [B] infostates per PBS
    public: np.ndarray  # [B, Fp] public features
    player: np.ndarray  # [n] int64 0 or 1
    slot: np.ndarray  # [n] int64 slot in the player's enumeration of the public state
    belief: np.ndarray  # [n] reach of the infostate
    target: np.ndarray  # [n] counterfactual value (zeros where there is none, e.g. at the leaves)
    private: np.ndarray  # [n, Fq] private features
    cf_reach: NotRequired[np.ndarray]  # [n] counterfactual reach (`pvf.solvers.counterfactual_reach`)
    cf_opponent: NotRequired[np.ndarray]  # [n, Fq] mean opponent private features (same module)
    cf_rollout: NotRequired[np.ndarray]  # [n] rollout value, targets' convention (`CounterfactualReach.history_means`)


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


def input_slot(player: np.ndarray, slot: np.ndarray, max_slots: tuple[int, int]) -> np.ndarray:
    """[n] positional input slot of each infostate: its slot, plus K1max for player 2's."""
    return slot + np.where(player == 1, max_slots[0], 0)


def feature_dim(
    public_dim: int,
    private_dim: int,
    reach_feature: bool = False,
    opponent_feature: bool = False,
    rollout_feature: bool = False,
) -> int:
    """Width of a particle's feature vector: Fp + Fq + 2 (+ Fq with the mean opponent features, + 1 with the
    rollout value, + 1 with the reach)."""
    extra = private_dim * int(opponent_feature) + int(rollout_feature) + int(reach_feature)
    return public_dim + private_dim + PLAYER_FEATURES + extra


def infostate_row_features(
    public: np.ndarray,
    private: np.ndarray,
    player: np.ndarray,
    reach: np.ndarray | None = None,
    opponent: np.ndarray | None = None,
    rollout: np.ndarray | None = None,
) -> np.ndarray:
    """[n, Fp + Fq + 2 (+ Fq) (+ 1) (+ 1)] float32 feature vector of each particle:
    [public, private, player one-hot (, mean opponent features) (, mean rollout value) (, reach)].

    public: [n, Fp] its public state's features; private: [n, Fq]; player: [n] 0 or 1;
    reach: [n] its counterfactual reach as the net sees it (`normalized_rows`), or None;
    opponent: [n, Fq] its mean opponent features, or None;
    rollout: [n] its mean rollout value (`rollout_means`), or None.
    """
    parts = [
        public.astype(np.float32, copy=False),
        private.astype(np.float32, copy=False),
        np.eye(2, dtype=np.float32)[player],
    ]
    if opponent is not None:
        parts.append(opponent.astype(np.float32, copy=False))
    if rollout is not None:
        parts.append(np.asarray(rollout, dtype=np.float32)[:, None])
    if reach is not None:
        parts.append(np.asarray(reach, dtype=np.float32)[:, None])
    return np.concatenate(parts, axis=1)


def positions(counts: np.ndarray) -> np.ndarray:
    """[Σ counts] position of each element within its group, for groups of `counts: [B]` back to back."""
    return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


def rollout_means(rows: PbsRows) -> np.ndarray:
    """[n] each row's mean rollout value cf_rollout / cf_reach (0 where its reach is 0): unchanged by scaling."""
    value, reach = rows["cf_rollout"].astype(np.float64), rows["cf_reach"].astype(np.float64)
    return np.divide(value, reach, out=np.zeros_like(value), where=reach > 0)


def normalized_rows(
    rows: PbsRows, normalize: bool, reach: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(beliefs [n], targets [n], counterfactual reach [n] or None) as the nets see them: beliefs
    normalised per PBS and player, targets and reach divided by the opponent's mass (`normalize`),
    or as they are; the reach only if asked (`reach`)."""
    belief, target = rows["belief"], rows["target"]
    cf_reach = rows["cf_reach"] if reach else None
    if not normalize:
        return belief, target, cf_reach
    sample = np.repeat(np.arange(len(rows["counts"])), rows["counts"])
    belief, scale = normalize_beliefs(belief, rows["player"], sample, len(rows["counts"]))
    divide = lambda x: np.divide(x, scale, out=np.zeros_like(x), where=scale > 0)  # noqa: E731
    return belief, divide(target), None if cf_reach is None else divide(cf_reach)
