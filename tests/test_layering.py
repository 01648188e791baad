"""Package layering: solvers are numpy/scipy only, the reader is light, no cycle, no private name used across modules.

The import graph is read from the source (every `import pvf.x` / `from pvf.x
import`, lazy ones inside functions included), so a test fails as soon as a
module reaches across a layer, not only when the import happens to run.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PVF = ROOT / "pvf"

# Top-level modules (pvf/errors.py, pvf/results.py, ...) are utilities every package may use;
# pvf.api and pvf.cli sit on top of everything.
UTILITIES = {p.stem for p in PVF.glob("*.py")} - {"__init__", "api", "cli"}

# What each package may import from pvf (besides itself and the utilities). Lower layers first.
ALLOWED = {
    "games": set(),
    "solvers": {"games"},
    "datasets": {"games", "solvers"},
    "nets": set(),
    "valuefn": {"games", "solvers", "datasets", "nets"},
    "trainers": {"games", "solvers", "datasets", "nets", "valuefn"},
    "agents": {"games", "solvers", "datasets", "nets", "valuefn"},
    "experiments": {"games", "solvers", "datasets", "nets", "valuefn", "trainers", "agents"},
    "commands": {"games", "solvers", "datasets", "nets", "valuefn", "trainers", "experiments", "agents"},
}


def _imports(path: Path) -> set[str]:
    """Dotted pvf modules imported anywhere in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pvf"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pvf"):
            found.add(node.module)
    return found


def _third_party(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_packages_import_only_lower_layers(package):
    for path in sorted((PVF / package).glob("*.py")):
        for module in _imports(path):
            parts = module.split(".")
            if len(parts) < 2 or parts[1] == package or parts[1] in UTILITIES:
                continue
            assert parts[1] in ALLOWED[package], f"{path.relative_to(ROOT)} imports {module}"


@pytest.mark.parametrize("utility", sorted(UTILITIES))
def test_utilities_import_no_package(utility):
    imported = {m.split(".")[1] for m in _imports(PVF / f"{utility}.py") if m.count(".") >= 1}
    assert imported <= UTILITIES, f"pvf/{utility}.py imports {sorted(imported - UTILITIES)}"


def test_the_layers_form_no_cycle():
    done = set()

    def visit(package, stack):
        assert package not in stack, f"cycle: {' -> '.join([*stack, package])}"
        if package in done:
            return
        for dep in ALLOWED[package]:
            visit(dep, [*stack, package])
        done.add(package)

    for package in ALLOWED:
        visit(package, [])


def test_datasets_never_step_openspiel_states():
    """Histories come from pvf.games (`history_sampling`, `particle_tree`); datasets never walk OpenSpiel states."""
    for path in sorted((PVF / "datasets").glob("*.py")):
        walk = [
            node
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom)
            and node.module == "pvf.games"
            and any(a.name == "walk" for a in node.names)
        ]
        assert "pvf.games.walk" not in _imports(path) and not walk, path.name
        assert not _third_party(path) & {"pyspiel", "open_spiel"}, path.name


def test_solvers_never_import_torch_in_source():
    for path in sorted((PVF / "solvers").glob("*.py")):
        assert not _third_party(path) & {"torch", "pytorch_lightning", "lightning"}, path.name


def _module_graph() -> dict[str, set[str]]:
    """pvf module -> the pvf modules it imports anywhere (lazy and TYPE_CHECKING imports included)."""
    modules = {}
    for path in PVF.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def test_no_module_import_cycle():
    """Not only packages: no two modules import each other, directly or around a loop, lazily or for types."""
    graph, done, cycles = _module_graph(), set(), []

    def visit(module, stack):
        if module in stack:
            cycles.append(" -> ".join([*stack[stack.index(module) :], module]))
            return
        if module in done:
            return
        for dep in sorted(graph[module]):
            visit(dep, [*stack, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []


def _private_uses(path: Path) -> list[str]:
    """`_name`s of pvf modules this file imports or reads as `module._name` (dunders aside)."""
    tree = ast.parse(path.read_text())
    aliases, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith("pvf"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "pvf":
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found.append(f"from {node.module} import {a.name}")
                aliases.add(a.asname or a.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases and base.id != "self":
                found.append(f"{ast.unparse(node)}")
    return found


def test_no_module_imports_another_modules_private_names():
    """A leading underscore means "this module only": pvf, its tests, benchmarks and scripts keep to it."""
    offenders = {}
    for folder in ("pvf", "tests", "benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            uses = _private_uses(path)
            if uses:
                offenders[str(path.relative_to(ROOT))] = uses
    assert offenders == {}


def _loaded(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "; import sys; print(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return out.stdout.split()


def test_solvers_load_without_torch():
    modules = _loaded(
        "import pvf.solvers.cfr_plus, pvf.solvers.trunk_solver, pvf.solvers.trunk_exploitability, "
        "pvf.solvers.sparse_trunks, pvf.solvers.evaluators, pvf.solvers.batched_trunk, "
        "pvf.solvers.warm_exploitability"
    )
    assert "torch" not in modules


def test_reading_a_dataset_loads_no_solver_and_no_torch():
    modules = _loaded("import pvf.datasets.reader, pvf.datasets.layout")
    assert not [m for m in modules if m.startswith("pvf.solvers") or m == "torch"]


def test_bare_pytest_from_the_root_imports_this_checkout():
    """`pytest` (not `python -m pytest`) with no PYTHONPATH: `tests.*` helpers and this pvf import."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pytest_bin = Path(sys.executable).with_name("pytest")
    if not pytest_bin.exists():
        pytest.skip("no pytest executable beside this interpreter")
    out = subprocess.run(
        [str(pytest_bin), "-q", "--collect-only", "-p", "no:cacheprovider", "tests/solvers/test_evaluators.py"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
