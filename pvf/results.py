"""Result tables as CSV files: one row per dict (or dataclass), a header from the first row's keys."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any


def write_csv(rows: Sequence[Any], path: str | Path) -> None:
    """Write `rows` (dicts or dataclass instances, all with the first row's fields) to `path`.

    Floats are written as Python prints them (shortest repr: full precision).
    """
    dicts = [asdict(r) if is_dataclass(r) else dict(r) for r in rows]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(dicts[0]) if dicts else [])
        writer.writeheader()
        writer.writerows(dicts)
