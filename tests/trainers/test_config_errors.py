"""`pvf train` configuration mistakes: one line naming the key (and the valid key meant), exit 2, nothing written.

Before, each of these exited 2 after 56-67 lines of usage text and jsonargparse's report of the Union
subtypes it tried.
"""

from __future__ import annotations

import pytest

from pvf.cli import main
from tests.trainers.config_args import configs

CASES = {
    "option typo": (["--data.pth", "x"], "unknown option --data.pth; did you mean --data.path?"),
    "key typo on the command line": (["--model.init_args.lrr", "0.1"], "unknown key 'lrr'; did you mean lr?"),
    "key typo in a config": ("model:\n  init_args:\n    lrr: 0.1\n", "unknown key 'lrr'; did you mean lr?"),
    "architecture key typo": (
        ["--model.init_args.architecture.init_args.basis_layrs", "2"],
        "unknown key 'basis_layrs'; did you mean basis_layers?",
    ),
    "wrong class path": ("model:\n  class_path: pvf.trainers.module.NoSuch\n", "no class pvf.trainers.module.NoSuch"),
    "broken YAML": ("model: [\n", "is not valid YAML (line 2, column 1"),
    "lr nan": (["--model.init_args.lr", "nan"], "model.lr: expected a float, got nan"),
    "val_fraction 0 (after the trainer's banner)": (
        ["--data.val_fraction", "0"],
        "data.val_fraction must lie strictly",
    ),
    "batch_size 0 (after Lightning's seed line)": (["--data.batch_size", "0"], "data.batch_size must be a positive"),
    "block_samples negative": (["--data.block_samples", "-1"], "data.block_samples must be non-negative"),
    "missing config": (["--config", "missing.yaml"], "missing.yaml; configs/data/ and configs/model/ hold pvf's"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_configuration_mistakes_are_one_line(case, leduc_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    extra, expected = CASES[case]
    if isinstance(extra, str):  # a config file holding the mistake
        (tmp_path / "mine.yaml").write_text(extra)
        extra = ["--config", "mine.yaml"]
    before = sorted(tmp_path.iterdir())
    code = main(
        ["train", "fit", *configs("leduc_particle"), "--data.path", str(leduc_file), "--trainer.max_steps", "1", *extra]
    )
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2
    assert len(err) == 1 and err[0].startswith("pvf train: error: ") and expected in err[0], err
    assert sorted(tmp_path.iterdir()) == before
