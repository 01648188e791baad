"""Best responses, guarded where a belief is zero: the targets a trunk can use.

The reference is the exact oracle (`ExactEvaluator`: HiGHS's LP equilibrium of
each leaf subgame and best responses to it) and the trunk exploitability LP,
neither of which shares code with the guarded solve.
"""

import numpy as np
import pytest

from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError
from pvf.experiments.particle_sweep import run_particle_sweep
from pvf.experiments.target_quality import particle_targets, within
from pvf.experiments.trunk_sweep import ORACLE
from pvf.games.loading import load_game
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.evaluators import CFRTargetEvaluator, ExactEvaluator
from pvf.solvers.guarded_values import (
    DEFAULT_SLACK,
    RESPONSE_KINDS,
    ResponseKind,
    best_response_targets,
    guarded_beliefs,
)
from pvf.solvers.trunk_solver import build_trunk, solve_and_evaluate
from tests.conftest import KUHN, LEDUC, cached_tree

LIARS_DICE = "liars_dice(dice_sides=3,numdice=1)"
GOOFSPIEL4 = "goofspiel(imp_info=True,num_cards=4,points_order=descending)"


def test_guarded_beliefs_raise_each_belief_to_a_share_of_its_public_states_largest():
    beliefs = np.array([[0.0, 0.5, 0.001, 0.0, 0.0], [0.2, 0.0, 0.0, 0.0, 0.4]])
    groups = np.array([3, 3, 3, 7, 7])
    out = guarded_beliefs(beliefs, groups, 0.01)
    expected = np.array([[0.005, 0.5, 0.005, 0.01, 0.01], [0.2, 0.002, 0.002, 0.004, 0.4]])
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(guarded_beliefs(beliefs, groups, 0.0), beliefs)
    with pytest.raises(PvfError, match="guard"):
        guarded_beliefs(beliefs, groups, 1.5)


@pytest.mark.parametrize("game, depth", [(KUHN, 3), (LIARS_DICE, 4)])
def test_guarded_values_bound_the_subgame_value_from_both_sides(game, depth):
    """Best-response values against any strategy bracket each leaf subgame's LP value:
    Σ b₁·v₁ ≥ value ≥ −Σ b₂·v₂ per leaf public state, zero beliefs included."""
    trunk = build_trunk(cached_tree(game), depth)
    g = trunk.game
    rng = np.random.default_rng(4)
    r1, r2 = rng.random((1, len(g.leaf_infostates[0]))), rng.random((1, len(g.leaf_infostates[1])))
    r1[:, ::3] = 0.0
    r2[:, 1::4] = 0.0
    exact = ExactEvaluator(trunk)(r1, r2)
    v = CFRTargetEvaluator(trunk, 200, "best_response")(r1, r2)
    for leaf in range(len(g.leaf_public_states)):
        blocks = [slice(g.leaf_offsets[n][leaf], g.leaf_offsets[n][leaf + 1]) for n in (0, 1)]
        value = float(r1[0, blocks[0]] @ exact[0][0, blocks[0]])
        assert -float(r2[0, blocks[1]] @ v[1][0, blocks[1]]) - 1e-9 <= value
        assert value <= float(r1[0, blocks[0]] @ v[0][0, blocks[0]]) + 1e-9


def test_positive_beliefs_keep_the_best_responses_to_the_plain_solve():
    """Only zero-belief infostates take their values from the guarded solve (what they change in a trunk:
    the oracle tests below)."""
    trunk = build_trunk(cached_tree(LIARS_DICE), 4)
    leaves = CFRTargetEvaluator(trunk, 100, "best_response").leaves
    rng = np.random.default_rng(5)
    beliefs = tuple(rng.random((2, leaves.game.players[n].num_roots)) for n in (0, 1))
    for b in beliefs:
        b[:, ::3] = 0.0
    args = (leaves.game, cfr_plus, 100, beliefs, leaves.root_public_states)
    guarded, plain = best_response_targets(*args), best_response_targets(*args, guard=0.0)
    for n in (0, 1):
        positive = beliefs[n] > 0.0
        np.testing.assert_array_equal(guarded[n][positive], plain[n][positive])


def _exploitability(trunk, evaluator) -> float:
    return solve_and_evaluate(trunk, evaluator, 100).exploitability.exploitability


