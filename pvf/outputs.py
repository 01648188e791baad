"""Output paths: checked before any work, locked while written, disk errors in one line.

Every command that writes files calls these before it computes anything:
  1. `check_output_file(path, option)`: a file name (not empty, not a
     directory) in an existing directory where this process can create a
     file (a probe file is created and removed: this catches permissions,
     read-only and immutable directories alike).
  2. `check_output_dir(path, option)`: a directory, created if missing, that
     is writable in the same sense; `check_future_dir(path, option)` checks
     the same without creating it (for commands that make it only once
     their work succeeded).
  3. `output_lock(path)`: one writer per output. An exclusive `flock` on
     `path`.lock, which the kernel drops when its holder dies (SIGKILL
     included), so a lock is never stale; a second writer is refused at once
     with the holder's pid. The lock file is removed by its holder on exit.
  4. `disk_errors(path)`: turns a full disk or a file-size limit (ENOSPC,
     EDQUOT, EFBIG, also as reported by HDF5) into a one-line PvfError.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from pvf.errors import PvfError

_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DISK_FULL_WORDS = ("No space left on device", "File too large", "Disk quota exceeded")


def check_output_file(path: str | Path, option: str) -> Path:
    """`path` as a Path if a file can be written there; else a PvfError naming `option`."""
    if str(path).strip() == "":
        raise PvfError(f"{option} is empty; pass a file name")
    out = Path(path)
    if str(path).endswith(os.sep) or out.name in ("", ".", "..") or out.is_dir():
        raise PvfError(f"{out} is a directory; {option} takes a file name")
    _check_writable_dir(out.parent, option)
    return out


def _directory_name(path: str | Path, option: str) -> Path:
    """`path` as a Path: not empty, and not an existing file; else a PvfError naming `option`."""
    if str(path).strip() == "":
        raise PvfError(f"{option} is empty; pass a directory")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise PvfError(f"{out} is a file; {option} takes a directory")
    return out


def check_output_dir(path: str | Path, option: str) -> Path:
    """`path` as a Path, created if missing, if files can be written in it; else a PvfError naming `option`."""
    out = _directory_name(path, option)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PvfError(f"cannot create directory {out} ({exc.strerror or exc}); choose another {option}") from None
    _check_writable_dir(out, option)
    return out


def check_future_dir(path: str | Path, option: str) -> Path:
    """`path` as a Path if `check_output_dir` could create it (nothing is created); else a PvfError naming `option`."""
    out = _directory_name(path, option)
    existing = next(p for p in (out, *out.absolute().parents) if p.exists())
    if existing == out.absolute():
        _check_writable_dir(out, option)
        return out
    try:
        _check_writable_dir(existing, option)
    except PvfError:
        raise PvfError(f"cannot create directory {out} ({existing} is not writable); choose another {option}") from None
    return out


def _check_writable_dir(directory: Path, option: str) -> None:
    if not directory.exists():
        raise PvfError(f"directory {directory} does not exist; create it or choose another {option}")
    if not directory.is_dir():
        raise PvfError(f"{directory} is not a directory; choose another {option}")
    probe = directory / f".pvf-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise PvfError(f"cannot write in {directory} ({exc.strerror or exc}); choose another {option}") from None
    os.close(fd)
    probe.unlink()


@contextlib.contextmanager
def output_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (file `path`.lock) for the duration; PvfError if another process holds it."""
    lock = path.with_name(path.name + ".lock")
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise PvfError(f"cannot create lock file {lock} ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise PvfError(
                f"{path} is being written by another pvf process (pid {holder}); wait for it, or stop it and rerun"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:  # else the previous holder removed the file between our open and flock: retry
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` says the disk (or the file-size limit) is full, as errno or in HDF5's text."""
    return isinstance(exc, OSError) and (
        exc.errno in _DISK_FULL or any(w in str(exc) for w in _DISK_FULL_WORDS) or "errno = 28" in str(exc)
    )


@contextlib.contextmanager
def disk_errors(path: Path, hint: str = "") -> Iterator[None]:
    """Re-raise a full disk while writing under `path` as a one-line PvfError (with `hint` appended)."""
    try:
        yield
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        why = os.strerror(exc.errno) if exc.errno in _DISK_FULL else "no space left or file too large"
        raise PvfError(f"cannot write {path}: {why}{'; ' + hint if hint else ''}") from None
