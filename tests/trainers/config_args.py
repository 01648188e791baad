"""The shipped configs as `pvf train` arguments: a game's data config and a network's model config."""

from __future__ import annotations

from pathlib import Path

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def configs(name: str) -> list[str]:
    """`--config` arguments of `<game>_<model>`: `configs/data/<game>.yaml`, then `configs/model/<model>.yaml`."""
    game, model = name.split("_")
    return ["--config", str(CONFIGS / "data" / f"{game}.yaml"), "--config", str(CONFIGS / "model" / f"{model}.yaml")]
