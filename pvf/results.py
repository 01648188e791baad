"""Result tables as CSV files: one row per dict (or dataclass), a header from the first row's keys."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any


def write_csv(rows: Sequence[Any], path: str | Path) -> None:
    """Write `rows` (dicts or dataclass instances, all with the first row's fields) to `path`.

    Floats are written as Python prints them (shortest repr: full precision). The file is written beside `path`
    and renamed onto it, so a reader (or a process writing the same table) never sees it half-written.
    """
    dicts = [asdict(r) if is_dataclass(r) else dict(r) for r in rows]
    path = Path(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with open(partial, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(dicts[0]) if dicts else [])
            writer.writeheader()
            writer.writerows(dicts)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
