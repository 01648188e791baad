"""docs/architecture.md's recipes, done for real: a solver and a network added through their registries alone.

Files each recipe touches (besides its tests; docs/architecture.md, "Recipes", says what goes in each):
  - Add a solver: 2. Its module (`pvf/solvers/<name>.py`) and one `SOLVERS` entry in `pvf/solvers/registry.py`
    (callable, one-line help, its options and how they build it). `pvf solve`, `pvf evaluate`, `pvf generate`
    and `pvf reproduce --solver` then offer it, its options in their own `--help` group.
  - Add a network: 4. The net (`pvf/nets/<name>.py`), its architecture (`pvf/valuefn/<name>.py`), one
    `ARCHITECTURES` entry in `pvf/valuefn/registry.py`, one model config (`configs/model/<name>.yaml`, for
    `pvf train`). `pvf reproduce --architectures`, `pvf evaluate` and checkpoints then work unchanged.
  - Add a game: 2. `pvf/games/paper.py`: an `ALIASES` line for a short name, a `PaperGame` or `ParticleGame`
    for the paper's experiments (`pvf.games.registry` shows them to `pvf reproduce`); its data config
    `configs/data/<name>.yaml` for `pvf train`. A game string needs none.
  - Add a leaf evaluator: 1. A callable in `pvf/solvers/evaluators.py` (numpy) or in `pvf/valuefn/` (torch).
  - Add an experiment: 2. Its module (`pvf/experiments/<name>.py`) and its verb: a subparser in
    `pvf/commands/experiment.py` (or a figure of `pvf/commands/reproduce.py`).

Here the toy solver (CFR+ with a fixed iteration count, `--toy-iterations`) and the toy architecture (the
particle architecture, small, under another name) live in this file and are registered only while a test runs.
Their numbers are checked against what does not go through them: OpenSpiel's NashConv of the saved policy,
`pvf solve --solver cfr+` and the particle architecture bit for bit, and `pvf.solve_trunk` in Python.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyspiel
import pytest
import torch

import pvf
from pvf.cli import main
from pvf.games.public_tree import build_public_tree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.registry import SOLVER_NAMES, SOLVERS, SolverOption, SolverSpec
from pvf.solvers.tabular import load_policy, to_openspiel
from pvf.solvers.trunk_solver import build_trunk
from pvf.valuefn.particle import Particle
from pvf.valuefn.registry import ARCHITECTURES


@contextlib.contextmanager
def registered(table: MutableMapping[str, Any], name: str, entry: Any) -> Iterator[Any]:
    """`table[name] = entry` for the duration of the block (a registry entry, as the recipes add one)."""
    assert name not in table
    table[name] = entry
    try:
        yield entry
    finally:
        del table[name]


def toy_cfr_plus(game, iterations, *args, fixed_iterations: int | None = None, **kwargs):
    """CFR+, run for `fixed_iterations` whatever it is asked (the toy solver's module)."""
    return cfr_plus(game, iterations if fixed_iterations is None else fixed_iterations, *args, **kwargs)


TOY_SOLVER = SolverSpec(
    toy_cfr_plus,
    "CFR+ under another name, optionally for a fixed number of iterations",
    options=(SolverOption("toy-iterations", "iterations whatever --iterations says", int),),
    from_options=lambda toy_iterations=None: partial(toy_cfr_plus, fixed_iterations=toy_iterations),
)


@dataclass(eq=False, repr=False)
class Toy(Particle):
    """The particle architecture, small, under another name (the toy architecture's module)."""

    name = "toy"
    help = "a small particle network under another name"

    basis_layers: int = 2
    basis_hidden_width: int | None = 12
    regression_layers: int = 2
    regression_hidden_width: int | None = 12


def _solve(capsys, *argv: str) -> dict:
    assert main(["solve", "kuhn_poker", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_registered_solver_is_offered_by_the_commands(tmp_path, capsys):
    with registered(SOLVERS, "toy", TOY_SOLVER):
        assert "toy" in SOLVER_NAMES
        with pytest.raises(SystemExit):
            main(["solve", "--help"])
        helped = " ".join(capsys.readouterr().out.split())
        assert (
            "toy: CFR+ under another name" in helped
            and "--solver toy options" in helped
            and "--toy-iterations" in helped
        )
        toy = _solve(
            capsys,
            "--solver",
            "toy",
            "--iterations",
            "7",
            "--toy-iterations",
            "200",
            "--save-policy",
            str(tmp_path / "toy.json"),
        )
        assert main(["solve", "kuhn_poker", "--toy-iterations", "5"]) == 2
        assert "--toy-iterations only apply to --solver toy" in capsys.readouterr().err
    reference = _solve(capsys, "--iterations", "200", "--save-policy", str(tmp_path / "cfr.json"))
    assert "toy" not in SOLVER_NAMES
    for key in ("nash_conv", "exploitability", "value"):
        assert toy[key] == reference[key]  # bit for bit
    policy = load_policy(tmp_path / "toy.json")
    assert policy == load_policy(tmp_path / "cfr.json")
    openspiel = pyspiel.nash_conv(pyspiel.load_game("kuhn_poker"), to_openspiel(policy))
    assert toy["nash_conv"] == pytest.approx(openspiel, abs=1e-12)


@pytest.fixture(scope="module")
def kuhn_data(tmp_path_factory):
    path = tmp_path_factory.mktemp("recipes") / "kuhn.h5"
    pvf.generate_dataset("kuhn_poker", depth=3, trunks=40, out=path, cfr_iterations=50)
    return path


def test_a_registered_architecture_trains_loads_and_evaluates(kuhn_data, tmp_path, capsys):
    sizes = {
        k: getattr(Toy(), k)
        for k in ("basis_layers", "basis_hidden_width", "regression_layers", "regression_hidden_width")
    }
    with registered(ARCHITECTURES, "toy", Toy):
        pvf.train_value_function(kuhn_data, "toy", tmp_path / "toy.ckpt", seed=3, max_steps=12, every_n_steps=6)
        assert main(["evaluate", "--checkpoint", str(tmp_path / "toy.ckpt"), "--skip-oracle", "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        network = pvf.load_value_function(tmp_path / "toy.ckpt")
        trunk = build_trunk(build_public_tree("kuhn_poker"), 3)
        direct = pvf.solve_trunk(trunk, network.evaluator(trunk), 100)
    with pytest.raises(pvf.PvfError, match="toy"):
        pvf.load_value_function(tmp_path / "toy.ckpt")  # the entry is gone with the block
    assert report["architecture"] == "toy" and network.architecture == "toy"
    assert report["trunk_exploitability"] == direct.exploitability.exploitability
    pvf.train_value_function(
        kuhn_data, "particle", tmp_path / "particle.ckpt", seed=3, max_steps=12, every_n_steps=6, **sizes
    )
    same = pvf.load_value_function(tmp_path / "particle.ckpt")
    assert same.net.state_dict().keys() == network.net.state_dict().keys()
    for key, value in same.net.state_dict().items():
        assert torch.equal(value, network.net.state_dict()[key]), key  # the registry entry is all that differs
    assert main(["evaluate", "--checkpoint", str(tmp_path / "particle.ckpt"), "--skip-oracle", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["trunk_exploitability"] == report["trunk_exploitability"]
    assert np.isfinite(report["trunk_exploitability"]) and report["trunk_exploitability"] >= 0
