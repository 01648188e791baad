"""pvf/experiments/support_size.py: Goofspiel-5's equilibrium support.

Counted by pvf and by a walk of OpenSpiel's game.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pvf_and_openspiel_count_the_same_root_histories():
    """Threshold 0 keeps every root history in both counts (the walk reaches pvf's 400 roots); at 1e-2, after 200
    iterations of either CFR+, both count the same support, although rounding parts the two solvers' iterates at the
    third iteration (docs/results/speed.md, "CFR+ against OpenSpiel")."""
    script = [
        sys.executable,
        "-m",
        "pvf.experiments.support_size",
        "--iterations",
        "200",
        "--thresholds",
        "0,1e-2",
        "--openspiel",
        "--json",
    ]
    counts = json.loads(subprocess.run(script, capture_output=True, text=True, check=True).stdout)
    assert counts["pvf"]["200"]["0.0"] == counts["openspiel"]["200"]["0.0"] == 400
    assert counts["pvf"]["200"]["0.01"] == counts["openspiel"]["200"]["0.01"] == 108
