"""Sequence form of a (sub)game of the public tree: the arrays solvers iterate on.

Built from a PublicTree, a root public state and an optional depth limit:
  1. Every player gets one *root sequence* per augmented infostate of the root
     public state (the full game has one). Root beliefs are the realization
     weights of these sequences, so a batch of B beliefs is a [R, B] array.
  2. Decision infostates inside the subgame are ordered by level (number of
     own decisions since the root), then by parent sequence; each contributes
     one contiguous block of sequences (infostate, action).
  3. The payoff matrix A[σ1, σ2] = Σ chance_reach(z)·u1(z) over terminals z
     reached by the sequence pair; chance reach counts from the game root, so
     counterfactual values carry chance and opponent reach (docs/architecture.md).
  4. With a depth limit, the first non-terminal histories at move number ≥ d
     are leaves. Leaf infostates of each leaf public state (in the tree's
     fixed enumeration) record their parent sequence: a leaf evaluator's
     counterfactual values flow into the parent sequence's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from pvf.errors import PvfError
from pvf.games.public_tree import TERMINAL, PublicTree
from pvf.solvers.positions import Positions


@dataclass(frozen=True, eq=False)
class Level:
    """One level of a player's sequence tree, with its index arrays precomputed.

    Infostates [info_lo, info_hi) own sequences [seq_lo, seq_hi).
    starts: [I_L] offset of each infostate's block within the level's sequences.
    seq_info: [S_L] infostate of each sequence, relative to info_lo.
    seq_parent: [S_L] parent sequence of each sequence (absolute).
    group_starts: [G] offsets of runs of infostates sharing a parent (they are sorted by parent).
    group_parents: [G] those parents (distinct).
    """

    info_lo: int
    info_hi: int
    seq_lo: int
    seq_hi: int
    starts: np.ndarray
    seq_info: np.ndarray
    seq_parent: np.ndarray
    group_starts: np.ndarray
    group_parents: np.ndarray


def level_of(
    info_lo: int,
    info_hi: int,
    seq_lo: int,
    seq_hi: int,
    info_start: np.ndarray,
    seq_info: np.ndarray,
    seq_parent: np.ndarray,
    group_starts: np.ndarray,
    group_parents: np.ndarray,
) -> Level:
    """The `Level` of infostates [info_lo, info_hi) and sequences [seq_lo, seq_hi), cut from the player's
    whole arrays (info_start [I], seq_info [S], seq_parent [S]) and made relative to the level."""
    return Level(
        info_lo=info_lo,
        info_hi=info_hi,
        seq_lo=seq_lo,
        seq_hi=seq_hi,
        starts=info_start[info_lo:info_hi] - seq_lo,
        seq_info=seq_info[seq_lo:seq_hi] - info_lo,
        seq_parent=seq_parent[seq_lo:seq_hi],
        group_starts=group_starts,
        group_parents=group_parents,
    )


@dataclass(frozen=True, eq=False)
class PlayerSequences:
    """One player's sequence tree in a (sub)game.

    R root sequences come first (indices 0..R-1), then the decision sequences.

    root_infostates: [R] augmented infostate of each root sequence.
    infostates: [I] augmented infostate (tree index) of each decision infostate.
    info_parent: [I] parent sequence of each decision infostate.
    info_start: [I] first sequence of the infostate's contiguous block.
    info_size: [I] number of actions.
    info_depth: [I] move number of the infostate's histories.
    seq_info: [S] decision infostate of each sequence, -1 for root sequences.
    seq_action: [S] OpenSpiel action of each sequence, -1 for root sequences.
    seq_parent: [S] parent sequence of each decision sequence, -1 for roots.
    levels: the levels of the sequence tree, root side first.
    """

    root_infostates: np.ndarray
    infostates: np.ndarray
    info_parent: np.ndarray
    info_start: np.ndarray
    info_size: np.ndarray
    info_depth: np.ndarray
    seq_info: np.ndarray
    seq_action: np.ndarray
    seq_parent: np.ndarray
    levels: tuple[Level, ...]

    @property
    def num_roots(self) -> int:
        return len(self.root_infostates)

    @property
    def num_sequences(self) -> int:
        return len(self.seq_info)

    @property
    def num_infostates(self) -> int:
        return len(self.infostates)


@dataclass(frozen=True, eq=False)
class SequenceGame:
    """A (sub)game in sequence form, rooted at a public state, maybe depth-limited.

    tree: the tree it was built from; None for a union of games from several trees
        (`pvf.solvers.disjoint_games`, whose root public state is -1 and histories empty).
    players: the two players' sequence trees.
    payoff: [S1, S2] CSR, A[σ1, σ2] = Σ chance_reach·u1 over terminals.
    payoff_t: [S2, S1] CSR, the transpose.
    histories: [H_g] the tree histories of this (sub)game (leaves included).
    history_seq: [H_g, 2] each history's sequence of each player.
    leaf_public_states: [L] public states of the depth-limit leaves.
    leaf_infostates: per player [J_n] augmented infostates of the leaves, grouped by leaf public state.
    leaf_offsets: per player [L+1] offsets of each leaf public state's block.
    leaf_parent: per player [J_n] parent sequence of each leaf infostate, -1 where
        none of its histories is in the game (sparse roots): its reach is 0.
    leaf_matrix: per player [S_n, J_n] CSR scattering leaf values into parent sequences.
    """

    tree: PublicTree | None
    root_public_state: int  # with root_histories: the first root history's public state
    depth_limit: int | None
    players: tuple[PlayerSequences, PlayerSequences]
    payoff: sp.csr_matrix
    payoff_t: sp.csr_matrix
    histories: np.ndarray
    history_seq: np.ndarray
    leaf_public_states: np.ndarray
    leaf_infostates: tuple[np.ndarray, np.ndarray]
    leaf_offsets: tuple[np.ndarray, np.ndarray]
    leaf_parent: tuple[np.ndarray, np.ndarray]
    leaf_matrix: tuple[sp.csr_matrix, sp.csr_matrix]

    @property
    def has_leaves(self) -> bool:
        return len(self.leaf_public_states) > 0


def build_sequence_game(
    tree: PublicTree,
    root_public_state: int | None = None,
    depth_limit: int | None = None,
    root_histories: np.ndarray | None = None,
    root_weights: np.ndarray | None = None,
) -> SequenceGame:
    """Sequence form of the subgame rooted at `root_public_state` (default: the game root).

    depth_limit: move number d of the original game; histories at move number
        ≥ d become leaves (None: solve to the end).
    root_histories, root_weights: [H0] instead of a public state, root the game
        at a chance node over these histories (any public states) with these
        weights replacing their reach (the paper's common-knowledge chance node
        of sparse trunks). Root beliefs are then 1; the weights live in A.
        Root sequences are the distinct infostates of the root histories.
    """
    H = tree.num_histories
    parent, player = tree.parent, tree.player
    scale = np.ones(H)
    if root_histories is None:
        root_ps = int(tree.public_state[0]) if root_public_state is None else int(root_public_state)
        if not 0 <= root_ps < tree.num_public_states:
            raise PvfError(f"public state {root_ps} does not exist ({tree.num_public_states} in {tree.game_string})")
        roots = tree.histories_in(root_ps)
        root_infos = (tree.public_state_infostates[0][root_ps], tree.public_state_infostates[1][root_ps])
    else:
        roots = np.asarray(root_histories, dtype=np.int64)
        weights = np.ones(len(roots)) if root_weights is None else np.asarray(root_weights, dtype=np.float64)
        if len(roots) == 0 or len(np.unique(roots)) != len(roots) or weights.shape != roots.shape:
            raise PvfError("root histories must be distinct, non-empty and match their weights")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise PvfError("root weights must be finite and non-negative")
        scale[roots] = weights / tree.chance_reach[roots]
        root_ps = int(tree.public_state[roots[0]])
        root_infos = tuple(np.unique(tree.infostate[roots, n]) for n in (0, 1))
    min_depth = int(tree.depth[roots].min())
    if depth_limit is not None and depth_limit <= min_depth:
        raise PvfError(
            f"depth limit {depth_limit} is not below the root's move number {min_depth}; choose a deeper limit"
        )
    in_game = np.zeros(H, dtype=bool)
    is_leaf = np.zeros(H, dtype=bool)
    if np.any(player[roots] == TERMINAL):
        raise PvfError("the root holds terminal histories; root subgames at non-terminal histories")
    in_game[roots] = True
    # Parents precede children: one pass down the tree levels (a level's histories depend on their parents only).
    expandable = in_game.copy()
    if depth_limit is not None:
        leafy = (tree.depth >= depth_limit) & (player != TERMINAL)
    else:
        leafy = np.zeros(H, dtype=bool)
    for h in _by_level(tree.level, int(tree.level[roots].min()) + 1):
        p = parent[h]
        h = h[expandable[p]]
        p = parent[h]
        in_game[h] = True
        scale[h] = scale[p]
        is_leaf[h] = leafy[h]
        expandable[h] |= ~leafy[h] & (player[h] != TERMINAL)
    is_leaf[roots] = False
    hist = np.flatnonzero(in_game)

    seq_of = np.full((H, 2), -1, dtype=np.int64)
    players = []
    for n in (0, 1):
        ps_seq = _player_sequences(tree, n, np.asarray(root_infos[n], dtype=np.int64), hist, expandable, seq_of)
        players.append(ps_seq)

    term = hist[player[hist] == TERMINAL]
    vals = scale[term] * tree.chance_reach[term] * tree.utility[term]
    S1, S2 = players[0].num_sequences, players[1].num_sequences
    payoff = sp.coo_matrix((vals, (seq_of[term, 0], seq_of[term, 1])), shape=(S1, S2)).tocsr()
    payoff.sum_duplicates()

    leaf_hist = hist[is_leaf[hist]]
    leaf_ps = np.unique(tree.public_state[leaf_hist])
    leaf_info, leaf_off, leaf_par, leaf_mat = [], [], [], []
    for n in (0, 1):
        blocks = [tree.public_state_infostates[n][p] for p in leaf_ps]
        infos = np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)
        offs = np.concatenate([[0], np.cumsum([len(b) for b in blocks])]).astype(np.int64)
        par_of_info = np.full(tree.num_infostates(n), -1, dtype=np.int64)
        par_of_info[tree.infostate[leaf_hist, n]] = seq_of[leaf_hist, n]
        par = par_of_info[infos]  # -1: no history of this infostate is in the game (sparse roots)
        S = players[n].num_sequences
        present = np.flatnonzero(par >= 0)
        mat = sp.csr_matrix((np.ones(len(present)), (par[present], present)), shape=(S, len(infos)))
        leaf_info.append(infos)
        leaf_off.append(offs)
        leaf_par.append(par)
        leaf_mat.append(mat)

    return SequenceGame(
        tree=tree,
        root_public_state=root_ps,
        depth_limit=depth_limit,
        players=(players[0], players[1]),
        payoff=payoff,
        payoff_t=payoff.T.tocsr(),
        histories=hist,
        history_seq=seq_of[hist],
        leaf_public_states=leaf_ps,
        leaf_infostates=(leaf_info[0], leaf_info[1]),
        leaf_offsets=(leaf_off[0], leaf_off[1]),
        leaf_parent=(leaf_par[0], leaf_par[1]),
        leaf_matrix=(leaf_mat[0], leaf_mat[1]),
    )


def _by_level(level: np.ndarray, first: int, histories: np.ndarray | None = None) -> list[np.ndarray]:
    """`histories` (default all) grouped by tree level from `first` on, each group in index order."""
    h = np.arange(len(level)) if histories is None else histories
    h = h[level[h] >= first]
    order = np.argsort(level[h], kind="stable")
    h, lv = h[order], level[h][order]
    bounds = np.flatnonzero(np.diff(lv)) + 1
    return np.split(h, bounds) if len(h) else []


def _player_sequences(
    tree: PublicTree, n: int, root_infos: np.ndarray, hist: np.ndarray, expandable: np.ndarray, seq_of: np.ndarray
) -> PlayerSequences:
    """Number player n's sequences and fill seq_of[:, n] for the histories `hist`.

    1. Each history's sequence: the root sequence of its infostate at a root (a history whose parent
       is not expanded in the game), (infostate, action) below a node of player n, its parent's below
       anyone else's; found level by level down the tree.
    2. A decision infostate (n acts at an expanded history of it) hangs below the sequence of its
       first history; its level is one more than that sequence's infostate's (roots: 0).
    3. Level by level, infostates sorted by (parent sequence, infostate) get consecutive blocks of
       sequences, one per legal action in `tree.infostate_actions` order.
    """
    parent, player, action, infostate = tree.parent, tree.player, tree.action, tree.infostate
    H, R = tree.num_histories, len(root_infos)
    root_index = np.full(tree.num_infostates(n), -1, dtype=np.int64)
    root_index[root_infos] = np.arange(R)
    width = int(action.max()) + 1 if H else 1
    # Step 1: key[h] = r (root sequence r) or R + i·width + a (decision sequence (i, a)).
    in_game = np.zeros(H, dtype=bool)
    in_game[hist] = True
    key = np.full(H, -1, dtype=np.int64)
    for h in _by_level(tree.level, 0, hist):
        p = parent[h]
        safe = np.maximum(p, 0)
        root = (p < 0) | ~(expandable[safe] & in_game[safe])
        mine = ~root & (player[safe] == n)
        key[h] = np.where(
            root,
            root_index[infostate[h, n]],
            np.where(mine, R + infostate[safe, n] * width + action[h], key[safe]),
        )
    # Step 2: decision infostates, the sequence above each (that of its first expanded history) and its level.
    deciding = hist[(player[hist] == n) & expandable[hist]]
    infos_found, first = np.unique(infostate[deciding, n], return_index=True)
    above = key[deciding[first]]  # [I] parent key of each decision infostate (sorted by infostate index)
    above_info = np.where(above >= R, (above - R) // width, -1)
    position = np.searchsorted(infos_found, above_info)
    level = np.ones(len(infos_found), dtype=np.int64)
    for _ in range(len(infos_found)):  # one more than the level of the infostate above, roots' at level 1
        deeper = np.where(above_info >= 0, level[np.minimum(position, len(level) - 1)] + 1, 1)
        if np.array_equal(deeper, level):
            break
        level = deeper
    actions = [tree.infostate_actions[n][int(i)] for i in infos_found]
    sizes_found = np.fromiter((len(a) for a in actions), dtype=np.int64, count=len(actions))
    flat_actions = np.fromiter((a for acts in actions for a in acts), dtype=np.int64, count=int(sizes_found.sum()))
    offset = np.concatenate([[0], np.cumsum(sizes_found)])[:-1]
    # (infostate, action) -> position of the action in the infostate's list
    pair_code = np.repeat(infos_found, sizes_found) * width + flat_actions
    pair_index = Positions(pair_code)
    pair_position = np.arange(len(flat_actions)) - np.repeat(offset, sizes_found)

    def sequence_of(keys: np.ndarray, start: np.ndarray) -> np.ndarray:
        """The sequence index of keys (root or decision), given each found infostate's first sequence."""
        out = keys.copy()
        decision = keys >= R
        code = keys[decision] - R
        out[decision] = start[np.searchsorted(infos_found, code // width)] + pair_position[pair_index(code)]
        return out

    # Step 3: number the sequences level by level.
    start = np.full(len(infos_found), -1, dtype=np.int64)
    levels, members_all = [], []
    next_seq = R
    info_lo = 0
    for lv in np.unique(level):
        members = np.flatnonzero(level == lv)
        parents = sequence_of(above[members], start)
        order = np.lexsort((infos_found[members], parents))
        members, parents = members[order], parents[order]
        seq_lo = next_seq
        start[members] = next_seq + np.concatenate([[0], np.cumsum(sizes_found[members])[:-1]])
        next_seq += int(sizes_found[members].sum())
        change = np.flatnonzero(np.concatenate([[True], parents[1:] != parents[:-1]]))
        levels.append((info_lo, info_lo + len(members), seq_lo, next_seq, change, parents[change]))
        info_lo += len(members)
        members_all.append(members)
    order = np.concatenate(members_all) if members_all else np.zeros(0, dtype=np.int64)
    S = next_seq
    infos = infos_found[order]
    sizes = sizes_found[order]
    starts = start[order]
    seq_info = np.full(S, -1, dtype=np.int64)
    seq_action = np.full(S, -1, dtype=np.int64)
    seq_info[R:] = np.repeat(np.arange(len(infos)), sizes)
    seq_action[R:] = flat_actions[np.repeat(offset[order] - (starts - R), sizes) + np.arange(S - R)]
    info_parent = sequence_of(above[order], start)
    seq_parent = np.full(S, -1, dtype=np.int64)
    seq_parent[R:] = info_parent[seq_info[R:]]
    seq_of[hist, n] = sequence_of(key[hist], start)
    info_depth = tree.depth[tree.infostate_history[n][infos]] if len(infos) else np.zeros(0, np.int64)
    level_objs = tuple(
        level_of(lo, hi, slo, shi, starts, seq_info, seq_parent, gstart, gparent)
        for lo, hi, slo, shi, gstart, gparent in levels
    )
    return PlayerSequences(
        root_infostates=np.asarray(root_infos, dtype=np.int64),
        infostates=infos,
        info_parent=info_parent,
        info_start=starts,
        info_size=sizes,
        info_depth=info_depth,
        seq_info=seq_info,
        seq_action=seq_action,
        seq_parent=seq_parent,
        levels=level_objs,
    )
