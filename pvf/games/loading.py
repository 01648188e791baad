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
from pvf.games.paper import ALIASES


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
    """One string per game: aliases resolved (`leduc`), then OpenSpiel's parsed parameters with
    defaults dropped, in sorted order (`kuhn_poker()` and `kuhn_poker(players=2)` are `kuhn_poker`;
    parameters in another order are the same game). The paper's games keep their alias spelling.
    A string OpenSpiel cannot parse is returned as given, for `load_game` to report."""
    game = ALIASES.get(game.strip(), game.strip())
    try:
        with _quiet_stderr():
            params = pyspiel.game_parameters_from_string(game)
    except Exception:  # a syntax error: load_game says so in one line
        return game
    canonical = _format(params)
    return _ALIAS_SPELLING.get(canonical, canonical)


def _format(params: dict) -> str:
    """`name(key=value,...)` with keys sorted and default values dropped; nested games likewise."""
    name = params.get("name", "")
    spec = _DEFAULTS.get(name, {})
    args = []
    for key, value in sorted((k.strip(), v) for k, v in params.items() if k != "name"):
        if isinstance(value, dict):
            value = _format(value)
        elif key in spec and type(spec[key]) is type(value) and spec[key] == value:
            continue
        elif isinstance(value, bool):
            value = "True" if value else "False"
        args.append(f"{key}={value}")
    return f"{name}({','.join(args)})" if args else name


_DEFAULTS = {g.short_name: dict(g.parameter_specification) for g in pyspiel.registered_games()}
_ALIAS_SPELLING = {_format(pyspiel.game_parameters_from_string(s)): s for s in ALIASES.values()}


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
