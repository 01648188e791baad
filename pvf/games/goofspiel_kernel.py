"""Imperfect-information Goofspiel as integer arrays: the native particle engine of that game.

The game is OpenSpiel's `goofspiel(imp_info=True)` with points order descending or ascending and
win/loss or point-difference returns (`rules_of`: None for other parameters, which OpenSpiel's engine
plays), in the turn-based form pvf solves (`pyspiel.convert_to_turn_based`): N cards per hand; round t's point
card is fixed by the order; player 1 bids (level 2t), then player 2 without seeing it (level
2t + 1); the higher card wins the point card, equal bids discard it, and who won (or a draw) is
public. The last round is forced, so a game has R = N − 1 decision rounds and ends at level 2R.
  1. A history is its action sequence, the bid sequences interleaved: [b₁⁰, b₂⁰, b₁¹, b₂¹, ...].
     Its hands (bit masks of the cards left), win sequence, points and returns are integer
     arithmetic on those bids.
  2. Identity: a public state is (level, win sequence); an infostate of player n is (public state,
     n's own bids so far), player 1's pending bid included at odd levels (OpenSpiel's "Observer's
     action this turn"). The histories joining a player-1 infostate s₁ and a player-2 infostate s₂
     are the pair of their own bid sequences if those bids reproduce the public win sequence round
     by round, none otherwise: the induced PBS in closed form (`induced_histories`), no search.
  3. A particle tree (`particle_tree`) is the union of the particles' paths and the full subtree
     below each, numbered depth first with children in action order, as `pvf.games.particle_tree`
     walks it. Sorted lexicographically, particle r adds the prefixes it does not share with
     particle r − 1, then its subtree; every subtree rooted at one level has the same shape in
     "hand positions" (the k-th card a player still holds), so one template per level, mapped
     through each root's hands, gives all of them. Public states and infostates are then labelled
     at once above the first particle level (from the prefixes' bids), level by level below it
     (from their parents' labels and the move: a bid, a win sequence entry), and numbered by first
     appearance, as `pvf.games.public_tree.tree_from_records` numbers them. The counterfactual
     reach and mean opponent features of a PBS then come from these arrays
     (`pvf.solvers.counterfactual_reach`), as for any tree.
  4. Sampling (`play_to_depth`, `sample_particles`, `continuations`) follows
     `pvf.games.history_sampling` draw for draw: the same generator calls, the same float
     operations on the same arrays, the strategy asked by OpenSpiel's information-state string,
     formatted once per distinct infostate and cached.
  5. Features: the perfect-recall observers' tensors (public: point totals, win sequence, point
     cards; private: hand, own action sequence), written from the bids.
OpenSpiel strings are made only at the edges: strategy lookups (once per infostate), and a tree's
`infostate_strings` and `public_state_strings`, formatted when read.
`tests/games/test_goofspiel_kernel.py` checks all of it against OpenSpiel.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from pvf.errors import PvfError, TooManyHistories
from pvf.games.history_sampling import MAX_PLAYS, Continuations, ParticleSample, Strategy, draw_index, prefixes_of
from pvf.games.induced_pbs import InducedHistories
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import find_histories, history_paths, padded_paths
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, TERMINAL, PublicTree

ORDERS = ("descending", "ascending")
RETURNS = ("win_loss", "point_difference")
P1_WINS, P2_WINS, DRAW = 0, 1, 2  # outcome codes; OpenSpiel's win sequence writes 0, 1 and -3
WIN_SEQUENCE = (0, 1, -3)


@dataclass(frozen=True)
class GoofspielRules:
    """The parameters of one supported Goofspiel.

    num_cards: N; order: "descending" or "ascending"; returns: "win_loss" or "point_difference".
    """

    num_cards: int
    order: str
    returns: str

    @property
    def rounds(self) -> int:
        """R = N − 1 decision rounds (the last round is forced)."""
        return self.num_cards - 1

    @cached_property
    def point_cards(self) -> np.ndarray:
        """[N] the point card (0-based) of each round."""
        n = self.num_cards
        return np.arange(n - 1, -1, -1) if self.order == "descending" else np.arange(n)

    @cached_property
    def point_values(self) -> np.ndarray:
        """[N] the points round t is worth."""
        return self.point_cards + 1


def rules_of(loaded: LoadedGame) -> GoofspielRules | None:
    """The kernel's rules for `loaded`, or None where it is not a Goofspiel this kernel plays."""
    if loaded.original.get_type().short_name != "goofspiel":
        return None
    p = loaded.original.get_parameters()
    n = int(p["num_cards"])
    supported = (
        bool(p["imp_info"])
        and not bool(p["egocentric"])
        and int(p["players"]) == 2
        and int(p["num_turns"]) in (-1, n)
        and p["points_order"] in ORDERS
        and p["returns_type"] in RETURNS
        and 2 <= n <= 62
    )
    return GoofspielRules(n, str(p["points_order"]), str(p["returns_type"])) if supported else None


# --- one history: OpenSpiel's strings and the state they describe ------------------------------------------


@dataclass(frozen=True)
class Replay:
    """The original game's state after an action sequence of the turn-based game.

    bids: per player the cards bid (0-based) in completed rounds, the forced last round's included at
    terminals; outcomes: each completed round's outcome code; points: [2]; pending: player 1's bid
    waiting for player 2 (-1 at a round's start); player: the turn-based game's current player (0,
    1, or TERMINAL).
    """

    bids: tuple[list[int], list[int]]
    outcomes: list[int]
    points: list[int]
    pending: int
    player: int

    def hand(self, player: int, num_cards: int) -> list[int]:
        """The cards (0-based, ascending) `player` holds in the original game (a pending bid still in hand)."""
        return [c for c in range(num_cards) if c not in self.bids[player]]


