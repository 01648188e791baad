"""Disjoint sequence games as one: a block-diagonal game whose solve is each game's solve, bit for bit.

A solver call on a small game is mostly per-call overhead: CFR+ on a
Goofspiel-13 particle sample (about 500 sequences a player) makes some 25
NumPy calls per iteration on arrays too small to amortise them. Games that
share nothing (the samples of one dataset task, each in its own tree) can
be solved as one game instead, paying that overhead once:
  1. Sequences: every game's root sequences first (game 0's, then game
     1's, ...), then level 1 of every game in game order, then level 2,
     and so on. Within a game the order is its own, so each game's
     sequences map monotonically into the union's.
  2. Levels: level l of the union is the games' level l side by side; its
     infostate blocks, parents and runs of infostates sharing a parent are
     the games', shifted. Runs never merge across games (their parents
     differ).
  3. Payoff: block diagonal, each game's matrix relabelled. Monotone maps
     keep every row's entries in the game's order.
Why the iterates are each game's alone, to the last bit: every step of
`pvf.solvers.cfr_plus` and of the best responses (`pvf.solvers.sequence_ops`)
is elementwise, a gather along parents, a `reduceat` over one infostate's
sequences or one parent's infostates, or a CSR row product, and in the
union each segment and each row holds the same numbers in the same order as
in its game. What does couple the games is a sum over all roots: the
solver result's `value` is the sum of the games' values; per-root values
(`split`) are each game's own.

Only games solved to the end join (no depth-limit leaves). The union has
no single tree: its `tree` is None, its `histories` empty, and its root
and decision infostates are indices into each game's own tree.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from pvf.errors import PvfError
from pvf.solvers.sequence_form import PlayerSequences, SequenceGame, level_of


class DisjointGames:
    """G sequence games as one block-diagonal `game` (module docstring).

    game: the union; root sequences of game g at `root_offsets[n][g]` … `root_offsets[n][g + 1]`.
    root_offsets: per player [G + 1] offsets of each game's root sequences in the union.
    sequence_of: per player, per game [S_n of that game] its sequences' indices in the union.
    """

    def __init__(self, games: Sequence[SequenceGame]):
        if len(games) == 0:
            raise PvfError("no games to join")
        if any(g.has_leaves for g in games):
            raise PvfError("depth-limited games cannot be joined: solve them one at a time")
        players, self.sequence_of = [], []
        for n in (0, 1):
            union, maps = _join_players([g.players[n] for g in games])
            players.append(union)
            self.sequence_of.append(maps)
        self.root_offsets = tuple(
            np.concatenate([[0], np.cumsum([g.players[n].num_roots for g in games])]) for n in (0, 1)
        )
        payoff = _join_payoffs([g.payoff for g in games], self.sequence_of, (players[0], players[1]))
        empty = np.zeros(0, dtype=np.int64)
        self.game = SequenceGame(
            tree=None,
            root_public_state=-1,
            depth_limit=None,
            players=(players[0], players[1]),
            payoff=payoff,
            payoff_t=payoff.T.tocsr(),
            histories=empty,
            history_seq=np.zeros((0, 2), dtype=np.int64),
            leaf_public_states=empty,
            leaf_infostates=(empty, empty),
            leaf_offsets=(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)),
            leaf_parent=(empty, empty),
            leaf_matrix=tuple(sp.csr_matrix((p.num_sequences, 0)) for p in players),
        )

    def join_roots(self, per_game: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """Per player [B, R_n] of the union from each game's per player [B, R_n] (root beliefs, root labels …)."""
        return tuple(np.concatenate([g[n] for g in per_game], axis=-1) for n in (0, 1))  # type: ignore[return-value]

    def join_labels(self, per_game: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """Per player [R_n] labels of the union's roots from each game's per player [R_n] non-negative labels
        (e.g. the public state of each root infostate), each game's shifted past the previous games' so that no
        two games share one."""
        shifted, start = [], 0
        for labels in per_game:
            own = [np.asarray(labels[n], dtype=np.int64) for n in (0, 1)]
            shifted.append((own[0] + start, own[1] + start))
            start += 1 + max((int(own[n].max()) for n in (0, 1) if len(own[n])), default=0)
        return self.join_roots(shifted)

    def split(self, values: tuple[np.ndarray, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per game, per player [B, R_n] root values from the union's per player [B, R_n]."""
        parts = [np.split(values[n], self.root_offsets[n][1:-1], axis=-1) for n in (0, 1)]
        return [(a, b) for a, b in zip(*parts)]


def _join_players(players: Sequence[PlayerSequences]) -> tuple[PlayerSequences, list[np.ndarray]]:
    """One player's union sequence tree and, per game, [S] each sequence's index in it (module docstring, 1–2)."""
    G = len(players)
    roots = np.cumsum([0] + [p.num_roots for p in players])
    maps = [np.empty(p.num_sequences, dtype=np.int64) for p in players]
    info_maps = [np.empty(p.num_infostates, dtype=np.int64) for p in players]
    for g, p in enumerate(players):
        maps[g][: p.num_roots] = roots[g] + np.arange(p.num_roots)
    next_seq, next_info = int(roots[-1]), 0
    blocks = []  # per level: [(game, level)] in the union's order
    for depth in range(max(len(p.levels) for p in players)):
        block = []
        for g in range(G):
            if depth < len(players[g].levels):
                lv = players[g].levels[depth]
                maps[g][lv.seq_lo : lv.seq_hi] = next_seq + np.arange(lv.seq_hi - lv.seq_lo)
                info_maps[g][lv.info_lo : lv.info_hi] = next_info + np.arange(lv.info_hi - lv.info_lo)
                next_seq += lv.seq_hi - lv.seq_lo
                next_info += lv.info_hi - lv.info_lo
                block.append((g, lv))
        blocks.append(block)
    S, I = next_seq, next_info
    seq_info, seq_action, seq_parent = np.full(S, -1), np.full(S, -1), np.full(S, -1)
    infostates, info_parent, info_start = np.empty(I, np.int64), np.empty(I, np.int64), np.empty(I, np.int64)
    info_size, info_depth = np.empty(I, np.int64), np.empty(I, np.int64)
    for g, p in enumerate(players):
        decision, into = maps[g][p.num_roots :], info_maps[g]
        seq_info[decision] = into[p.seq_info[p.num_roots :]]
        seq_action[decision] = p.seq_action[p.num_roots :]
        seq_parent[decision] = maps[g][p.seq_parent[p.num_roots :]]
        infostates[into] = p.infostates
        info_parent[into] = maps[g][p.info_parent]
        info_start[into] = maps[g][p.info_start]
        info_size[into] = p.info_size
        info_depth[into] = p.info_depth
    levels = []
    for block in blocks:
        first = block[0][1]
        seq_lo, info_lo = int(maps[block[0][0]][first.seq_lo]), int(info_maps[block[0][0]][first.info_lo])
        last_g, last = block[-1]
        seq_hi, info_hi = int(maps[last_g][last.seq_hi - 1]) + 1, int(info_maps[last_g][last.info_hi - 1]) + 1
        group_starts = [info_maps[g][lv.info_lo] - info_lo + lv.group_starts for g, lv in block]
        group_parents = [maps[g][lv.group_parents] for g, lv in block]
        levels.append(
            level_of(
                info_lo,
                info_hi,
                seq_lo,
                seq_hi,
                info_start,
                seq_info,
                seq_parent,
                np.concatenate(group_starts),
                np.concatenate(group_parents),
            )
        )
    union = PlayerSequences(
        root_infostates=np.concatenate([p.root_infostates for p in players]),
        infostates=infostates,
        info_parent=info_parent,
        info_start=info_start,
        info_size=info_size,
        info_depth=info_depth,
        seq_info=seq_info,
        seq_action=seq_action,
        seq_parent=seq_parent,
        levels=tuple(levels),
    )
    return union, maps


def _join_payoffs(
    payoffs: Sequence[sp.csr_matrix],
    sequence_of: Sequence[Sequence[np.ndarray]],
    players: tuple[PlayerSequences, PlayerSequences],
) -> sp.csr_matrix:
    """[S1, S2] CSR of the union: each game's entries relabelled, every row's entries in the game's order."""
    rows, cols, data = [], [], []
    for g, payoff in enumerate(payoffs):
        coo = payoff.tocoo()
        rows.append(sequence_of[0][g][coo.row])
        cols.append(sequence_of[1][g][coo.col])
        data.append(coo.data)
    shape = (players[0].num_sequences, players[1].num_sequences)
    return sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=shape)
