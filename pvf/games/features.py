"""Feature vectors of public states and infostates, for the value networks.

Derived generically from OpenSpiel observation tensors of the ORIGINAL game
(paper, sec. 4.1: perfect-recall features):

1. Public features of public state p: the perfect-recall public-only
   observer (`private_info=NONE`) at one history of p, as seen by player 1.
2. Private features of player n's augmented infostate s: the perfect-recall
   private-only observer (`public_info=False, private_info=SINGLE_PLAYER`)
   at one history of s, as seen by player n. In a simultaneous game a
   history in the middle of a round (player 1 has bid in the turn-based
   tree, player 2 not yet) is observed for player 1 after the round with
   player 2's first legal action: the private-only view then holds player
   1's own bid and nothing of player 2's.
3. A field named `player` that is the observing player's one-hot (Leduc's
   observers write one) is dropped: consumers append the player one-hot
   themselves, and public features must not depend on who looks.
4. Fallbacks, where the game offers no such observer: public features are a
   one-hot of the public state's position within its tree level; private
   features a one-hot of the infostate's slot in its public state
   (`tree.public_state_infostates`). The private fallback is also used when
   the observer gives two infostates of one player in one public state the
   same vector. A one-hot table that would exceed 2^26 entries (256 MB) is
   replaced by the binary digits of the same position or slot, so no table
   can blow up (Liar's Dice, 6 faces: 151,518 public states, up to 34,056 per
   level, would need 19 GiB as one-hots, 2.5 MB in binary).

Both players' private vectors have the same length Fq (the shorter is
zero-padded; OpenSpiel's observers already agree in the games of the paper).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pyspiel

from pvf.errors import PvfError
from pvf.games.loading import LoadedGame, load_game
from pvf.games.public_tree import PublicTree

OBSERVER = "observer"
POSITION_ONE_HOT = "position_one_hot"
SLOT_ONE_HOT = "slot_one_hot"
POSITION_BINARY = "position_binary"
# Fallback tables larger than this (float32 entries, 256 MB) use binary digits instead of one-hots.
MAX_ONE_HOT_ENTRIES = 1 << 26

_PUBLIC_TYPE = dict(perfect_recall=True, public_info=True, private_info=pyspiel.PrivateInfoType.NONE)
_PRIVATE_TYPE = dict(perfect_recall=True, public_info=False, private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER)


@dataclass(frozen=True, eq=False)
class FeatureTables:
    """Feature vectors for every public state and augmented infostate of a tree.

    game: OpenSpiel game string the tables were built for.
    public: [P, Fp] float32 public features of each public state.
    private: per player n, [I_n, Fq] float32 private features of each augmented infostate.
    public_fields: (name, size) of the public vector's blocks, in order.
    private_fields: (name, size) of the private vector's blocks, in order.
    public_encoder / private_encoder: "observer" or the fallback used
        ("position_one_hot" or "position_binary" / "slot_one_hot").
    """

    game: str
    public: np.ndarray
    private: tuple[np.ndarray, np.ndarray]
    public_fields: tuple[tuple[str, int], ...]
    private_fields: tuple[tuple[str, int], ...]
    public_encoder: str
    private_encoder: str

    @property
    def public_dim(self) -> int:
        """Fp."""
        return int(self.public.shape[1])

    @property
    def private_dim(self) -> int:
        """Fq."""
        return int(self.private[0].shape[1])

    def describe(self) -> dict[str, Any]:
        """Sizes and what the vectors hold, as plain JSON-serialisable data."""
        return {
            "game": self.game,
            "public_dim": self.public_dim,
            "private_dim": self.private_dim,
            "num_public_states": int(self.public.shape[0]),
            "num_infostates": [int(p.shape[0]) for p in self.private],
            "public_encoder": self.public_encoder,
            "private_encoder": self.private_encoder,
            "public_fields": [list(f) for f in self.public_fields],
            "private_fields": [list(f) for f in self.private_fields],
        }


def build_feature_tables(tree: PublicTree) -> FeatureTables:
    """Public and private feature tables of every public state / infostate of `tree`."""
    game = tree.loaded.original
    public_obs = _observer(game, _PUBLIC_TYPE)
    private_obs = _observer(game, _PRIVATE_TYPE)
    if public_obs is None:
        public, public_fields, public_encoder = _position_one_hot(tree)
    else:
        _, first_history = np.unique(tree.public_state, return_index=True)
        rows = [_observe(public_obs, tree.original_state_at(int(h)), 0) for h in first_history]
        public, public_fields = _stack(rows)
        public_encoder = OBSERVER
    private = None
    if private_obs is not None:
        per_player = [
            [_observe(private_obs, _private_state(tree, n, int(h)), n) for h in tree.infostate_history[n]]
            for n in (0, 1)
        ]
        (p0, f0), (p1, f1) = _stack(per_player[0]), _stack(per_player[1])
        width = max(p0.shape[1], p1.shape[1])
        candidate = (_pad(p0, width), _pad(p1, width))
        if _distinguishes(tree, candidate):
            private = candidate
            private_fields = f0 if p0.shape[1] >= p1.shape[1] else f1
            private_encoder = OBSERVER
    if private is None:
        private, private_fields = _slot_one_hot(tree)
        private_encoder = SLOT_ONE_HOT
    return FeatureTables(
        game=tree.game_string,
        public=public,
        private=private,
        public_fields=public_fields,
        private_fields=private_fields,
        public_encoder=public_encoder,
        private_encoder=private_encoder,
    )


def _observer(game: pyspiel.Game, kind: dict[str, Any]):
    """An OpenSpiel observer of `kind`, or None if the game offers none."""
    from open_spiel.python.observation import make_observation

    try:
        obs = make_observation(game, pyspiel.IIGObservationType(**kind))
        obs.set_from(game.new_initial_state(), 0)
        return obs
    except Exception:  # pyspiel raises bare errors for unsupported observation types
        return None


def _private_state(tree: PublicTree, player: int, history: int) -> pyspiel.State:
    """The original-game state whose private observation describes `player`'s infostate at `history`."""
    state = tree.original_state_at(history)
    if not (tree.loaded.simultaneous and player == 0 and tree.player[history] == 1):
        return state
    after = state.clone()  # mid-round: player 1's bid is the action into `history`
    after.apply_actions([int(tree.action[history]), state.legal_actions(1)[0]])
    return after


