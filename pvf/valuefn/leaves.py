"""The leaves of a trunk as the PBSs a value network evaluates (numpy index arrays, built once).

A trunk query hands over the reaches of every leaf infostate of both
players, `reach1 [B, J1]` and `reach2 [B, J2]` (B problems, leaf public
states one after another in the tree's enumeration). `TrunkLeaves`
concatenates them into one row per problem, `flat [B, J1 + J2 + 1]` (the
last column is 0: the target of padding indices), normalises them per leaf
public state and player when the net was trained so
(`pvf.valuefn.encoding.normalize_beliefs`), and splits values back. What
the architecture gathers from `flat` into its inputs is its own business
(`Architecture.leaf_encoder`).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from pvf.games.features import FeatureTables
from pvf.games.loading import load_game
from pvf.games.rollouts import history_paths, play_values, rollout_rules
from pvf.solvers.counterfactual_reach import CounterfactualReach
from pvf.solvers.trunk_solver import Trunk
from pvf.valuefn.encoding import normalize_beliefs


class TrunkLeaves:
    """Index arrays of a trunk's leaves, shared by every architecture.

    trunk: as given.

    num_leaves: L leaf public states.
    sizes: (J1, J2) leaf infostates per player; pad = J1 + J2, the zero column of `flat`.
    public: [L, Fp] public features of each leaf public state.
    block: per player [J_n] leaf public state of each leaf infostate.
    slot: per player [J_n] position in its public state's enumeration (the trunk tree's, or the
        given `slots`: e.g. the enumerated tree's, for a positional net at a particle tree's leaves).
    present: per player [J_n] bool, the infostate has a history in the trunk.
    private: per player [J_n, Fq] private features of each leaf infostate.
    normalize: queries are normalised per leaf public state and player, and
        values multiplied back by the opponent's mass.
    reach: the leaf infostates' `CounterfactualReach`, built on first use (only nets that take the
        reach or the mean opponent features ask: `cf_reach`, `cf_opponent`).
    """

    def __init__(
        self,
        trunk: Trunk,
        features: FeatureTables,
        normalize: bool = False,
        slots: tuple[np.ndarray, np.ndarray] | None = None,
    ):
        self.trunk = trunk
        game = trunk.game
        self.normalize = normalize
        L = len(game.leaf_public_states)
        self.num_leaves = L
        self.sizes = (len(game.leaf_infostates[0]), len(game.leaf_infostates[1]))
        self.pad = self.sizes[0] + self.sizes[1]
        self.public = features.public[game.leaf_public_states]
        self.block, self.slot, self.present, self.private = [], [], [], []
        for n in (0, 1):
            counts = np.diff(game.leaf_offsets[n])
            block = np.repeat(np.arange(L), counts)
            self.block.append(block)
            self.slot.append(
                np.arange(self.sizes[n]) - game.leaf_offsets[n][block] if slots is None else np.asarray(slots[n])
            )
            self.present.append(game.leaf_parent[n] >= 0)
            self.private.append(features.private[n][game.leaf_infostates[n]])
        self._rollout: tuple[tuple[str, int, float], CounterfactualReach] | None = None  # `rollout_means`' values

    @cached_property
    def reach(self) -> CounterfactualReach:
        return _leaf_reach(self.trunk, self.sizes)

    def flat(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The net's beliefs [B, J1 + J2 + 1] in one row per problem (a zero at the
        end), and the scale [B, J1 + J2] of each infostate's value (None: raw values)."""
        B = reach1.shape[0]
        flat = np.concatenate([reach1, reach2, np.zeros((B, 1))], axis=1)
        if not self.normalize:
            return flat, None
        player = np.repeat([0, 1], self.sizes)
        group = np.arange(B)[:, None] * self.num_leaves + np.concatenate(self.block)[None, :]
        beliefs, scale = normalize_beliefs(
            flat[:, : self.pad].ravel(), np.tile(player, B), group.ravel(), B * self.num_leaves
        )
        flat[:, : self.pad] = beliefs.reshape(B, self.pad)
        return flat, scale.reshape(B, self.pad)

    def cf_reach(self, flat: np.ndarray) -> np.ndarray:
        """[B, J1 + J2 + 1] the counterfactual reach of each column of `flat` (its beliefs; 0 in the last)."""
        c1, c2 = self.reach(flat[:, : self.sizes[0]], flat[:, self.sizes[0] : self.pad])
        return np.concatenate([c1, c2, np.zeros((flat.shape[0], 1))], axis=1)

    def cf_opponent(self, flat: np.ndarray) -> np.ndarray:
        """[B, J1 + J2 + 1, Fq] the mean opponent features of each column of `flat` (its beliefs; 0 in the last)."""
        q1, q2 = self.reach.opponent_features(
            flat[:, : self.sizes[0]], flat[:, self.sizes[0] : self.pad], *self.private
        )
        return np.concatenate([q1, q2, np.zeros((flat.shape[0], 1, q1.shape[2]))], axis=1)

    def rollout_means(self, flat: np.ndarray, game: str, depth: int, greed: float) -> np.ndarray:
        """[B, J1 + J2 + 1] each column's mean value of greed-β random play from its leaf histories under the
        opponent's beliefs in `flat` (0 in the last; `CounterfactualReach.history_means`); the histories' exact
        values (`pvf.games.rollouts`, for `game` with leaves at move `depth`) are weighed in once per trunk."""
        if self._rollout is None or self._rollout[0] != (game, depth, greed):
            rules = rollout_rules(load_game(game), depth, "rollout inputs")
            paths = history_paths(self.trunk.tree, self.trunk.leaf_histories())
            self._rollout = (game, depth, greed), self.reach.valued(play_values(rules, paths, None, greed=greed))
        u1, u2 = self.reach.history_means(flat[:, : self.sizes[0]], flat[:, self.sizes[0] : self.pad], self._rollout[1])
        return np.concatenate([u1, u2, np.zeros((flat.shape[0], 1))], axis=1)

    def split(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Values [B, ≥ J1 + J2] in `flat`'s columns as ([B, J1], [B, J2])."""
        return values[:, : self.sizes[0]], values[:, self.sizes[0] : self.pad]


def _leaf_reach(trunk: Trunk, sizes: tuple[int, int]) -> CounterfactualReach:
    """The counterfactual reach over the trunk's leaf histories, in leaf-infostate columns."""
    tree, game = trunk.tree, trunk.game
    histories = trunk.leaf_histories()
    columns = []
    for n in (0, 1):
        column = np.full(tree.num_infostates(n), -1, dtype=np.int64)
        column[game.leaf_infostates[n]] = np.arange(sizes[n])
        columns.append(column[tree.infostate[histories, n]])
    return CounterfactualReach((columns[0], columns[1]), tree.chance_reach[histories], sizes)
