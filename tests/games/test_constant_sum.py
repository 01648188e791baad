"""Constant-sum games: pvf solves (r₁ − r₂)/2 and reports each player's own payoff (the constant said).

Matching pennies paying 1 to the winner and 0 to the loser (OpenSpiel's `create_matrix_game` types it
CONSTANT_SUM) has value 1/2 for either player; pvf printed 0 (the zero-sum normalised value) before.
"""

from __future__ import annotations

import pyspiel
import pytest

from pvf.errors import PvfError
from pvf.games.loading import LoadedGame
from pvf.games.public_tree import build_public_tree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game


def _matrix(rows, cols) -> LoadedGame:
    game = pyspiel.create_matrix_game(rows, cols)
    return LoadedGame("matrix", game, pyspiel.convert_to_turn_based(game), True)


def test_matching_pennies_paying_one_and_zero_is_worth_one_half():
    loaded = _matrix([[1, 0], [0, 1]], [[0, 1], [1, 0]])
    assert loaded.original.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM
    tree = build_public_tree(loaded)
    assert tree.utility_sum == 1.0
    result = cfr_plus(build_sequence_game(tree), 1000)
    assert result.value[0] + tree.utility_sum / 2 == pytest.approx(0.5, abs=1e-3)


def test_zero_sum_games_have_no_constant(kuhn):
    assert kuhn.utility_sum == 0.0


def test_payoffs_that_are_not_constant_sum_are_refused():
    with pytest.raises(PvfError, match="not constant-sum"):
        build_public_tree(_matrix([[3, 0], [5, 1]], [[3, 5], [0, 1]]))  # the prisoner's dilemma
