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


@pytest.mark.parametrize(
    "argv, tty, wanted",
    [
        ([], True, True),
        ([], False, False),
        (["--progress"], False, True),
        (["--no-progress"], True, False),
    ],
)
def test_progress_defaults_to_whether_stderr_is_a_terminal(monkeypatch, argv, tty, wanted):
    parser = argparse.ArgumentParser()
    add_progress_argument(parser)
    monkeypatch.setattr("sys.stderr", _Stderr(tty))
    assert progress_wanted(parser.parse_args(argv)) is wanted


@pytest.mark.parametrize("command", [["reproduce", "fig3"], ["evaluate", "sparse"], ["generate"]])
def test_long_commands_take_both_flags(capsys, command):
    from pvf.cli import main

    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    assert "--progress, --no-progress" in capsys.readouterr().out


@pytest.mark.parametrize("flags, bar", [([], False), (["--progress"], True)])
def test_generate_shows_its_bar_only_where_asked(tmp_path, capsys, flags, bar):
    """stderr captured (not a terminal): no bar unless --progress; the file is written either way."""
    from pvf.cli import main

    out = tmp_path / "k.h5"
    assert main(["generate", "--game", "kuhn_poker", "--depth", "3", "--trunks", "2", "--out", str(out), *flags]) == 0
    assert out.exists()
    assert ("pvf generate k.h5" in capsys.readouterr().err) is bar
