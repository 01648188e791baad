"""The one exception type users see, and how its one line reaches them.

Anything raised as `PvfError` is bad input or a bad file: the `pvf` command
prints its message on one line (`say_on_stderr`) and exits with status 2.
Messages name the problem and what to do about it. The Python API checks
its arguments where they enter (`check_argument`): a wrong type is a
`PvfTypeError` (also a `TypeError`), an impossible value a `PvfValueError`
(also a `ValueError`), never a raw error from deep inside pvf.
"""

import sys
from collections.abc import Iterable
from pathlib import Path


class PvfError(Exception):
    """Bad input: unknown game, impossible depth, foreign file, NaN belief, ..."""


def say_on_stderr(line: str) -> None:
    """`line` on stderr in one write, whole even while worker processes write to the same stream."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def require_files(paths: Iterable[Path]) -> None:
    """A `PvfError` naming the first of `paths` that is no file."""
    for path in paths:
        if not Path(path).is_file():
            raise PvfError(f"{path}: no such file")


class TooManyHistories(PvfError):
    """A particle subgame over its size cap (`max_histories`): what a sweep may skip rather than stop on."""


class PvfTypeError(PvfError, TypeError):
    """An argument of the wrong type (a Python caller's mistake; `except TypeError` catches it too)."""


class PvfValueError(PvfError, ValueError):
    """An argument of the right type with an impossible value (`except ValueError` catches it too)."""


def check_argument(
    name: str, value: object, kinds: type | tuple[type, ...], minimum: int | None = None, optional: bool = False
) -> None:
    """Raise `PvfTypeError` unless `value` is one of `kinds` (None too if `optional`; a bool is no int),
    and `PvfValueError` if it is a number below `minimum`."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if value is None and optional:
        return
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds) + (" or None" if optional else "")
        raise PvfTypeError(f"{name} must be {names}, got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise PvfValueError(f"{name} must be at least {minimum}, got {value!r}")
