"""Small real PBS files, generated once per session with pvf's own generator."""

from __future__ import annotations

from pathlib import Path

import pytest

from pvf.datasets.generate import generate
from pvf.datasets.spec import GenerationSpec


def make_dataset(path: Path, game: str, depth: int, num_trunks: int, target: str = "average", seed: int = 0) -> Path:
    spec = GenerationSpec(game=game, depth=depth, num_trunks=num_trunks, cfr_iterations=20, seed=seed, target=target)
    generate(spec, path, progress=False)
    return path


@pytest.fixture(scope="session")
def goofspiel_files(tmp_path_factory) -> list[Path]:
    """Three Goofspiel-5 files (move 2) from different generation seeds (ensemble members each get their own):
    particle sets of different sizes."""
    root = tmp_path_factory.mktemp("ensemble_data")
    return [make_dataset(root / f"g{k}.h5", "goofspiel5", 2, 4, seed=k) for k in range(3)]


@pytest.fixture(scope="session")
def leduc_files(tmp_path_factory) -> list[Path]:
    """Three Leduc files (move 7) from different generation seeds."""
    root = tmp_path_factory.mktemp("ensemble_leduc")
    return [make_dataset(root / f"l{k}.h5", "leduc_poker", 7, 4, seed=k) for k in range(3)]


@pytest.fixture(scope="session")
def leduc_file(tmp_path_factory) -> Path:
    """Leduc at the paper's depth (move 7): 12 trunks x 54 public states."""
    return make_dataset(tmp_path_factory.mktemp("data") / "leduc.h5", "leduc_poker", 7, 12)


@pytest.fixture(scope="session")
def kuhn_file(tmp_path_factory) -> Path:
    """Kuhn after the first bet (move 3): 10 trunks x 2 public states."""
    return make_dataset(tmp_path_factory.mktemp("data") / "kuhn.h5", "kuhn_poker", 3, 10)


@pytest.fixture(scope="session")
def kuhn_current_file(tmp_path_factory) -> Path:
    """Kuhn whose `target` column holds the last CFR+ iterate."""
    return make_dataset(tmp_path_factory.mktemp("data") / "kuhn_current.h5", "kuhn_poker", 3, 10, target="current")