@pytest.mark.parametrize(
    "game, depth, root_move",
    [(LIARS_DICE, 4, 0), (LIARS_DICE, 5, 0), (KUHN, 4, 0), (GOOFSPIEL4, 1, 0), (GOOFSPIEL4, 2, 0)],
)
def test_best_response_targets_at_the_leaves_come_near_the_exact_oracle(game, depth, root_move):
    """Trunk exploitability with the targets computed exactly at the leaves: within 1.2× the oracle's,
    or within 0.005 where the oracle is below 0.02 (the full sweep: `pvf.experiments.target_quality`)."""
    trunk = build_trunk(cached_tree(game), depth)
    oracle = _exploitability(trunk, ExactEvaluator(trunk))
    targets = _exploitability(trunk, CFRTargetEvaluator(trunk, 100, "best_response"))
    assert within(oracle, targets), (oracle, targets)


def test_without_the_guard_liars_dice_misses_the_oracle_by_far():
    """Liar's Dice 1×3, trunk to move 4: best responses to the plain CFR+ average value zero-belief
    infostates by how they exploit a strategy that never had to answer them, and the average profile
    values them by uniform play; both leave the trunk several times the oracle's exploitability."""
    trunk = build_trunk(cached_tree(LIARS_DICE), 4)
    oracle = _exploitability(trunk, ExactEvaluator(trunk))
    for evaluator in (
        CFRTargetEvaluator(trunk, 100, "best_response", guard=0.0),
        CFRTargetEvaluator(trunk, 100, "average"),
    ):
        assert _exploitability(trunk, evaluator) > 3 * oracle


def test_mixed_values_are_an_upper_linearization_where_the_entry_wise_guard_is_not():
    """Best responses to one opponent plan bound the leaf subgame's value from above at every belief
    b' (Σ b'·v ≥ the LP value at b'), not only at the beliefs they were computed at: the trunk may move
    belief into the zero-belief infostates. Leduc, trunk to move 7: the entry-wise guard's values fall
    below the LP value there (by about 5e-3); the mixed plans' do not."""
    trunk = build_trunk(cached_tree(LEDUC), 7)
    g = trunk.game
    rng = np.random.default_rng(4)
    r1, r2 = rng.random((1, len(g.leaf_infostates[0]))), rng.random((1, len(g.leaf_infostates[1])))
    r1[:, ::3] = 0.0
    moved = []
    for scale in (0.1, 0.1, 0.1, 1.0, 1.0, 1.0):
        b = r1.copy()
        b[:, ::3] = scale * rng.random((1, b[:, ::3].shape[1]))
        moved.append((b, ExactEvaluator(trunk)(b, r2)[0]))

    def shortfall(values):
        worst = 0.0
        for b, exact in moved:
            for leaf in range(len(g.leaf_public_states)):
                block = slice(g.leaf_offsets[0][leaf], g.leaf_offsets[0][leaf + 1])
                worst = max(worst, float(b[0, block] @ exact[0, block]) - float(b[0, block] @ values[0, block]))
        return worst

    assert shortfall(CFRTargetEvaluator(trunk, 200, "best_response", kind=RESPONSE_KINDS["mixed"])(r1, r2)[0]) < 1e-12
    budget = CFRTargetEvaluator(trunk, 200, "best_response", kind=RESPONSE_KINDS["budget"])
    assert shortfall(budget(r1, r2)[0]) < 1e-12
    grouped = CFRTargetEvaluator(trunk, 200, "best_response", kind=RESPONSE_KINDS["grouped"])
    assert shortfall(grouped(r1, r2)[0]) < 1e-12
    local = CFRTargetEvaluator(trunk, 200, "best_response", kind=RESPONSE_KINDS["local"])
    assert shortfall(local(r1, r2)[0]) < 1e-12
    assert shortfall(CFRTargetEvaluator(trunk, 200, "best_response")(r1, r2)[0]) > 1e-3


def _leduc_beliefs_with_zeros():
    """Leduc's trunk to move 7 and three queries' leaf reaches (r1 [3, J1], r2 [3, J2]), some of them zero."""
    trunk = build_trunk(cached_tree(LEDUC), 7)
    g = trunk.game
    rng = np.random.default_rng(6)
    r1, r2 = rng.random((3, len(g.leaf_infostates[0]))), rng.random((3, len(g.leaf_infostates[1])))
    r1[:, ::3] = 0.0
    r2[:, 1::4] = 0.0
    return trunk, r1, r2


