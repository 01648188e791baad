"""Denormals flushed to zero in training steps: only inside the block, in every intra-op thread, no weight changed."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from pvf.trainers import denormals
from pvf.trainers.denormals import flush_denormals

DENORMAL = 1e-40  # below float32's smallest normal, 1.18e-38


@pytest.fixture
def flag_off(monkeypatch: pytest.MonkeyPatch):
    """The thread's flag off and no process-wide flushing (an in-process `pvf` command may have set it)."""
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU cannot flush denormals")
    before = denormals.flushing_in_process
    torch.set_flush_denormal(False)
    monkeypatch.setattr(denormals, "flushing_in_process", False)
    yield
    torch.set_flush_denormal(before)


def _flushed() -> bool:
    return float(torch.tensor([DENORMAL]) * 1.0) == 0.0


def test_only_inside_the_block_and_nested_blocks_keep_it(flag_off) -> None:
    assert not _flushed()
    with flush_denormals():
        assert _flushed()
        with flush_denormals():
            assert _flushed()
        assert _flushed()  # the inner block's end does not turn it off
    assert not _flushed()


def test_process_wide_flushing_outlives_blocks(flag_off) -> None:
    assert denormals.flush_denormals_in_process()
    with flush_denormals():
        pass
    assert _flushed()


def test_adam_from_denormal_moments_changes_no_weight(flag_off) -> None:
    """A step on zero gradients with denormal moments.

    The same weights flushed or not, the moments zeroed when flushed.
    """
    generator = torch.Generator().manual_seed(0)
    start = torch.randn(4096, generator=generator) * 0.1

    def step() -> tuple[torch.Tensor, torch.Tensor]:
        weight = torch.nn.Parameter(start.clone())
        optimizer = torch.optim.Adam([weight], lr=1e-3, fused=True)
        weight.grad = torch.zeros_like(weight)
        optimizer.step()  # creates the state
        state = optimizer.state[weight]
        state["exp_avg"].fill_(DENORMAL)
        state["exp_avg_sq"].fill_(DENORMAL)
        optimizer.step()
        return weight.detach().clone(), state["exp_avg"].clone()

    plain_weight, plain_moment = step()
    with flush_denormals():
        flushed_weight, flushed_moment = step()
    assert torch.equal(plain_weight, flushed_weight)
    assert bool((plain_moment != 0).all()) and bool((flushed_moment == 0).all())


_THREADS = """
import torch
from pvf.trainers.denormals import flush_denormals_in_process
if {early}:
    flush_denormals_in_process()
torch.set_num_threads(2)
x = torch.full((1 << 21,), 1e-40)
(x * 1.0).sum()  # starts the intra-op thread pool
if not {early}:
    flush_denormals_in_process()
print(float((x * 1.0 != 0).float().mean()))
"""


@pytest.mark.parametrize("early", [True, False])
def test_the_thread_pool_flushes_only_when_set_before_it_starts(early: bool) -> None:
    """Why the `pvf` command and its workers call flush_denormals_in_process first: pool threads copy the flag."""
    out = subprocess.run(
        [sys.executable, "-c", _THREADS.format(early=early)], capture_output=True, text=True, check=True
    )
    kept = float(out.stdout)
    if early:
        assert kept == 0.0
    else:
        assert 0.0 < kept < 1.0  # the calling thread's share flushed, the pool thread's not