def replay(rules: GoofspielRules, path: Sequence[int]) -> Replay:
    """The state after `path` (PvfError if it is not a history of the game)."""
    n, rounds = rules.num_cards, rules.rounds
    if len(path) > 2 * rounds:
        raise PvfError(f"{list(path)} continues past a terminal history")
    bids: tuple[list[int], list[int]] = ([], [])
    outcomes: list[int] = []
    points = [0, 0]
    for level, action in enumerate(path):
        player = level % 2
        if not 0 <= action < n or action in bids[player]:
            raise PvfError(f"{list(path[: level + 1])}: {action} is not a legal action there")
        bids[player].append(int(action))
        if player == 1:
            _score(rules, bids, outcomes, points)
    terminal = len(path) == 2 * rounds
    if terminal:
        for player in (0, 1):
            bids[player].append(next(c for c in range(n) if c not in bids[player]))
        _score(rules, bids, outcomes, points)
    pending = bids[0].pop() if len(path) % 2 else -1
    return Replay(bids, outcomes, points, pending, TERMINAL if terminal else len(path) % 2)


def _score(rules: GoofspielRules, bids: tuple[list[int], list[int]], outcomes: list[int], points: list[int]) -> None:
    """The round both players have just bid in: its outcome and points."""
    t = len(outcomes)
    a, b = bids[0][t], bids[1][t]
    code = P1_WINS if a > b else P2_WINS if b > a else DRAW
    outcomes.append(code)
    if code != DRAW:
        points[code] += int(rules.point_values[t])


def information_state_string(rules: GoofspielRules, path: Sequence[int], player: int) -> str:
    """OpenSpiel's `information_state_string(player)` of the turn-based game after `path`."""
    s = replay(rules, path)
    own = s.bids[player] + ([s.pending] if player == 0 and s.pending >= 0 else [])
    return view_string(rules, player, len(path), own, s.outcomes)


def view_string(rules: GoofspielRules, player: int, level: int, own: Sequence[int], outcomes: Sequence[int]) -> str:
    """The information-state string of `player` at `level` from what it sees: its own bids (player 1's
    pending bid last at odd levels; the forced last bid too at terminals) and the outcome codes."""
    terminal = level == 2 * rules.rounds
    rounds = len(outcomes)
    bids = [int(a) for a in own[:rounds]]
    spent = 0
    for a in bids:
        spent |= 1 << a
    out = f"Current player: {TERMINAL if terminal else level % 2}\n"
    if player == 0 and level % 2 == 1:
        out += f"Observer's action this turn: {int(own[rounds])}\n"
    sequence = "".join([_ACTION[a] for a in bids])
    return (
        f"{out}P{player} hand: {_hand_string(spent, rules.num_cards)}\nP{player} action sequence: {sequence}\n"
        f"{_public_view(rules, tuple(outcomes), terminal)}Terminal?: {int(terminal)}\n"
    )


@lru_cache(maxsize=1 << 14)
def _hand_string(spent: int, num_cards: int) -> str:
    """The hand line's cards: those not in the bit mask `spent`, 1-based, ascending."""
    return "".join(_CARD[c] for c in range(num_cards) if not spent >> c & 1)


_ACTION = [f"{a} " for a in range(64)]
_CARD = _ACTION[1:]


def public_observation_string(rules: GoofspielRules, path: Sequence[int]) -> str:
    """The perfect-recall public observer's string of the original game's state after `path`."""
    s = replay(rules, path)
    return _public_view(rules, tuple(s.outcomes), s.player == TERMINAL)


@lru_cache(maxsize=1 << 14)
def _public_view(rules: GoofspielRules, outcomes: tuple[int, ...], terminal: bool) -> str:
    """The public lines of a string: point cards dealt, win sequence, points (the same for a public state's
    every infostate: cached)."""
    dealt = rules.point_cards[: rules.num_cards if terminal else len(outcomes) + 1]
    points = [0, 0]
    for t, code in enumerate(outcomes):
        if code != DRAW:
            points[code] += int(rules.point_values[t])
    cards = "".join(f"{c + 1} " for c in dealt)
    wins = "".join(f"{WIN_SEQUENCE[code]} " for code in outcomes)
    return f"Point card sequence: {cards}\nWin sequence: {wins}\nPoints: {points[0]} {points[1]} \n"


def legal_actions(rules: GoofspielRules, path: Sequence[int]) -> list[int]:
    """The turn-based game's legal actions after `path` (none at terminals)."""
    s = replay(rules, path)
    return [] if s.player == TERMINAL else s.hand(s.player, rules.num_cards)


def returns(rules: GoofspielRules, path: Sequence[int]) -> list[float]:
    """OpenSpiel's returns after `path` (zeros before the end)."""
    s = replay(rules, path)
    if s.player != TERMINAL:
        return [0.0, 0.0]
    p0, p1 = s.points
    if rules.returns == "win_loss":
        return [1.0, -1.0] if p0 > p1 else [-1.0, 1.0] if p1 > p0 else [0.0, 0.0]
    mean = (p0 + p1) / 2
    return [p0 - mean, p1 - mean]


# --- features: the observers' tensors ----------------------------------------------------------------------


def public_features(rules: GoofspielRules, paths: np.ndarray) -> np.ndarray:
    """[H, Fp] float32: the perfect-recall public observer's tensor (player 1's view) at each history.

    paths: [H, L] histories of one level L (a mid-round history is observed at its round's start).
    Fields: point_totals [2, N(N+1)/2 + 1] one-hot, win_sequence [N, 2], point_card_sequence [N, N].
    """
    n = rules.num_cards
    paths = np.asarray(paths, dtype=np.int64)
    H, L = paths.shape
    rounds = L // 2
    terminal = L == 2 * rules.rounds
    b0, b1 = _full_bids(rules, paths, terminal)
    done = rounds + int(terminal)
    code = _outcomes(b0[:, :done], b1[:, :done])
    values = rules.point_values[:done]
    points = [((code == who) * values).sum(axis=1) for who in (P1_WINS, P2_WINS)]
    slots = n * (n + 1) // 2 + 1
    totals = np.zeros((H, 2, slots), dtype=np.float32)
    rows = np.arange(H)
    for who in (0, 1):
        totals[rows, who, points[who]] = 1.0
    wins = np.zeros((H, n, 2), dtype=np.float32)
    r, t = np.nonzero(code != DRAW)
    wins[r, t, code[r, t]] = 1.0
    dealt = n if terminal else rounds + 1
    cards = np.zeros((H, n, n), dtype=np.float32)
    cards[:, np.arange(dealt), rules.point_cards[:dealt]] = 1.0
    return np.concatenate([totals.reshape(H, -1), wins.reshape(H, -1), cards.reshape(H, -1)], axis=1)


