"""The repository documents itself: every design reference points at docs/architecture.md."""

from __future__ import annotations

import re
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
    for heading in (
        "## Data flow, module by module",
        "## Glossary",
        "## Conventions",
        "### Add a game",
        "### Add a network",
        "### Add a leaf evaluator",
        "### Add a solver",
    ):
        assert heading in text
    for term in (
        "Public state",
        "PBS",
        "Trunk",
        "leaves",
        "Depth",
        "Particle",
        "Infostate row",
        "Leaf evaluator",
        "Layout",
        "Architecture",
    ):
        assert f"**{term}**" in text or f"**{term}" in text, term


# --- what the Markdown pages cite -------------------------------------------------------------------------------

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README_MAX_LINES = 150
# A path that starts at one of these is a file of the repository; anything else (runs/..., F.h5) is the user's.
TOP_LEVEL = ("pvf", "docs", "benchmarks", "scripts", "configs", "tests", ".ci")
REPO_PATH = re.compile(r"(?<![\w./~-])((?:" + "|".join(re.escape(t) for t in TOP_LEVEL) + r")/[\w./{},*<>-]*)")
DOTTED = re.compile(r"(?<![\w./-])pvf(?:\.[A-Za-z_]\w*)+")
LINK = re.compile(r"(!?)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
NOT_MODULES = {"pvf.pbs"}  # the HDF5 schema's name (docs/hdf5_schema.md), not a module


def _rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _expand(pattern: str) -> list[str]:
    """`a.{csv,png}` -> `a.csv`, `a.png` (one brace group at a time)."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [p for alt in match.group(1).split(",") for p in _expand(head + alt + tail)]


def _exists(path: str, base: Path = ROOT) -> bool:
    """A file or folder under base; `*` and `<placeholder>` match any name (at least one match needed)."""
    for candidate in _expand(path):
        candidate = re.sub(r"<[^<>]*>", "*", candidate).rstrip("/") or "."
        if "*" in candidate:
            if not list(base.glob(candidate)):
                return False
        elif not (base / candidate).exists():
            return False
    return True


def _module_resolves(name: str) -> bool:
    """pvf.a.b resolves to a package or module file; a trailing attribute must be named in its module's source."""
    parts = name.split(".")
    node = ROOT / parts[0]
    for part in parts[1:]:
        if node.is_dir() and (node / part / "__init__.py").is_file():
            node = node / part
        elif node.is_dir() and (node / f"{part}.py").is_file():
            node = node / f"{part}.py"
        else:
            source = node / "__init__.py" if node.is_dir() else node
            return source.is_file() and re.search(_defines(part), source.read_text(), re.MULTILINE) is not None
    return True


def _defines(name: str) -> str:
    """A module defines, imports or lazily exports `name` (def, class, assignment, import, a quoted name)."""
    n = re.escape(name)
    return rf"^\s*(?:async\s+)?(?:def|class)\s+{n}\b|^\s*{n}\s*[:=]|^\s*(?:from|import)\s[^\n]*\b{n}\b|[\"']{n}[\"']"


def _citations(page: Path) -> tuple[set[str], set[str], set[tuple[str, str]]]:
    """(repository paths, dotted module names, (kind, target) of every Markdown link and image) a page names."""
    text = page.read_text()
    paths = {m.rstrip(".,;:") for m in REPO_PATH.findall(text)}
    modules = {m for m in DOTTED.findall(text) if m not in NOT_MODULES}
    links = {("image" if bang else "link", target) for bang, target in LINK.findall(text)}
    return paths, modules, links


def _local_target(page: Path, target: str) -> str | None:
    """A link's file relative to the page (None for web addresses and anchors within the page)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return None
    return target.split("#", 1)[0]


def test_every_cited_repository_path_and_module_exists():
    missing = []
    for page in PAGES:
        paths, modules, links = _citations(page)
        missing += [f"{_rel(page)}: {p}" for p in sorted(paths) if not _exists(p)]
        missing += [f"{_rel(page)}: {m} (module)" for m in sorted(modules) if not _module_resolves(m)]
        for kind, target in sorted(links):
            local = _local_target(page, target)
            if local and kind == "link" and not _exists(local, page.parent):
                missing.append(f"{_rel(page)}: link {target}")
    assert not missing, "cited but not in the repository:\n" + "\n".join(missing)


def test_every_linked_figure_exists():
    missing = []
    for page in PAGES:
        for kind, target in sorted(_citations(page)[2]):
            local = _local_target(page, target)
            if kind == "image" and (local is None or not (page.parent / local).is_file()):
                missing.append(f"{_rel(page)}: image {target}")
    assert not missing, "figures that are not files of the repository:\n" + "\n".join(missing)


def _table_rows_with_numbers(page: Path) -> set[str]:
    rows, fenced = set(), False
    for line in page.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
        if fenced or not stripped.startswith("|") or not re.search(r"\d", stripped):
            continue
        cells = [re.sub(r"\s+", " ", cell.strip()) for cell in stripped.strip("|").split("|")]
        rows.add("| " + " | ".join(cells) + " |")
    return rows


def test_no_table_row_with_numbers_is_in_two_pages():
    """Each measurement lives on one page; others link to it."""
    pages_of: dict[str, list[str]] = {}
    for page in PAGES:
        for row in _table_rows_with_numbers(page):
            pages_of.setdefault(row, []).append(_rel(page))
    duplicated = [f"{' and '.join(pages)}: {row}" for row, pages in sorted(pages_of.items()) if len(pages) > 1]
    assert not duplicated, "table rows written on two pages:\n" + "\n".join(duplicated)


def test_the_readme_is_a_first_page():
    lines = len((ROOT / "README.md").read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, at most {README_MAX_LINES}"
