"""The value of random play from given histories: a leaf evaluator that needs no training.

Below a depth limit both players play at random until the end of the game,
each round bidding card c of its hand with probability ∝ exp(β·c) when
points descend (exp(−β·c) when they ascend): β = `greed` = 0 is uniform
play; a larger β bids the cards that fit the prizes left, high cards on
high prizes, first (a random policy nearer to how players play). Drawn
round by round this is a Plackett–Luce order of the hand, so each
player's bids over the m rounds left are a random permutation of its m
cards, the two players' independent, and player 1's expected return from
a history at a round's start is E[u₁] over pairs of such permutations:
  - `draws=None`: exactly, over all (m!)² pairs, each weighted by its
    probability (small m only: tests and small games);
  - `draws=R`: the mean over R pairs drawn from `rng` (standard error at
    most 1/√R for win-loss returns), all at once as arrays `[U, R, m]`;
    uniform orders are drawn among `PERMUTATIONS` uniform orders drawn
    first (a gather instead of a sort per draw), greedy ones by sorting
    β·c plus Gumbel noise (the Gumbel-max form of Plackett–Luce).
The value depends on the history only through the two hands left and the
point difference so far, so each distinct (hands, difference) is valued
once (at two moves below Goofspiel-13's root, 24,336 histories share 6,084
hand pairs), and the bids are gathered `CHUNK_ELEMENTS` at a time, as
small integers, not as whole [U, R, m] arrays (gigabytes for the particle
agent's solves two moves ahead; docs/results/speed.md, "Rollout leaf
values"); the values are the same bit for bit whatever the chunk (each
hands-and-score's draws and sums are its own).
Rollout leaves (`pvf.valuefn.rollout_leaves`: the particle agent's
`leaves=rollout`, the particle-trunk sweep's `--rollouts`) value each leaf
history of a trunk this way; particle nets can take the exact values as an
input (`pvf generate --rollout-input β`, `rollout_rules` checks the game).
"""

from __future__ import annotations

import itertools

import numpy as np

from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import GoofspielRules, rules_of
from pvf.games.loading import LoadedGame
from pvf.games.public_tree import PublicTree

EXACT_CARDS = 6  # exact values enumerate (m!)² bid orders: at most 518,400 per history
PERMUTATIONS = 4096  # sampled values draw each bid order among this many drawn per call
CHUNK_ELEMENTS = 1 << 20  # bids gathered at a time: the arrays of one chunk stay in cache, not gigabytes


def rollout_rules(
    loaded: LoadedGame, exact_at: int | None = None, what: str = "rollout values", hint: str = ""
) -> GoofspielRules:
    """The kernel's rules of `loaded` for rollouts, else a PvfError naming `what` needs them: a Goofspiel whose
    points descend or ascend and, where `exact_at` (a move) is given, at most `EXACT_CARDS` cards left there
    (`hint` ends that error)."""
    rules = rules_of(loaded)
    if rules is None:
        raise PvfError(f"{what} play Goofspiel (points descending or ascending), not {loaded.game_string}")
    if exact_at is not None and rules.num_cards - exact_at > EXACT_CARDS:
        raise PvfError(
            f"exact {what} enumerate every bid order of the cards left, at most {EXACT_CARDS}: "
            f"{rules.num_cards - exact_at} are left at move {exact_at}{hint}"
        )
    return rules


def bid_tilt(rules: GoofspielRules, greed: float) -> float:
    """The rollout policy's log-weight per card face value for `greed` β: β where points descend, −β where they
    ascend (module docstring)."""
    return greed if rules.order == "descending" else -greed


def history_paths(tree: PublicTree, histories: np.ndarray) -> np.ndarray:
    """[H, L] the action paths from the tree's root of `histories` [H], all at one level L."""
    histories = np.asarray(histories, dtype=np.int64)
    levels = np.unique(tree.level[histories])
    if len(levels) > 1:
        raise PvfError(f"histories at several levels ({levels.tolist()}) have no common path length")
    length = int(levels[0]) if len(levels) else 0
    paths = np.empty((len(histories), length), dtype=np.int64)
    h = histories.copy()
    for column in range(length - 1, -1, -1):
        paths[:, column] = tree.action[h]
        h = tree.parent[h]
    return paths


