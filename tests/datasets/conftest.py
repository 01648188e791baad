"""Small PBS files made by pvf's generator, once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from pbs_helpers import make, small_spec


@pytest.fixture(scope="session")
def leduc_file(tmp_path_factory) -> Path:
    """Leduc at move 7: 3 trunks (2 tasks of 2 and 1) x 54 public states, 20 CFR+ iterations."""
    return make(tmp_path_factory.mktemp("pbs") / "leduc.h5", small_spec(task_size=2))