def test_a_slack_budget_bounds_how_far_the_mixed_values_are_from_tight():
    """Σ b₁·v₁ + Σ b₂·v₂ (the profile's NashConv at the true beliefs, ≥ 0) of the budgeted mixture is at
    most the plain solve's plus the budget, per problem; without a budget it can be far more."""
    trunk, r1, r2 = _leduc_beliefs_with_zeros()

    def gap(evaluator):
        v = evaluator(r1, r2)
        return (r1 * v[0]).sum(axis=1) + (r2 * v[1]).sum(axis=1)

    plain = gap(CFRTargetEvaluator(trunk, 100, "best_response", guard=0.0))
    budget = gap(CFRTargetEvaluator(trunk, 100, "best_response", kind=RESPONSE_KINDS["budget"]))
    assert (budget >= -1e-12).all() and (budget <= plain + DEFAULT_SLACK + 1e-12).all(), (plain, budget)
    grouped = gap(CFRTargetEvaluator(trunk, 100, "best_response", kind=RESPONSE_KINDS["grouped"]))
    assert (grouped >= -1e-12).all() and (grouped <= plain + DEFAULT_SLACK + 1e-12).all(), (plain, grouped)
    assert (
        gap(CFRTargetEvaluator(trunk, 100, "best_response", guard=0.1, kind=ResponseKind(mix=1.0)))
        > plain + DEFAULT_SLACK
    ).any()


def test_a_budget_per_public_state_bounds_each_public_states_slack():
    """The local kind spends the budget per leaf public state: in each, Σ b₁·v₁ + Σ b₂·v₂ (that subgame's
    NashConv at the true beliefs) is at most the plain solve's plus the budget, and where that subgame's
    guarded NashConv is within the budget its values answer the guarded plan alone (mix 1)."""
    trunk, r1, r2 = _leduc_beliefs_with_zeros()
    g = trunk.game

    def gaps(evaluator):  # [B, L]: per leaf public state
        v = evaluator(r1, r2)
        return np.stack(
            [
                sum(
                    (b[:, o[leaf] : o[leaf + 1]] * v[n][:, o[leaf] : o[leaf + 1]]).sum(axis=1)
                    for n, (b, o) in enumerate(((r1, g.leaf_offsets[0]), (r2, g.leaf_offsets[1])))
                )
                for leaf in range(len(g.leaf_public_states))
            ],
            axis=1,
        )

    plain = gaps(CFRTargetEvaluator(trunk, 100, "best_response", guard=0.0))
    local = gaps(CFRTargetEvaluator(trunk, 100, "best_response", kind=RESPONSE_KINDS["local"]))
    guarded_plan = gaps(CFRTargetEvaluator(trunk, 100, "best_response", guard=0.1, kind=ResponseKind(mix=1.0)))
    assert (local >= -1e-12).all() and (local <= plain + DEFAULT_SLACK + 1e-12).all()
    cheap = guarded_plan <= DEFAULT_SLACK
    assert cheap.any() and (~cheap).any()
    np.testing.assert_allclose(local[cheap], guarded_plan[cheap], rtol=0, atol=1e-12)


def test_mixed_targets_meet_the_criterion_where_the_entry_wise_guard_misses():
    """Leduc, trunk to move 10 (one of the sweep's misses): 100 trunk iterations with each target computed
    exactly at the leaves, against the exact oracle."""
    trunk = build_trunk(cached_tree(LEDUC), 10)
    oracle = _exploitability(trunk, ExactEvaluator(trunk))
    mixed = _exploitability(trunk, CFRTargetEvaluator(trunk, 100, "best_response", kind=RESPONSE_KINDS["mixed"]))
    entry_wise = _exploitability(trunk, CFRTargetEvaluator(trunk, 100, "best_response"))
    assert within(oracle, mixed) and not within(oracle, entry_wise), (oracle, mixed, entry_wise)