def _observe(obs, state: pyspiel.State, player: int) -> list[tuple[str, np.ndarray]]:
    """The observation's fields (name, flat values), less the observing player's one-hot."""
    obs.set_from(state, player)
    fields = []
    for name, value in obs.dict.items():
        flat = np.asarray(value, dtype=np.float32).ravel()
        if name == "player" and flat.size == 2 and flat[player] == 1 and flat.sum() == 1:
            continue
        fields.append((name, flat.copy()))
    return fields


def _stack(rows: list[list[tuple[str, np.ndarray]]]) -> tuple[np.ndarray, tuple[tuple[str, int], ...]]:
    """[R, F] float32 from per-row field lists, and the (name, size) layout."""
    layout = tuple((name, int(v.size)) for name, v in rows[0]) if rows else ()
    width = sum(size for _, size in layout)
    table = np.zeros((len(rows), width), dtype=np.float32)
    for r, fields in enumerate(rows):
        if fields:
            table[r] = np.concatenate([v for _, v in fields])
    return table, layout


def _pad(table: np.ndarray, width: int) -> np.ndarray:
    return np.pad(table, ((0, 0), (0, width - table.shape[1])))


def _distinguishes(tree: PublicTree, private: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether no two infostates of one player in one public state share a vector."""
    for n in (0, 1):
        for infos in tree.public_state_infostates[n]:
            if len(infos) > 1 and len(np.unique(private[n][infos], axis=0)) < len(infos):
                return False
    return True


def _position_one_hot(tree: PublicTree) -> tuple[np.ndarray, tuple[tuple[str, int], ...], str]:
    """[P, W] code of each public state's position among the public states of its tree level."""
    level = tree.public_state_level
    order = np.lexsort((np.arange(len(level)), level))
    position = np.empty(len(level), dtype=np.int64)
    counts = np.bincount(level)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position[order] = np.arange(len(level)) - starts[level[order]]
    table, encoding = _code(position, int(counts.max()))
    encoder = POSITION_ONE_HOT if encoding == "one_hot" else POSITION_BINARY
    name = "position_in_level" if encoding == "one_hot" else "position_in_level_binary"
    return table, ((name, table.shape[1]),), encoder


def _slot_one_hot(tree: PublicTree) -> tuple[tuple[np.ndarray, np.ndarray], tuple[tuple[str, int], ...]]:
    """Per player [I_n, W] code of each infostate's slot in its public state."""
    width = max(len(infos) for n in (0, 1) for infos in tree.public_state_infostates[n])
    rows = max(tree.num_infostates(0), tree.num_infostates(1))
    encoding = "one_hot" if rows * width <= MAX_ONE_HOT_ENTRIES else "binary"
    tables = []
    for n in (0, 1):
        slot = np.zeros(tree.num_infostates(n), dtype=np.int64)
        for infos in tree.public_state_infostates[n]:
            slot[infos] = np.arange(len(infos))
        tables.append(_code(slot, width, encoding)[0])
    return (tables[0], tables[1]), (("slot" if encoding == "one_hot" else "slot_binary", tables[0].shape[1]),)


def _code(position: np.ndarray, width: int, encoding: str | None = None) -> tuple[np.ndarray, str]:
    """[R, W] float32 one-hot of `position` (values in [0, width)), or, where that table would
    exceed MAX_ONE_HOT_ENTRIES, [R, ceil(log2 width)] binary digits: distinct positions stay distinct."""
    if encoding is None:
        encoding = "one_hot" if len(position) * width <= MAX_ONE_HOT_ENTRIES else "binary"
    if encoding == "one_hot":
        table = np.zeros((len(position), width), dtype=np.float32)
        table[np.arange(len(position)), position] = 1.0
        return table, encoding
    bits = max(1, int(width - 1).bit_length())
    return ((position[:, None] >> np.arange(bits)) & 1).astype(np.float32), encoding


@dataclass(frozen=True, eq=False)
class Observers:
    """A game's public and private perfect-recall observers (features of single histories)."""

    public: object
    private: object


@lru_cache(maxsize=1)
def checked_game(game: str) -> tuple[LoadedGame, Observers]:
    """The game and its feature observers; PvfError if it lacks one (particle datasets need observer features)."""
    loaded = load_game(game)
    observers = Observers(_observer(loaded.original, _PUBLIC_TYPE), _observer(loaded.original, _PRIVATE_TYPE))
    if observers.public is None or observers.private is None:
        which = "public" if observers.public is None else "private"
        raise PvfError(
            f"{loaded.game_string} has no perfect-recall {which} observer; particle datasets need observer features"
        )
    return loaded, observers


def feature_fields(game: str) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """(public, private) (name, size) layouts of the observer vectors (the wider player's private layout)."""
    loaded, observers = checked_game(game)
    state = loaded.original.new_initial_state()
    while state.is_chance_node():
        state = state.child(state.chance_outcomes()[0][0])
    public = _stack([_observe(observers.public, state, 0)])[1]
    private = [_stack([_observe(observers.private, state, n)])[1] for n in (0, 1)]
    return public, max(private, key=lambda f: sum(size for _, size in f))


def sample_features(
    tree: PublicTree, observers: Observers, public_state: int, infostates: tuple[np.ndarray, np.ndarray]
):
    """([Fp] public features of the public state, per player [J_n, Fq_n] private features), as build_feature_tables."""
    history = int(tree.histories_in(public_state)[0])
    public, _ = _stack([_observe(observers.public, tree.original_state_at(history), 0)])
    private = []
    for n in (0, 1):
        rows = [
            _observe(observers.private, _private_state(tree, n, int(tree.infostate_history[n][i])), n)
            for i in infostates[n]
        ]
        private.append(_stack(rows)[0])
    return public[0], private
