"""The public API: `import pvf` is light, and docs/example.py (the documented walk-through) runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_pvf_loads_neither_torch_nor_the_solvers():
    code = "import pvf, sys; print(' '.join(sorted(sys.modules)))"
    modules = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.split()
    assert "torch" not in modules and not [m for m in modules if m.startswith("pvf.solvers")]


def test_pvf_re_exports_exactly_the_api():
    import pvf
    import pvf.api

    assert list(pvf.API_NAMES) == pvf.api.__all__  # pvf.api exports the list pvf/__init__.py resolves lazily
    assert all(getattr(pvf, name) is getattr(pvf.api, name) for name in pvf.api.__all__)


def test_the_example_runs_and_its_figures_hold(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "example.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    value = float(re.search(r"value (-?[0-9.]+)", text).group(1))
    assert abs(value - (-1 / 18)) < 1e-4  # Kuhn's game value
    exact, zero = map(float, re.search(r"exact leaves ([0-9.]+), zero leaves ([0-9.]+)", text).groups())
    learned = float(re.search(r"trained particle net: ([0-9.]+)", text).group(1))
    assert exact < learned < zero
    assert (tmp_path / "kuhn.h5").is_file() and (tmp_path / "kuhn_particle.ckpt").is_file()
