"""Shared fixtures, built once per test session: public trees and tiny trained value functions (Kuhn, to move 3)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
import torch

from pvf.datasets.generate import generate
from pvf.datasets.spec import GenerationSpec, ParticleOptions
from pvf.games.public_tree import PublicTree, build_public_tree
from pvf.trainers.training import TrainingRun, train_value_function

KUHN = "kuhn_poker"
LEDUC = "leduc_poker"
GOOF4 = "goofspiel(num_cards=4,imp_info=True,points_order=descending)"
GOOF5 = "goofspiel(num_cards=5,imp_info=True,points_order=descending)"


def pytest_configure(config: pytest.Config) -> None:
    """One torch (OpenMP) thread in every test process and every command a test starts: with a test process
    per core (xdist), a second thread per process only waits for a busy core (the example walk-through took
    93 s with two threads beside another busy process, 15 s with one). A test that needs threads sets them."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the Ray backend run in one test process, one after another (each starts a local instance)."""
    for item in items:
        if item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.xdist_group("ray"))


@functools.cache
def cached_tree(game: str) -> PublicTree:
    return build_public_tree(game)


@pytest.fixture(scope="session")
def kuhn() -> PublicTree:
    return cached_tree(KUHN)


@pytest.fixture(scope="session")
def leduc() -> PublicTree:
    return cached_tree(LEDUC)


@pytest.fixture(scope="session")
def goof4() -> PublicTree:
    return cached_tree(GOOF4)


@pytest.fixture(autouse=True)
def one_torch_thread():
    """The test nets are tiny: one thread avoids contention on shared, busy CPUs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def kuhn_data(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "kuhn.h5"
    generate(GenerationSpec(game="kuhn_poker", depth=3, num_trunks=12, cfr_iterations=20, seed=0), path, progress=False)
    return path


@pytest.fixture(scope="session")
def kuhn_runs(kuhn_data, tmp_path_factory) -> dict[str, TrainingRun]:
    """One particle and one positional net, 6 steps each, trunk exploitability every 3 steps."""
    out = tmp_path_factory.mktemp("checkpoints")
    torch.set_num_threads(1)
    return {
        arch: train_value_function(
            kuhn_data, arch, out / f"{arch}.ckpt", seed=0, max_steps=6, every_n_steps=3, iterations=20, batch_size=4
        )
        for arch in ("particle", "positional")
    }


@pytest.fixture(scope="session")
def goof5_children_net(tmp_path_factory) -> tuple[Path, Path]:
    """A particle net (6 steps) on 16 Goofspiel-5 children samples at move 3 (best responses), and that file."""
    folder = tmp_path_factory.mktemp("goof5_children")
    spec = GenerationSpec(
        game=GOOF5,
        depth=3,
        num_trunks=16,
        cfr_iterations=20,
        target="best_response",
        task_size=8,
        particles=ParticleOptions(count=6, rows="children"),
    )
    generate(spec, folder / "g5.h5", progress=False)
    run = train_value_function(folder / "g5.h5", "particle", folder / "net.ckpt", 0, max_steps=6, every_n_steps=None)
    return run.checkpoint, folder / "g5.h5"
