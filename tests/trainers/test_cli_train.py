"""`pvf train`: the shipped configs compose and parse, a short CLI fit writes a loadable checkpoint and no Lightning
deprecation."""

from __future__ import annotations

import csv
import warnings

import pytest
import torch
import yaml

from pvf.cli import main
from pvf.trainers.cli import train_main
from pvf.trainers.module import ValueFunctionModule
from pvf.valuefn.checkpoint import load_checkpoint
from tests.trainers.config_args import CONFIGS, configs

NAMES = [f"{game}_{arch}" for game in ("leduc", "goofspiel5") for arch in ("positional", "particle", "attention")]


@pytest.mark.parametrize("name", NAMES)
def test_configs_print(name, capsys):
    assert train_main(["fit", *configs(name), "--print_config"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    architecture = name.split("_")[1]
    assert printed["model"]["class_path"] == "pvf.trainers.module.ValueFunctionModule"
    assert (
        printed["model"]["init_args"]["architecture"]["class_path"]
        == f"pvf.valuefn.{architecture}.{architecture.capitalize()}"
    )
    assert printed["model"]["init_args"]["lr"] == 0.001
    assert printed["data"]["batch_size"] == 64
    assert printed["trainer"]["accelerator"] == "auto"
    assert "layout" not in printed["model"]["init_args"]  # linked from the data at instantiation


def test_paper_sizes_in_configs():
    def sizes(model: str) -> dict:
        config = yaml.safe_load((CONFIGS / "model" / f"{model}.yaml").read_text())
        return config["model"]["init_args"]["architecture"]["init_args"]

    particle, positional = sizes("particle"), sizes("positional")
    assert (particle["basis_layers"], particle["basis_hidden_multiplier"]) == (3, 3.0)
    assert (particle["regression_layers"], particle["regression_hidden_multiplier"]) == (5, 5.0)
    assert (positional["num_layers"], positional["hidden_multiplier"]) == (5, 5.0)


def test_a_fit_ending_inside_an_epoch_validates_and_keeps_its_last_step(kuhn_file, tmp_path, monkeypatch):
    """18 training samples in batches of 4: epochs of 5 steps; 7 steps end inside the second. The last step is
    validated and checkpointed (Lightning alone stops at max_steps without either: last.ckpt held step 5)."""
    monkeypatch.chdir(tmp_path)
    argv = [
        "train", "fit", *configs("leduc_positional"), "--data.path", str(kuhn_file), "--data.batch_size", "4",
        "--trainer.max_steps", "7", "--trainer.enable_progress_bar", "false", "--trainer.accelerator", "cpu",
    ]  # fmt: skip
    assert main(argv) == 0
    checkpoints = tmp_path / "runs" / "kuhn_positional" / "tensorboard" / "version_0" / "checkpoints"
    assert torch.load(checkpoints / "last.ckpt", weights_only=False)["global_step"] == 7
    with open(tmp_path / "runs" / "kuhn_positional" / "csv" / "version_0" / "metrics.csv") as f:
        validated = [row["step"] for row in csv.DictReader(f) if row["val_loss"]]
    assert validated == ["4", "6"]  # each epoch's end and the last step, once each


@pytest.mark.parametrize("name", ["leduc_positional", "leduc_particle", "leduc_attention"])
def test_cli_fit_writes_a_weights_only_checkpoint(name, leduc_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [
        "train", "fit",
        *configs(name),
        "--data.path", str(leduc_file),
        "--data.target", "current",
        "--trainer.max_steps", "3",
        "--trainer.limit_val_batches", "2",
        "--trainer.val_check_interval", "3",
        "--trainer.log_every_n_steps", "1",
        "--trainer.enable_progress_bar", "false",
        "--trainer.accelerator", "cpu",
    ]  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(argv) == 0
    assert not [str(w.message) for w in caught if "LeafSpec" in str(w.message)]  # Lightning's, not the user's to act on
    run = tmp_path / "runs" / name
    last = next(run.glob("tensorboard/version_0/checkpoints/last.ckpt"))
    assert (run / "tensorboard" / "version_0" / "config.yaml").is_file()
    assert (run / "csv" / "version_0" / "metrics.csv").is_file()
    net, meta = load_checkpoint(last, expect_game="leduc_poker")
    assert meta.layout.target == "current"
    assert meta.architecture == name.split("_")[1]
    module = ValueFunctionModule.load_from_checkpoint(last, weights_only=True)
    assert module.layout == meta.layout


def test_cli_reports_a_bad_file_in_one_line(tmp_path, capsys):
    code = train_main(["fit", *configs("leduc_particle"), "--data.path", str(tmp_path / "none.h5")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pvf train: error:") and "none.h5" in err and "\n" not in err


@pytest.mark.parametrize("flag", [["--seed", "7"], ["--seed=7"]])
def test_seed_is_seed_everything(flag, capsys):
    assert train_main(["fit", *configs("leduc_positional"), *flag, "--print_config"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["seed_everything"] == 7


def test_an_interrupted_fit_says_so_and_exits_130(leduc_file, tmp_path, monkeypatch, capsys):
    """Lightning turns Ctrl-C (and pvf's SIGTERM) during fit into sys.exit(1); pvf train reports the interrupt."""
    import signal

    def interrupted(self, batch, batch_idx):
        raise KeyboardInterrupt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ValueFunctionModule, "training_step", interrupted)
    handler = signal.getsignal(signal.SIGINT)
    try:
        rc = main(
            [
                "train",
                "fit",
                *configs("leduc_positional"),
                "--data.path",
                str(leduc_file),
                "--trainer.max_steps",
                "3",
                "--trainer.enable_progress_bar",
                "false",
                "--trainer.accelerator",
                "cpu",
            ]
        )
    finally:
        signal.signal(signal.SIGINT, handler)  # Lightning ignores Ctrl-C after an interrupt
    assert rc == 130
    assert capsys.readouterr().err.splitlines()[-1] == "pvf train: interrupted; checkpoints written so far are kept"


def test_a_sigtermed_fit_says_so_and_exits_143(leduc_file, tmp_path, monkeypatch, capsys):
    """Lightning stops a fit that received SIGTERM by raising SIGTERMException, a SystemExit without a code:
    pvf train exited 0 as if it had finished. It now reports the interrupt and exits 143 (128 + SIGTERM)."""
    from pytorch_lightning.utilities.exceptions import SIGTERMException

    def terminated(self, batch, batch_idx):
        raise SIGTERMException

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ValueFunctionModule, "training_step", terminated)
    args = [*configs("leduc_positional"), "--data.path", str(leduc_file), "--trainer.max_steps", "3"]
    rc = main(["train", "fit", *args, "--trainer.enable_progress_bar", "false", "--trainer.accelerator", "cpu"])
    assert rc == 143
    assert capsys.readouterr().err.splitlines()[-1] == "pvf train: interrupted; checkpoints written so far are kept"
