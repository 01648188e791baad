"""`pvf train` runs: where they go, and how they fail (one line, exit 2, nothing left behind).

Runs are kept apart by game (from the data file) and architecture (from the
config): the Leduc config on a Kuhn file writes `runs/kuhn_particle/`, and
`--run-dir` moves logs and checkpoints together (`--run_dir` too, saying it is now `--run-dir`). Every error a user can
cause is checked with real processes' view of the file system: the
directory is listed before and after.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from pvf.cli import main
from tests.trainers.config_args import configs

QUICK = [
    "--trainer.max_steps",
    "2",
    "--trainer.limit_val_batches",
    "1",
    "--trainer.val_check_interval",
    "2",
    "--trainer.enable_progress_bar",
    "false",
    "--trainer.accelerator",
    "cpu",
    "--data.batch_size",
    "4",
]


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _train(config: str, data: Path, *extra: str) -> int:
    return main(["train", "fit", *configs(config), "--data.path", str(data), *QUICK, *extra])


def test_runs_are_named_by_the_data_and_the_architecture(kuhn_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _train("leduc_particle", kuhn_file) == 0
    assert _train("leduc_positional", kuhn_file) == 0
    assert sorted(os.listdir(tmp_path / "runs")) == ["kuhn_particle", "kuhn_positional"]
    assert (tmp_path / "runs" / "kuhn_particle" / "tensorboard" / "version_0" / "checkpoints" / "last.ckpt").is_file()


@pytest.mark.parametrize("flag", ["--run-dir", "--run_dir"])
def test_one_flag_moves_the_whole_run(flag, kuhn_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _train("leduc_attention", kuhn_file, flag, "elsewhere") == 0
    moved = "pvf train: --run_dir is now --run-dir"
    assert (moved in capsys.readouterr().err.splitlines()) == (flag == "--run_dir")
    assert os.listdir(tmp_path) == ["elsewhere"]
    run = tmp_path / "elsewhere" / "kuhn_attention"
    assert (run / "tensorboard" / "version_0" / "checkpoints" / "last.ckpt").is_file()
    assert (run / "csv" / "version_0" / "metrics.csv").is_file()
    assert (run / "tensorboard" / "version_0" / "config.yaml").is_file()


BAD_OPTIONS = {
    "lr_schedule typo": ["--model.init_args.lr_schedule", "cosin"],
    "activation typo": ["--model.init_args.architecture.init_args.activation", "relux"],
    "batch size 0": ["--data.batch_size", "0"],
    "negative lr": ["--model.init_args.lr", "-1"],
    "no gpu": ["--trainer.accelerator", "gpu"],
    "cosine without max_steps": [
        "--trainer.max_steps",
        "-1",
        "--trainer.max_epochs",
        "1",
        "--model.init_args.lr_schedule",
        "cosine",
    ],  # found once training starts
}


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_bad_options_are_one_line_and_leave_nothing(case, kuhn_file, tmp_path, monkeypatch, capsys):
    if case == "no gpu" and torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    monkeypatch.chdir(tmp_path)
    assert _train("leduc_particle", kuhn_file) == 0  # an earlier run stays untouched
    capsys.readouterr()
    before = _listing(tmp_path)
    assert _train("leduc_particle", kuhn_file, *BAD_OPTIONS[case]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pvf train: error:"), err
    assert "Traceback" not in err[0]
    assert _listing(tmp_path) == before


def test_a_failed_first_run_leaves_no_folder(kuhn_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _train("leduc_particle", kuhn_file, *BAD_OPTIONS["cosine without max_steps"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert _listing(tmp_path) == []


def test_test_subcommand_reports_the_held_out_loss(kuhn_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _train("leduc_positional", kuhn_file) == 0
    ckpt = tmp_path / "runs" / "kuhn_positional" / "tensorboard" / "version_0" / "checkpoints" / "last.ckpt"
    capsys.readouterr()
    argv = [
        "train",
        "test",
        *configs("leduc_positional"),
        "--data.path",
        str(kuhn_file),
        "--trainer.accelerator",
        "cpu",
        "--trainer.enable_progress_bar",
        "false",
        "--ckpt_path",
        str(ckpt),
    ]
    assert main(argv) == 0
    assert "test_loss" in capsys.readouterr().out


def test_predict_is_not_offered(capsys):
    assert main(["train", "--help"]) == 0
    assert "predict" not in capsys.readouterr().out
    assert main(["train", "predict"]) == 2
