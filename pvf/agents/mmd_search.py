"""MMD search (MMDS): one magnetic-mirror-descent update of a blueprint at the agent's infostate, from sampled beliefs.

The update-equivalence paper (sec. 3.1, Algorithm 1; app. B.3) derives a
decision-time planner from a last-iterate algorithm: at the agent's
infostate it estimates the blueprint's action values by rollouts from
histories drawn from the blueprint's posterior and plays the algorithm's
update of the blueprint on them. With magnetic mirror descent the update
has a closed form,
    π'(a) ∝ [π(a) · exp(η q[a]) · ρ(a)^(ηα)]^(1/(1+αη)),
π the blueprint, ρ the magnet, η the step size, α the magnet's weight.
pvf implements the paper's 2p0s setting "Random + MMDS" (its fig. 3 and
table 3) in imperfect-information Goofspiel, and the same update of a
greedier random blueprint (the paper's "blueprint + MMDS" with a
blueprint whose posterior and rollouts are exact):
  - blueprint π: each round a card c of the hand with probability
    ∝ exp(τ·c), τ = ±`greed` (`pvf.games.rollouts.bid_tilt`; greed 0,
    the default, is the paper's uniform blueprint); magnet ρ uniform (as
    in MMD's training); η = 50, α = 0.01 (app. B.3);
  - beliefs: `samples` opponent bid sequences from the blueprint's
    posterior, drawn exactly (`pvf.games.goofspiel_posterior`; uniform
    over the sequences consistent with the infostate where greed is 0)
    where the paper filters 10 particles;
  - action values: q[a] = the mean over the samples and the opponent's
    current bid b (drawn from the blueprint over the cards it has left)
    of the blueprint's expected return after the round (a, b)
    (`pvf.games.rollouts.play_values` with the same greed: exact for few
    cards left, else `draws` sampled continuations). The paper rolls out
    once per particle and action; this estimates the same q^π with less
    variance.
No subgame is built or solved: a decision costs K·|A|² rollout values, and
nothing ties it to public states (the paper's point: it scales with the
hidden information where PBS methods cannot). The bot samples its action
from π'; each decision's generator is seeded by the agent's seed and its
infostate, so the strategy is a function of the infostate and
`search_policy` assembles it in games small enough to judge exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyspiel

from pvf.agents.bot import SeatBot
from pvf.errors import PvfError
from pvf.games.goofspiel_kernel import GoofspielRules, rules_of
from pvf.games.goofspiel_posterior import infostate_of, sample_hidden_bids
from pvf.games.loading import LoadedGame
from pvf.games.particle_tree import history_actions
from pvf.games.public_tree import PublicTree
from pvf.games.rollouts import bid_tilt, play_values

EXACT_ROLLOUT_CARDS = 4  # with this many cards or fewer left after the round, rollouts are exact ((4!)² orders)


@dataclass(frozen=True)
class MMDSearch:
    """MMD search in one Goofspiel (module docstring): samples per decision, η, α, sampled continuations per
    (sample, action, opponent bid) and the seed of every decision's generator."""

    rules: GoofspielRules
    samples: int = 10
    eta: float = 50.0
    alpha: float = 0.01
    draws: int = 64
    seed: int = 0
    greed: float = 0.0

    def __post_init__(self) -> None:
        if self.samples < 1 or self.draws < 1:
            raise PvfError("MMD search needs at least one belief sample and one rollout per value")
        if self.eta <= 0 or self.alpha < 0:
            raise PvfError(f"MMD search needs eta > 0 and alpha >= 0, not eta={self.eta}, alpha={self.alpha}")
        if not self.greed >= 0:
            raise PvfError(f"MMD search's blueprint greed is a number β ≥ 0, not {self.greed}")

    def blueprint(self, hand: np.ndarray) -> np.ndarray:
        """[..., A] the blueprint's probabilities of the cards of `hand` [..., A] (module docstring)."""
        scores = bid_tilt(self.rules, self.greed) * np.asarray(hand, dtype=np.float64)
        return np.exp(scores - np.logaddexp.reduce(scores, axis=-1, keepdims=True))

    def blueprint_strategy(self, history: tuple[int, ...], player: int) -> dict[int, float]:
        """{card: probability}: the blueprint at `player`'s infostate after the turn-based `history`."""
        own, _ = infostate_of(self.rules, history, player)
        hand = np.setdiff1d(np.arange(self.rules.num_cards), own)
        return dict(zip(hand.tolist(), self.blueprint(hand).tolist(), strict=True))

    def action_values(self, history: tuple[int, ...], player: int) -> tuple[np.ndarray, np.ndarray]:
        """(actions [A] ascending, q [A]): `player`'s estimated values of its legal cards after the turn-based
        `history` (where it acts) under the blueprint (module docstring)."""
        n = self.rules.num_cards
        if len(history) % 2 != player or len(history) >= 2 * self.rules.rounds:
            raise PvfError(f"player {player + 1} does not act after {len(history)} actions")
        own, outcomes = infostate_of(self.rules, history, player)
        rng = np.random.default_rng([self.seed, player, len(own), *own, *outcomes])
        tilt = bid_tilt(self.rules, self.greed)
        hidden = np.array(
            [sample_hidden_bids(self.rules, player, own, outcomes, rng, tilt) for _ in range(self.samples)],
            dtype=np.int64,
        ).reshape(self.samples, len(own))  # [K, r]
        actions = np.setdiff1d(np.arange(n), own)  # [A]
        left = np.array([np.setdiff1d(np.arange(n), h) for h in hidden]).reshape(self.samples, -1)  # [K, B]
        shape = (self.samples, len(actions), left.shape[1])  # [K, A, B]: sample, own card, opponent's card
        r = len(own)
        before = (
            np.broadcast_to(np.asarray(own, np.int64), (*shape, r)),
            np.broadcast_to(hidden[:, None, None], (*shape, r)),
        )
        now = np.broadcast_to(actions[:, None, None], (*shape, 1)), np.broadcast_to(left[:, None, :, None], (*shape, 1))
        mine, theirs = (np.concatenate([b, c], axis=3) for b, c in zip(before, now, strict=True))
        first, second = (mine, theirs) if player == 0 else (theirs, mine)
        paths = np.stack([first, second], axis=4).reshape(-1, 2 * (r + 1))  # [K·A·B, L]: bids interleaved by round
        exact = n - r - 1 <= EXACT_ROLLOUT_CARDS
        values = play_values(
            self.rules, paths, None if exact else self.draws, None if exact else rng, self.greed
        ).reshape(shape)
        if self.greed:
            q = (values * self.blueprint(left)[:, None, :]).sum(axis=2).mean(axis=0)  # the opponent's bid weighted
        else:
            q = values.mean(axis=(0, 2))
        return actions, q if player == 0 else -q

    def strategy(self, history: tuple[int, ...], player: int) -> dict[int, float]:
        """{card: probability}: the MMD update of the blueprint towards the uniform magnet on the action values at
        `player`'s infostate after `history`: π' ∝ exp((log π + η·q) / (1 + αη)) (ρ uniform: a constant factor)."""
        actions, q = self.action_values(history, player)
        log_blueprint = np.log(self.blueprint(actions)) if self.greed else 0.0  # uniform π: a constant, cancelled
        logits = (self.eta * q + log_blueprint) / (1.0 + self.alpha * self.eta)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        return {int(a): float(p) for a, p in zip(actions, probs, strict=True)}


