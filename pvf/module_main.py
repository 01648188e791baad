"""How a pvf entry point ends: the `pvf` command's subcommands and `python -m pvf.experiments.<module>` scripts.

`reported_status(call, prog)` installs SIGTERM as Ctrl-C (`pvf.interrupts`:
locks and temporary files are removed as the stack unwinds), runs `call()`,
and returns its status; a `PvfError` is one line on stderr (`prog: error:
...`) and status 2, an interruption one line and 143 (SIGTERM) or 130
(Ctrl-C). `pvf.cli.main` returns it; `run_module(main, prog)` exits with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from pvf import interrupts
from pvf.errors import PvfError, say_on_stderr


def reported_status(call: Callable[[], int], prog: str) -> int:
    """`call()`'s exit status, or 2 or the interruption's as the module docstring says."""
    interrupts.install()
    try:
        return call()
    except PvfError as exc:
        say_on_stderr(f"{prog}: error: {exc}")
        return 2
    except KeyboardInterrupt:
        say_on_stderr(f"{prog}: interrupted")
        return interrupts.exit_status()


def run_module(main: Callable[[], int], prog: str) -> NoReturn:
    """Exit with `reported_status(main, prog)`."""
    raise SystemExit(reported_status(main, prog))
