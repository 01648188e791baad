"""`--opponent human`: a person's moves read by name or number, wrong ones asked again, no input a clean error."""

import io

import pyspiel
import pytest

from pvf.agents.human import HumanBot
from pvf.errors import PvfError


def test_moves_by_number_or_name_and_a_wrong_one_asked_again():
    game = pyspiel.load_game("kuhn_poker")
    state = game.new_initial_state()
    for action in (0, 1):  # the deals: player 1 holds the jack
        state.apply_action(action)
    out = io.StringIO()
    bot = HumanBot(0, io.StringIO("raise\nBet\n"), out)
    assert bot.step(state) == 1
    assert "You see: 0" in out.getvalue() and "'raise' is not one of the moves" in out.getvalue()
    assert HumanBot(0, io.StringIO("0\n"), io.StringIO()).step(state) == 0
    with pytest.raises(PvfError, match="no more input"):
        HumanBot(0, io.StringIO(""), io.StringIO()).step(state)
