"""The composed training configs: where pvf finds them and what `pvf reproduce` reads from them.

`configs/` holds one file per concern, composed on the command line
(`pvf train fit --config configs/data/leduc.yaml --config configs/model/particle.yaml`):
  - `train.yaml`: the training defaults (Adam's lr and schedule, batch size,
    validation share, steps, loggers); `pvf train` reads it first without
    its being named (Lightning's `default_config_files`), so a data and a
    model config are all a run needs, and `--print_config` shows every value;
  - `data/<game>.yaml`: a game's data file and its game-specific data
    settings (Goofspiel's counterfactual-reach and opponent features);
  - `model/<name>.yaml`: one network, its architecture and sizes
    (`positional`, `particle`, `attention`: the paper's, app. F;
    `particle-fixed-width`: the particle games' of `pvf reproduce`).
A new game or network adds one file. The defaults live in that file rather
than in code: `pvf reproduce` builds its trainers from the same files
(`training_defaults`: optimizer, steps and data settings; `model_config`:
a network's architecture arguments), so both commands train what the
files say and a user's edit reaches both.
The files sit beside the package (`<checkout>/configs`), found from this
module's path whatever the current directory: one copy, not a packaged
duplicate that a new network would have to be added to twice; pvf is
installed editable from its checkout (`scripts/setup.sh`), and an install
without them says so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pvf.errors import PvfError
from pvf.valuefn.registry import from_class_path, to_class_path

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
TRAINING_DEFAULTS = CONFIG_DIR / "train.yaml"


def config_file(relative: str) -> Path:
    """`configs/<relative>`; PvfError if it is not there."""
    path = CONFIG_DIR / relative
    if not path.is_file():
        raise PvfError(
            f"pvf's config {relative} is missing from {CONFIG_DIR} (pvf reads configs/ from its checkout: "
            f"pip install -e .)"
        )
    return path


def _load(path: Path) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise PvfError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(loaded, dict):
        raise PvfError(f"{path}: expected a mapping at the top")
    return loaded


def _entry(config: dict[str, Any], path: Path, *keys: str) -> Any:
    """`config[k1][k2]...`; PvfError naming the missing key and the file."""
    value: Any = config
    for depth, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise PvfError(f"{path}: no {'.'.join(keys[: depth + 1])}")
        value = value[key]
    return value


@dataclass(frozen=True)
class TrainingDefaults:
    """The training settings of `configs/train.yaml` that `pvf reproduce`'s trainers use.

    max_steps: trainer.max_steps. lr: Adam's (model.init_args).
    batch_size, val_fraction: the data module's (data). Not among them: the split
    seed (`pvf reproduce` splits each seed's dataset with that seed), the target
    and the schedule (its protocols', `pvf.experiments.figures.PROTOCOLS`).
    """

    max_steps: int
    lr: float
    batch_size: int
    val_fraction: float


# data settings that pvf reproduce's trainers do not take: their values there, which train.yaml must state
_FIXED_DATA_SETTINGS = {"normalize": True, "num_workers": 0}


def training_defaults() -> TrainingDefaults:
    """`configs/train.yaml` read; PvfError if it lacks a setting or sets one reproduce cannot follow."""
    path = config_file("train.yaml")
    config = _load(path)
    data = _entry(config, path, "data")
    for key, value in _FIXED_DATA_SETTINGS.items():
        if data.get(key, value) != value:
            raise PvfError(f"{path}: pvf reproduce trains with data.{key} {value}, got {data[key]}")
    return TrainingDefaults(
        max_steps=int(_entry(config, path, "trainer", "max_steps")),
        lr=float(_entry(config, path, "model", "init_args", "lr")),
        batch_size=int(_entry(config, path, "data", "batch_size")),
        val_fraction=float(_entry(config, path, "data", "val_fraction")),
    )


@dataclass(frozen=True)
class ModelConfig:
    """A network from `configs/model/<name>.yaml`: its architecture's registry name and arguments."""

    name: str
    architecture: str
    arguments: dict[str, Any]


def model_config(name: str) -> ModelConfig:
    """`configs/model/<name>.yaml`'s architecture (`model.init_args.architecture`), every argument stated."""
    path = config_file(f"model/{name}.yaml")
    spec = _entry(_load(path), path, "model", "init_args", "architecture")
    try:
        architecture = from_class_path(spec)
    except (TypeError, ValueError, ImportError, AttributeError, KeyError) as exc:
        raise PvfError(f"{path}: model.init_args.architecture: {exc}") from None
    return ModelConfig(name, architecture.name, to_class_path(architecture)["init_args"])
