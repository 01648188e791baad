"""SIGTERM handled as Ctrl-C, delivered even when the first raise is swallowed.

`pvf` turns SIGTERM into KeyboardInterrupt so that a terminated command
cleans up as on Ctrl-C (temporary files and locks removed, finished shards
kept). Python runs a signal handler between bytecodes of whatever code is
executing, and an exception raised while a weakref callback or `__del__`
runs is printed as "Exception ignored" and dropped, so the command would
keep running. `install()` sets a handler that records the request and
raises at once, except inside such a finaliser (where it only records);
long loops call `check()` at their safe points (after each shard), which
raises if a request is pending. `exit_status()` says which signal it was
(the shell's convention: 143 after SIGTERM, 130 after Ctrl-C).
"""

from __future__ import annotations

import signal
from types import FrameType

_requested = False


def install() -> None:
    """Handle SIGTERM in this process as a Ctrl-C (module docstring)."""
    signal.signal(signal.SIGTERM, _terminate)


def exit_status() -> int:
    """The status an interrupted command exits with: 143 after SIGTERM, 130 after Ctrl-C (128 + the signal)."""
    return 128 + signal.SIGTERM if _requested else 128 + signal.SIGINT


def check() -> None:
    """Raise KeyboardInterrupt if a SIGTERM arrived (its first raise may have been swallowed)."""
    if _requested:
        raise KeyboardInterrupt


def _terminate(signum: int, frame: FrameType | None) -> None:
    global _requested
    _requested = True
    if not _in_finaliser(frame):
        raise KeyboardInterrupt


def _in_finaliser(frame: FrameType | None) -> bool:
    """Whether the interrupted code is a weakref callback or `__del__`, where a raised exception is dropped."""
    while frame is not None:
        if frame.f_code.co_name == "__del__" or frame.f_code.co_filename.endswith("weakref.py"):
            return True
        frame = frame.f_back
    return False
