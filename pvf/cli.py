"""The `pvf` command: one entry point, one subcommand per pipeline stage.

Every subcommand takes `--seed`; those that print results take `--json`.
Bad input raises `PvfError`, printed as one line with exit status 2; a
full disk while writing is one too (pvf.outputs). A closed stdout (`pvf
solve ... --json | head -c 10`) ends the command quietly; SIGTERM is
handled as Ctrl-C (temporary files and locks are removed; exit status 143
after SIGTERM, 130 after Ctrl-C). `pvf train` hands its arguments to
Lightning's CLI unchanged. Only the commands that train or run networks
(`NETWORK_COMMANDS`) load torch; they flush denormal floats to
zero in the whole process (`pvf.trainers.denormals`: otherwise CPU training
slows many-fold late in a long run).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

import pvf
from pvf.errors import say_on_stderr
from pvf.module_main import reported_status

# the commands that train or run networks: only they load torch (and flush denormals)
NETWORK_COMMANDS = {"train", "evaluate", "reproduce", "experiment", "play"}
# name -> module under pvf.commands; each module has add_parser() and run()
SUBCOMMANDS = ["solve", "describe", "generate", "inspect", "evaluate", "reproduce", "experiment", "play"]


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors (an unknown option, a value of the wrong type) are one line, not the usage block;
    every subcommand's parser is one too (subparsers take their parent's class)."""

    def error(self, message: str) -> NoReturn:
        say_on_stderr(f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="pvf", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"pvf {pvf.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser(
        "train",
        help="train a value function (Lightning CLI: pvf train fit "
        "--config configs/data/GAME.yaml --config configs/model/NET.yaml)",
        description="`pvf train`: Lightning's CLI over the value-function module and the PBS data module.",
    )
    for name in SUBCOMMANDS:
        importlib.import_module(f"pvf.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in NETWORK_COMMANDS:  # the others never load torch
        from pvf.trainers.denormals import flush_denormals_in_process

        flush_denormals_in_process()  # before torch starts its thread pool, so its threads flush too
    if argv and argv[0] == "train":
        from pvf.trainers.cli import train_main

        return train_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:  # SIGTERM cleans up (temporary files, locks) as Ctrl-C does
        return reported_status(lambda: int(args.func(args) or 0), f"pvf {args.command}")
    except BrokenPipeError:  # the reader of stdout went away (`| head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's final flush must not fail again
        return 1


if __name__ == "__main__":
    sys.exit(main())
