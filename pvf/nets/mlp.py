"""Fully connected blocks shared by the value networks.

`build_mlp` returns `Linear, act, Linear, act, ..., Linear`:

1. `num_layers` counts the Linear layers (1 = a single affine map, no
   activation at all).
2. Every hidden layer has the same width: `hidden_width` if given, else
   `round(hidden_multiplier * in_dim)` (the paper's "5 x the input").
3. The activation sits between Linear layers, never after the last one, so
   the output is unbounded (values are counterfactual values, any sign).
4. With `norm=True` every hidden Linear layer is followed by a LayerNorm
   (learned scale and shift) before its activation: `Linear, LayerNorm,
   act, ..., Linear`.

Two blocks built with the same arguments have identical `state_dict` keys,
which is what lets Theorem 4 copy a positional net into a particle net.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "leaky_relu": nn.LeakyReLU,
    "elu": nn.ELU,
    "gelu": nn.GELU,
    "tanh": nn.Tanh,
}


def activation_class(name: str) -> type[nn.Module]:
    """The activation called `name`; ValueError naming the known ones otherwise."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; choose from {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]


def hidden_size(in_dim: int, hidden_multiplier: float, hidden_width: int | None) -> int:
    """Width of each hidden layer: absolute `hidden_width`, else a multiple of `in_dim`."""
    width = hidden_width if hidden_width is not None else round(hidden_multiplier * in_dim)
    if width < 1:
        raise ValueError(f"hidden width must be >= 1, got {width}")
    return int(width)


def build_mlp(
    in_dim: int,
    out_dim: int,
    num_layers: int,
    hidden_multiplier: float = 1.0,
    hidden_width: int | None = None,
    activation: str = "relu",
    norm: bool = False,
) -> nn.Sequential:
    """An MLP `[..., in_dim] -> [..., out_dim]` with `num_layers` Linear layers (and a LayerNorm after each hidden
    one where `norm`)."""
    if num_layers < 1:
        raise ValueError(f"an MLP needs at least one layer, got num_layers={num_layers}")
    act = activation_class(activation)
    width = hidden_size(in_dim, hidden_multiplier, hidden_width) if num_layers > 1 else out_dim
    dims = [in_dim] + [width] * (num_layers - 1) + [out_dim]
    layers: list[nn.Module] = []
    for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:])):
        if i > 0:
            if norm:
                layers.append(nn.LayerNorm(d_in))
            layers.append(act())
        layers.append(nn.Linear(d_in, d_out))
    return nn.Sequential(*layers)


class ConfigurableModule(nn.Module):
    """A module that can be rebuilt from its constructor arguments.

    Subclasses store their constructor arguments in `self._config`; a
    checkpoint then holds `config` and a state dict, both loadable with
    `torch.load(weights_only=True)`.
    """

    _config: dict[str, Any]

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments as a JSON-serialisable dict (see `from_config`)."""
        return dict(self._config)

    def hparams(self) -> dict[str, Any]:
        """Same as `config`; the name Lightning's `save_hyperparameters` users expect."""
        return self.config

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ConfigurableModule:
        """Rebuild an (untrained) network from `config`; then load a state dict."""
        return cls(**config)


@contextmanager
def single_thread() -> Iterator[None]:
    """Run torch single-threaded inside the block, restoring the thread count after.

    These networks and batches are small: on 2-core machines intra-op threads
    made small matrix products 10-30x slower (synchronisation, not compute).
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
