"""Tiny trained value functions (Kuhn, trunk to move 3), made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from pvf.datasets.generate import generate
from pvf.datasets.spec import GenerationSpec
from pvf.evaluation.training import TrainingRun, train_value_function


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
        arch: train_value_function(kuhn_data, arch, out / f"{arch}.ckpt", seed=0, max_steps=6, every_n_steps=3, iterations=20, batch_size=4)
        for arch in ("particle", "positional")
    }
