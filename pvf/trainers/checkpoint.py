"""Load a trained value function from a checkpoint, weights only.

Every checkpoint `pvf train` writes is a Lightning checkpoint that loads with
`torch.load(path, weights_only=True)`: its hyper-parameters are plain
python and it carries a `"pvf"` entry:

    {"format": "pvf.value_function", "version": 1, "architecture": "positional" | "particle",
     "config": net.config, "layout": DataLayout.to_dict(), "pvf_version": ...}

`load_value_function` rebuilds the net from `config`, loads the `net.*`
weights of `state_dict`, and refuses (PvfError, one line) a game or data
layout other than the one it was trained on.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

import pvf
from pvf.errors import PvfError
from pvf.games.loading import canonical_game_string
from pvf.nets import ParticleVF, PositionalVF
from pvf.trainers.layout import DataLayout

FORMAT = "pvf.value_function"
VERSION = 1
ARCHITECTURES: dict[str, type[nn.Module]] = {"positional": PositionalVF, "particle": ParticleVF}
_PREFIX = "net."


@dataclass(frozen=True)
class ValueFunctionMeta:
    """What a checkpointed value function was built for.

    architecture: "positional" or "particle".
    config: the net's constructor arguments (`net.config`).
    layout: game, depth, target column, feature widths and slots of its training data.
    pvf_version: pvf version that trained it.
    """

    architecture: str
    config: dict[str, Any]
    layout: DataLayout
    pvf_version: str

    @property
    def game(self) -> str:
        return self.layout.game


def value_function_meta(architecture: str, net: nn.Module, layout: DataLayout) -> dict[str, Any]:
    """The checkpoint's `"pvf"` entry (plain python)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "architecture": architecture,
        "config": net.config,
        "layout": layout.to_dict(),
        "pvf_version": pvf.__version__,
    }


def load_value_function(
    path: str | Path,
    expect_game: str | None = None,
    expect_layout: DataLayout | dict[str, Any] | None = None,
) -> tuple[nn.Module, ValueFunctionMeta]:
    """(net in eval mode on CPU, its meta) from a checkpoint written by `pvf train`.

    expect_game: raise PvfError unless the net was trained on this game (aliases allowed).
    expect_layout: raise PvfError unless the net can read data of this layout
        (same game and feature widths; for the positional net the same slots).
    """
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise PvfError(f"no checkpoint at {str(path)!r}") from None
    except (pickle.UnpicklingError, RuntimeError, EOFError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PvfError(f"{path} is not a weights-only loadable checkpoint ({reason})") from None
    entry = checkpoint.get("pvf") if isinstance(checkpoint, dict) else None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        raise PvfError(f"{path} holds no pvf value function (was it written by `pvf train`?)")
    if entry.get("version") != VERSION or entry.get("architecture") not in ARCHITECTURES:
        raise PvfError(f"{path}: unsupported value function (version {entry.get('version')}, "
                       f"architecture {entry.get('architecture')!r})")
    meta = ValueFunctionMeta(
        architecture=entry["architecture"],
        config=dict(entry["config"]),
        layout=DataLayout.from_dict(entry["layout"]),
        pvf_version=str(entry.get("pvf_version", "")),
    )
    if expect_game is not None and canonical_game_string(expect_game) != canonical_game_string(meta.game):
        raise PvfError(f"value function {path} was trained on {meta.game!r}, not {expect_game!r}")
    if expect_layout is not None:
        other = expect_layout if isinstance(expect_layout, DataLayout) else DataLayout.from_dict(expect_layout)
        meta.layout.check_compatible(other, meta.architecture)
    net = ARCHITECTURES[meta.architecture].from_config(meta.config)
    weights = {k[len(_PREFIX):]: v for k, v in checkpoint["state_dict"].items() if k.startswith(_PREFIX)}
    net.load_state_dict(weights)
    return net.eval(), meta