def test_grouped_values_answer_the_guarded_plan_where_a_player_has_no_belief_in_a_public_state():
    """Leduc, trunk to move 7, player 1's beliefs zero in every third leaf public state (and in single
    infostates elsewhere): there its values are the entry-wise guard's (best responses to the guarded plan,
    each public state a subgame of its own), elsewhere the budget's; player 2's are the budget's."""
    trunk = build_trunk(cached_tree(LEDUC), 7)
    g = trunk.game
    rng = np.random.default_rng(8)
    r1, r2 = rng.random((2, len(g.leaf_infostates[0]))), rng.random((2, len(g.leaf_infostates[1])))
    r1[:, 1::5] = 0.0
    unbelieved = np.zeros(len(g.leaf_infostates[0]), dtype=bool)
    for leaf in range(0, len(g.leaf_public_states), 3):
        unbelieved[g.leaf_offsets[0][leaf] : g.leaf_offsets[0][leaf + 1]] = True
    r1[:, unbelieved] = 0.0
    grouped = CFRTargetEvaluator(trunk, 100, "best_response", kind=RESPONSE_KINDS["grouped"])(r1, r2)
    budget = CFRTargetEvaluator(trunk, 100, "best_response", kind=RESPONSE_KINDS["budget"])(r1, r2)
    entry_wise = CFRTargetEvaluator(trunk, 100, "best_response")(r1, r2)
    np.testing.assert_allclose(grouped[0][:, unbelieved], entry_wise[0][:, unbelieved], rtol=0, atol=1e-12)
    np.testing.assert_allclose(grouped[0][:, ~unbelieved], budget[0][:, ~unbelieved], rtol=0, atol=1e-12)
    np.testing.assert_allclose(grouped[1], budget[1], rtol=0, atol=1e-12)
    assert not np.allclose(budget[0][:, unbelieved], entry_wise[0][:, unbelieved], rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("game", "root_move", "depth", "draws", "seed", "meets", "misses"),
    [
        pytest.param(LEDUC, 2, 10, 4, 0, "grouped", "budget", id="leduc-grouped-where-budget-misses"),
        pytest.param(KUHN, 2, 3, 4, 1, "local", "grouped", id="kuhn-local-where-grouped-misses"),
    ],
)
def test_a_kind_meets_the_criterion_on_a_sparse_particle_trunk_where_another_misses(
    game, root_move, depth, draws, seed, meets, misses
):
    """100 trunk iterations, the targets exact at the leaves (docs/results/value-function-quality.md).
    Leduc, K = 4 particles at move 2 (seed 0), trunk to move 10: the budget's best responses to near-uniform
    play in the public states where a player has no belief leave the trunk at 1.31× the exact oracle, the
    grouped targets at 0.56×. Kuhn, K = 4 particles at move 2 (seed 1), trunk to move 3: the grouped targets
    keep half of the solver's plan, which never answered the zero-belief infostates, and leave the trunk at
    2.3×; the local kind takes the guarded plan whole where it costs little (0.95×)."""
    loaded = load_game(game)
    targets = {kind: particle_targets(loaded, kind) for kind in (misses, meets)}
    rows = run_particle_sweep(
        loaded, root_move, depth, [draws], [seed], {"oracle": ORACLE, **targets}, reference=SamplingConfig()
    )
    found = {r.evaluator: r.exploitability for r in rows}
    assert within(found["oracle"], found[meets]) and not within(found["oracle"], found[misses]), found


def test_the_mix_must_lie_in_the_unit_interval_and_a_slack_budget_needs_one():
    with pytest.raises(PvfError, match="mix"):
        ResponseKind(mix=1.5)
    with pytest.raises(PvfError, match="slack"):
        ResponseKind(slack=1e-3)
    with pytest.raises(PvfError, match="grouped"):
        ResponseKind(grouped=True)
    with pytest.raises(PvfError, match="per public state"):
        ResponseKind(mix=1.0, per_state=True)
    trunk = build_trunk(cached_tree(KUHN), 3)
    grouped_unguarded = CFRTargetEvaluator(trunk, 10, "best_response", guard=0.0, kind=RESPONSE_KINDS["grouped"])
    with pytest.raises(PvfError, match="positive guard"):
        grouped_unguarded(np.ones((1, 6)), np.ones((1, 6)))
    with pytest.raises(PvfError, match="fixes its kind"):
        CFRTargetEvaluator(trunk, 10, "grouped", kind=RESPONSE_KINDS["local"])
