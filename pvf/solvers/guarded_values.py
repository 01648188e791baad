"""Leaf values a trunk can use: best responses, guarded where a belief is zero.

Why. Fix player 2's beliefs b₂ of a PBS. Player 1 best-responds separately
at each of its root infostates, so the subgame's value to player 1 is
V(b₁) = min_y Σ_I b₁(I)·cbv₁(I; y), a minimum of linear functions of b₁
(cbv₁(I; y): I's counterfactual best-response value against y). Every
equilibrium strategy y* of player 2 gives a supergradient cbv₁(·; y*) of V
at b₁, and trunk CFR+ runs on such supergradients; at a leaf infostate I
with b₁(I) = 0 it asks what moving belief into I earns, and the
supergradients of different equilibria disagree there most:
  - the solver's own profile values I by the play it happens to keep there
    (CFR+'s average: uniform), which is no supergradient at all;
  - a best response to the solver's equilibrium values I by how well I
    exploits a strategy that never had to answer I: a valid supergradient,
    but an optimistic one (Liar's Dice 1×3, trunk to move 4: 4.7× the exact
    oracle's trunk exploitability, docs/results/value-function-quality.md).

What (`best_response_targets`), per player n and root infostate I:
  - b_n(I) > 0: n's best-response value against the opponent's strategy in
    the solver's profile at the true beliefs (the equilibrium value, to the
    solver's accuracy);
  - b_n(I) = 0: n's best-response value against the opponent's strategy in
    the guarded profile: the subgame solved again with every belief raised
    to at least `guard` times its player's largest belief in the same public
    state (`guarded_beliefs`; `guard` everywhere where the player has none,
    only the ratios matter), so the opponent must answer I as it would once
    the trunk moved belief there.
Values carry chance and opponent reach like every pvf value
(docs/architecture.md), the opponent's reach from the true beliefs.
Σ b₁·v₁ + Σ b₂·v₂ is the subgame NashConv of the solver's profile (≥ 0).
The guard (default 0.1) was chosen on the sweep of
`pvf.experiments.target_quality`: 0.01 guards too little, and raising
positive beliefs too (the guarded profile everywhere) biases them.

Mixed (`mix` = λ): every root infostate's value is n's best response to
ONE opponent realization plan, (1 − λ)·y + λ·y_g, the solver's plan at the
true beliefs and the guarded solve's (both from the true root beliefs).
Against any single opponent plan, Σ b'·v ≥ V(b') at every belief b' (the
opponent may do better than that plan), so the values are an upper
linearization of V everywhere, tight at b up to λ times the guarded plan's
slack there. The entry-wise values above take y's best responses at
positive beliefs and y_g's at zero ones, which no single plan gives: they
can fall below V along a direction into the zero beliefs (the guarded
solve answers all of them at once), and trunk CFR+ on them stalls instead
of converging where the oracle's trunk does (measured in
docs/results/value-function-quality.md). λ = 0.3 (`DEFAULT_MIX`) was
chosen against 0.5 on that page's seven trunks (0.5 misses Goofspiel-5's
trunk to move 1); λ = 0 is the unguarded best response.

Budgeted (`slack` = τ): per problem, λ = min(`mix`, τ / s), s the guarded
plans' NashConv at the true beliefs (Σ_n Σ b_n·v_n of the best responses
to them), so the mixture's slack is at most τ (best-response values are
convex in the plan they answer) in the units trunk NashConv is measured
in: as much of the guarded solve as the budget allows. τ = 10⁻³
(`DEFAULT_SLACK`) was chosen against 3·10⁻³ and 10⁻² on Leduc's trunk to
move 10, Liar's Dice's to move 4 and Goofspiel-5's to move 1.

Grouped (`grouped=True`, with a mix and budget as above): player n's
values answer the opponent's mixed plan, except below the root public
states where n has no belief at all. There the solver's plan answers
nothing (CFR+'s average plays uniformly where no belief reaches) and the
mixture keeps at least half of it, so the best responses there are those
to near-uniform play: valid but optimistic. Sparse particle trunks have
many such public states (a few particles leave one player's whole range at
a leaf empty), and trunk CFR+ converges slowly on them (Leduc, K = 4
particles at move 2, trunk to move 10: the budget's trunk at 0.0127 after
1,000 iterations, the oracle's at 0.0006). There n's values answer the
guarded plan alone. The root public states are disjoint subgames, so a
plan assembled per public state is still one opponent plan (an upper
linearization), and as the player's beliefs there are zero, its slack at
the true beliefs is the budget's.

Local (`per_state=True`, with a budget; the kind "local" also groups and
caps λ at 1): the budget spent per root public state instead of per
problem, λ_p = min(mix, τ / s_p), s_p the guarded plans' NashConv within
public state p at the true beliefs (each public state is a subgame of its
own, so s_p ≥ 0 and the plan assembled per public state is still one
plan, an upper linearization). One λ per problem lets the public state
whose guard costs most set the share for all, and a cap of 0.5 keeps half
of the solver's plan, which never had to answer the zero-belief
infostates, in every public state (Kuhn, K = 4 particles at move 2, seed 1,
trunk to move 3: grouped 2.3× the exact oracle, local 0.95×). The slack at
the true beliefs is at most τ per public state, so a query's can reach τ
times its public states: on Goofspiel-6's particle trunks to move 4 that
is more than the oracle, and local targets miss 9 of 16 there where the
grouped ones miss none (docs/results/value-function-quality.md).

`RESPONSE_KINDS` names the five kinds (`ResponseKind`: their options).
Three of them are leaf targets a dataset can store (`RESPONSE_TARGETS`,
`TARGETS`): the entry-wise guard as "best_response" (`pvf generate`'s
default since its introduction, so older files keep their name),
"grouped" and "local". The default stays the entry-wise guard: no kind
meets the criterion everywhere, and on particle trunks with many leaf
public states it does best (Goofspiel-8's fig. 4 trunks: 33 of 33, grouped
26, local 20; Goofspiel-6's particle trunks to move 4: 16 of 16, grouped
16, local 7; docs/results/value-function-quality.md).

Cost: one more solve of the same batch with other root beliefs, and two
bottom-up best-response passes per player (the budget: one more).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.best_response import best_response_root_values
from pvf.solvers.interface import LeafEvaluator, LeafQueries, Solver, SolverResult
from pvf.solvers.sequence_form import PlayerSequences, SequenceGame
from pvf.solvers.sequence_ops import realization_plan

DEFAULT_GUARD = 0.1
DEFAULT_MIX = 0.3
BUDGET_MIX, DEFAULT_SLACK = 0.5, 1e-3


@dataclass(frozen=True)
class ResponseKind:
    """What each player's best response answers, beyond the guard (module docstring).

    mix: None: the entry-wise guard; λ in [0, 1]: one mixture of the solver's and the guarded plans.
    slack: with `mix`, the budget τ > 0 that lowers λ per problem ("Budgeted").
    grouped: with `mix`, the guarded plan alone where a player has no belief in a public state ("Grouped").
    per_state: with `slack`, λ per root public state and problem ("Local").
    """

    mix: float | None = None
    slack: float | None = None
    grouped: bool = False
    per_state: bool = False

    def __post_init__(self):
        if self.mix is not None and not 0.0 <= self.mix <= 1.0:
            raise PvfError(f"the mix must lie in [0, 1], got {self.mix}")
        if self.slack is not None and (self.mix is None or not self.slack > 0.0):
            raise PvfError(f"a slack budget needs a mix and must be positive, got {self.slack}")
        if self.grouped and self.mix is None:
            raise PvfError("grouped best responses need a mix")
        if self.per_state and self.slack is None:
            raise PvfError("a budget per public state needs a slack budget")


# the kinds of best-response targets, by name
RESPONSE_KINDS: dict[str, ResponseKind] = {
    "guarded": ResponseKind(),
    "mixed": ResponseKind(mix=DEFAULT_MIX),
    "budget": ResponseKind(mix=BUDGET_MIX, slack=DEFAULT_SLACK),
    "grouped": ResponseKind(mix=BUDGET_MIX, slack=DEFAULT_SLACK, grouped=True),
    "local": ResponseKind(mix=1.0, slack=DEFAULT_SLACK, grouped=True, per_state=True),
}
# the leaf targets that are best responses, by their dataset name, and their kind
RESPONSE_TARGETS: dict[str, str] = {"best_response": "guarded", "grouped": "grouped", "local": "local"}
# every leaf target a dataset can store: the solver's average profile, its last iterate, the best responses
TARGETS: tuple[str, ...] = ("average", "current", *RESPONSE_TARGETS)


def guarded_beliefs(beliefs: np.ndarray, groups: np.ndarray, guard: float) -> np.ndarray:
    """[B, R] beliefs raised to at least `guard` times the largest belief of their group.

    beliefs: [B, R] one player's root beliefs; groups: [R] the public state of each root infostate.
    A group without belief in a row gets `guard` in every column.
    """
    if not 0.0 <= guard <= 1.0:
        raise PvfError(f"the guard must lie in [0, 1], got {guard}")
    beliefs = np.asarray(beliefs, dtype=np.float64)
    groups = np.asarray(groups)
    order = np.argsort(groups, kind="stable")
    starts = np.flatnonzero(np.r_[True, groups[order][1:] != groups[order][:-1]])
    peak = np.maximum.reduceat(beliefs[:, order], starts, axis=1)  # [B, G]
    peak[peak <= 0.0] = 1.0
    member = np.empty(len(groups), dtype=np.int64)
    member[order] = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(groups)]))
    return np.maximum(beliefs, guard * peak[:, member])


def best_response_targets(
    game: SequenceGame,
    solver: Solver,
    iterations: int,
    root_beliefs: tuple[np.ndarray, np.ndarray],
    groups: tuple[np.ndarray, np.ndarray],
    guard: float = DEFAULT_GUARD,
    solved: SolverResult | None = None,
    leaf_evaluator: LeafEvaluator | None = None,
    kind: ResponseKind = RESPONSE_KINDS["guarded"],
) -> tuple[np.ndarray, np.ndarray]:
    """Per player [B, R_n] the module's best-response root values.

    game: a subgame (a chance-node root over leaf histories), solved to the end or, with `leaf_evaluator`,
        depth-limited (best responses then hold the leaf values of the profile they answer,
        `best_response_root_values`).
    root_beliefs: (b1 [B, R1], b2 [B, R2]) the true root beliefs.
    groups: per player [R_n] the public state of each root infostate.
    guard: 0: best responses to the solver's profile everywhere (no second solve).
    solved: the solver's result at the true beliefs, if already computed.
    kind: what the best responses answer beyond the guard (`ResponseKind`; default the entry-wise guard).
    """
    mix, grouped = kind.mix, kind.grouped
    if grouped and guard == 0.0:
        raise PvfError("grouped best responses need a positive guard")
    raised = None if guard == 0.0 else tuple(guarded_beliefs(root_beliefs[n], groups[n], guard) for n in (0, 1))
    if solved is None:
        solved = solver(game, iterations, root_beliefs=root_beliefs, leaf_evaluator=leaf_evaluator)
    leaves = None if leaf_evaluator is None else LeafQueries(game, leaf_evaluator)
    plans = _plans(game, solved, root_beliefs)
    if raised is None or (mix == 0.0 and not grouped):
        return best_response_root_values(game, *plans, leaves)
    again = _plans(game, solver(game, iterations, root_beliefs=raised, leaf_evaluator=leaf_evaluator), root_beliefs)
    if mix is not None:
        located = _sequence_states(game, groups) if grouped or kind.per_state else None
        share = (
            [mix, mix]
            if kind.slack is None
            else _budgeted(
                game, again, root_beliefs, groups, leaves, mix, kind.slack, located if kind.per_state else None
            )
        )
        mixed = [(1.0 - share[n]) * plans[n] + share[n] * again[n] for n in (0, 1)]
        if grouped:
            mixed = _guarded_where_unbelieved(mixed, again, root_beliefs, groups, located)
        return best_response_root_values(game, *mixed, leaves)
    plain = best_response_root_values(game, *plans, leaves)
    guarded = best_response_root_values(game, *again, leaves)
    return tuple(np.where(np.asarray(root_beliefs[n]) > 0.0, plain[n], guarded[n]) for n in (0, 1))


def _guarded_where_unbelieved(
    plans: list[np.ndarray],
    guarded: list[np.ndarray],
    root_beliefs: tuple[np.ndarray, np.ndarray],
    groups: tuple[np.ndarray, np.ndarray],
    located: tuple[np.ndarray, list[np.ndarray]],
) -> list[np.ndarray]:
    """Per player n [S_n, B]: `plans[n]`, but `guarded[n]` below the root public states where the opponent,
    whose best responses answer n's plan, has no belief (per problem); located: `_sequence_states` of the game."""
    states, at = located
    out = []
    for n in (0, 1):
        believed = _state_totals([(root_beliefs[1 - n], groups[1 - n])], states)  # [G, B]: the opponent's belief
        out.append(np.where(believed[at[n]] <= 0.0, guarded[n], plans[n]))
    return out


