"""The one exception type users see, and how its one line reaches them.

Anything raised as `PvfError` is bad input or a bad file: the `pvf` command
prints its message on one line (`say_on_stderr`) and exits with status 2.
Messages name the problem and what to do about it.
"""

import sys


class PvfError(Exception):
    """Bad input: unknown game, impossible depth, foreign file, NaN belief, ..."""


def say_on_stderr(line: str) -> None:
    """`line` on stderr in one write, whole even while worker processes write to the same stream."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
