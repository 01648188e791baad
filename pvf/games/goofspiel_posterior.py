"""The opponent's hidden bids in imperfect-information Goofspiel, drawn from the posterior an infostate gives them.

An infostate of player p is p's own bids and each completed round's outcome
(who bid higher); the opponent's bids are hidden. Under a uniform prior
over the opponent's play (a uniform random opponent, or OpenSpiel's
`ResampleFromInfostate` convention) every opponent bid sequence consistent
with the infostate is equally likely. `sample_hidden_bids` draws one
exactly, without rejection:
  - the number of consistent completions from round t with the opponent's
    used cards S is N(t, S) = Σ_c N(t + 1, S ∪ {c}) over the cards c ∉ S
    that give round t's outcome against p's bid (N(T, S) = 1 after the
    last completed round T), memoised per infostate;
  - round t's card is drawn with probability N(t + 1, S ∪ {c}) / N(t, S),
    which makes the whole sequence uniform.
Under a random opponent that bids card c of its hand with probability
p(c | S) = exp(τ·c) / Σ_{c' ∉ S} exp(τ·c') each round (`tilt` τ: the
greedy rollout policy's log-weight per face value, `pvf.games.rollouts`)
the same recursion with each step weighted, W(t, S) = Σ_c p(c | S)·
W(t + 1, S ∪ {c}), and draws with probability p(c | S)·W(t + 1, S ∪ {c}) /
W(t, S) give the exact posterior; τ = 0 is the uniform case (integer
counts, the same draws).
IS-MCTS's resampler (`pvf.agents.ismcts`) and MMD search's beliefs
(`pvf.agents.mmd_search`) draw from it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from pvf.games.goofspiel_kernel import DRAW, P1_WINS, P2_WINS, GoofspielRules, replay
from pvf.games.history_sampling import draw_index


def infostate_of(rules: GoofspielRules, history: Sequence[int], player: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(`player`'s bids in the completed rounds, those rounds' outcome codes) after a turn-based `history`."""
    rounds = len(history) // 2
    own = tuple(int(a) for a in history[player::2][:rounds])
    return own, tuple(replay(rules, list(history[: 2 * rounds])).outcomes)


def sample_hidden_bids(
    rules: GoofspielRules,
    player: int,
    own: Sequence[int],
    outcomes: Sequence[int],
    rng: np.random.Generator,
    tilt: float = 0.0,
) -> list[int]:
    """The opponent's bids in the completed rounds consistent with `player`'s bids `own` and the rounds'
    `outcomes`, drawn from their posterior under a random opponent with log-weight `tilt` per face value
    (0: uniformly among them; module docstring)."""
    own, outcomes = tuple(own), tuple(outcomes)
    counts = _completions(rules.num_cards, player, own, outcomes, float(tilt))
    step = _step_weight(rules.num_cards, float(tilt))
    used, hidden = 0, []
    for t in range(len(own)):
        cards = _candidates(rules.num_cards, player, own[t], outcomes[t], used)
        weights = np.array([step(c, used) * counts(t + 1, used | (1 << c)) for c in cards], dtype=np.float64)
        c = cards[draw_index(weights, rng)]
        hidden.append(c)
        used |= 1 << c
    return hidden


def _candidates(num_cards: int, player: int, own: int, outcome: int, used: int) -> list[int]:
    """The opponent's cards not in `used` that give round outcome `outcome` against `player`'s bid `own`."""
    out = []
    for c in range(num_cards):
        if used >> c & 1:
            continue
        first, second = (own, c) if player == 0 else (c, own)
        code = P1_WINS if first > second else P2_WINS if second > first else DRAW
        if code == outcome:
            out.append(c)
    return out


@functools.lru_cache(maxsize=16)
def _step_weight(num_cards: int, tilt: float):
    """p(c | S) of the module docstring as a function of (c, S's bit mask); 1 for every card where `tilt` is 0
    (the uniform case's integer counts)."""
    if not tilt:
        return lambda card, used: 1
    log_weight = tilt * np.arange(num_cards, dtype=np.float64)

    @functools.cache
    def step(card: int, used: int) -> float:
        hand = [c for c in range(num_cards) if not used >> c & 1]
        return float(np.exp(log_weight[card] - np.logaddexp.reduce(log_weight[hand])))

    return step


@functools.lru_cache(maxsize=256)
def _completions(num_cards: int, player: int, own: tuple[int, ...], outcomes: tuple[int, ...], tilt: float):
    """N(t, S) (W(t, S) where `tilt` is not 0) of the module docstring for one infostate (memoised)."""
    step = _step_weight(num_cards, tilt)

    @functools.cache
    def count(t: int, used: int) -> float:
        if t == len(own):
            return 1
        cards = _candidates(num_cards, player, own[t], outcomes[t], used)
        return sum(step(c, used) * count(t + 1, used | (1 << c)) for c in cards)

    return count
