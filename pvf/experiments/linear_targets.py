"""Learning linear targets y = A x (paper, sec. 5.3, app. C, app. D, fig. 2).

1. Draw A [n, n] ~ N(0, 1/n), inputs X [L, n] ~ N(0, 1), targets Y = X A^T.
2. Derive the particle training set TS_F: sample i is a set of n particles;
   particle j has belief x_ij, feature vector row j of T (T = I, or with
   `random_basis` a random regular matrix, condition number <= 4) and
   target y_ij.
3. Train each variant from the same data, full batch, float64, Adam with the
   learning rate cosine-annealed from `lr` to `lr * 1e-3`, on the MSE:
   - "linear": one bias-free Linear layer on x (the positional net here);
   - "projection": `ParticleVF` with a single Linear change basis and a
     single Linear regression (an exact solution: change-basis weight T^-T,
     so basis_j = e_j, and regression weight A);
   - "concatenation-1" / "concatenation-2": the same with app. C's
     concatenation output, a projection regression with 1 / 2 hidden ReLU
     layers of width 2n.
4. Record the training MSE before every step.

The particle nets' Linear layers carry biases, which the paper's
theta in R^{n x n} do not; zero biases are part of the exact solution.
Expected (fig. 2): linear and projection fall to float round-off, the
concatenation variants plateau orders of magnitude above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure
from torch import Tensor, nn

from pvf.errors import PvfError
from pvf.nets import ParticleVF
from pvf.nets.mlp import single_thread

VARIANTS = ("linear", "projection", "concatenation-1", "concatenation-2")
# particle variant -> (ParticleVF output, Linear layers of the projection regression)
_PARTICLE_OUTPUTS = {
    "projection": ("projection", 2),
    "concatenation-1": ("concatenation", 2),
    "concatenation-2": ("concatenation", 3),
}


def _random_regular(n: int, dtype: torch.dtype) -> Tensor:
    """U diag(s) V^T with random orthogonal U, V and s in [1/2, 2]: regular, condition number <= 4.
    (A plain Gaussian matrix is regular too, but its condition number, often 50-100
    at n = 10, slows Adam enough to stall the projection variant near 1e-6.)"""
    u, _ = torch.linalg.qr(torch.randn(n, n, dtype=dtype))
    v, _ = torch.linalg.qr(torch.randn(n, n, dtype=dtype))
    s = 2.0 ** (2 * torch.rand(n, dtype=dtype) - 1)
    return u @ torch.diag(s) @ v.T


def _train(model: nn.Module, inputs: tuple[Tensor, ...], targets: Tensor, steps: int, lr: float) -> np.ndarray:
    """Full-batch Adam on the MSE of `model(*inputs)`; returns the loss before each step, [steps]."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=lr * 1e-3)
    losses = np.empty(steps)
    for step in range(steps):
        opt.zero_grad()
        loss = (model(*inputs) - targets).pow(2).mean()
        loss.backward()
        opt.step()
        schedule.step()
        losses[step] = loss.item()
    return losses


MAX_STEPS = 10_000_000
MAX_FEATURE_BYTES = 4 << 30  # the particle variants' features [samples, n, n] in float64


def check_options(n: int, samples: int, steps: int, lr: float, seed: int = 0) -> None:
    """PvfError (one line) for sizes below 1, a learning rate that is not a positive finite number, or
    features too large for memory (8·samples·n² bytes: --n 100000 asked for 80 GB)."""
    if n < 1 or samples < 1 or steps < 1:
        raise PvfError(f"n, samples and steps must be >= 1 (got n={n}, samples={samples}, steps={steps})")
    if not 0 <= seed < 2**63:
        raise PvfError(f"--seed must lie in [0, 2^63), got {seed}")
    if steps > MAX_STEPS:
        raise PvfError(
            f"--steps {steps:,}: at most {MAX_STEPS:,} (each step is a full-batch Adam step; the curve "
            "keeps one loss per step)"
        )
    if not (lr > 0 and math.isfinite(lr)):
        raise PvfError(f"learning rate must be a positive finite number, got {lr}")
    need = 8 * samples * n * n
    if need > MAX_FEATURE_BYTES:
        raise PvfError(
            f"--n {n} with --samples {samples} needs {need / 2**30:,.1f} GiB for the particle features "
            f"(8 * samples * n^2 bytes; at most {MAX_FEATURE_BYTES >> 30} GiB): use a smaller --n or --samples"
        )


def run_linear_targets(
    n: int = 10,
    samples: int = 100,
    steps: int = 2000,
    seed: int = 0,
    lr: float = 1e-2,
    random_basis: bool = False,
    variants: Sequence[str] = VARIANTS,
) -> dict[str, np.ndarray]:
    """Train `variants` (see step 3); returns {variant: training MSE [steps]}."""
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise PvfError(f"unknown variants {unknown}; choose from {list(VARIANTS)}")
    check_options(n, samples, steps, lr, seed)
    dtype = torch.float64
    with single_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        a = torch.randn(n, n, dtype=dtype) / math.sqrt(n)
        x = torch.randn(samples, n, dtype=dtype)  # [L, n] beliefs
        y = x @ a.T  # [L, n] targets
        basis = _random_regular(n, dtype) if random_basis else torch.eye(n, dtype=dtype)
        features = basis.expand(samples, n, n)  # [L, n particles, n features]
        public = torch.zeros(samples, 0, dtype=dtype)
        mask = torch.ones(samples, n, dtype=torch.bool)

        curves = {}
        for name in variants:
            torch.manual_seed(seed)  # same initialisation whichever variants run
            if name == "linear":
                model: nn.Module = nn.Linear(n, n, bias=False)
                inputs: tuple[Tensor, ...] = (x,)
            else:
                output, projection_layers = _PARTICLE_OUTPUTS[name]
                model = ParticleVF(
                    n, 0, n, basis_layers=1, regression_layers=1, output=output, projection_layers=projection_layers
                )
                inputs = (x, features, public, mask)
            curves[name] = _train(model.to(dtype), inputs, y, steps, lr)
    return curves


def curve_rows(curves: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """One row per (step, variant): `step, variant, loss` (for `pvf.results.write_csv`)."""
    return [
        {"step": step, "variant": variant, "loss": float(loss)}
        for variant, losses in curves.items()
        for step, loss in enumerate(losses)
    ]


def plot_curves(curves: dict[str, np.ndarray], path: Path) -> None:
    """Log-scale training MSE per variant (exact zeros are not drawn)."""
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    for variant, losses in curves.items():
        ax.semilogy(np.arange(len(losses)), losses, label=variant, linewidth=1.2)
    ax.set_xlabel("Adam step (full batch)")
    ax.set_ylabel("training MSE")
    ax.set_title("Learning linear targets y = Ax")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