def private_features(rules: GoofspielRules, paths: np.ndarray, player: int) -> np.ndarray:
    """[H, Fq] float32: the perfect-recall private observer's tensor of `player` at each history.

    paths: [H, L] histories of one level L. Fields: player_hand [N], player_action_sequence [N, N].
    Player 1 in the middle of a round is observed as `pvf.games.features` observes it: after the
    round, completed with player 2's lowest card, so its pending bid is in its sequence (and, in the
    last decision round, the forced last round too).
    """
    n = rules.num_cards
    paths = np.asarray(paths, dtype=np.int64)
    H, L = paths.shape
    if player == 0 and L % 2 == 1:
        low = _lowest(_hands(rules, paths)[1])
        paths = np.concatenate([paths, low[:, None]], axis=1)
        L += 1
    terminal = L == 2 * rules.rounds
    bids = _full_bids(rules, paths, terminal)[player]
    hand = np.ones((H, n), dtype=np.float32)
    rows = np.repeat(np.arange(H), bids.shape[1])
    hand[rows, bids.ravel()] = 0.0
    sequence = np.zeros((H, n, n), dtype=np.float32)
    sequence[rows, np.tile(np.arange(bids.shape[1]), H), bids.ravel()] = 1.0
    return np.concatenate([hand, sequence.reshape(H, -1)], axis=1)


