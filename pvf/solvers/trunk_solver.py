"""Depth-limited trunk solving and the trunk exploitability of its strategy.

A trunk Tr(β, d) is the part of the subgame G(β) above move number d; its
leaves are the public states at move number d, valued by a leaf evaluator
(pvf.solvers.evaluators: a network, the exact oracle or a constant). One
solve:
  1. `build_trunk` builds the depth-limited sequence game of the trunk and
     the same subgame solved to the end (the game trunk exploitability is
     measured in), with the trunk infostate masks (move number < d) and the
     index map from the full game's sequences to the trunk's.
  2. `solve_trunk` runs CFR+ on the trunk (default 100 iterations, paper
     app. F); every iteration queries the evaluator with the current
     iterate's leaf reaches, all leaf public states in one call (twice per
     iteration: cfr_plus updates the players alternately). The trunk
     strategy is the average strategy. `solver=get_solver("mmd")` runs
     MMD instead (one query per iteration; its last iterate is the strategy).
  3. `evaluate_trunk` transfers that strategy to the full subgame and
     computes trunk exploitability exactly by LP
     (`pvf.solvers.trunk_exploitability`), NashConv convention.

The root is a PBS at a public state (default: the initial state, beliefs
1), or a chance node over chosen histories with given weights (sparse
trunks, `pvf.solvers.sparse_trunks`): each history's weight replaces its
reach and all root beliefs are 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pvf.errors import PvfError, check_argument
from pvf.games.public_tree import TERMINAL, PublicTree, build_public_tree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.interface import LeafEvaluator, Solver
from pvf.solvers.sequence_form import SequenceGame, build_sequence_game
from pvf.solvers.tabular import TabularPolicy, to_tabular
from pvf.solvers.trunk_exploitability import (
    TrunkExploitability,
    transfer_strategy,
    trunk_exploitability,
    trunk_infostate_mask,
)

DEFAULT_ITERATIONS = 100


@dataclass(frozen=True, eq=False)
class Trunk:
    """A depth-limited trunk, and the subgame its exploitability is measured in.

    tree: the public tree.
    depth: move number of the leaves.
    game: the depth-limited sequence game (leaves at move number `depth`).
    full: the same root without a depth limit.
    masks: per player [I_n] bool over `full`'s decision infostates: the trunk's.
    root_beliefs: (b1 [R1], b2 [R2]) root beliefs (all 1 at a chance-node root).
    root_histories: [H0] the root histories.
    root_weights: [H0] their weights (their chance reach at a public-state root).
    sequence_map: per player [S_full] the trunk sequence of each of `full`'s
        sequences, -1 where the trunk has none (below the leaves).
    """

    tree: PublicTree
    depth: int
    game: SequenceGame
    full: SequenceGame
    masks: tuple[np.ndarray, np.ndarray]
    root_beliefs: tuple[np.ndarray, np.ndarray]
    root_histories: np.ndarray
    root_weights: np.ndarray
    sequence_map: tuple[np.ndarray, np.ndarray]

    def root_ancestors(self, histories: np.ndarray) -> np.ndarray:
        """[H'] the root history above each of these in-game histories."""
        tree = self.tree
        is_root = np.zeros(tree.num_histories, dtype=bool)
        is_root[self.root_histories] = True
        anc = np.asarray(histories, dtype=np.int64).copy()
        while not np.all(is_root[anc]):
            anc = np.where(is_root[anc], anc, tree.parent[anc])
            if np.any(anc < 0):
                raise PvfError("a history is not below the trunk's root")
        return anc

    def history_weights(self, histories: np.ndarray) -> np.ndarray:
        """[H'] weight of in-game histories: chance reach, times root weight / root chance reach.

        It is the factor the payoff matrix carries for these histories, so an
        exact leaf value uses the same convention as the trunk.
        """
        histories = np.asarray(histories, dtype=np.int64)
        scale = np.zeros(self.tree.num_histories)
        scale[self.root_histories] = self.root_weights / self.tree.chance_reach[self.root_histories]
        return scale[self.root_ancestors(histories)] * self.tree.chance_reach[histories]

    def leaf_histories(self) -> np.ndarray:
        """[H_L] the trunk's leaf histories (non-terminal, at move number ≥ depth)."""
        h = self.game.histories
        return h[(self.tree.depth[h] >= self.depth) & (self.tree.player[h] != TERMINAL)]


@dataclass(frozen=True)
class TrunkResult:
    """A solved trunk.

    strategies: per player [S_n] the average behaviour strategy on `trunk.game`.
    exploitability: its exact trunk exploitability (NashConv convention).
    solve_seconds: wall time of the CFR+ iterations (evaluator included).
    """

    strategies: tuple[np.ndarray, np.ndarray]
    exploitability: TrunkExploitability
    solve_seconds: float


def build_trunk(
    tree: PublicTree | str,
    depth: int,
    root_public_state: int | None = None,
    root_beliefs: tuple[np.ndarray, np.ndarray] | None = None,
    root_histories: np.ndarray | None = None,
    root_weights: np.ndarray | None = None,
) -> Trunk:
    """The trunk of move-number depth `depth` rooted at a PBS or at a chance node.

    tree: the game's public tree, or a game string or alias (`pvf.games.paper`) to enumerate.
    root_public_state, root_beliefs: the root PBS (default: the initial state
        with beliefs 1); beliefs (b1 [R1], b2 [R2]) in the public state's
        enumeration of infostates.
    root_histories, root_weights: [H0] instead, a chance node over these
        histories with these weights (not renormalised); beliefs are then 1.
    """
    check_argument("tree", tree, (PublicTree, str))
    check_argument("depth", depth, int, minimum=0)
    if isinstance(tree, str):
        tree = build_public_tree(tree)
    if root_histories is not None and (root_public_state is not None or root_beliefs is not None):
        raise PvfError("root a trunk either at a public state (with beliefs) or at root histories, not both")
    game = build_sequence_game(tree, root_public_state, depth, root_histories, root_weights)
    full = build_sequence_game(tree, root_public_state, None, root_histories, root_weights)
    if root_histories is None:
        histories = tree.histories_in(game.root_public_state)
        weights = tree.chance_reach[histories]
    else:
        histories = np.asarray(root_histories, dtype=np.int64)
        weights = np.ones(len(histories)) if root_weights is None else np.asarray(root_weights, dtype=np.float64)
    if root_beliefs is None:
        beliefs = tuple(np.ones(p.num_roots) for p in game.players)
    else:
        beliefs = tuple(np.asarray(b, dtype=np.float64).reshape(-1) for b in root_beliefs)
        for n in (0, 1):
            if beliefs[n].shape != (game.players[n].num_roots,):
                raise PvfError(
                    f"player {n + 1} root beliefs have {beliefs[n].size} entries; "
                    f"the root public state has {game.players[n].num_roots} infostates"
                )
    seq_map = []
    for n in (0, 1):
        mapped = transfer_strategy(game, full, n, np.arange(game.players[n].num_sequences, dtype=np.float64))
        mapped[: full.players[n].num_roots] = np.arange(full.players[n].num_roots)
        seq_map.append(np.where(np.isnan(mapped), -1, mapped).astype(np.int64))
    return Trunk(
        tree=tree,
        depth=depth,
        game=game,
        full=full,
        masks=trunk_infostate_mask(full, depth),
        root_beliefs=(beliefs[0], beliefs[1]),
        root_histories=histories,
        root_weights=weights,
        sequence_map=(seq_map[0], seq_map[1]),
    )


def solve_trunk(
    trunk: Trunk,
    evaluator: LeafEvaluator | None,
    iterations: int = DEFAULT_ITERATIONS,
    callback: Callable[[int], None] | None = None,
    solver: Solver = cfr_plus,
) -> tuple[np.ndarray, np.ndarray]:
    """CFR+ (or `solver`, e.g. `get_solver("mmd")`) on the trunk with `evaluator` at the leaves.

    Returns per player [S_n] the solver's solution: CFR+'s average strategy, MMD's last iterate.
    evaluator: may be None only when the trunk has no leaves (depth below the game's end).
    """
    beliefs = (trunk.root_beliefs[0][None], trunk.root_beliefs[1][None])
    result = solver(trunk.game, iterations, root_beliefs=beliefs, leaf_evaluator=evaluator, callback=callback)
    return result.average_strategy[0][0], result.average_strategy[1][0]


def full_game_strategies(trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per player [S_full] the trunk strategy on `trunk.full`'s sequences (NaN below the trunk)."""
    out = []
    for n in (0, 1):
        idx = trunk.sequence_map[n]
        out.append(np.where(idx >= 0, np.asarray(strategies[n], dtype=np.float64)[np.maximum(idx, 0)], np.nan))
    return out[0], out[1]


def evaluate_trunk(trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray]) -> TrunkExploitability:
    """Exact trunk exploitability of a trunk strategy (per player [S_n] on `trunk.game`)."""
    return trunk_exploitability(trunk.full, full_game_strategies(trunk, strategies), trunk.masks, trunk.root_beliefs)


def solve_and_evaluate(
    trunk: Trunk, evaluator: LeafEvaluator | None, iterations: int = DEFAULT_ITERATIONS, solver: Solver = cfr_plus
) -> TrunkResult:
    """`solve_trunk` then `evaluate_trunk`."""
    start = time.perf_counter()
    strategies = solve_trunk(trunk, evaluator, iterations, solver=solver)
    elapsed = time.perf_counter() - start
    return TrunkResult(strategies, evaluate_trunk(trunk, strategies), elapsed)


def trunk_policy(trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray]) -> TabularPolicy:
    """The trunk strategy keyed by OpenSpiel information-state strings, exactly the trunk's infostates."""
    return to_tabular(trunk.game, strategies)


def player_policies(trunk: Trunk, strategies: tuple[np.ndarray, np.ndarray]) -> list[dict[str, dict[str, float]]]:
    """Per player {OpenSpiel infostate string: {action: probability}} over the trunk's decision infostates."""
    out = []
    for n in (0, 1):
        seqs, strings, policy = trunk.game.players[n], trunk.tree.infostate_strings[n], {}
        for i, info in enumerate(seqs.infostates):
            key = strings[int(info)]
            if key in policy:  # an OpenSpiel string in two public states: the key would not identify it
                raise PvfError(f"player {n + 1}'s infostate string {key!r} occurs in two public states; no policy file")
            block = range(int(seqs.info_start[i]), int(seqs.info_start[i] + seqs.info_size[i]))
            policy[key] = {str(int(seqs.seq_action[j])): float(strategies[n][j]) for j in block}
        out.append(policy)
    return out
