"""`train_value_function` trains quietly: `pvf reproduce --separate-runs` runs twenty of them."""

from __future__ import annotations

import logging
import warnings

from pvf.trainers.training import train_value_function


def test_a_run_prints_none_of_lightnings_notices(kuhn_data, tmp_path, capfd):
    """No device notices, logging tip, `max_steps` notice or deprecation warning on stdout or stderr; Lightning's
    log level is left as it was."""
    log = logging.getLogger("pytorch_lightning.utilities.rank_zero")
    level = log.level
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_value_function(
            kuhn_data,
            "particle",
            tmp_path / "m.ckpt",
            seed=0,
            max_steps=4,
            every_n_steps=2,
            iterations=10,
            batch_size=4,
        )
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert not [str(w.message) for w in caught if "LeafSpec" in str(w.message)]
    assert log.level == level
