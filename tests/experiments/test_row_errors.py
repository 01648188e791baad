"""`pvf.experiments.row_errors`: a member's error over all its validation rows is the validation loss its training
measured, whatever its split seed; ratios are against the first checkpoint."""

import json

import pytest

from pvf.errors import PvfError
from pvf.experiments.architecture_variants import run_variant
from pvf.experiments.row_errors import main


def test_the_error_over_all_rows_is_the_validation_loss_training_measured(kuhn_data, tmp_path, capsys):
    trained = run_variant(kuhn_data, "particle", [], 2, 4, tmp_path, batch_size=4)
    members = [str(tmp_path / f"seed{s}.ckpt") for s in (0, 1)]
    for seed in (0, 1):
        assert main([str(kuhn_data), members[seed], members[1 - seed], "--split-seed", str(seed), "--json"]) == 0
        first, second = json.loads(capsys.readouterr().out)["checkpoints"]
        assert first["mse"]["all"] == pytest.approx(trained["val_loss"][seed], rel=1e-5)
        assert first["ratio"]["all"] == 1.0 and first["pbs_with_repeated_rows"] == 0
        assert second["ratio"]["all"] == pytest.approx(second["mse"]["all"] / first["mse"]["all"])
        assert first["rows"] == second["rows"] > 0
    with pytest.raises(PvfError, match="no such file"):
        main([str(kuhn_data), "missing.ckpt"])
