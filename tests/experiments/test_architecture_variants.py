"""`pvf.experiments.architecture_variants`: a config argument changed reaches the net, an unchanged one (given
as its own value) trains the same members as the config, and a key the config lacks is refused."""

import pytest

from pvf.errors import PvfError
from pvf.experiments.architecture_variants import changed_options, main, run_variant
from pvf.valuefn.network import load_value_function


def test_a_changed_argument_reaches_the_net_and_an_unchanged_one_changes_nothing(kuhn_data, tmp_path):
    run = lambda changes, out: run_variant(kuhn_data, "particle", changes, 2, 4, tmp_path / out, batch_size=4)  # noqa: E731
    plain, same, wide = run([], "plain"), run(["basis_dim=null"], "same"), run(["basis_dim=7"], "wide")
    assert same["changes"] == {"basis_dim": None} and wide["changes"] == {"basis_dim": 7}
    assert same["trunk_exploitability"] == plain["trunk_exploitability"]
    assert same["val_loss"] == plain["val_loss"]
    assert load_value_function(tmp_path / "wide" / "seed1.ckpt").net.change_basis[-1].out_features == 7
    second = run_variant(kuhn_data, "particle", [], 1, 4, tmp_path / "second", batch_size=4, first_seed=1)
    assert second["seeds"] == [1] and plain["seeds"] == [0, 1]  # seed 1 alone trains as it did beside seed 0
    assert second["trunk_exploitability"][0] == pytest.approx(plain["trunk_exploitability"][1], rel=1e-5)
    assert second["val_loss"][0] == pytest.approx(plain["val_loss"][1], rel=1e-5)
    assert changed_options("particle", ["output=concatenation"])[1] == {"output": "concatenation"}
    assert changed_options("particle", ["lr=3e-4"])[0]["lr"] == 3e-4
    for bad, message in [
        ("width=3", "has no argument 'width'"),
        ("basis_dim", "KEY=VALUE"),
        ("val_fraction=0.5", "no argument"),
    ]:
        with pytest.raises(PvfError, match=message):
            changed_options("particle", [bad])
    with pytest.raises(PvfError, match="no such file"):
        main([str(tmp_path / "missing.h5")])
    with pytest.raises(PvfError, match="--first-seed"):
        main([str(kuhn_data), "--first-seed", "-1"])
    with pytest.raises(PvfError, match="--threads must be positive"):
        main([str(kuhn_data), "--threads", "0"])
