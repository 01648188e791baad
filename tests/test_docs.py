"""The repository documents itself: every design reference points at docs/architecture.md."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = "DESIGN" + ".md"  # the steering notes live outside the repository


def test_nothing_cites_the_design_notes_outside_the_repository():
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT, check=True).stdout.split()
    citing = [f for f in files if (ROOT / f).is_file() and OUTSIDE in (ROOT / f).read_text(errors="ignore")]
    assert citing == []


def test_the_architecture_page_has_its_sections():
    text = (ROOT / "docs" / "architecture.md").read_text()
    for heading in ("## Data flow, module by module", "## Glossary", "## Conventions", "### Add a game",
                    "### Add a network", "### Add a leaf evaluator", "### Add a solver"):
        assert heading in text
    for term in ("Public state", "PBS", "Trunk", "leaves", "Depth", "Particle", "Leaf evaluator", "Layout", "Architecture"):
        assert f"**{term}**" in text or f"**{term}" in text, term
