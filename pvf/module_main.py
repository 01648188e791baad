"""How `python -m pvf.experiments.<module>` scripts end: as the `pvf` command's subcommands do.

`run_module(main, prog)` installs SIGTERM as Ctrl-C (`pvf.interrupts`: locks
and temporary files are removed as the stack unwinds), runs `main()`, and
exits with its status; a `PvfError` is one line on stderr (`prog: error:
...`) and status 2, an interruption one line and 143 (SIGTERM) or 130
(Ctrl-C), as `pvf.cli.main`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from pvf import interrupts
from pvf.errors import PvfError, say_on_stderr


def run_module(main: Callable[[], int], prog: str) -> NoReturn:
    """Exit with `main()`'s status, or as the module docstring says."""
    interrupts.install()
    try:
        status = main()
    except PvfError as exc:
        say_on_stderr(f"{prog}: error: {exc}")
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        say_on_stderr(f"{prog}: interrupted")
        raise SystemExit(interrupts.exit_status()) from None
    raise SystemExit(status)
