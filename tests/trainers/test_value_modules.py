"""The Lightning modules: same batch for both nets, masked MSE, training lowers validation loss."""

from __future__ import annotations

import numpy as np
import pytest
import pytorch_lightning as pl
import torch

from pvf.errors import PvfError
from pvf.trainers.datamodule import PbsDataModule
from pvf.trainers.module import ValueFunctionModule
from pvf.valuefn.registry import make_architecture

SMALL = {
    "positional": dict(num_layers=3, hidden_width=64),
    "particle": dict(basis_layers=2, basis_hidden_width=32, regression_layers=3, regression_hidden_width=64),
}


def module(name, layout, lr=1e-3, lr_schedule="constant", **sizes):
    return ValueFunctionModule(make_architecture(name, **sizes), layout, lr=lr, lr_schedule=lr_schedule)


def quiet_trainer(**kwargs) -> pl.Trainer:
    return pl.Trainer(
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        **kwargs,
    )


@pytest.fixture(scope="module")
def leduc_data(leduc_file) -> PbsDataModule:
    dm = PbsDataModule(str(leduc_file), batch_size=32, val_fraction=0.25)
    dm.setup("fit")
    return dm


def test_paper_sizes_from_the_layout(leduc_data):
    layout = leduc_data.layout.to_dict()
    positional = module("positional", layout)
    particle = module("particle", layout)
    assert positional.net.config["num_slots"] == 10 and positional.net.config["public_dim"] == 22
    assert particle.net.config["feature_dim"] == 30 and particle.net.config["basis_dim"] == 10
    assert particle.net.change_basis[0].out_features == 90  # 3 x input
    assert positional.net.mlp[0].out_features == 5 * (10 + 22)
    assert positional.layout == particle.layout == leduc_data.layout


def test_both_nets_encode_the_same_rows_and_loss_is_masked(leduc_data):
    batch = next(iter(leduc_data.val_dataloader()))
    layout = leduc_data.layout.to_dict()
    counts = []
    for name in ("positional", "particle"):
        torch.manual_seed(0)
        vf = module(name, layout, **SMALL[name])
        encoded = vf.on_before_batch_transfer(batch, 0)
        values, targets, mask = vf.architecture.predict(vf.net, encoded)
        loss, count = vf.loss(encoded)
        counts.append(count)
        assert count == int(encoded["mask"].sum()) == int(batch["counts"].sum())
        expected = ((values - targets)[mask] ** 2).sum() / count
        torch.testing.assert_close(loss, expected)
        values2, _, _ = vf.architecture.predict(vf.net, {**encoded, "targets": encoded["targets"] + 1e3})
        torch.testing.assert_close(values, values2)  # targets are never inputs
    assert counts[0] == counts[1]


@pytest.mark.parametrize("name", ["positional", "particle"])
def test_training_lowers_validation_loss(leduc_data, name):
    pl.seed_everything(0, verbose=False)
    vf = module(name, leduc_data.layout.to_dict(), lr=3e-3, **SMALL[name])
    before = quiet_trainer().validate(vf, datamodule=leduc_data, verbose=False)[0]["val_loss"]
    quiet_trainer(max_epochs=6, num_sanity_val_steps=0).fit(vf, datamodule=leduc_data)
    after = quiet_trainer().validate(vf, datamodule=leduc_data, verbose=False)[0]["val_loss"]
    assert np.isfinite(after) and after < 0.5 * before, (before, after)


def test_fast_dev_run(leduc_data):
    vf = module("particle", leduc_data.layout.to_dict(), **SMALL["particle"])
    quiet_trainer(fast_dev_run=True).fit(vf, datamodule=leduc_data)


def test_train_loss_is_the_mse_of_each_logging_window(leduc_data, tmp_path):
    """Logged every log_every_n_steps steps, as the infostate-weighted MSE of the window's batches."""
    torch.manual_seed(0)
    vf = module("positional", leduc_data.layout.to_dict(), **SMALL["positional"])
    seen = []

    class Record(pl.Callback):
        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
            with torch.no_grad():
                loss, count = pl_module.loss(batch)  # the weights the step is about to use
            seen.append((float(loss) * count, count))

    logger = pl.loggers.CSVLogger(tmp_path)
    trainer = pl.Trainer(
        accelerator="cpu",
        logger=logger,
        max_steps=9,
        log_every_n_steps=3,
        limit_val_batches=0,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[Record()],
    )
    trainer.fit(vf, datamodule=leduc_data)
    with open(f"{logger.log_dir}/metrics.csv") as f:
        rows = [line.split(",") for line in f.read().split()[1:]]
    assert [int(r[1]) for r in rows] == [2, 5, 8]
    for r, window in zip(rows, (seen[0:3], seen[3:6], seen[6:9])):
        expected = sum(s for s, _ in window) / sum(c for _, c in window)
        assert float(r[2]) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("schedule, final_lr", [("constant", 1e-3), ("cosine", 0.0)])
def test_lr_schedule(leduc_data, schedule, final_lr):
    vf = module("positional", leduc_data.layout.to_dict(), lr_schedule=schedule, **SMALL["positional"])
    trainer = quiet_trainer(max_steps=8, limit_val_batches=0)
    trainer.fit(vf, datamodule=leduc_data)
    assert trainer.optimizers[0].param_groups[0]["lr"] == pytest.approx(final_lr, abs=1e-12)


def test_unknown_lr_schedule(leduc_data):
    with pytest.raises(PvfError, match="lr_schedule"):
        module("positional", leduc_data.layout.to_dict(), lr_schedule="linear")
