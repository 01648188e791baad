"""The opponent's hidden bids in imperfect-information Goofspiel, drawn uniformly among those an infostate allows.

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
    rules: GoofspielRules, player: int, own: Sequence[int], outcomes: Sequence[int], rng: np.random.Generator
) -> list[int]:
    """The opponent's bids in the completed rounds, drawn uniformly among those consistent with `player`'s bids
    `own` and the rounds' `outcomes` (module docstring)."""
    own, outcomes = tuple(own), tuple(outcomes)
    counts = _completions(rules.num_cards, player, own, outcomes)
    used, hidden = 0, []
    for t in range(len(own)):
        cards = _candidates(rules.num_cards, player, own[t], outcomes[t], used)
        weights = np.array([counts(t + 1, used | (1 << c)) for c in cards], dtype=np.float64)
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


@functools.lru_cache(maxsize=256)
def _completions(num_cards: int, player: int, own: tuple[int, ...], outcomes: tuple[int, ...]):
    """N(t, S) of the module docstring for one infostate (memoised)."""

    @functools.cache
    def count(t: int, used: int) -> int:
        if t == len(own):
            return 1
        return sum(count(t + 1, used | (1 << c)) for c in _candidates(num_cards, player, own[t], outcomes[t], used))

    return count
