"""A person at the terminal as an OpenSpiel bot (`pvf play --opponent human`).

At each of its decisions the bot prints what its player sees (OpenSpiel's
information-state string of the game pvf plays) and the legal actions with
their names, and reads a choice: an action's number or its name. A wrong
choice is answered with the choices again; the end of the input ends the
match with a one-line error.
"""

from __future__ import annotations

import sys
from typing import TextIO

import pyspiel

from pvf.errors import PvfError


class HumanBot(pyspiel.Bot):
    """Player `player`'s moves read from `stdin`, its view written to `stdout`."""

    def __init__(self, player: int, stdin: TextIO | None = None, stdout: TextIO | None = None):
        pyspiel.Bot.__init__(self)
        self.player = player
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def restart(self) -> None:
        print(f"\nA new game: you are player {self.player + 1}.", file=self.stdout)

    def restart_at(self, state: pyspiel.State) -> None:
        self.restart()

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to track: the whole view is printed at each decision."""

    def step(self, state: pyspiel.State) -> int:
        names = {a: state.action_to_string(self.player, a) for a in state.legal_actions()}
        print(f"\nYou see: {state.information_state_string(self.player)}", file=self.stdout)
        choices = ", ".join(f"{a}: {name}" for a, name in names.items())
        while True:
            print(f"Your move ({choices}): ", end="", file=self.stdout, flush=True)
            line = self.stdin.readline()
            if not line:
                raise PvfError("no more input: the match was abandoned")
            answer = line.strip()
            for action, name in names.items():
                if answer in (str(action), name):
                    return action
            print(f"{answer!r} is not one of the moves.", file=self.stdout)
