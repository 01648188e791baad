"""`--help` of `pvf` and of every subcommand and sub-subcommand: exit status 0, a one-line summary in the parent's
listing and a description under the usage."""

from __future__ import annotations

import argparse

import pytest

from pvf.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str, str]]:
    """(argv prefix, help in the parent's listing, description) of every (sub-)subcommand, depth first."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {a.dest: a.help for a in action._choices_actions}
            for name, child in action.choices.items():
                found.append(((*path, name), listed.get(name) or "", child.description or ""))
                found.extend(_commands(child, (*path, name)))
    return found


COMMANDS = _commands(build_parser())


def test_every_verb_is_listed():
    names = {" ".join(path) for path, _, _ in COMMANDS}
    assert {
        "train",
        "experiment",
        "reproduce fig3",
        "reproduce fig4",
        "reproduce particles",
        "evaluate sparse",
        "experiment linear",
        "experiment leaf-targets",
        "experiment particle-trunks",
    } <= names


@pytest.mark.parametrize("path, listed, description", COMMANDS, ids=[" ".join(c[0]) for c in COMMANDS])
def test_help_exits_0_with_a_description(capsys, path, listed, description):
    assert listed.strip() and "\n" not in listed, f"pvf {' '.join(path)}: no one-line help in its parent's listing"
    assert description.strip(), f"pvf {' '.join(path)}: no description"
    try:
        status = main([*path, "--help"])  # `pvf train` (Lightning's CLI) returns its status
    except SystemExit as exit_:
        status = exit_.code
    assert status == 0
    out = capsys.readouterr().out
    first = next(line for line in description.splitlines() if line.strip())
    assert out.startswith("usage: pvf ") and first.strip()[:40] in " ".join(out.split()), out[:500]
