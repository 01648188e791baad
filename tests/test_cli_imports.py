"""Commands that run no network load neither torch nor Lightning (issue: every command paid 4-5 s and ~450 MB).

Each command runs in a fresh interpreter, which then reports the modules it loaded.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

COMMANDS = {
    "version": ["--version"],
    "refused game": ["solve", "goofspiel", "--iterations", "100"],
    "solve": ["solve", "kuhn_poker", "--iterations", "5"],
    "describe": ["describe", "kuhn_poker"],
    "generate and inspect": ["generate", "--game", "kuhn", "--depth", "3", "--trunks", "2", "--out", "k.h5"],
    "help": ["solve", "--help"],
}
PROBE = """
import sys
from pvf.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
if len(sys.argv) > 3 and sys.argv[1] == "generate":
    main(["inspect", "k.h5"])
print(" ".join(m for m in ("torch", "pytorch_lightning", "lightning") if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_commands_without_networks_load_no_torch(name, tmp_path):
    out = subprocess.run([sys.executable, "-c", PROBE, *COMMANDS[name]], capture_output=True, text=True, cwd=tmp_path)
    assert out.stderr.splitlines()[-1:] in ([], [""]), out.stderr[-2000:]
