"""`pvf.module_main.run_module`: a script's exit as the pvf command's (status, one line on stderr)."""

import signal

import pytest

from pvf.errors import PvfError
from pvf.module_main import run_module


def _exit(main) -> int:
    previous = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as exit_info:
            run_module(main, "python -m pvf.experiments.x")
    finally:
        signal.signal(signal.SIGTERM, previous)
    return exit_info.value.code


def _bad_input() -> int:
    raise PvfError("--games must be at least 2")


def _interrupted() -> int:
    raise KeyboardInterrupt


def test_status_and_one_line(capsys):
    assert _exit(lambda: 0) == 0
    assert _exit(_bad_input) == 2
    assert capsys.readouterr().err == "python -m pvf.experiments.x: error: --games must be at least 2\n"
    assert _exit(_interrupted) == 128 + signal.SIGINT
    assert capsys.readouterr().err == "python -m pvf.experiments.x: interrupted\n"
