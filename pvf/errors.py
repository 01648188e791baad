"""The one exception type users see.

Anything raised as `PvfError` is bad input or a bad file: the `pvf` command
prints its message on one line and exits with status 2. Messages name the
problem and what to do about it.
"""


class PvfError(Exception):
    """Bad input: unknown game, impossible depth, foreign file, NaN belief, ..."""
