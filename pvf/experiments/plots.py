"""The paper's figures 3 and 4 as PNG files (matplotlib, no display needed).

- `plot_training`: trunk exploitability and training (or validation) MSE
  against training steps, one line per architecture (mean over seeds, a
  band of ±1 standard deviation), log scale; chosen checkpoints as dots.
- `plot_sparse`: trunk exploitability against the share of support
  histories kept, mean with standard-deviation bars, and the uniform
  strategy's reference line.
Figures are in the NashConv convention (twice OpenSpiel's / the authors');
the training MSE plotted at a step is the mean over the steps since the
previous measurement.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

NASHCONV_LABEL = "trunk exploitability (NashConv)"


def plot_training(rows: Sequence[dict[str, Any]], path: str | Path, title: str, loss_key: str = "train_loss") -> None:
    """rows: dicts with architecture, seed, step, trunk_exploitability and `loss_key` ("train_loss" or "val_loss");
    rows with `chosen` 1 (`pvf.experiments.quality`) are marked as dots."""
    fig = Figure(figsize=(11, 4))
    ax_expl, ax_loss = fig.subplots(1, 2)
    for i, arch in enumerate(sorted({r["architecture"] for r in rows})):
        mine = [r for r in rows if r["architecture"] == arch]
        steps = np.array(sorted({r["step"] for r in mine}))
        for ax, key in ((ax_expl, "trunk_exploitability"), (ax_loss, loss_key)):
            mean, std = _per_step(mine, steps, key)
            ax.plot(steps, mean, label=arch, color=f"C{i}")
            ax.fill_between(steps, np.maximum(mean - std, 1e-12), mean + std, alpha=0.25, color=f"C{i}")
        chosen = [r for r in mine if r.get("chosen")]
        if chosen:
            ax_expl.plot(
                [r["step"] for r in chosen], [r["trunk_exploitability"] for r in chosen], ".", color=f"C{i}", ms=5
            )
    ax_expl.set_ylabel(NASHCONV_LABEL)
    ax_loss.set_ylabel("validation MSE" if loss_key == "val_loss" else "training MSE")
    for ax in (ax_expl, ax_loss):
        ax.set_xlabel("training step")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(textwrap.fill(title, 90), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _per_step(rows: Sequence[dict[str, Any]], steps: np.ndarray, key: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation over seeds of `key` at each step (NaN where none)."""
    mean, std = np.full(len(steps), np.nan), np.full(len(steps), np.nan)
    for i, step in enumerate(steps):
        values = np.array([r[key] for r in rows if r["step"] == step], dtype=np.float64)
        values = values[np.isfinite(values)]
        if len(values):
            mean[i], std[i] = values.mean(), values.std()
    return mean, std


def plot_sparse(summary: Sequence[dict[str, Any]], uniform: dict[str, float], path: str | Path, title: str) -> None:
    """summary: `pvf.experiments.sparse_sweep.summarize` rows; uniform: `uniform_reference`."""
    fig = Figure(figsize=(6.5, 4.5))
    ax = fig.subplots()
    share = np.array([r["share"] for r in summary])
    series = [("exploitability", "whole trunk fixed", "C0")]
    root = np.array([r["root_exploitability_mean"] for r in summary])
    trunk = np.array([r["exploitability_mean"] for r in summary])
    if not np.allclose(root, trunk) or not np.isclose(uniform["root_exploitability"], uniform["exploitability"]):
        series.append(("root_exploitability", "root move fixed, the authors' evaluation", "C1"))
    for key, label, color in series:
        mean = np.array([r[f"{key}_mean"] for r in summary])
        std = np.array([r[f"{key}_std"] for r in summary])
        ax.errorbar(share, mean, yerr=std, marker="o", capsize=3, color=color, label=label)
        ax.axhline(uniform[key], linestyle="--", color=color, alpha=0.7, label=f"uniform strategy, {label}")
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("share of the equilibrium's support histories kept")
    ax.set_ylabel(NASHCONV_LABEL)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(textwrap.fill(title, 60), fontsize=10)  # long game strings wrap instead of being cut
    fig.tight_layout()
    fig.savefig(path, dpi=120)
