"""The public tree: an OpenSpiel game enumerated once into flat arrays.

Enumeration, breadth first, so that every parent precedes its children:
  1. Walk the (turn-based) game from the root. For a simultaneous game the
     original state is walked in lockstep: a round is player 1's move, then
     player 2's move, then the joint action on the original state.
  2. Each history gets its parent, the action into it, its move number in the
     original game (chance moves count, a simultaneous round counts once), the
     player to move, the chance probability of the edge into it and the
     player-1 utility if terminal.
  3. Public states are keyed by (tree level, perfect-recall public observation
     of the original game). Games without a public observer fall back to the
     common-knowledge closure: histories are linked when they share an
     infostate of either player.
  4. Each non-terminal history gets, for each player, an *augmented infostate*:
     (public state, OpenSpiel information-state string of that player), defined
     whether or not the player acts there. Decision infostates are those where
     the player acts; they carry the legal actions.
Size guard: histories are counted as they are generated, so the queue stays
within the cap (`max_histories`); before that, Knuth's random-walk estimate
of the number of histories refuses games that exceed the cap many times over
in a fraction of a second (OpenSpiel's default Goofspiel, 13 cards: ~1e29).

Solvers never see OpenSpiel states: they see these arrays.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyspiel

from pvf.errors import PvfError
from pvf.games.loading import LoadedGame, load_game
from pvf.games.walk import Node, child, node_at, public_observer, root_node

CHANCE = -1
TERMINAL = -4
DEFAULT_MAX_HISTORIES = 2_000_000
# A game whose estimated size exceeds the cap this many times over is refused before enumeration;
# the estimate's spread on the games we know is well within a factor of 10 (tests/games/test_public_tree.py).
ESTIMATE_MARGIN = 10.0


@dataclass(frozen=True, eq=False)
class PublicTree:
    """A two-player zero-sum game enumerated into arrays.

    H histories, P public states, I_n augmented infostates of player n.

    parent: [H] index of the parent history, -1 at the root.
    action: [H] action (of the sequential game) leading into the history, -1 at the root.
    level: [H] number of actions from the root in the sequential game.
    depth: [H] OpenSpiel move number of the original game.
    player: [H] player to move: 0, 1, CHANCE (-1) or TERMINAL (-4).
    chance_prob: [H] probability of the chance edge into the history (1 otherwise).
    chance_reach: [H] product of chance probabilities from the root.
    utility: [H] player-1 utility at terminals (zero-sum normalised: (r₁ − r₂)/2), 0 elsewhere.
    utility_sum: r₁ + r₂, the same at every terminal (0 in a zero-sum game): player 1's payoff
        is utility + utility_sum / 2, player 2's utility_sum / 2 − utility.
    public_state: [H] public state index.
    infostate: [H, 2] augmented infostate index of each player, -1 at terminals.
    infostate_strings: per player, [I_n] OpenSpiel information-state strings.
    infostate_public_state: per player, [I_n] public state of the infostate.
    infostate_history: per player, [I_n] one history in the infostate.
    infostate_actions: per player, [I_n] legal actions (empty tuple where the player does not act).
    public_state_depth: [P] move number of the public state's histories.
    public_state_level: [P] tree level of the public state's histories.
    public_state_parent: [P] public state of the parent histories, -1 at the root.
    public_state_strings: [P] the public observation string (or closure label).
    public_state_infostates: per player, per public state, [K] augmented infostate
        indices in a fixed enumeration (order of first appearance).
    The per-infostate and per-public-state sequences may be computed when read (a native
    engine's trees format OpenSpiel strings only when asked, `pvf.games.goofspiel_kernel`).
    """

    loaded: LoadedGame
    parent: np.ndarray
    action: np.ndarray
    level: np.ndarray
    depth: np.ndarray
    player: np.ndarray
    chance_prob: np.ndarray
    chance_reach: np.ndarray
    utility: np.ndarray
    public_state: np.ndarray
    infostate: np.ndarray
    infostate_strings: tuple[Sequence[str], Sequence[str]]
    infostate_public_state: tuple[np.ndarray, np.ndarray]
    infostate_history: tuple[np.ndarray, np.ndarray]
    infostate_actions: tuple[Sequence[tuple[int, ...]], Sequence[tuple[int, ...]]]
    public_state_depth: np.ndarray
    public_state_level: np.ndarray
    public_state_parent: np.ndarray
    public_state_strings: Sequence[str]
    public_state_infostates: tuple[Sequence[np.ndarray], Sequence[np.ndarray]]
    utility_sum: float = 0.0
    _memo: dict[str, object] = field(default_factory=dict, repr=False)  # lookups built on first use

    @property
    def game_string(self) -> str:
        return self.loaded.game_string

    @property
    def num_histories(self) -> int:
        return len(self.parent)

    @property
    def num_public_states(self) -> int:
        return len(self.public_state_depth)

    def num_infostates(self, player: int) -> int:
        return len(self.infostate_strings[player])

    def is_decision(self, player: int) -> np.ndarray:
        """[I_n] bool: the player acts at this augmented infostate."""
        return np.array([len(a) > 0 for a in self.infostate_actions[player]], dtype=bool)

    def infostate_index(self, player: int, info_string: str) -> int:
        """Augmented infostate of `player` with OpenSpiel string `info_string` (decision or not)."""
        index = self._memo.get(f"strings{player}")
        if index is None:  # built on first use: every string of the player is read once
            index = self._memo[f"strings{player}"] = {s: i for i, s in enumerate(self.infostate_strings[player])}
        try:
            return index[info_string]
        except KeyError:
            raise PvfError(f"infostate {info_string!r} of player {player + 1} is not in {self.game_string}") from None

    def children(self, parents: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """[k] the child of each of `parents` [k] by each of `actions` [k]; -1 where the tree has none."""
        lookup = self._memo.get("children")
        if lookup is None:  # (parent, action) codes of every edge, sorted: built on first use
            edge = np.flatnonzero(self.parent >= 0)
            width = int(self.action.max()) + 1 if len(edge) else 1
            code = self.parent[edge] * width + self.action[edge]
            order = np.argsort(code)
            lookup = self._memo["children"] = (width, code[order], edge[order])
        width, codes, child = lookup
        parents, actions = np.asarray(parents, dtype=np.int64), np.asarray(actions, dtype=np.int64)
        want = np.where((actions >= 0) & (actions < width) & (parents >= 0), parents * width + actions, -1)
        if len(codes) == 0:
            return np.full(len(want), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(codes, want), len(codes) - 1)
        return np.where(codes[at] == want, child[at], -1)

    def public_states_at_depth(self, depth: int, non_terminal: bool = True) -> np.ndarray:
        """[P_d] public states whose histories have move number `depth`.

        With non_terminal=True only public states holding a non-terminal history.
        For a simultaneous game, the round's first turn is taken.
        """
        hist = np.flatnonzero(self.depth == depth)
        if non_terminal:
            hist = hist[self.player[hist] != TERMINAL]
        ps = np.unique(self.public_state[hist])
        if len(ps) == 0:
            return ps
        first_level = self.public_state_level[ps].min()
        return ps[self.public_state_level[ps] == first_level]

    def histories_in(self, public_state: int) -> np.ndarray:
        """[H_s] histories of a public state, in index order."""
        return np.flatnonzero(self.public_state == public_state)

    def state_at(self, history: int) -> pyspiel.State:
        """The sequential-game OpenSpiel state of a history (replayed from the root)."""
        return self._node_at(history).state

    def original_state_at(self, history: int) -> pyspiel.State:
        """The original-game state of a history (for a simultaneous game, the round's start)."""
        return self._node_at(history).original

    def _node_at(self, history: int) -> Node:
        path = []
        h = history
        while self.parent[h] >= 0:
            path.append(int(self.action[h]))
            h = int(self.parent[h])
        return node_at(self.loaded, path[::-1])


def _enumerate(loaded: LoadedGame, max_histories: int) -> Iterator[tuple[int, int, Node, float]]:
    """Yield (parent, action, node, chance_prob) breadth first.

    Histories are counted when generated, not when yielded, so the queue
    (the frontier) is bounded by the cap too: at most `max_histories`
    histories ever exist, and the cap error comes before memory runs out.
    """
    queue: deque[tuple[int, int, Node, float]] = deque([(-1, -1, root_node(loaded), 1.0)])
    count = 1
    me = 0
    while queue:
        parent, action, node, prob = queue.popleft()
        yield parent, action, node, prob
        state = node.state
        if not state.is_terminal():
            if state.is_chance_node():
                edges = state.chance_outcomes()
            else:
                edges = [(a, 1.0) for a in state.legal_actions()]
            count += len(edges)
            if count > max_histories:
                raise GameTooLarge(loaded, max_histories)
            for a, p in edges:
                queue.append((me, a, child(node, a, loaded.simultaneous), p))
        me += 1


class GameTooLarge(PvfError):
    """The game has more histories than the enumeration cap."""

    def __init__(self, loaded: LoadedGame, max_histories: int, estimate: float | None = None):
        estimate = estimate_histories(loaded) if estimate is None else estimate
        super().__init__(
            f"{loaded.game_string} has more than {max_histories:,} histories (about {estimate:.1e} by random "
            f"playouts); raise the cap with --max-histories if you have the memory (1-3 GB per million histories)"
        )


def estimate_histories(loaded: LoadedGame, probes: int = 256, seed: int = 0) -> float:
    """Knuth's estimate of the number of histories: the mean over random root-to-leaf walks of
    1 + b_0 + b_0·b_1 + ..., where b_k is the branching factor met at step k. Unbiased, cheap
    (`probes` walks), and with a heavy tail, so it is an order of magnitude, not a count."""
    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(probes):
        state = loaded.sequential.new_initial_state()
        size, width = 1.0, 1.0
        while not state.is_terminal():
            actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            width *= len(actions)
            size += width
            state.apply_action(actions[int(rng.integers(len(actions)))])
        total += size
    return total / probes


def build_public_tree(game: str | LoadedGame, max_histories: int = DEFAULT_MAX_HISTORIES) -> PublicTree:
    """Enumerate `game` (an OpenSpiel game string or a LoadedGame) into a PublicTree."""
    if max_histories < 1:
        raise PvfError(f"the history cap must be a positive integer, got {max_histories}")
    loaded = game if isinstance(game, LoadedGame) else load_game(game)
    estimate = estimate_histories(loaded)
    if estimate > ESTIMATE_MARGIN * max_histories:
        raise GameTooLarge(loaded, max_histories, estimate)
    return tree_from_records(loaded, _enumerate(loaded, max_histories), public_observer(loaded))


def tree_from_records(
    loaded: LoadedGame, records: Iterable[tuple[int, int, Node, float]], observer: object | None
) -> PublicTree:
    """A PublicTree from (parent, action, node, chance_prob) records, parents before children.

    `build_public_tree` passes the whole game; `pvf.games.particle_tree` only
    the histories its particles reach. observer: the public observer, or
    None for the common-knowledge closure.
    """
    parent, action, level, depth, player, cprob, util = [], [], [], [], [], [], []
    pub_key: list[object] = []
    info_str: list[tuple[str | None, str | None]] = []
    acts: list[tuple[int, ...]] = []
    sums: set[float] = set()
    for par, act, node, prob in records:
        state = node.state
        parent.append(par)
        action.append(act)
        level.append(0 if par < 0 else level[par] + 1)
        depth.append(node.original.move_number())
        prob_cur = state.current_player()
        player.append(prob_cur if prob_cur in (0, 1) else (TERMINAL if state.is_terminal() else CHANCE))
        cprob.append(prob)
        if state.is_terminal():
            r = state.returns()
            util.append((r[0] - r[1]) / 2.0)
            sums.add(r[0] + r[1])
            info_str.append((None, None))
        else:
            util.append(0.0)
            info_str.append((_info_string(state, 0), _info_string(state, 1)))
        acts.append(tuple(state.legal_actions()) if prob_cur in (0, 1) else ())
        if observer is not None:
            pub_key.append((level[-1], observer.string_from(node.original, 0)))
    parent_a = np.asarray(parent, dtype=np.int64)
    H = len(parent_a)
    cprob_a = np.asarray(cprob, dtype=np.float64)
    creach = np.ones(H)
    for h in range(1, H):
        creach[h] = creach[parent_a[h]] * cprob_a[h]
    level_a = np.asarray(level, dtype=np.int64)
    if observer is None:
        public_state, pub_strings = _closure_public_states(info_str, level_a)
    else:
        public_state, pub_strings = _index_keys(pub_key)
    player_a = np.asarray(player, dtype=np.int64)
    infostate = np.full((H, 2), -1, dtype=np.int64)
    strings: tuple[list[str], list[str]] = ([], [])
    info_ps: tuple[list[int], list[int]] = ([], [])
    info_hist: tuple[list[int], list[int]] = ([], [])
    info_acts: tuple[list[tuple[int, ...]], list[tuple[int, ...]]] = ([], [])
    index: tuple[dict, dict] = ({}, {})
    for h in range(H):
        if player_a[h] == TERMINAL:
            continue
        for n in (0, 1):
            key = (int(public_state[h]), info_str[h][n])
            i = index[n].get(key)
            if i is None:
                i = index[n][key] = len(strings[n])
                strings[n].append(info_str[h][n])
                info_ps[n].append(int(public_state[h]))
                info_hist[n].append(h)
                info_acts[n].append(())
            infostate[h, n] = i
            if player_a[h] == n:
                if info_acts[n][i] and info_acts[n][i] != acts[h]:
                    raise PvfError(f"{loaded.game_string}: infostate {info_str[h][n]!r} has inconsistent actions")
                info_acts[n][i] = acts[h]
    P = len(pub_strings)
    ps_depth = np.zeros(P, dtype=np.int64)
    ps_level = np.zeros(P, dtype=np.int64)
    ps_parent = np.full(P, -1, dtype=np.int64)
    depth_a = np.asarray(depth, dtype=np.int64)
    ps_depth[public_state] = depth_a
    ps_level[public_state] = level_a
    has_par = parent_a >= 0
    ps_parent[public_state[has_par]] = public_state[parent_a[has_par]]
    ps_infos: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    for n in (0, 1):
        ips = np.asarray(info_ps[n], dtype=np.int64)
        order = np.argsort(ips, kind="stable")
        bounds = np.searchsorted(ips[order], np.arange(P + 1))
        ps_infos[n].extend(order[bounds[p] : bounds[p + 1]] for p in range(P))
    return PublicTree(
        loaded=loaded,
        parent=parent_a,
        action=np.asarray(action, dtype=np.int64),
        level=level_a,
        depth=depth_a,
        player=player_a,
        chance_prob=cprob_a,
        chance_reach=creach,
        utility=np.asarray(util, dtype=np.float64),
        public_state=public_state,
        infostate=infostate,
        infostate_strings=strings,
        infostate_public_state=tuple(np.asarray(x, dtype=np.int64) for x in info_ps),
        infostate_history=tuple(np.asarray(x, dtype=np.int64) for x in info_hist),
        infostate_actions=info_acts,
        public_state_depth=ps_depth,
        public_state_level=ps_level,
        public_state_parent=ps_parent,
        public_state_strings=pub_strings,
        public_state_infostates=ps_infos,
        utility_sum=_constant_sum(loaded, sums),
    )


def _constant_sum(loaded: LoadedGame, sums: set[float]) -> float:
    """The one r₁ + r₂ of every terminal (0 with none); PvfError if the payoffs are not constant-sum."""
    if not sums:
        return 0.0
    low, high = min(sums), max(sums)
    if high - low > 1e-9 * max(1.0, abs(high)):
        raise PvfError(
            f"game {loaded.game_string!r} is not constant-sum: its terminal payoffs sum to {low:g} "
            f"and to {high:g}; pvf solves two-player zero-sum (or constant-sum) games"
        )
    return float(low)


def _info_string(state: pyspiel.State, player: int) -> str:
    try:
        return state.information_state_string(player)
    except Exception:  # some games define no infostate at chance nodes
        return "<chance>" + state.history_str()


def _index_keys(keys: list[object]) -> tuple[np.ndarray, list[str]]:
    index: dict[object, int] = {}
    out = np.empty(len(keys), dtype=np.int64)
    for h, k in enumerate(keys):
        out[h] = index.setdefault(k, len(index))
    return out, [str(k[1]) if isinstance(k, tuple) else str(k) for k in index]


def _closure_public_states(info_str: list[tuple[str | None, str | None]], level: np.ndarray):
    """Common-knowledge closure: union histories sharing an infostate of either player."""
    H = len(info_str)
    root = np.arange(H)

    def find(x: int) -> int:
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    first: dict[tuple[int, int, str], int] = {}
    for h, pair in enumerate(info_str):
        for n, s in enumerate(pair):
            if s is None:
                continue
            other = first.setdefault((int(level[h]), n, s), h)
            a, b = find(h), find(other)
            if a != b:
                root[max(a, b)] = min(a, b)
    labels = [find(h) for h in range(H)]
    return _index_keys([(int(level[h]), f"closure:{labels[h]}") for h in range(H)])
