"""Shared fixtures: public trees are built once per test session."""

from __future__ import annotations

import functools

import pytest
import torch

from pvf.games.public_tree import PublicTree, build_public_tree

KUHN = "kuhn_poker"
LEDUC = "leduc_poker"
GOOF4 = "goofspiel(num_cards=4,imp_info=True,points_order=descending)"
GOOF5 = "goofspiel(num_cards=5,imp_info=True,points_order=descending)"


@functools.lru_cache(maxsize=None)
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
