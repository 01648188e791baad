"""Subcommands of the `pvf` command, one module each.

Each module defines `add_parser(subparsers)` (registers its parser and sets
`func`) and a function `run(args) -> int`.
"""
