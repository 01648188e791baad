"""`pvf reproduce` builds its trainers from the configs `pvf train` composes, wherever it runs.

An edited copy of `configs/` (a model config's sizes, the training defaults'
learning rate and batch size) shows up in the checkpoints `pvf reproduce`
writes, ensembles and separate runs alike, run from another directory.
"""

from __future__ import annotations

import shutil

import pytest
import torch

from pvf.cli import build_parser
from pvf.errors import PvfError
from pvf.experiments.fig3 import reproduce_fig3
from pvf.experiments.reproduce import ReproduceConfig, training_options
from pvf.trainers import configs as config_files
from pvf.trainers.configs import CONFIG_DIR, training_defaults


@pytest.fixture
def edited_configs(tmp_path, monkeypatch):
    """A copy of configs/ with the positional net 2 layers deep, lr 0.002 and batch size 8, in use."""
    copy = tmp_path / "configs"
    shutil.copytree(CONFIG_DIR, copy)
    model = copy / "model" / "positional.yaml"
    model.write_text(model.read_text().replace("num_layers: 5", "num_layers: 2"))
    train = copy / "train.yaml"
    train.write_text(train.read_text().replace("lr: 0.001", "lr: 0.002").replace("batch_size: 64", "batch_size: 8"))
    monkeypatch.setattr(config_files, "CONFIG_DIR", copy)
    return copy


@pytest.mark.parametrize("separate_runs", [False, True])
def test_reproduce_trains_what_the_configs_say(separate_runs, edited_configs, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the configs are found from the package, not the current directory
    config = ReproduceConfig(
        out=tmp_path / "out",
        games=("leduc",),
        architectures=("positional",),
        seeds=(0,),
        trunks=3,
        cfr_iterations=5,
        max_steps=2,
        eval_every=2,
        iterations=5,
        separate_runs=separate_runs,
    )
    assert config.batch_size == 8  # the training defaults' batch size
    reproduce_fig3(config)
    (checkpoint,) = (tmp_path / "out" / "checkpoints").glob("*-b8*.ckpt")
    hyper = torch.load(checkpoint, map_location="cpu", weights_only=True)["hyper_parameters"]
    assert hyper["architecture"]["init_args"]["num_layers"] == 2
    assert hyper["lr"] == 0.002


def test_training_options_come_from_the_configs():
    options = training_options("particle")
    assert (options["basis_layers"], options["regression_layers"], options["lr"], options["val_fraction"]) == (
        3,
        5,
        0.001,
        0.1,
    )
    fixed = training_options("particle", "particle-fixed-width")
    assert (fixed["basis_hidden_width"], fixed["regression_hidden_width"], fixed["regression_layers"]) == (64, 128, 3)
    with pytest.raises(PvfError, match="builds a particle network, not positional"):
        training_options("positional", "particle")


def test_the_command_line_defaults_are_the_training_defaults(tmp_path):
    """Left unset, --max-steps and --batch-size take configs/train.yaml's values (the command holds no copy of
    them: its --help reads them from there), and --target and --lr-schedule fig. 3's protocol, the paper's, whatever
    `pvf train` defaults to."""
    from pvf.commands.reproduce import config_options
    from pvf.experiments.figures import PROTOCOLS

    args = build_parser().parse_args(["reproduce", "fig3"])
    assert (args.max_steps, args.batch_size, args.target, args.lr_schedule) == (None, None, None, None)
    options, _ = config_options(args)
    config = ReproduceConfig(**options, out=tmp_path)
    defaults = training_defaults()
    assert (config.max_steps, config.batch_size) == (defaults.max_steps, defaults.batch_size)
    assert (
        (config.target, config.lr_schedule)
        == ("average", "constant")
        == (
            PROTOCOLS["paper"].target,
            PROTOCOLS["paper"].lr_schedule,
        )
    )
    given = build_parser().parse_args(["reproduce", "fig3", "--max-steps", "7", "--batch-size", "3"])
    config = ReproduceConfig(**config_options(given)[0], out=tmp_path)
    assert (config.max_steps, config.batch_size) == (7, 3)