def _full_bids(rules: GoofspielRules, paths: np.ndarray, terminal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each player's bids [H, rounds] of completed rounds, the forced last round appended at terminals."""
    rounds = paths.shape[1] // 2
    b0, b1 = paths[:, 0 : 2 * rounds : 2], paths[:, 1 : 2 * rounds : 2]
    if terminal:
        hands = _hands(rules, paths)
        b0 = np.concatenate([b0, _lowest(hands[0])[:, None]], axis=1)
        b1 = np.concatenate([b1, _lowest(hands[1])[:, None]], axis=1)
    return b0, b1


def _hands(rules: GoofspielRules, paths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per player [H] int64 bit masks of the cards left after `paths` [H, L] (a pending bid is spent)."""
    full = (1 << rules.num_cards) - 1
    bits = np.left_shift(1, paths.astype(np.int64))
    return full - bits[:, 0::2].sum(axis=1), full - bits[:, 1::2].sum(axis=1)


def _lowest(mask: np.ndarray) -> np.ndarray:
    """[H] the lowest card in each bit mask (masks non-zero)."""
    return np.log2(mask & -mask).astype(np.int64)


def _outcomes(b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Outcome codes (P1_WINS, P2_WINS, DRAW) of bids of equal shape."""
    return np.where(b0 > b1, P1_WINS, np.where(b1 > b0, P2_WINS, DRAW))


# --- particle trees ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Template:
    """The subtree below a history at one level, depth first, in hand positions.

    parent: [S] template parent (-1 at the root); offset: [S] levels below the root;
    position: [S] the position, among the cards its mover held at the root, of the card bid into
    the node (-1 at the root).
    """

    parent: np.ndarray
    offset: np.ndarray
    position: np.ndarray


def _subtree_size(num_cards: int, level: int, cut: int) -> int:
    """The number of histories of `_template(num_cards, level, cut)`, counted without building it."""
    held = [num_cards - (level + 1) // 2, num_cards - level // 2]
    total = width = 1
    for lv in range(level, cut):
        width *= held[lv % 2]
        held[lv % 2] -= 1
        total += width
    return total


@lru_cache(maxsize=256)
def _template(num_cards: int, level: int, cut: int) -> _Template:
    """The subtree below a history at `level`, expanded at levels < `cut` (the root always).

    Built breadth first (children of a node: its mover's free positions, ascending), then
    renumbered depth first from the subtree sizes.
    """
    held = (num_cards - (level + 1) // 2, num_cards - level // 2)  # cards of each player at the root
    parents, positions = [np.array([-1])], [np.array([-1])]
    used = [np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)]
    lv = level
    while lv < cut:
        mover = lv % 2
        free = ((used[mover][:, None] >> np.arange(held[mover])) & 1) == 0  # [n, held]
        parent, position = np.nonzero(free)
        if len(parent) == 0:
            break
        parents.append(parent)
        positions.append(position)
        used = [u[parent] for u in used]
        used[mover] = used[mover] | (1 << position)
        lv += 1
    # Depth-first numbering: a node's index is its parent's + 1 + the sizes of its earlier siblings.
    sizes = [np.ones(len(p), dtype=np.int64) for p in parents]
    for k in range(len(parents) - 1, 0, -1):
        np.add.at(sizes[k - 1], parents[k], sizes[k])
    index = [np.zeros(1, dtype=np.int64)]
    for k in range(1, len(parents)):
        par = parents[k]
        before = np.cumsum(sizes[k]) - sizes[k]  # exclusive prefix sum over the level...
        first = np.searchsorted(par, par)  # ...restarted at each parent's first child
        index.append(index[k - 1][par] + 1 + before - before[first])
    total = sum(len(p) for p in parents)
    parent_out = np.empty(total, dtype=np.int64)
    offset_out = np.empty(total, dtype=np.int64)
    position_out = np.empty(total, dtype=np.int64)
    for k in range(len(parents)):
        parent_out[index[k]] = index[k - 1][parents[k]] if k else -1
        offset_out[index[k]] = k
        position_out[index[k]] = positions[k]
    return _Template(parent_out, offset_out, position_out)


def particle_tree(
    loaded: LoadedGame,
    rules: GoofspielRules,
    histories: Sequence[Sequence[int]] | np.ndarray,
    depth_limit: int | None = None,
    max_histories: int = DEFAULT_MAX_HISTORIES,
) -> tuple[PublicTree, np.ndarray]:
    """The particle tree of `histories` (as `pvf.games.particle_tree.build_particle_tree`) and their [K] indices."""
    paths, lengths = padded_paths(histories)
    _check_particles(loaded.game_string, rules, paths, lengths, depth_limit)
    order, maximal = _sorted_maximal(paths, lengths, rules.num_cards)
    roots_sorted = order[maximal]
    P, lens = paths[roots_sorted], lengths[roots_sorted]
    M = len(P)
    lcp = np.full(M, -1, dtype=np.int64)
    if M > 1:
        differ = P[1:] != P[:-1]
        lcp[1:] = differ.argmax(axis=1)
    cut = 2 * rules.rounds if depth_limit is None else min(2 * depth_limit, 2 * rules.rounds)
    root_levels, per_level = np.unique(lens, return_counts=True)
    sizes = {int(L): _subtree_size(rules.num_cards, int(L), cut) for L in root_levels}
    before = lens - 1 - lcp  # new prefix nodes of each root (its strict prefixes not shared with the previous root)
    below = sum(sizes[int(L)] * int(m) for L, m in zip(root_levels, per_level))  # Python ints: no overflow
    if int(before.sum()) + below > max_histories:
        raise TooManyHistories(
            f"the particle subgame of {loaded.game_string} has more than {max_histories:,} histories; "
            f"choose a later depth or fewer particles"
        )
    templates = {L: _template(rules.num_cards, L, cut) for L in sizes}
    size = np.zeros(M, dtype=np.int64)
    for L, template in templates.items():
        size[lens == L] = len(template.parent)
    start = np.concatenate([[0], np.cumsum(before + size)])
    H = int(start[-1])
    parent = np.empty(H, dtype=np.int64)
    action = np.empty(H, dtype=np.int64)
    level = np.empty(H, dtype=np.int64)
    # Prefix nodes: root r's are at levels lcp[r] + 1 ... len_r − 1, each the parent of the next.
    r = np.repeat(np.arange(M), before)
    j = np.arange(len(r)) - np.repeat(np.cumsum(before) - before, before)
    at = start[r] + j
    lv = lcp[r] + 1 + j
    level[at] = lv
    action[at] = np.where(lv > 0, P[r, np.maximum(lv - 1, 0)], -1)
    parent[at] = at - 1
    # The first new node of a root hangs below the node P_r[:lcp[r]], made by the last earlier root o
    # with lcp[o] < lcp[r] (the previous smaller element), at index start_o + lcp[r] − lcp[o] − 1.
    depth_span = np.arange(int(lens.max()) + 1)[:, None]
    candidate = np.where(lcp[None, :] < depth_span, np.arange(M)[None, :], -1)
    running = np.maximum.accumulate(candidate, axis=1)  # [λ, r]: last root up to r with lcp < λ
    owner = np.full(M, -1, dtype=np.int64)
    owner[1:] = running[lcp[1:], np.arange(M - 1)]
    attach = np.where(owner >= 0, start[np.maximum(owner, 0)] + lcp - lcp[np.maximum(owner, 0)] - 1, -1)
    first_new = np.flatnonzero(before > 0)
    parent[start[first_new]] = attach[first_new]
    # Templates: root r's subtree starts at start_r + before_r.
    base = start[:-1] + before
    held = _sorted_hands(rules, P, lens)  # [M, 2, N] each player's cards at the root, ascending
    for L, template in templates.items():
        group = np.flatnonzero(lens == L)
        idx = base[group][:, None] + np.arange(len(template.parent))[None, :]
        level[idx] = L + template.offset
        tpar = np.where(template.parent >= 0, template.parent, 0)
        parent[idx] = np.where(template.parent >= 0, base[group][:, None] + tpar, 0)
        root_parent = np.where(before[group] > 0, base[group] - 1, attach[group])
        parent[idx[:, 0]] = root_parent
        mover = (L + template.offset - 1) % 2
        pos = np.maximum(template.position, 0)
        action[idx] = held[group[:, None], mover[None, :], pos[None, :]]
        if L > 0:
            action[idx[:, 0]] = P[group, L - 1]
    if H:
        parent[0], action[0] = -1, -1
    split = int(lens.min())  # the levels above every particle hold prefix nodes only: the head
    if split == 0:  # the root is a particle: the head is the root alone
        head, head_paths = np.zeros(1, dtype=np.int64), np.zeros((1, 0), dtype=np.int64)
    else:
        above = lv < split
        head = at[above]
        head_paths = np.where(np.arange(split - 1)[None, :] < lv[above][:, None], P[r[above], : split - 1], -1)
    tree = _tree_from_arrays(loaded, rules, parent, action, level, head, head_paths)
    located = np.empty(len(paths), dtype=np.int64)
    located[roots_sorted] = base
    inside = np.setdiff1d(np.arange(len(paths)), roots_sorted)
    if len(inside):
        located[inside] = find_histories(tree, [paths[k, : lengths[k]] for k in inside])
    return tree, located


def _check_particles(
    game: str, rules: GoofspielRules, paths: np.ndarray, lengths: np.ndarray, depth_limit: int | None
) -> None:
    """The refusals of `pvf.games.particle_tree.build_particle_tree`, with its messages."""
    if len(paths) == 0:
        raise PvfError("a particle subgame needs at least one particle history")
    n, end = rules.num_cards, 2 * rules.rounds
    live = np.arange(paths.shape[1])[None, :] < lengths[:, None]
    cards = np.where(live, paths, n)  # padding sorts last
    bad = (lengths >= end) | np.any(live & ((paths < 0) | (paths >= n)), axis=1)
    for player in (0, 1):
        own = np.sort(cards[:, player::2], axis=1)
        bad |= np.any((own[:, 1:] == own[:, :-1]) & (own[:, 1:] < n), axis=1)
    for k in np.flatnonzero(bad):  # the first bad particle's message, as the walk finds it
        path = [int(a) for a in paths[k, : lengths[k]]]
        for t in range(min(len(path), end)):
            if not 0 <= path[t] < n or path[t] in path[t % 2 : t : 2]:
                raise PvfError(f"particle {path[: t + 1]}: {path[t]} is not a legal action of {game} there")
        if len(path) > end:
            raise PvfError(f"particle {path[: end + 1]} continues past a terminal history of {game}")
        raise PvfError(f"particle {path} is a terminal history of {game}; particles must be non-terminal")
    if depth_limit is not None:
        late = np.flatnonzero(lengths // 2 >= depth_limit)
        if len(late):
            k = int(late[0])
            raise PvfError(
                f"particle {[int(a) for a in paths[k, : lengths[k]]]} is at move {int(lengths[k] // 2)}, "
                f"not above the depth limit {depth_limit}"
            )


def _sorted_maximal(paths: np.ndarray, lengths: np.ndarray, num_cards: int) -> tuple[np.ndarray, np.ndarray]:
    """(order [K] sorting the paths (padded with -1) lexicographically, a prefix before its extensions; [K]
    bool: the sorted path has no other path as a prefix). PvfError for equal paths."""
    K = len(paths)
    code = _row_codes(paths, num_cards + 1)  # order-preserving: the padding is the smallest digit
    order = np.argsort(code, kind="stable")
    P, lens = paths[order], lengths[order]
    if K > 1 and np.any(code[order][1:] == code[order][:-1]):
        raise PvfError("particle histories must be distinct")
    maximal = np.ones(K, dtype=bool)
    if np.any(lens != lens[0]):  # only paths of different lengths can be prefixes of one another
        stack: list[int] = []
        for k in range(K):
            while stack and not _is_prefix(P[stack[-1]], lens[stack[-1]], P[k]):
                stack.pop()
            if stack:
                maximal[k] = False
            else:
                stack.append(k)
    return order, maximal


def _is_prefix(prefix: np.ndarray, length: int, path: np.ndarray) -> bool:
    return bool(np.array_equal(prefix[:length], path[:length]))


def _sorted_hands(rules: GoofspielRules, paths: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """[K, 2, N] each player's cards left after each path, ascending (padding at the end)."""
    n = rules.num_cards
    live = np.arange(paths.shape[1])[None, :] < lengths[:, None]
    spent = np.zeros((len(paths), 2, n), dtype=bool)
    rows, cols = np.nonzero(live)
    spent[rows, cols % 2, paths[rows, cols]] = True
    # Stable sort puts each player's held cards first, in card order.
    return np.argsort(spent, axis=2, kind="stable")


def _tree_from_arrays(
    loaded: LoadedGame,
    rules: GoofspielRules,
    parent: np.ndarray,
    action: np.ndarray,
    level: np.ndarray,
    head: np.ndarray,
    head_paths: np.ndarray,
) -> PublicTree:
    """The PublicTree of histories given depth first by parent [H], action [H] and level [H].

    head: [m] the histories of the levels above every particle (the root at least), ascending, and
    head_paths [m, W] their action sequences (padded with -1): few, labelled at once from their bids
    (`_head`). Below, level by level, each history's hands, points and labels follow from its
    parent's and its action: at an odd level player 1's bid is pending (its infostate takes the bid,
    the public state and player 2's infostate do not change); at an even level the round closes
    (every label takes its outcome, player 2's also its bid); at the last level the forced round
    closes too. `_number` then numbers the labels by their first history, as `tree_from_records`
    numbers public states and infostates.
    """
    H, n, end = len(parent), rules.num_cards, 2 * rules.rounds
    by_level = np.argsort(level.astype(np.int16), kind="stable")
    bounds = np.searchsorted(level[by_level], np.arange(end + 2))
    hands = [np.empty(H, dtype=np.int64), np.empty(H, dtype=np.int64)]
    points = [np.zeros(H, dtype=np.int64), np.zeros(H, dtype=np.int64)]
    ids = [np.zeros(H, dtype=np.int64) for _ in range(3)]  # labels of the public state and both infostates
    local = [np.zeros(H, dtype=np.int64) for _ in range(3)]  # the same, numbered within a level
    top = int(level[head].max())
    head_hands, head_points, keys = _head(rules, head_paths, level[head])
    firsts: list[list[np.ndarray]] = [[], [], []]
    counts, taken = [0, 0, 0], [0, 0, 0]
    at_top = level[head] == top
    for p in (0, 1):
        hands[p][head], points[p][head] = head_hands[:, p], head_points[:, p]
    for k, rows in enumerate(keys):
        _, first, inverse = np.unique(_row_codes(rows, 2 * n + 2), return_index=True, return_inverse=True)
        ids[k][head] = inverse.ravel()
        firsts[k].append(head[first])
        taken[k] = len(first)
        _, within = np.unique(inverse.ravel()[at_top], return_inverse=True)
        local[k][head[at_top]] = within.ravel()
        counts[k] = int(within.max()) + 1
    values = rules.point_values
    for lv in range(top + 1, end + 1):
        idx = by_level[bounds[lv] : bounds[lv + 1]]
        if len(idx) == 0:
            break
        par, a = parent[idx], action[idx]
        mover = (lv - 1) % 2
        for p in (0, 1):
            hands[p][idx] = hands[p][par] - (np.left_shift(1, a) if p == mover else 0)
            points[p][idx] = points[p][par]
        prev = [x[par] for x in local]
        if mover == 0:
            raw = [prev[0], prev[1] * n + a, prev[2]]
            bound = [counts[0], counts[1] * n, counts[2]]
        else:
            outcome = _outcomes(action[par], a)
            _add_points(points, idx, outcome, values[lv // 2 - 1])
            raw = [prev[0] * 3 + outcome, prev[1] * 3 + outcome, (prev[2] * n + a) * 3 + outcome]
            bound = [counts[0] * 3, counts[1] * 3, counts[2] * n * 3]
        if lv == end:  # the forced last round; terminals have no infostates
            outcome = _outcomes(_lowest(hands[0][idx]), _lowest(hands[1][idx]))
            _add_points(points, idx, outcome, values[rules.rounds])
            raw, bound = [raw[0] * 3 + outcome], [bound[0] * 3]
        for k in range(len(raw)):
            within, first = _first_labels(raw[k], bound[k])
            local[k][idx] = within
            ids[k][idx] = taken[k] + within
            firsts[k].append(idx[first])
            counts[k] = len(first)
            taken[k] += len(first)
    public_state, ps_first = _number(firsts[0], ids[0])
    terminal = level == end
    infostate = np.full((H, 2), -1, dtype=np.int64)
    info_first = []
    for p in (0, 1):
        number, first = _number(firsts[p + 1], ids[p + 1][~terminal])
        infostate[~terminal, p] = number
        info_first.append(first)
    player = np.where(terminal, TERMINAL, level % 2)
    utility = np.zeros(H)
    utility[terminal] = _utility(rules, points[0][terminal], points[1][terminal])
    ps_parent = np.full(len(ps_first), -1, dtype=np.int64)
    has_parent = parent[ps_first] >= 0
    ps_parent[has_parent] = public_state[parent[ps_first[has_parent]]]
    info_ps = tuple(public_state[f] for f in info_first)
    path = _Paths(parent, action)
    return PublicTree(
        loaded=loaded,
        parent=parent,
        action=action,
        level=level,
        depth=level // 2,
        player=player,
        chance_prob=np.ones(H),
        chance_reach=np.ones(H),
        utility=utility,
        public_state=public_state,
        infostate=infostate,
        infostate_strings=tuple(
            LazyList(len(f), lambda i, f=f, p=p: information_state_string(rules, path(f[i]), p))
            for p, f in enumerate(info_first)
        ),
        infostate_public_state=info_ps,
        infostate_history=tuple(info_first),
        infostate_actions=tuple(
            _ActionLists(np.where(level[f] % 2 == p, hands[p][f], 0), n) for p, f in enumerate(info_first)
        ),
        public_state_depth=level[ps_first] // 2,
        public_state_level=level[ps_first],
        public_state_parent=ps_parent,
        public_state_strings=LazyList(len(ps_first), lambda i: public_observation_string(rules, path(ps_first[i]))),
        public_state_infostates=tuple(_Groups(ps, len(ps_first)) for ps in info_ps),
    )


def _add_points(points: list[np.ndarray], idx: np.ndarray, outcome: np.ndarray, value: int) -> None:
    for who in (P1_WINS, P2_WINS):
        points[who][idx] += np.where(outcome == who, value, 0)


def _utility(rules: GoofspielRules, points1: np.ndarray, points2: np.ndarray) -> np.ndarray:
    """[T] player 1's zero-sum utility (r₁ − r₂)/2 from the final points [T] of each, as OpenSpiel's returns give it."""
    p0, p1 = points1.astype(np.float64), points2.astype(np.float64)
    if rules.returns == "win_loss":
        r0 = np.sign(p0 - p1)
        r1 = -r0
    else:
        mean = (p0 + p1) / 2
        r0, r1 = p0 - mean, p1 - mean
    return (r0 - r1) / 2.0


def _first_labels(raw: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """(labels [m] of `raw` [m] values in [0, bound), numbered by first appearance; [k] first positions)."""
    m = len(raw)
    if bound <= 8 * m + 1024:
        first = np.full(bound, m, dtype=np.int64)
        np.minimum.at(first, raw, np.arange(m))
        at = first[raw]
        is_first = at == np.arange(m)
        return (np.cumsum(is_first) - 1)[at], np.flatnonzero(is_first)
    _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inverse.ravel()], first[order]


def _number(firsts: list[np.ndarray], ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels numbered by their first history: ([h] the number of each of `ids` [h], [I] the first history of
    each number). firsts: blocks of the first histories of labels 0, 1, 2, ... in order."""
    everything = np.concatenate(firsts)
    order = np.argsort(everything)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[ids], everything[order]


def _row_codes(rows: np.ndarray, base: int) -> np.ndarray:
    """[m] int64 codes, equal exactly where the rows [m, w] (values in [-1, base − 1)) are equal and ordered as
    the rows are lexicographically: the rows as numbers in `base`, a chunk of columns at a time, ranked
    between chunks."""
    step = max(1, int(62 / np.log2(base)))
    code = np.zeros(len(rows), dtype=np.int64)
    for lo in range(0, rows.shape[1], step):
        chunk = rows[:, lo : lo + step] + 1
        if lo:
            code = np.unique(code, return_inverse=True)[1].ravel() * base ** chunk.shape[1]
        code = code + chunk @ (base ** np.arange(chunk.shape[1] - 1, -1, -1, dtype=np.int64))
    return code


def _head(
    rules: GoofspielRules, paths: np.ndarray, level: np.ndarray
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """From action sequences [m, W] (padded with -1) at `level` [m]: hands [m, 2], points [m, 2] and the
    rows that identify the public state, player 1's and player 2's infostate (level, outcomes, own bids)."""
    m, width = paths.shape
    rounds = (width + 1) // 2
    b0 = np.full((m, rounds), -1, dtype=np.int64)
    b1 = np.full((m, rounds), -1, dtype=np.int64)
    b0[:, : (width + 1) // 2] = paths[:, 0::2]
    b1[:, : width // 2] = paths[:, 1::2]
    full = (1 << rules.num_cards) - 1
    hand = np.stack([full - np.where(b >= 0, np.left_shift(1, np.maximum(b, 0)), 0).sum(axis=1) for b in (b0, b1)], 1)
    done = np.arange(rounds)[None, :] < (level // 2)[:, None]
    outcome = np.where(done, _outcomes(b0, b1), -1)
    values = rules.point_values[:rounds]
    points = np.stack([((outcome == who) * values).sum(axis=1) for who in (P1_WINS, P2_WINS)], axis=1)
    public = np.concatenate([level[:, None], outcome], axis=1)
    return hand, points, (public, np.concatenate([public, b0], axis=1), np.concatenate([public, b1], axis=1))


class _Paths:
    """The action sequence of a tree history, from its parent and action arrays."""

    def __init__(self, parent: np.ndarray, action: np.ndarray):
        self.parent, self.action = parent, action

    def __call__(self, history: int) -> list[int]:
        out, h = [], int(history)
        while self.parent[h] >= 0:
            out.append(int(self.action[h]))
            h = int(self.parent[h])
        return out[::-1]


class LazyList(Sequence):
    """A read-only list whose items are computed when read (and kept): a tree's OpenSpiel strings."""

    def __init__(self, length: int, item):
        self._length, self._item, self._done = length, item, {}

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._length))]
        i = int(i)
        if i < 0:
            i += self._length
        if not 0 <= i < self._length:
            raise IndexError(i)
        value = self._done.get(i)
        if value is None:
            value = self._done[i] = self._item(i)
        return value

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(self._length))


class _ActionLists(LazyList):
    """Per infostate the legal actions (the cards of a hand bit mask, ascending); () where the player does not act."""

    def __init__(self, masks: np.ndarray, num_cards: int):
        super().__init__(len(masks), lambda i: _cards(int(masks[i]), num_cards))


@lru_cache(maxsize=1 << 16)
def _cards(mask: int, num_cards: int) -> tuple[int, ...]:
    return tuple(c for c in range(num_cards) if mask >> c & 1)


class _Groups(LazyList):
    """Per public state the infostates in it, in index order (`PublicTree.public_state_infostates`)."""

    def __init__(self, public_state: np.ndarray, count: int):
        order = np.argsort(public_state, kind="stable")
        bounds = np.searchsorted(public_state[order], np.arange(count + 1))
        super().__init__(count, lambda p: order[bounds[p] : bounds[p + 1]])


# --- the engine ---------------------------------------------------------------------------------------------


class GoofspielEngine:
    """The particle path's native engine for one Goofspiel (`pvf.games.engine.ParticleEngine`).

    Strategies are asked once per distinct infostate while the same strategy object is in use
    (probabilities by (player, own bids, outcomes)); a new strategy object starts a new cache.
    """

    name = "native"

    def __init__(self, loaded: LoadedGame, rules: GoofspielRules):
        self.loaded, self.rules = loaded, rules
        cards = np.arange(rules.num_cards)
        # [N, N] bool per outcome code: the bid pairs (player 1's card, player 2's) giving it.
        self._pairs = (cards[:, None] > cards[None, :], cards[:, None] < cards[None, :], np.eye(len(cards), dtype=bool))
        self._strategy: Strategy | None = None
        self._policies: dict[tuple, tuple[np.ndarray, list[int], np.ndarray]] = {}

    def _policy(
        self, strategy: Strategy, player: int, own: tuple[int, ...], outcomes: tuple[int, ...]
    ) -> tuple[np.ndarray, list[int], np.ndarray]:
        """Where `player` bids next: (probabilities of its legal actions, the actions, [N] by card)."""
        if strategy is not self._strategy:
            self._strategy, self._policies = strategy, {}
        key = (player, own, outcomes)
        known = self._policies.get(key)
        if known is None:
            actions = [c for c in range(self.rules.num_cards) if c not in own]
            level = 2 * len(outcomes) + player
            probs = np.asarray(strategy(view_string(self.rules, player, level, own, outcomes), len(actions)))
            by_card = np.zeros(self.rules.num_cards)
            by_card[actions] = probs
            known = self._policies[key] = (probs.astype(np.float64, copy=False), actions, by_card)
        return known

    def play_to_depth(self, strategy: Strategy, depth: int, rng: np.random.Generator) -> tuple[int, ...]:
        """`pvf.games.history_sampling.play_to_depth`, draw for draw."""
        end = 2 * self.rules.rounds
        for _ in range(MAX_PLAYS):
            path: list[int] = []
            own: tuple[list[int], list[int]] = ([], [])
            outcomes: list[int] = []
            while len(path) < end and not (len(path) % 2 == 0 and len(path) // 2 >= depth):
                player = len(path) % 2
                p, actions, _ = self._policy(strategy, player, tuple(own[player]), tuple(outcomes))
                a = actions[draw_index(p, rng)]
                path.append(a)
                own[player].append(a)
                if player == 1:
                    outcomes.append(int(_outcomes(own[0][-1], a)))
            if len(path) < end:
                return tuple(path)
        raise PvfError(f"{MAX_PLAYS} plays of the trunk strategy all ended before move {depth}; choose a smaller depth")

    def sample_particles(
        self,
        strategy: Strategy,
        public_history: Sequence[int],
        num_particles: int,
        rng: np.random.Generator,
        start: ParticleSample | None = None,
    ) -> ParticleSample:
        """`pvf.games.history_sampling.sample_particles`, draw for draw: each round's bid pair drawn among
        those with the public state's outcome, from the products of the two strategies; from `start`'s
        particles (drawn by weight) where given."""
        if num_particles < 1:
            raise PvfError(f"the number of particles must be at least 1, got {num_particles}")
        history = [int(a) for a in public_history]
        target = replay(self.rules, history).outcomes
        n, rounds = self.rules.num_cards, len(history) // 2
        on_the_way = [(0, tuple(target[: i // 2])) for i in range(len(history) + 1)]
        observed = lambda path: (len(path) % 2, tuple(replay(self.rules, path).outcomes))  # noqa: E731
        prefixes = prefixes_of(start, len(history), observed, on_the_way)

        def draws() -> Iterator[tuple[list[int], float, tuple[float, float]]]:
            for _ in range(num_particles):
                path: list[int] = []
                rho, reach0, reach1 = 1.0, 1.0, 1.0
                if prefixes is not None:
                    begun, rho, (reach0, reach1) = prefixes.draw(rng)
                    path = list(begun)
                own: tuple[list[int], list[int]] = (path[0::2], path[1::2])
                held = (np.ones(n, dtype=bool), np.ones(n, dtype=bool))
                held[0][own[0]] = held[1][own[1]] = False
                for t in range(len(path) // 2, rounds):
                    seen = tuple(target[:t])
                    s0 = self._policy(strategy, 0, tuple(own[0]), seen)[2]
                    s1 = self._policy(strategy, 1, tuple(own[1]), seen)[2]
                    flat = np.flatnonzero(self._pairs[target[t]] & held[0][:, None] & held[1][None, :])
                    kept = np.multiply.outer(s0, s1).ravel()[flat]
                    Z = float(kept.sum())
                    if Z <= 0.0:
                        rho = 0.0
                        break
                    a, b = divmod(int(flat[draw_index(kept, rng, Z)]), n)
                    path += (a, b)
                    own[0].append(a)
                    own[1].append(b)
                    held[0][a] = held[1][b] = False
                    rho, reach0, reach1 = rho * Z, reach0 * s0[a], reach1 * s1[b]
                if len(history) % 2:  # half a round left: no continuation by a whole round fits
                    rho = 0.0
                yield path, rho, (reach0, reach1)

        return ParticleSample.from_draws(history, draws(), num_particles)

    def information_state_string(self, history: Sequence[int], player: int) -> str:
        """OpenSpiel's information-state string of `player` at a history."""
        return information_state_string(self.rules, [int(a) for a in history], player)

    def continuations(self, histories: np.ndarray, strategy: Strategy) -> Continuations:
        """`pvf.games.history_sampling.batch_continuations` of histories [P, L] of one level."""
        paths = np.asarray(histories, dtype=np.int64)
        P, L = paths.shape
        end, n = 2 * self.rules.rounds, self.rules.num_cards
        if L >= end:
            raise PvfError("terminal histories have no continuations")
        rounds = L // 2
        outcomes = _outcomes(paths[:, 0 : 2 * rounds : 2], paths[:, 1 : 2 * rounds : 2])
        hands = _hands(self.rules, paths)
        held = [((hands[p][:, None] >> np.arange(n)) & 1).astype(bool) for p in (0, 1)]
        by_card = [np.zeros((P, n)), np.zeros((P, n))]
        movers = (0, 1) if L % 2 == 0 else (1,)
        for k in range(P):
            seen = tuple(outcomes[k].tolist())
            for p in movers:
                by_card[p][k] = self._policy(strategy, p, tuple(paths[k, p::2].tolist()), seen)[2]
        if L % 2 == 0:
            parent, a, b = np.nonzero(held[0][:, :, None] & held[1][:, None, :])
            own = np.stack([by_card[0][parent, a], by_card[1][parent, b]], axis=1)
            actions = np.stack([a, b], axis=1)
        else:
            parent, b = np.nonzero(held[1])
            own = np.stack([np.ones(len(b)), by_card[1][parent, b]], axis=1)
            actions = b[:, None]
        return Continuations(
            parent=parent.astype(np.int64),
            actions=actions.astype(np.int64),
            probability=own[:, 0] * own[:, 1],
            own=own,
            terminal=np.full(len(parent), L + actions.shape[1] == end),
        )

    def particle_tree(
        self,
        histories: Sequence[Sequence[int]] | np.ndarray,
        depth_limit: int | None = None,
        max_histories: int = DEFAULT_MAX_HISTORIES,
    ) -> tuple[PublicTree, np.ndarray]:
        """The particle tree of `histories` and their [K] indices in it (module docstring, step 3)."""
        return particle_tree(self.loaded, self.rules, histories, depth_limit, max_histories)

    def induced_histories(self, tree: PublicTree, infostates: tuple[np.ndarray, np.ndarray]) -> InducedHistories:
        """Every history joining one of player 1's `infostates[0]` with one of player 2's `infostates[1]`
        (all of one level), in closed form: the pairs of own bid sequences whose outcomes are both
        infostates' win sequence."""
        ids = [np.asarray(infostates[p], dtype=np.int64) for p in (0, 1)]
        if len(ids[0]) == 0 or len(ids[1]) == 0:
            return InducedHistories(np.zeros((0, 0), dtype=np.int64), np.zeros((0, 2), dtype=np.int64))
        paths = [history_paths(tree, tree.infostate_history[p][ids[p]]) for p in (0, 1)]
        if paths[0].shape[1] != paths[1].shape[1]:
            raise PvfError("induced histories join infostates of one public state")
        L = paths[0].shape[1]
        r = L // 2
        seen = [_outcomes(x[:, 0 : 2 * r : 2], x[:, 1 : 2 * r : 2]) for x in paths]  # [J_n, r]
        own0, own1 = paths[0][:, 0::2], paths[1][:, 1::2]
        pair = _outcomes(own0[:, None, :r], own1[None, :, :])  # [J1, J2, r]
        joins = np.all((pair == seen[0][:, None, :]) & (pair == seen[1][None, :, :]), axis=2)
        a, b = np.nonzero(joins)
        out = np.empty((len(a), L), dtype=np.int64)
        out[:, 0::2] = own0[a]
        out[:, 1::2] = own1[b]
        return InducedHistories(out, np.stack([a, b], axis=1).astype(np.int64))

    def features(
        self, tree: PublicTree, public_state: int, infostates: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """([Fp] public features of the public state, per player [J_n, Fq] private features of `infostates`),
        as `pvf.games.features.sample_features` gives them."""
        history = tree.histories_in(public_state)[:1]
        public = public_features(self.rules, history_paths(tree, history))[0]
        private = [
            private_features(self.rules, history_paths(tree, tree.infostate_history[p][np.asarray(infostates[p])]), p)
            for p in (0, 1)
        ]
        return public, private


def native_engine(loaded: LoadedGame) -> GoofspielEngine | None:
    """The native engine of `loaded`, or None where this kernel does not play it."""
    rules = rules_of(loaded)
    return None if rules is None else GoofspielEngine(loaded, rules)