def mmd_search(
    loaded: LoadedGame, samples: int, eta: float, alpha: float, draws: int, seed: int, greed: float = 0.0
) -> MMDSearch:
    """`MMDSearch` for a loaded game; a one-line PvfError where it is not an imperfect-information Goofspiel."""
    rules = rules_of(loaded)
    if rules is None:
        raise PvfError(f"MMD search plays Goofspiel (points descending or ascending), not {loaded.game_string}")
    return MMDSearch(rules, samples, eta, alpha, draws, seed, greed)


class MMDSearchBot(SeatBot):
    """A `pyspiel.Bot` playing `player` by MMD search: its strategy at a state is `MMDSearch.strategy` at the
    player's infostate (read from the state's history: the round outcomes and the player's own bids)."""

    def __init__(self, search: MMDSearch, player: int, seed: int = 0):
        SeatBot.__init__(self, player, seed)
        self.search = search

    def strategy_at(self, state: pyspiel.State) -> dict[int, float]:
        return self.search.strategy(tuple(int(a) for a in state.history()), self.player)


def search_policy(tree: PublicTree, search: MMDSearch) -> dict[str, dict[int, float]]:
    """MMD search's strategy at every decision infostate of both seats of an enumerable Goofspiel,
    `{information-state string: {action: probability}}` (for OpenSpiel's `nash_conv`)."""
    return infostate_policy(tree, search.strategy)


def infostate_policy(
    tree: PublicTree, strategy: Callable[[tuple[int, ...], int], dict[int, float]]
) -> dict[str, dict[int, float]]:
    """`strategy(history, seat)` at every decision infostate of both seats (read at one history of each),
    `{information-state string: {action: probability}}`."""
    policy: dict[str, dict[int, float]] = {}
    for seat in (0, 1):
        for i in np.unique(tree.infostate[tree.player == seat, seat]).tolist():
            history = tuple(history_actions(tree, int(tree.infostate_history[seat][i])))
            policy[tree.infostate_strings[seat][i]] = strategy(history, seat)
    return policy
