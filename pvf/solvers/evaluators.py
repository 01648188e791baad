"""Leaf evaluators of a trunk: counterfactual values of the leaf infostates from their reaches.

Every evaluator implements `pvf.solvers.cfr_plus.LeafEvaluator`:
`evaluator(reach1 [B, J1], reach2 [B, J2]) -> (cfv1 [B, J1], cfv2 [B, J2])`
over all leaf public states of the trunk at once (the tree's enumeration
per leaf public state, concatenated). Values follow DESIGN.md: chance and
opponent reach included, own reach excluded, in the trunk payoff's scale.

- `ConstantEvaluator`: the same value (default 0) everywhere; the baseline
  a value function has to beat.
- `ExactEvaluator`: the oracle. The leaf subgames are solved exactly at the
  queried beliefs, all at once:
    1. At construction, one sequence game is built over all leaf histories,
       rooted at a chance node whose weights are the histories' weights in
       the trunk (chance reach, times the root's weight for sparse trunks).
       Leaf public states share no infostate, so this game is the disjoint
       union of the leaf subgames; its root sequences are the leaf
       infostates that have a history in the trunk.
    2. Per query, the leaf reaches become its root beliefs and one
       sequence-form LP (HiGHS) gives player 1's maximin realization plan
       x*; its dual multipliers are player 2's minimax plan y*.
    3. Player 1's values are its best-response counterfactual values
       against y*, player 2's against x*. They are the equilibrium values
       wherever a belief is positive (then Σ b₁·v₁ + Σ b₂·v₂ = 0), and the
       value of the best continuation where a player's own reach is zero,
       which is what that player's trunk regrets need.
  This is exact (no iteration count to tune) and cheaper than running
  CFR+ to convergence in every query: about 60 ms for all 54 leaf public
  states of the Leduc depth-7 trunk, so 100 trunk iterations take ~12 s.
- `CFRTargetEvaluator`: the same leaf game solved the way the dataset's
  targets are made (batched CFR+, average profile / last iterate / best
  response): how well a network that learned its targets perfectly would
  do (`pvf experiment leaf-targets`).
- `PositionalEvaluator` / `ParticleEvaluator`: a trained network. The
  batch for one query is built with precomputed index arrays: one gather
  turns the reaches into [B·L, K] (positional slots) or [B·L, N] (padded
  particles) network inputs, one forward pass evaluates every leaf PBS, and
  one gather / scatter puts the outputs back in leaf-infostate order.
  Beliefs given to the network are the reaches cfr_plus passes (own reach
  from the trunk's root), and its outputs are used as they are: for a trunk
  rooted at the initial state that is exactly the training convention.
  Trunks rooted elsewhere convert around the evaluator
  (`pvf.solvers.sparse_trunks.ScaledEvaluator`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from scipy.optimize import linprog

from pvf.errors import PvfError
from pvf.games.features import FeatureTables
from pvf.nets.mlp import single_thread
from pvf.nets.normalization import normalize_beliefs
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import SequenceGame, build_sequence_game
from pvf.solvers.sequence_ops import best_response_values
from pvf.solvers.trunk_exploitability import sequence_constraints
from pvf.solvers.trunk_solver import Trunk


class ConstantEvaluator:
    """Every leaf infostate valued `value` (default 0)."""

    def __init__(self, value: float = 0.0):
        self.value = float(value)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full_like(reach1, self.value), np.full_like(reach2, self.value)


class _LeafSubgames:
    """The union of a trunk's leaf subgames as one sequence game, for the solving evaluators.

    leaf_game: rooted at a chance node over the leaf histories, each weighted
        by its weight in the trunk; its root sequences are the leaf
        infostates that have a history in the trunk.
    root_position: per player [R_n] position of each of its root infostates among the
        trunk's leaf infostates (those without a history in the trunk get value 0).
    """

    def __init__(self, trunk: Trunk):
        game = trunk.game
        if not game.has_leaves:
            raise PvfError("this trunk reaches the end of the game: it has no leaves to evaluate")
        self.num_leaf_infostates = (len(game.leaf_infostates[0]), len(game.leaf_infostates[1]))
        leaves = trunk.leaf_histories()
        self.leaf_game = build_sequence_game(trunk.tree, root_histories=leaves, root_weights=trunk.history_weights(leaves))
        self.root_position = []
        for n in (0, 1):
            present = np.flatnonzero(game.leaf_parent[n] >= 0)
            order = present[np.argsort(game.leaf_infostates[n][present])]
            roots = self.leaf_game.players[n].root_infostates
            self.root_position.append(order[np.searchsorted(game.leaf_infostates[n][order], roots)])

    def root_beliefs(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The leaf game's root beliefs ([B, R1], [B, R2]) from the trunk's leaf reaches."""
        return reach1[:, self.root_position[0]], reach2[:, self.root_position[1]]

    def scatter(self, v1: np.ndarray, v2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Root values ([B, R1], [B, R2]) as leaf-infostate values ([B, J1], [B, J2])."""
        out = (np.zeros((v1.shape[0], self.num_leaf_infostates[0])), np.zeros((v2.shape[0], self.num_leaf_infostates[1])))
        out[0][:, self.root_position[0]] = v1
        out[1][:, self.root_position[1]] = v2
        return out

    def best_response_root_values(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each player's best-response root values against the other's realization plan.

        x: [S1, B], y: [S2, B] -> ([B, R1], [B, R2]).
        """
        g = self.leaf_game
        q1, _ = best_response_values(g.players[0], g.payoff @ y)
        q2, _ = best_response_values(g.players[1], -(g.payoff_t @ x))
        return q1[: g.players[0].num_roots].T, q2[: g.players[1].num_roots].T


class ExactEvaluator:
    """The oracle: leaf subgames solved exactly, by one LP per query and problem."""

    def __init__(self, trunk: Trunk):
        self.leaves = _LeafSubgames(trunk)
        self.lp = _MaximinLP(self.leaves.leaf_game)

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b1, b2 = self.leaves.root_beliefs(reach1, reach2)
        plans = [self.lp.solve(b1[b], b2[b]) for b in range(b1.shape[0])]
        x = np.stack([p[0] for p in plans], axis=1)  # [S1, B]
        y = np.stack([p[1] for p in plans], axis=1)  # [S2, B]
        return self.leaves.scatter(*self.leaves.best_response_root_values(x, y))


class CFRTargetEvaluator:
    """The leaf subgames solved as the dataset's targets are: CFR+ from the queried beliefs.

    All problems of a query in one batched `cfr_plus` call of `iterations`
    iterations; `target` picks the values: "average" (the average profile,
    pvf's training target), "current" (the last iterate, the authors') or
    "best_response" (each player's best response to the other's average).
    A perfect network trained on that target would play like this evaluator.
    """

    TARGETS = ("average", "current", "best_response")

    def __init__(self, trunk: Trunk, iterations: int = 100, target: str = "average"):
        if target not in self.TARGETS:
            raise PvfError(f"unknown target {target!r}; use one of {', '.join(self.TARGETS)}")
        self.leaves = _LeafSubgames(trunk)
        self.iterations = iterations
        self.target = target

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        result = cfr_plus(self.leaves.leaf_game, self.iterations, root_beliefs=self.leaves.root_beliefs(reach1, reach2))
        if self.target == "average":
            values = result.root_values
        elif self.target == "current":
            values = result.current_root_values
        else:
            x, y = result.average_realization
            values = self.leaves.best_response_root_values(x.T, y.T)
        return self.leaves.scatter(*values)


class _MaximinLP:
    """Equilibrium realization plans of a sequence game by one LP (von Stengel 1996).

    Variables: player 1's realization plan x [S1] ≥ 0 and free duals v [R2 + I2]
    of player 2's sequence constraints F·y = f (f = player 2's root beliefs).
    Maximise fᵀv subject to E·x = e (e = player 1's root beliefs) and
    Fᵀv ≤ Aᵀx. The multipliers of the inequalities are player 2's minimax
    realization plan y. The constraint matrices are built once; a solve only
    changes e and f.
    """

    def __init__(self, game: SequenceGame):
        p1, p2 = game.players
        E, F = sequence_constraints(p1), sequence_constraints(p2)
        self.sizes = (p1.num_sequences, F.shape[0], p1.num_roots, p2.num_roots)
        self.a_eq = sp.hstack([E, sp.csr_matrix((E.shape[0], F.shape[0]))]).tocsr()
        self.a_ub = sp.hstack([-game.payoff.T, F.T]).tocsr()
        self.b_ub = np.zeros(p2.num_sequences)
        self.bounds = np.zeros((p1.num_sequences + F.shape[0], 2))
        self.bounds[:, 1] = np.inf
        self.bounds[p1.num_sequences :, 0] = -np.inf

    def solve(self, b1: np.ndarray, b2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x [S1], y [S2]) equilibrium realization plans for root beliefs b1 [R1], b2 [R2]."""
        S1, V, R1, R2 = self.sizes
        b_eq = np.zeros(self.a_eq.shape[0])
        b_eq[:R1] = b1
        c = np.zeros(S1 + V)
        c[S1 : S1 + R2] = -b2
        res = linprog(c, A_ub=self.a_ub, b_ub=self.b_ub, A_eq=self.a_eq, b_eq=b_eq, bounds=self.bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"leaf subgame LP failed: {res.message}")
        return np.maximum(res.x[:S1], 0.0), np.maximum(-res.ineqlin.marginals, 0.0)


class _LeafLayout:
    """Index arrays of a trunk's leaves, shared by the network evaluators.

    The reaches of a query are concatenated into one row per problem,
    [B, J1 + J2 + 1] (the last column 0, the target of padding indices).
    public: [L, Fp] public features of each leaf public state.
    block: per player [J_n] leaf public state of each leaf infostate.
    slot: per player [J_n] position in its public state's enumeration.
    present: per player [J_n] bool, the infostate has a history in the trunk.
    normalize: the net was trained on normalised beliefs and scaled values
        (`pvf.nets.normalization`): queries are normalised per leaf public
        state and player, and values multiplied back by the opponent's mass.
    """

    def __init__(self, trunk: Trunk, features: FeatureTables, normalize: bool = False):
        game = trunk.game
        self.normalize = normalize
        L = len(game.leaf_public_states)
        self.num_leaves = L
        self.sizes = (len(game.leaf_infostates[0]), len(game.leaf_infostates[1]))
        self.pad = self.sizes[0] + self.sizes[1]
        self.public = features.public[game.leaf_public_states]
        self.block, self.slot, self.present = [], [], []
        for n in (0, 1):
            counts = np.diff(game.leaf_offsets[n])
            block = np.repeat(np.arange(L), counts)
            self.block.append(block)
            self.slot.append(np.arange(self.sizes[n]) - game.leaf_offsets[n][block])
            self.present.append(game.leaf_parent[n] >= 0)

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

    def split(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Inverse of `flat`: ([B, J1], [B, J2])."""
        return flat[:, : self.sizes[0]], flat[:, self.sizes[0] : self.pad]


class _NetworkEvaluator:
    """A torch network queried without gradients, single-threaded (leaf batches are small)."""

    @torch.inference_mode()
    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with single_thread():
            return self._evaluate(reach1, reach2)

    def _evaluate(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


class PositionalEvaluator(_NetworkEvaluator):
    """A positional network at the leaves.

    max_slots: (K1, K2) the network's slots per player (its training data's
        layout): player 1's infostate in slot k of its public state goes to
        input slot k, player 2's to K1 + k. Unused slots hold belief 0 and
        their outputs are ignored.
    gather: [L, K] column of the flat reaches feeding each input slot (unused: the zero column).
    scatter: [J1 + J2] index of each leaf infostate's value in the flattened [L·K] output.
    """

    def __init__(
        self, trunk: Trunk, net: torch.nn.Module, features: FeatureTables, max_slots: tuple[int, int], normalize: bool = False
    ):
        layout = _LeafLayout(trunk, features, normalize)
        for n in (0, 1):
            if layout.slot[n].size and layout.slot[n].max() >= max_slots[n]:
                raise PvfError(
                    f"a leaf public state has {int(layout.slot[n].max()) + 1} infostates of player {n + 1}; "
                    f"the positional network has {max_slots[n]} slots for them"
                )
        K = max_slots[0] + max_slots[1]
        slot = np.concatenate([layout.slot[0], max_slots[0] + layout.slot[1]])
        block = np.concatenate(layout.block)
        # input[l, k] = flat[gather[l, k]]; leaf infostate j's value is output[l(j) * K + slot(j)].
        gather = np.full((layout.num_leaves, K), layout.pad, dtype=np.int64)
        gather[block, slot] = np.arange(layout.pad)
        self.layout = layout
        self.gather = gather
        self.scatter = block * K + slot
        self.net = net
        self.device = _device(net)
        self.public = torch.from_numpy(layout.public).to(self.device)

    def _evaluate(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flat, scale = self.layout.flat(reach1, reach2)
        B, (L, K) = flat.shape[0], self.gather.shape
        beliefs = torch.from_numpy(flat[:, self.gather].reshape(B * L, K).astype(np.float32)).to(self.device)
        values = self.net(beliefs, _tile(self.public, B)).reshape(B, L * K).double().cpu().numpy()[:, self.scatter]
        if scale is not None:
            values *= scale
        return self.layout.split(np.concatenate([values, np.zeros((B, 1))], axis=1))


class ParticleEvaluator(_NetworkEvaluator):
    """A particle network at the leaves: one particle per leaf infostate with a history in the trunk.

    Particle features are [public features, private features, player one-hot].
    gather: [L, N] column of the flat reaches feeding each particle slot (padding: the zero column).
    mask: [L, N] bool, real particles.
    features: [L, N, Fp + Fq + 2] their feature vectors (constant for the trunk).
    scatter: (output index [P], flat column [P]) of the P particles.
    """

    def __init__(self, trunk: Trunk, net: torch.nn.Module, features: FeatureTables, normalize: bool = False):
        layout = _LeafLayout(trunk, features, normalize)
        L = layout.num_leaves
        # Particles of each leaf public state: player 1's present infostates, then player 2's.
        index = np.flatnonzero(np.concatenate(layout.present))
        block = np.concatenate(layout.block)[index]
        order = np.argsort(block, kind="stable")
        index, block = index[order], block[order]
        counts = np.bincount(block, minlength=L)
        N = int(counts.max()) if len(counts) else 0
        position = np.arange(len(index)) - np.concatenate([[0], np.cumsum(counts)[:-1]])[block]
        gather = np.full((L, N), layout.pad, dtype=np.int64)
        gather[block, position] = index
        player = (index >= layout.sizes[0]).astype(np.int64)
        private = np.empty((len(index), features.private_dim), dtype=np.float32)
        for n, offset in ((0, 0), (1, layout.sizes[0])):
            mine = player == n
            private[mine] = features.private[n][trunk.game.leaf_infostates[n][index[mine] - offset]]
        rows = np.concatenate([layout.public[block], private, np.eye(2, dtype=np.float32)[player]], axis=1)
        feats = np.zeros((L, N, rows.shape[1]), dtype=np.float32)
        feats[block, position] = rows
        self.layout = layout
        self.gather = gather
        self.scatter = (block * N + position, index)
        self.net = net
        self.device = _device(net)
        self.mask = torch.from_numpy(gather < layout.pad).to(self.device)
        self.features = torch.from_numpy(feats).to(self.device)
        self.public = torch.from_numpy(layout.public).to(self.device)

    def _evaluate(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flat, scale = self.layout.flat(reach1, reach2)
        B, (L, N) = flat.shape[0], self.gather.shape
        beliefs = torch.from_numpy(flat[:, self.gather].reshape(B * L, N).astype(np.float32)).to(self.device)
        values = self.net(beliefs, _tile(self.features, B), _tile(self.public, B), _tile(self.mask, B))
        values = values.reshape(B, L * N).double().cpu().numpy()
        out = np.zeros_like(flat)
        out[:, self.scatter[1]] = values[:, self.scatter[0]]
        if scale is not None:
            out[:, : self.layout.pad] *= scale
        return self.layout.split(out)


def _device(net: torch.nn.Module) -> torch.device:
    """The device of the network's parameters (CPU for a parameterless stand-in)."""
    param = next(net.parameters(), None)
    return param.device if param is not None else torch.device("cpu")


def _tile(t: torch.Tensor, times: int) -> torch.Tensor:
    """`t` repeated `times` along its first axis (itself, uncopied, once)."""
    return t if times == 1 else t.repeat(times, *([1] * (t.dim() - 1)))