def play_values(
    rules: GoofspielRules,
    paths: np.ndarray,
    draws: int | None,
    rng: np.random.Generator | None = None,
    greed: float = 0.0,
) -> np.ndarray:
    """[H] player 1's expected return (zero-sum: (r₁ − r₂)/2) of random play from each path [H, L].

    paths: turn-based action paths, all at one round's start (L even, at most 2·rounds: at 2·rounds, the
    terminal histories, the value is the return after the forced last round).
    draws: bid orders drawn per history, or None for the exact expectation (at most `EXACT_CARDS` cards left).
    greed: β ≥ 0 of the bidding policy (module docstring); 0, uniform play.
    """
    paths = np.asarray(paths, dtype=np.int64).reshape(len(paths), -1)
    length = paths.shape[1]
    if length % 2 or length > 2 * rules.rounds:
        raise PvfError(f"rollout values start at a round's start, not after {length} actions")
    n, done = rules.num_cards, length // 2
    m = n - done
    if draws is None and m > EXACT_CARDS:
        raise PvfError(f"exact rollout values enumerate ({m}!)² bid orders; give a number of draws instead")
    if not greed >= 0.0:
        raise PvfError(f"the rollout policy's greed is a number β ≥ 0, got {greed}")
    if draws is not None and (draws < 1 or rng is None):
        raise PvfError("sampled rollout values need at least one draw and a generator")
    if paths.size and (paths.min() < 0 or paths.max() >= n):
        raise PvfError(f"a path bids a card outside 0..{n - 1}: it is not a history of the game")
    # What the value depends on: the hands left and the point difference so far; each distinct one valued once.
    bids = paths[:, 0::2], paths[:, 1::2]
    worth_done = rules.point_values[:done]
    lead = ((bids[0] > bids[1]) * worth_done).sum(axis=1) - ((bids[1] > bids[0]) * worth_done).sum(axis=1)
    spent = [
        np.bitwise_or.reduce(np.left_shift(1, b), axis=1) if done else np.zeros(len(paths), np.int64) for b in bids
    ]
    if any(np.any(np.bitwise_count(s) != done) for s in spent):
        raise PvfError("a path bids some card twice: it is not a history of the game")
    offset = int(rules.point_values.sum())  # |lead| is below the points of the whole game
    code = (spent[0] << n | spent[1]) * (2 * offset + 1) + (lead + offset)
    codes, inverse = np.unique(code, return_inverse=True)
    lead_left = codes % (2 * offset + 1) - offset
    pair = codes // (2 * offset + 1)
    cards = np.arange(n)
    hands = [
        np.broadcast_to(cards, (len(codes), n))[(mask[:, None] >> cards & 1) == 0].reshape(len(codes), m)
        for mask in (pair >> n, pair & ((1 << n) - 1))
    ]  # [U, m] each player's cards left, ascending
    tilt = bid_tilt(rules, greed)  # each card's log-weight per face value
    weights = None  # [U, m!²] the probability of each pair of orders (exact values with greed only)
    if draws is None:
        orders = np.array(list(itertools.permutations(range(m))), dtype=np.int64)  # [m!, m]
        first = np.repeat(orders, len(orders), axis=0)[None]  # [1, m!², m]
        second = np.tile(orders, (len(orders), 1))[None]
        if greed:
            p = [_order_probabilities(tilt * hand, orders) for hand in hands]  # [U, m!] each
            weights = (p[0][:, :, None] * p[1][:, None, :]).reshape(len(codes), -1)

        def pairs(rows: slice) -> tuple[np.ndarray, np.ndarray]:  # the bid orders of rows [c]: [1, R, m] each
            return first, second

    elif greed:
        first, second = (
            np.argsort(-(tilt * hand[:, None, :] + rng.gumbel(size=(len(codes), draws, m))), axis=2) for hand in hands
        )  # [U, R, m] Plackett–Luce orders: the largest perturbed score first

        def pairs(rows: slice) -> tuple[np.ndarray, np.ndarray]:
            return first[rows], second[rows]

    else:
        table = np.argsort(rng.random((PERMUTATIONS, m)), axis=1)  # bid orders drawn from
        drawn = [rng.integers(PERMUTATIONS, size=(len(codes), draws)) for _ in range(2)]  # [U, R] rows of it

        def pairs(rows: slice) -> tuple[np.ndarray, np.ndarray]:
            return table[drawn[0][rows]], table[drawn[1][rows]]

    worth_left = rules.point_values[done:].astype(np.float32)
    values = np.empty(len(codes))
    chunk = max(1, CHUNK_ELEMENTS // ((draws or len(orders) ** 2) * max(m, 1)))
    for start in range(0, len(codes), chunk):
        rows = slice(start, start + chunk)
        orders0, orders1 = pairs(rows)
        rounds = np.sign(_bids(hands[0][rows], orders0) - _bids(hands[1][rows], orders1)).astype(np.float32)
        difference = lead_left[rows, None] + rounds @ worth_left  # exact: small integers
        if rules.returns == "win_loss":
            r0 = np.sign(difference).astype(np.float64)  # +1 where player 1 ends ahead
        else:
            r0 = difference.astype(np.float64) / 2.0  # r₀ = p₀ − (p₀ + p₁)/2
        values[rows] = r0.mean(axis=1) if weights is None else (r0 * weights[rows]).sum(axis=1)
    return values[inverse.reshape(-1)]


def _bids(hands: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """[c, R, m] the cards of `hands` [c, m] in each bid order of `orders` [c or 1, R, m] (positions in the hand)."""
    c, m = hands.shape
    flat = np.ascontiguousarray(hands, dtype=np.int8).ravel()  # faces below 128: an eighth of int64's traffic
    return flat[orders + (np.arange(c) * m)[:, None, None]]


def _order_probabilities(scores: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """[U, P] the Plackett–Luce probability of each order [P, m] of a hand whose cards have log-weights [U, m]."""
    ordered = scores[:, orders]  # [U, P, m] the log-weights in bid order
    remaining = np.logaddexp.accumulate(ordered[:, :, ::-1], axis=2)[:, :, ::-1]  # log Σ of the cards not yet bid
    return np.exp((ordered - remaining).sum(axis=2))
