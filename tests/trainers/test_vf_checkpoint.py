"""Checkpoints: weights-only loading, the net comes back equal, foreign games and layouts refused."""

from __future__ import annotations

import dataclasses

import pytest
import pytorch_lightning as pl
import torch

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.module import ValueFunctionModule
from pvf.valuefn.checkpoint import load_checkpoint
from pvf.valuefn.registry import make_architecture

SMALL = {
    "positional": dict(num_layers=2, hidden_width=16),
    "particle": dict(basis_layers=2, basis_hidden_width=16, regression_layers=2, regression_hidden_width=16),
}


@pytest.fixture(scope="module", params=["positional", "particle"])
def trained(request, leduc_file, tmp_path_factory):
    """(module, datamodule, checkpoint path) after two training steps."""
    dm = PbsDataModule(str(leduc_file), batch_size=16, val_fraction=0.25)
    module = ValueFunctionModule(make_architecture(request.param, **SMALL[request.param]), dm.layout.to_dict())
    root = tmp_path_factory.mktemp("ckpt")
    trainer = pl.Trainer(
        accelerator="cpu",
        max_steps=2,
        limit_val_batches=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
        callbacks=[pl.callbacks.ModelCheckpoint(dirpath=root, filename="vf")],
    )
    trainer.fit(module, datamodule=dm)
    return module, dm, root / "vf.ckpt"


def test_lightning_checkpoint_loads_weights_only(trained):
    _, _, path = trained
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    assert checkpoint["pvf"]["layout"]["game"] == "leduc_poker"


def test_round_trip_gives_the_same_values(trained):
    module, dm, path = trained
    net, meta = load_checkpoint(path, expect_game="leduc", expect_layout=dm.layout)
    assert meta.architecture == module.architecture.name
    assert meta.layout == module.layout == dm.layout
    assert meta.config == module.net.config
    batch = module.on_before_batch_transfer(next(iter(dm.val_dataloader())), 0)
    if meta.architecture == "positional":
        inputs = (batch["slot_beliefs"], batch["public"])
    else:
        inputs = (batch["beliefs"], batch["features"], batch["public"], batch["mask"])
    with torch.no_grad():
        torch.testing.assert_close(net(*inputs), module.net.eval()(*inputs))


def test_lightning_reload_rebuilds_the_module(trained):
    module, _, path = trained
    again = type(module).load_from_checkpoint(path, weights_only=True)
    assert again.layout == module.layout
    for a, b in zip(again.net.state_dict().values(), module.net.state_dict().values()):
        torch.testing.assert_close(a, b)


def test_wrong_game_is_one_line_error(trained, kuhn_file):
    _, _, path = trained
    with pytest.raises(PvfError, match="trained on 'leduc_poker', not 'kuhn_poker'") as err:
        load_checkpoint(path, expect_game="kuhn_poker")
    assert "\n" not in str(err.value)
    with pytest.raises(PvfError, match="trained on 'leduc_poker'"):
        load_checkpoint(path, expect_layout=DataLayout.from_file(kuhn_file))


def test_slot_layout_matters_only_to_the_positional_net(trained):
    module, dm, path = trained
    other = dataclasses.replace(dm.layout, max_slots=(6, 6), depth=5)
    if module.architecture.name == "positional":
        with pytest.raises(PvfError, match="slots"):
            load_checkpoint(path, expect_layout=other)
    else:
        load_checkpoint(path, expect_layout=other)
    with pytest.raises(PvfError, match="features"):
        load_checkpoint(path, expect_layout=dataclasses.replace(dm.layout, private_dim=7))


def test_foreign_files_are_refused(tmp_path):
    plain = tmp_path / "plain.pt"
    torch.save({"state_dict": {}}, plain)
    with pytest.raises(PvfError, match="no pvf value function"):
        load_checkpoint(plain)
    with pytest.raises(PvfError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.ckpt")
