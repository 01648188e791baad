"""Load a trained value function from a checkpoint, weights only.

Every checkpoint `pvf train` writes is a Lightning checkpoint that loads with
`torch.load(path, weights_only=True)`: its hyper-parameters are plain
python and it carries a `"pvf"` entry:

    {"format": "pvf.value_function", "version": 1, "architecture": NAME,
     "config": net.config, "layout": DataLayout.to_dict(), "pvf_version": ...}

NAME is a key of `pvf.valuefn.registry.ARCHITECTURES`. `load_checkpoint`
rebuilds the net from `config` (`architecture.net_class.from_config`), loads
the `net.*` weights of `state_dict`, and refuses (PvfError, one line) a
file that is no such checkpoint, weights that are not finite (a diverged
run would evaluate as a constant), and a game or data layout other than
the one it was trained on.
"""

from __future__ import annotations

import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

import pvf
from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.games.loading import canonical_game_string
from pvf.valuefn.architecture import Architecture
from pvf.valuefn.registry import ARCHITECTURES

FORMAT = "pvf.value_function"
VERSION = 1
_PREFIX = "net."


@dataclass(frozen=True)
class ValueFunctionMeta:
    """What a checkpointed value function was built for.

    architecture: its registry name ("positional", "particle", "attention").
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

    @property
    def encoding(self) -> Architecture:
        """The architecture's encoding (hyper-parameters at their defaults: the encoding ignores them)."""
        return ARCHITECTURES[self.architecture]()


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


def load_checkpoint(
    path: str | Path,
    expect_game: str | None = None,
    expect_layout: DataLayout | dict[str, Any] | None = None,
) -> tuple[nn.Module, ValueFunctionMeta]:
    """(net in eval mode on CPU, its meta) from a checkpoint written by `pvf train`.

    expect_game: raise PvfError unless the net was trained on this game (aliases allowed).
    expect_layout: raise PvfError unless the net can read data of this layout
        (same game and feature widths; for the positional net the same slots).
    """
    checkpoint = _read(Path(path))
    entry = checkpoint.get("pvf") if isinstance(checkpoint, dict) else None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        raise PvfError(f"{path} holds no pvf value function (was it written by `pvf train`?)")
    if entry.get("version") != VERSION or entry.get("architecture") not in ARCHITECTURES:
        raise PvfError(
            f"{path}: unsupported value function (version {entry.get('version')}, "
            f"architecture {entry.get('architecture')!r})"
        )
    try:
        meta = ValueFunctionMeta(
            architecture=entry["architecture"],
            config=dict(entry["config"]),
            layout=DataLayout.from_dict(entry["layout"]),
            pvf_version=str(entry.get("pvf_version", "")),
        )
    except (KeyError, TypeError, ValueError):
        raise PvfError(f"{path}: its pvf entry is incomplete; retrain with `pvf train`") from None
    if expect_game is not None and canonical_game_string(expect_game) != canonical_game_string(meta.game):
        raise PvfError(f"value function {path} was trained on {meta.game!r}, not {expect_game!r}")
    if expect_layout is not None:
        other = expect_layout if isinstance(expect_layout, DataLayout) else DataLayout.from_dict(expect_layout)
        meta.encoding.check_layout(meta.layout, other)
    state = checkpoint.get("state_dict")
    if not isinstance(state, dict):
        raise PvfError(f"{path} holds no weights (no state_dict); was it written by `pvf train`?")
    try:
        net = ARCHITECTURES[meta.architecture].net_class.from_config(meta.config)
        net.load_state_dict({k[len(_PREFIX) :]: v for k, v in state.items() if k.startswith(_PREFIX)})
    except (TypeError, ValueError, RuntimeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PvfError(f"{path}: its weights do not fit its {meta.architecture} net ({reason})") from None
    broken = [
        name for name, tensor in net.state_dict().items() if tensor.is_floating_point() and not tensor.isfinite().all()
    ]
    if broken:
        raise PvfError(
            f"{path}: {len(broken)} weight tensors hold NaN or infinite values (first {broken[0]}): its training "
            "diverged; use an earlier checkpoint or retrain with a lower learning rate"
        )
    return net.eval(), meta


def _read(path: Path) -> Any:
    """The checkpoint's contents by `torch.load(weights_only=True)`; PvfError in one line otherwise."""
    if path.is_dir():
        raise PvfError(f"{path} is a directory; pass a checkpoint file (e.g. {path}/last.ckpt)")
    if not path.exists():
        raise PvfError(f"no checkpoint at {str(path)!r}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (
        pickle.UnpicklingError,
        RuntimeError,
        EOFError,
        OSError,
        ValueError,
        zipfile.BadZipFile,
        AttributeError,
        ImportError,
        KeyError,
        IndexError,
        TypeError,
    ):
        # torch's own message suggests weights_only=False, which would run arbitrary code: never repeat it
        raise PvfError(
            f"{path} is not a pvf checkpoint (unreadable or truncated); pass a file written by `pvf train`"
        ) from None
