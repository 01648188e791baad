"""Subcommands of the `pvf` command, one module each.

Each module defines `add_parser(subparsers)` (registers its parser and sets
`func`) and a function `run(args) -> int`.
"""

from __future__ import annotations

import argparse
import sys

from pvf.errors import PvfError


def require_positive(args: argparse.Namespace, *names: str) -> None:
    """A one-line `PvfError` naming the first of these integer options that is below 1."""
    for name in names:
        value = getattr(args, name)
        if value < 1:
            raise PvfError(f"--{name.replace('_', '-')} must be a positive integer, got {value}")


def resolve_max_histories(args: argparse.Namespace, default: int) -> int:
    """`--max-histories`, set to `default` where not given; a one-line `PvfError` unless positive."""
    if args.max_histories is None:
        args.max_histories = default
    require_positive(args, "max_histories")
    return args.max_histories


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """`--progress` / `--no-progress`: bars on stderr; by default where stderr is a terminal (`progress_wanted`)."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr (default: when stderr is a terminal)",
    )


def progress_wanted(args: argparse.Namespace) -> bool:
    """`--progress` or `--no-progress` as given, else whether stderr is a terminal."""
    return args.progress if args.progress is not None else sys.stderr.isatty()
