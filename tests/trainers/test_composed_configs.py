"""Composed configs are the same runs as the single-file configs they replaced.

`tests/trainers/legacy_configs/` holds the six `configs/<game>_<architecture>.yaml`
as they were before the split. A data config and a model config (with
`configs/train.yaml` read unnamed) resolve to the same config as the old
file (`--print_config`) once given the paper's schedule and target (`PAPER`:
since the training recipe won, `configs/train.yaml` defaults to a cosine
schedule and the file's own target column, and differs from the old files in
those two settings only), and a tiny fit from each writes bit-identical
weights. An old path is one line naming the configs that replace it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
import yaml

from pvf.cli import main
from pvf.trainers.cli import train_main
from pvf.trainers.configs import CONFIG_DIR, model_config, training_defaults
from tests.trainers.config_args import CONFIGS, configs

LEGACY = Path(__file__).resolve().parent / "legacy_configs"
NAMES = sorted(path.stem for path in LEGACY.glob("*.yaml"))
TINY = [
    "--trainer.max_steps",
    "3",
    "--trainer.limit_val_batches",
    "1",
    "--trainer.val_check_interval",
    "3",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.accelerator",
    "cpu",
    "--data.batch_size",
    "4",
]
PAPER = ["--model.init_args.lr_schedule", "constant", "--data.target", "average"]  # the old files' two settings


def _printed(argv: list[str], capsys) -> dict:
    assert train_main(["fit", *argv, "--print_config"]) == 0
    return yaml.safe_load(capsys.readouterr().out)


def test_the_six_legacy_configs_are_pinned():
    assert NAMES == sorted(f"{g}_{a}" for g in ("leduc", "goofspiel5") for a in ("positional", "particle", "attention"))


@pytest.mark.parametrize("name", NAMES)
def test_composed_configs_resolve_as_the_old_file(name, capsys):
    old = _printed(["--config", str(LEGACY / f"{name}.yaml")], capsys)
    assert _printed([*configs(name), *PAPER], capsys) == old
    recipe = _printed(configs(name), capsys)  # the defaults: the recipe's schedule, the file's target column
    assert (recipe["model"]["init_args"]["lr_schedule"], recipe["data"]["target"]) == ("cosine", None)
    recipe["model"]["init_args"]["lr_schedule"], recipe["data"]["target"] = "constant", "average"
    assert recipe == old
    game, model = name.split("_")  # either order: the data and the model config set different keys
    reversed_order = [
        "--config",
        str(CONFIGS / "model" / f"{model}.yaml"),
        "--config",
        str(CONFIGS / "data" / f"{game}.yaml"),
        *PAPER,
    ]
    assert _printed(reversed_order, capsys) == old


def test_the_training_defaults_apply_unnamed(capsys):
    printed = _printed(
        ["--config", str(CONFIGS / "data" / "leduc.yaml"), "--config", str(CONFIGS / "model" / "particle.yaml")], capsys
    )
    stated = yaml.safe_load((CONFIGS / "train.yaml").read_text())
    assert printed["trainer"]["max_steps"] == stated["trainer"]["max_steps"] == 131072
    assert printed["model"]["init_args"]["lr"] == stated["model"]["init_args"]["lr"] == 0.001
    assert printed["data"]["batch_size"] == stated["data"]["batch_size"] == 64


def _weights(run: Path) -> dict[str, torch.Tensor]:
    checkpoint = next(run.glob("*/tensorboard/version_0/checkpoints/last.ckpt"))
    return torch.load(checkpoint, map_location="cpu", weights_only=True)["state_dict"]


@pytest.mark.parametrize("name", ["leduc_particle", "leduc_positional"])
def test_a_tiny_fit_writes_the_same_weights(name, leduc_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = ["--data.path", str(leduc_file), *TINY]  # after the configs, which name another file
    assert main(["train", "fit", "--config", str(LEGACY / f"{name}.yaml"), *options, "--run-dir", "old"]) == 0
    assert main(["train", "fit", *configs(name), *PAPER, *options, "--run-dir", "new"]) == 0
    old, new = _weights(tmp_path / "old"), _weights(tmp_path / "new")
    assert old.keys() == new.keys()
    for key in old:
        assert torch.equal(old[key], new[key]), key


@pytest.mark.parametrize("given", ["configs/leduc_particle.yaml", "elsewhere/configs/goofspiel5_attention.yaml"])
def test_an_old_path_names_the_new_configs(given, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "fit", "--config", given]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    where = str(Path(given).parent)
    game, model = Path(given).stem.split("_")
    assert len(err) == 1 and err[0].startswith("pvf train: error:"), err
    assert f"--config {where}/data/{game}.yaml --config {where}/model/{model}.yaml" in err[0]
    assert main(["train", "fit", f"--config={given}"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == err


def test_reproduce_reads_the_configs_from_the_checkout(tmp_path, monkeypatch):
    """`pvf reproduce`'s trainers read configs/ beside the package, whatever the current directory."""
    monkeypatch.chdir(tmp_path)
    assert CONFIG_DIR == CONFIGS
    defaults = training_defaults()
    assert (defaults.max_steps, defaults.lr, defaults.batch_size, defaults.val_fraction) == (131072, 0.001, 64, 0.1)
    particle = model_config("particle")
    assert particle.architecture == "particle"
    assert (particle.arguments["basis_layers"], particle.arguments["regression_hidden_multiplier"]) == (3, 5.0)
    fixed = model_config("particle-fixed-width")
    assert fixed.architecture == "particle"
    widths = fixed.arguments["basis_hidden_width"], fixed.arguments["regression_hidden_width"]
    assert (widths, fixed.arguments["regression_layers"]) == ((64, 128), 3)


def test_model_configs_name_registered_architectures():
    from pvf.valuefn.registry import ARCHITECTURES

    for path in sorted((CONFIGS / "model").glob("*.yaml")):
        assert model_config(path.stem).architecture in ARCHITECTURES, path


def test_a_missing_or_bad_config_is_one_line(tmp_path, monkeypatch):
    from pvf.errors import PvfError
    from pvf.trainers import configs as config_files

    with pytest.raises(PvfError, match="model/none.yaml is missing"):
        model_config("none")
    copy = tmp_path / "configs"
    shutil.copytree(CONFIGS, copy)
    monkeypatch.setattr(config_files, "CONFIG_DIR", copy)
    (copy / "model" / "particle.yaml").write_text(
        "model:\n  init_args:\n    architecture:\n      class_path: pvf.valuefn.particle.Particle\n"
        "      init_args: {basis_layerz: 3}\n"
    )
    with pytest.raises(PvfError, match="basis_layerz"):
        model_config("particle")
    (copy / "train.yaml").write_text(
        (CONFIGS / "train.yaml").read_text().replace("normalize: true", "normalize: false")
    )
    with pytest.raises(PvfError, match="normalize"):
        training_defaults()
