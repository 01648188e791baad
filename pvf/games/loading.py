"""Load an OpenSpiel game string and check that pvf can solve it.

pvf handles two-player zero-sum (or constant-sum) games with perfect recall
that provide information-state strings. Simultaneous-move games (Goofspiel)
are solved through OpenSpiel's turn-based transform: each round becomes
player 1's move followed by player 2's move, player 2 not seeing player 1's
bid. Policies are keyed by the turn-based game's information-state strings,
so OpenSpiel's own `nash_conv` can check them on that game.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from dataclasses import dataclass

import pyspiel

from pvf.errors import PvfError

# Friendly aliases for the games of the paper.
ALIASES = {
    "kuhn": "kuhn_poker",
    "leduc": "leduc_poker",
    "goofspiel4": "goofspiel(num_cards=4,imp_info=True,points_order=descending)",
    "goofspiel5": "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
    # goofspiel6 ... goofspiel13 (13: the standard game) follow the same convention.
    **{f"goofspiel{n}": f"goofspiel(num_cards={n},imp_info=True,points_order=descending)" for n in range(6, 14)},
}


@dataclass(frozen=True, eq=False)
class LoadedGame:
    """A game as pvf sees it.

    game_string: the canonical OpenSpiel string (aliases resolved).
    original: the game as loaded (simultaneous for Goofspiel).
    sequential: the game whose states pvf enumerates and whose
        information-state strings key policies (turn-based for simultaneous games).
    simultaneous: whether `original` has simultaneous moves.
    """

    game_string: str
    original: pyspiel.Game
    sequential: pyspiel.Game
    simultaneous: bool


def canonical_game_string(game: str) -> str:
    """Resolve an alias such as `leduc` to its OpenSpiel game string."""
    return ALIASES.get(game, game)


def load_game(game: str) -> LoadedGame:
    """Load `game`, checking it is a two-player zero-sum perfect-recall game.

    Raises PvfError with a one-line explanation otherwise.
    """
    game_string = canonical_game_string(game)
    example = "e.g. 'kuhn_poker', 'leduc_poker' or 'goofspiel(num_cards=5,imp_info=True,points_order=descending)'"
    name = game_string.split("(", 1)[0].strip()
    if name not in pyspiel.registered_names():
        raise PvfError(f"unknown game {name!r}; pass an OpenSpiel game string, {example}")
    try:
        with _quiet_stderr():
            original = pyspiel.load_game(game_string)
    except Exception as exc:  # pyspiel raises a bare RuntimeError/SpielError
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PvfError(f"cannot load game {game_string!r} ({msg}); check its parameters, {example}") from None
    gtype = original.get_type()
    if original.num_players() != 2:
        raise PvfError(
            f"game {game_string!r} has {original.num_players()} players; pvf solves "
            f"two-player zero-sum games (set players=2 if the game allows it)"
        )
    if gtype.utility not in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM):
        raise PvfError(f"game {game_string!r} is not zero-sum; pvf solves two-player zero-sum games")
    if not gtype.provides_information_state_string:
        raise PvfError(
            f"game {game_string!r} provides no information-state strings (no perfect recall); "
            f"pvf needs a perfect-recall game"
        )
    simultaneous = gtype.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    sequential = pyspiel.convert_to_turn_based(original) if simultaneous else original
    return LoadedGame(game_string, original, sequential, simultaneous)


@contextlib.contextmanager
def _quiet_stderr():
    """Silence OpenSpiel's C++ error printout (file descriptor 2) while loading."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
