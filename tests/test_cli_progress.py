"""`--progress` / `--no-progress` of the long-running commands: bars by default only where stderr is a terminal."""

from __future__ import annotations

import argparse
import io

import pytest

from pvf.commands import add_progress_argument, progress_wanted


class _Stderr(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("argv, tty, wanted", [
    ([], True, True), ([], False, False),
    (["--progress"], False, True), (["--no-progress"], True, False),
])
def test_progress_defaults_to_whether_stderr_is_a_terminal(monkeypatch, argv, tty, wanted):
    parser = argparse.ArgumentParser()
    add_progress_argument(parser)
    monkeypatch.setattr("sys.stderr", _Stderr(tty))
    assert progress_wanted(parser.parse_args(argv)) is wanted


@pytest.mark.parametrize("command", [["reproduce", "fig3"], ["evaluate", "sparse"]])
def test_long_commands_take_both_flags(capsys, command):
    from pvf.cli import main

    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    assert "--progress, --no-progress" in capsys.readouterr().out