def _sequence_states(game: SequenceGame, groups: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """([G] the root public states, sorted; per player [S_n] the index there of each sequence's root public state)."""
    states = np.unique(np.concatenate([np.asarray(groups[n]) for n in (0, 1)]))
    return states, [np.searchsorted(states, np.asarray(groups[n])[_roots(game.players[n])]) for n in (0, 1)]


def _state_totals(rows: list[tuple[np.ndarray, np.ndarray]], states: np.ndarray) -> np.ndarray:
    """[G, B] per public state of `states` the sum of the (values [B, R], their roots' public states [R]) pairs'
    entries at its root infostates, added pair after pair."""
    total = np.zeros((len(states), np.asarray(rows[0][0]).shape[0]))
    for values, groups in rows:
        np.add.at(total, np.searchsorted(states, groups), np.asarray(values).T)
    return total


def _roots(player: PlayerSequences) -> np.ndarray:
    """[S] the root sequence above each sequence (itself for a root)."""
    root = np.arange(player.num_sequences)
    parent = player.seq_parent[root]
    while (parent >= 0).any():
        root = np.where(parent >= 0, parent, root)
        parent = player.seq_parent[root]
    return root


def _budgeted(
    game: SequenceGame,
    plans: list[np.ndarray],
    root_beliefs: tuple[np.ndarray, np.ndarray],
    groups: tuple[np.ndarray, np.ndarray],
    leaves: LeafQueries | None,
    mix: float,
    slack: float,
    located: tuple[np.ndarray, list[np.ndarray]] | None = None,
) -> list[np.ndarray]:
    """Per player the share λ of `plans` (the guarded ones) in its mixture: min(mix, slack / s), s the NashConv of
    `plans` at the true beliefs, per problem ([B]) or, given `located` (`_sequence_states` of the game), per root
    public state and problem (s that public state's part of the NashConv), for each of the player's sequences
    ([S_n, B])."""
    values = best_response_root_values(game, *plans, leaves)
    tiny = np.finfo(float).tiny
    if located is None:
        gap = sum((np.asarray(root_beliefs[n]) * values[n]).sum(axis=1) for n in (0, 1))
        share = np.minimum(mix, slack / np.maximum(gap, tiny))
        return [share, share]
    states, at = located
    gap = _state_totals([(np.asarray(root_beliefs[n]) * values[n], groups[n]) for n in (0, 1)], states)  # [G, B]
    share = np.minimum(mix, slack / np.maximum(gap, tiny))
    return [share[at[n]] for n in (0, 1)]


def _plans(game: SequenceGame, result: SolverResult, root_beliefs: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """Per player [S_n, B] the realization plan of its average strategy from the true root beliefs."""
    return [
        realization_plan(
            game.players[n],
            np.ascontiguousarray(result.average_strategy[n].T),
            np.ascontiguousarray(np.asarray(root_beliefs[n], dtype=np.float64).T),
        )
        for n in (0, 1)
    ]
