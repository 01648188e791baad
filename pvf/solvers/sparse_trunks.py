"""Sparse trunks (paper, sec. 6 and fig. 4): roots from the equilibrium's support, or from K particles.

The setting, `sparse_setting(tree, root_move, depth)`:
  1. π* = the average strategy of full-game CFR+ (default 1,000 iterations).
     CFR+ averages never reach exact zeros, so actions π* plays with
     probability below `support_threshold` (default 1e-3) count as not
     played: π*'s support is where no such action lies on the path.
  2. The root histories are the non-terminal histories at move number
     `root_move` (Leduc 5: 330 of them; Goofspiel-5 2: 400, the first turn
     of the round). Each weighs w(h) = π_c(h)·π*₁(h)·π*₂(h); those in π*'s
     support are kept (Leduc: 290, as the authors; Goofspiel-5: 102 with
     1,000 iterations, 87 with 2,000, 67 with 64,000, where the authors
     report 60; `pvf/experiments/support_size.py`).
  3. The evaluation trunk is rooted at a chance node over all support
     histories with weights w (π* made common knowledge, no gadget, weights
     not renormalised) and has its leaves at move number `depth`; trunk
     exploitability is always measured in it, on the full support.

Particle roots, `particle_setting(tree, particles, weights, own_reach, ...)`:
  the same setting from K given root histories instead of π*'s support:
  particles of a `pvf.games.particle_tree` tree (or of any PublicTree), each
  with its weight w = π_c·π₁·π₂ under a stated reference profile and each
  player's own reach π_n under it. Everything below runs unchanged: the
  evaluation trunk is the chance node over all K particles down to the end
  of the game the tree holds, and trunk exploitability is measured in that
  particle-restricted game. A sparse trunk and a particle trunk differ in
  their roots, not in what is measured.

One point of the sweep, `solve_sparse_trunk(setting, kept, ...)`:
  4. `select_histories` keeps the heaviest ⌈fraction·N⌉ support histories
     (ties in an order drawn from `seed`), or the `count` heaviest histories
     where a player acts (the sweep's last point: 1 in Goofspiel, 2 in Leduc).
  5. The sparse trunk is rooted at a chance node over the kept histories with
     their weights w. Its leaf infostates with a kept history below them are
     the particles; the others have reach 0 and are not shown to a network.
  6. CFR+ solves the sparse trunk; a network's evaluator is wrapped in
     `ScaledEvaluator` (below), the exact oracle needs no conversion.
  7. Its average strategy is copied to the evaluation trunk; trunk
     infostates the sparse trunk lacks play uniformly; infostates below the
     trunk are left to the exploitability LP. Two figures are reported:
     `exploitability` fixes every trunk infostate (the paper's definition
     of trunk exploitability, app. F), `root_exploitability` fixes only the
     infostates at the root move and leaves the rest of the trunk free, as
     the authors' code did. They coincide in Goofspiel (the trunk is one
     round); in Leduc (moves 5 and 6) the second is the authors' figure:
     uniform 0.0796 in the OpenSpiel convention against their 0.0794, while
     the whole-trunk uniform figure is 0.373.

Beliefs and values at the leaves (`leaf_scales`). The network was trained
on beliefs b_n(s) = player n's own reach of s from the game root, and on
values v_n(s) = Σ_{h∈s} π_c(h)·π_{-n}(h)·u_n(h) with chance and opponent
reach also from the game root. In the chance-node trunk, a leaf history h
below root history h₀ weighs w(h₀)·π_c(h₀→h)·ρ₁(h)·ρ₂(h), where ρ_n is
player n's reach from the root, the reach cfr_plus passes the evaluator.
Since w(h₀) = π_c(h₀)·π*₁(h₀)·π*₂(h₀), this is π_c(h)·B₁(h)·B₂(h) with
B_n(h) = π*_n(h₀)·ρ_n(h) the own reach from the game root. By perfect
recall π*_n(h₀) is the same for every history of a leaf infostate s (its
own history before the root move), call it σ_n(s). Hence
  - the network's beliefs are b_n(s) = σ_n(s)·ρ_n(s);
  - the trunk's value is Σ_{h∈s} w(h₀)·π_c(h₀→h)·ρ_{-n}(h)·u_n(h)
    = σ_n(s)·v_n(s), the network's value times σ_n(s).
Both conversions multiply by σ_n(s) (1 when the root is the initial state
or right after the deals, where no player has acted). With only some root
histories kept, the network sees the PBS its particles induce (beliefs per
infostate, paper sec. 5.1), which may contain histories the sparse trunk
lacks: that is the particle approximation being measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvf.errors import PvfError
from pvf.games.public_tree import TERMINAL, PublicTree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import LeafEvaluator, Solver
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.sequence_ops import realization_plan
from pvf.solvers.trunk_exploitability import (
    TrunkExploitability,
    transfer_strategy,
    trunk_exploitability,
    trunk_infostate_mask,
)
from pvf.solvers.trunk_solver import DEFAULT_ITERATIONS, Trunk, build_trunk, solve_trunk

DEFAULT_EQUILIBRIUM_ITERATIONS = 1000
DEFAULT_SUPPORT_THRESHOLD = 1e-3


@dataclass(frozen=True, eq=False)
class SparseSetting:
    """π*, the support histories at the root move, and the evaluation trunk.

    histories: [N] root histories in π*'s support (tree indices, ascending).
    weights: [N] π_c·π*₁·π*₂ of each.
    own_reach: [N, 2] π*_n of each (player n's own reach from the game root).
    player_node: [N] bool, a player acts at the history (not chance).
    evaluation: the trunk rooted at all N histories; exploitability is measured in it.
    root_masks: per player [I_n] bool over `evaluation.full`: infostates at the root move.
    num_root_histories: non-terminal histories at the root move, in the support or not.
    """

    tree: PublicTree
    root_move: int
    depth: int
    histories: np.ndarray
    weights: np.ndarray
    own_reach: np.ndarray
    player_node: np.ndarray
    evaluation: Trunk
    root_masks: tuple[np.ndarray, np.ndarray]
    num_root_histories: int

    @property
    def num_histories(self) -> int:
        return len(self.histories)


# A leaf evaluator for the sparse trunks of a setting: setting -> (trunk -> LeafEvaluator).
LeafFactory = Callable[[SparseSetting], Callable[[Trunk], LeafEvaluator]]


@dataclass(frozen=True)
class SparseResult:
    """One sparse trunk, solved and evaluated.

    kept: [k] indices into `setting.histories` of the root histories used.
    strategies: per player [S_n] the average strategy on the sparse trunk's sequences.
    exploitability: trunk exploitability in the evaluation trunk (NashConv convention).
    root_exploitability: the same with only the root move's infostates fixed (the authors').
    """

    kept: np.ndarray
    strategies: tuple[np.ndarray, np.ndarray]
    exploitability: TrunkExploitability
    root_exploitability: TrunkExploitability


def sparse_setting(
    tree: PublicTree,
    root_move: int,
    depth: int,
    equilibrium_iterations: int = DEFAULT_EQUILIBRIUM_ITERATIONS,
    support_threshold: float = DEFAULT_SUPPORT_THRESHOLD,
) -> SparseSetting:
    """Steps 1–3 of the module docstring."""
    if not 0.0 <= support_threshold < 1.0:
        raise PvfError(f"the support threshold must lie in [0, 1), got {support_threshold}")
    public_states = tree.public_states_at_depth(root_move)
    roots = np.flatnonzero(np.isin(tree.public_state, public_states) & (tree.player != TERMINAL))
    if len(roots) == 0:
        raise PvfError(f"{tree.game_string} has no non-terminal history at move {root_move}")
    full = build_sequence_game(tree)
    result = cfr_plus(full, equilibrium_iterations)
    reach = []
    for n in (0, 1):
        strategy = result.average_strategy[n][0].copy()
        R = full.players[n].num_roots
        strategy[R:][strategy[R:] < support_threshold] = 0.0
        plan = realization_plan(full.players[n], strategy[:, None], np.ones((R, 1)))[:, 0]
        reach.append(plan[full.history_seq[roots, n]])  # the full game holds every history, in order
    own = np.stack(reach, axis=1)
    weights = tree.chance_reach[roots] * own[:, 0] * own[:, 1]
    support = weights > 0
    if not np.any(support):
        raise PvfError("no root history is in the equilibrium's support; lower the support threshold")
    histories = roots[support]
    evaluation = build_trunk(tree, depth, root_histories=histories, root_weights=weights[support])
    return SparseSetting(
        tree=tree,
        root_move=root_move,
        depth=depth,
        histories=histories,
        weights=weights[support],
        own_reach=own[support],
        player_node=tree.player[histories] >= 0,
        evaluation=evaluation,
        root_masks=trunk_infostate_mask(evaluation.full, root_move + 1),
        num_root_histories=len(roots),
    )


def particle_setting(
    tree: PublicTree,
    particles: np.ndarray,
    weights: np.ndarray,
    own_reach: np.ndarray,
    root_move: int,
    depth: int,
) -> SparseSetting:
    """The sparse setting of K given particles.

    particles: [K] distinct non-terminal tree histories at move number `root_move`.
    weights: [K] positive weights π_c·π₁·π₂ (not renormalised).
    own_reach: [K, 2] each player's own reach π_n of each particle (the leaf-scale σ_n).
    depth: move number of the trunk's leaves.
    """
    particles = np.asarray(particles, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    own_reach = np.asarray(own_reach, dtype=np.float64)
    K = len(particles)
    if K == 0 or weights.shape != (K,) or own_reach.shape != (K, 2):
        raise PvfError(f"particles ({K}), weights {weights.shape} and own reach {own_reach.shape} do not match")
    if np.any(tree.depth[particles] != root_move) or np.any(tree.player[particles] == TERMINAL):
        raise PvfError(f"every particle must be a non-terminal history at move {root_move}")
    if not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise PvfError("particle weights must be finite and positive")
    order = np.argsort(particles)
    particles, weights, own_reach = particles[order], weights[order], own_reach[order]
    evaluation = build_trunk(tree, depth, root_histories=particles, root_weights=weights)
    return SparseSetting(
        tree=tree,
        root_move=root_move,
        depth=depth,
        histories=particles,
        weights=weights,
        own_reach=own_reach,
        player_node=tree.player[particles] >= 0,
        evaluation=evaluation,
        root_masks=trunk_infostate_mask(evaluation.full, root_move + 1),
        num_root_histories=K,
    )


def select_histories(
    setting: SparseSetting, fraction: float | None = None, count: int | None = None, seed: int = 0
) -> np.ndarray:
    """[k] indices of the kept support histories, heaviest first.

    fraction: keep the ⌈fraction·N⌉ heaviest of all N support histories.
    count: instead, keep the `count` heaviest histories where a player acts.
    seed: orders histories of equal weight (to 1e-9 relative).
    """
    if (fraction is None) == (count is None):
        raise PvfError("select histories by a fraction or by a count, not both")
    rng = np.random.default_rng(seed)
    candidates = np.arange(setting.num_histories)
    if count is not None:
        candidates = candidates[setting.player_node]
        k = count
    else:
        if not 0.0 < fraction <= 1.0:
            raise PvfError(f"fractions must lie in (0, 1], got {fraction}")
        k = math.ceil(fraction * setting.num_histories - 1e-9)
    if not 1 <= k <= len(candidates):
        raise PvfError(f"cannot keep {k} of {len(candidates)} candidate histories")
    shuffled = rng.permutation(candidates)
    key = np.round(setting.weights[shuffled] / setting.weights.max(), 9)
    return shuffled[np.argsort(-key, kind="stable")][:k]


def sparse_trunk(setting: SparseSetting, kept: np.ndarray) -> Trunk:
    """The trunk rooted at a chance node over the kept histories, weights not renormalised."""
    kept = np.sort(np.asarray(kept, dtype=np.int64))
    return build_trunk(
        setting.tree, setting.depth, root_histories=setting.histories[kept], root_weights=setting.weights[kept]
    )


def normalized_setting(setting: SparseSetting) -> SparseSetting:
    """A particle setting with its weights divided by their sum: the game whose chance node draws its root
    histories with those probabilities (where a particle trunk's exploitability is measured)."""
    s = setting
    return particle_setting(s.tree, s.histories, s.weights / s.weights.sum(), s.own_reach, s.root_move, s.depth)


def leaf_scales(setting: SparseSetting, trunk: Trunk) -> tuple[np.ndarray, np.ndarray]:
    """Per player [J_n] σ_n(s): π*_n of the root history above each leaf infostate (1 if none)."""
    tree = trunk.tree
    leaves = trunk.leaf_histories()
    own = np.ones((tree.num_histories, 2))
    own[setting.histories] = setting.own_reach
    above = trunk.root_ancestors(leaves)
    out = []
    for n in (0, 1):
        infos = trunk.game.leaf_infostates[n]
        position = np.full(tree.num_infostates(n), -1, dtype=np.int64)
        position[infos] = np.arange(len(infos))
        scale = np.ones(len(infos))
        scale[position[tree.infostate[leaves, n]]] = own[above, n]
        out.append(scale)
    return out[0], out[1]


class ScaledEvaluator:
    """A game-root-convention evaluator used in a chance-node trunk (module docstring).

    scales: per player [J_n] σ_n(s); beliefs and values are both multiplied by it.
    """

    def __init__(self, inner: LeafEvaluator, scales: tuple[np.ndarray, np.ndarray]):
        self.inner = inner
        self.scales = scales

    def __call__(self, reach1: np.ndarray, reach2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s1, s2 = self.scales
        v1, v2 = self.inner(reach1 * s1, reach2 * s2)
        return v1 * s1, v2 * s2


def evaluation_strategies(
    setting: SparseSetting, trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Per player [S_eval] a sparse trunk's strategy on the evaluation game, uniform where it has none."""
    ev = setting.evaluation.full
    out = []
    for n in (0, 1):
        seqs = ev.players[n]
        mapped = transfer_strategy(trunk.game, ev, n, strategies[n])
        uniform = 1.0 / seqs.info_size[seqs.seq_info[seqs.num_roots :]]
        rest = mapped[seqs.num_roots :]
        mapped[seqs.num_roots :] = np.where(np.isnan(rest), uniform, rest)
        out.append(mapped)
    return out[0], out[1]


def sparse_exploitability(
    setting: SparseSetting, trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray], root_only: bool = False
) -> TrunkExploitability:
    """Trunk exploitability, in the evaluation trunk, of a sparse trunk's strategy (per player [S_n]).

    root_only: fix only the root move's infostates (the authors' evaluation), not the whole trunk.
    """
    ev = setting.evaluation
    masks = setting.root_masks if root_only else ev.masks
    return trunk_exploitability(ev.full, evaluation_strategies(setting, trunk, strategies), masks, ev.root_beliefs)


def uniform_exploitability(setting: SparseSetting, root_only: bool = False) -> TrunkExploitability:
    """Trunk exploitability of the uniform trunk strategy in the evaluation trunk (the plot's reference line)."""
    return sparse_exploitability(setting, setting.evaluation, no_strategy(setting.evaluation), root_only)


def no_strategy(trunk: Trunk) -> tuple[np.ndarray, np.ndarray]:
    """Per player [S_n] NaN: a trunk strategy that `evaluation_strategies` turns into the uniform one."""
    return np.full(trunk.game.players[0].num_sequences, np.nan), np.full(trunk.game.players[1].num_sequences, np.nan)


def sparse_trunk_strategy(
    setting: SparseSetting,
    kept: np.ndarray,
    make_evaluator: Callable[[Trunk], LeafEvaluator],
    iterations: int = DEFAULT_ITERATIONS,
    game_root_convention: bool = True,
    solver: Solver = cfr_plus,
) -> tuple[Trunk, tuple[np.ndarray, np.ndarray]]:
    """Steps 5–6: the sparse trunk over the `kept` roots and its CFR+ strategy (per player [S_n]; another
    `solver`'s solution, e.g. MMD's last iterate, where given).

    make_evaluator: builds the leaf evaluator of a trunk.
    game_root_convention: its beliefs and values are the game root's (a
        network trained on the full trunk's data): wrap it in `ScaledEvaluator`.
        False for evaluators built in the trunk's own convention (`ExactEvaluator`).
    """
    trunk = sparse_trunk(setting, kept)
    evaluator = None
    if trunk.game.has_leaves:
        evaluator = make_evaluator(trunk)
        if game_root_convention:
            evaluator = ScaledEvaluator(evaluator, leaf_scales(setting, trunk))
    return trunk, solve_trunk(trunk, evaluator, iterations, solver=solver)


def solve_sparse_trunk(
    setting: SparseSetting,
    kept: np.ndarray,
    make_evaluator: Callable[[Trunk], LeafEvaluator],
    iterations: int = DEFAULT_ITERATIONS,
    game_root_convention: bool = True,
) -> SparseResult:
    """Steps 5–7: build the sparse trunk, solve it (`sparse_trunk_strategy`), evaluate its strategy."""
    trunk, strategies = sparse_trunk_strategy(setting, kept, make_evaluator, iterations, game_root_convention)
    return SparseResult(
        kept=np.sort(np.asarray(kept)),
        strategies=strategies,
        exploitability=sparse_exploitability(setting, trunk, strategies),
        root_exploitability=sparse_exploitability(setting, trunk, strategies, root_only=True),
    )
