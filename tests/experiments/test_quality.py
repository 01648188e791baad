"""`pvf reproduce quality` at toy scale: the recipe's chosen checkpoint is the one of lowest held-out loss, its
file holds exactly those weights (re-evaluated independently, they give the CSV's row), and the paper's protocol
judges the last checkpoint."""

import csv
import dataclasses
import math

import pytest

from pvf.errors import PvfError
from pvf.experiments.figures import PROTOCOLS
from pvf.experiments.quality import mark_chosen, reproduce_quality
from pvf.experiments.reproduce import ReproduceConfig, chosen_checkpoint
from pvf.experiments.trunk_report import evaluate_network
from pvf.valuefn.network import load_value_function


def _config(tmp_path, protocol, **changes):
    fields = dict(
        out=tmp_path,
        games=("leduc",),
        architectures=("positional",),
        seeds=(0, 1),
        trunks=20,
        cfr_iterations=5,
        max_steps=60,
        eval_every=20,
        batch_size=16,
        iterations=5,
        target=protocol.target,
        lr_schedule=protocol.lr_schedule,
        select=protocol.select,
        p_solve=protocol.p_solve,
    )
    return ReproduceConfig(**{**fields, **changes})


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_the_recipe_keeps_the_checkpoint_of_lowest_validation_loss(tmp_path):
    protocol = dataclasses.replace(PROTOCOLS["recipe"], trunks=20)
    summary = reproduce_quality(_config(tmp_path, protocol), protocol)["leduc"]
    rows = _rows(summary["csv"])
    assert list(rows[0])[:6] == ["game", "architecture", "seed", "step", "trunk_exploitability", "chosen"]
    assert {r["target"] for r in rows} == {"best_response"}
    assert len(list((tmp_path / "data").glob("*.h5"))) == 1  # both seeds train on one shared file
    for seed in ("0", "1"):
        mine = [r for r in rows if r["seed"] == seed]
        assert [int(r["step"]) for r in mine] == [0, 20, 40, 60]
        assert all(math.isfinite(float(r["val_loss"])) for r in mine)  # validated at every measurement
        chosen = [r for r in mine if r["chosen"] == "1"]
        assert len(chosen) == 1
        assert float(chosen[0]["val_loss"]) == min(float(r["val_loss"]) for r in mine)
    # the chosen file holds the weights of that row: an independent solve of the trunk with it gives its figure
    checkpoints = sorted((tmp_path / "checkpoints").glob("*-ens.ckpt"))
    assert len(checkpoints) == 2
    for checkpoint in checkpoints:
        seed = "1" if "-train1-" in checkpoint.name else "0"
        row = next(r for r in rows if r["seed"] == seed and r["chosen"] == "1")
        report = evaluate_network(load_value_function(chosen_checkpoint(checkpoint)), iterations=5, oracle=False)
        assert report.network.exploitability.exploitability == pytest.approx(
            float(row["trunk_exploitability"]), rel=1e-6, abs=1e-9
        )
    assert summary["positional"]["seeds"] == 2
    # a rerun reuses the finished networks
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*.ckpt")}
    reproduce_quality(_config(tmp_path, protocol), protocol)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*.ckpt")} == stamps


def test_the_paper_protocol_judges_the_last_checkpoint_on_per_seed_files(tmp_path):
    protocol = dataclasses.replace(PROTOCOLS["paper"], trunks=20)
    rows = _rows(reproduce_quality(_config(tmp_path, protocol), protocol)["leduc"]["csv"])
    assert {r["target"] for r in rows} == {"average"}
    assert len(list((tmp_path / "data").glob("*.h5"))) == 2
    assert [(r["seed"], r["step"]) for r in rows if r["chosen"] == "1"] == [("0", "60"), ("1", "60")]
    assert not list((tmp_path / "checkpoints").glob("*-chosen.ckpt"))


def test_the_mean_of_one_member_is_that_member(tmp_path):
    """The mean-of-members figure (loaded checkpoints, one trunk solve) equals the member's own row (measured
    while training, on the stacked ensemble)."""
    protocol = dataclasses.replace(PROTOCOLS["paper"], trunks=20)
    summary = reproduce_quality(_config(tmp_path, protocol, seeds=(3,), max_steps=20), protocol)["leduc"]
    (mean,) = _rows(summary["mean_csv"])
    (last,) = [r for r in _rows(summary["csv"]) if r["chosen"] == "1"]
    assert mean["members"] == "1" and last["step"] == "20"
    assert float(mean["trunk_exploitability"]) == pytest.approx(float(last["trunk_exploitability"]), rel=1e-6)


def test_p_solve_data_is_its_own_file_and_recorded(tmp_path):
    """A protocol with p_solve makes a "-solve<p>" file whose sampling attribute holds it, and its CSV says so."""
    import h5py

    from pvf.datasets.sampling import SamplingConfig

    protocol = dataclasses.replace(PROTOCOLS["paper"], trunks=20, p_solve=0.5)
    config = _config(tmp_path, protocol, seeds=(3,), max_steps=20)
    summary = reproduce_quality(config, protocol)["leduc"]
    (data,) = (tmp_path / "data").glob("*.h5")
    assert data.name.endswith("-solve0.5-seed3.h5")
    with h5py.File(data, "r") as f:
        assert SamplingConfig.from_json(f.attrs["sampling"]).p_solve == 0.5
    assert {r["p_solve"] for r in _rows(summary["csv"])} == {"0.5"}


def test_chosen_rows_and_refusals():
    history = [{"step": 0, "val_loss": 0.3}, {"step": 10, "val_loss": 0.1}, {"step": 20, "val_loss": 0.1}]
    assert [r["chosen"] for r in mark_chosen(history, "val_loss")] == [0, 1, 0]  # the earliest of equal losses
    assert [r["chosen"] for r in mark_chosen(history, "last")] == [0, 0, 1]
    with pytest.raises(PvfError, match="no validation loss"):
        mark_chosen([{"step": 0, "val_loss": math.nan}], "val_loss")
    with pytest.raises(PvfError, match="quality trains Leduc and Goofspiel-5"):
        reproduce_quality(ReproduceConfig(out="unused", games=("kuhn",)), PROTOCOLS["paper"])


def test_the_ablation_changes_one_lever_per_row_and_shares_data_and_networks(tmp_path):
    from pvf.experiments.quality_ablation import ablation_protocols, reproduce_ablation

    paper = dataclasses.replace(PROTOCOLS["paper"], trunks=10)
    recipe = dataclasses.replace(PROTOCOLS["recipe"], trunks=30)
    names = [p.name for p in ablation_protocols(paper, recipe)]
    assert names == ["paper", "targets", "data", "schedule", "checkpoint", "solve", "targets+data", "recipe"]
    summary = reproduce_ablation(_config(tmp_path, paper), paper, recipe)["leduc"]
    table = {r["row"]: r for r in _rows(summary["csv"])}
    assert list(table) == names and {r["architecture"] for r in table.values()} == {"positional"}
    changed = {  # each row differs from the paper row in its own lever's columns only
        name: {
            k
            for k in ("target", "data", "trunks", "lr_schedule", "select", "p_solve")
            if table[name][k] != table["paper"][k]
        }
        for name in names
    }
    assert changed == {
        "paper": set(),
        "targets": {"target"},
        "data": {"data", "trunks"},
        "schedule": {"lr_schedule"},
        "checkpoint": {"select"},
        "solve": {"p_solve"},
        "targets+data": {"target", "data", "trunks"},
        "recipe": {"target", "data", "trunks", "lr_schedule", "select", "p_solve"},
    }
    # one store: per-seed files for paper (average), targets (best_response) and solve, one shared file each for
    # data, targets+data and recipe; no row made its own
    assert sorted(p.name for p in (tmp_path / "data").glob("*.h5")) == [
        "leduc-d7-t10-k5-best_response-seed0.h5",
        "leduc-d7-t10-k5-best_response-seed1.h5",
        "leduc-d7-t10-k5-seed0.h5",
        "leduc-d7-t10-k5-seed1.h5",
        "leduc-d7-t10-k5-solve0.5-seed0.h5",
        "leduc-d7-t10-k5-solve0.5-seed1.h5",
        "leduc-d7-t30-k5-best_response-seed0.h5",
        "leduc-d7-t30-k5-best_response-solve0.5-seed0.h5",
        "leduc-d7-t30-k5-seed0.h5",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ablation-leduc.csv",
        "ablation-leduc.png",
        "checkpoints",
        "data",
        "rows",
    ]
    assert not list((tmp_path / "rows").glob("*/data")) and not list((tmp_path / "rows").glob("*/checkpoints"))
    # the checkpoint row judges the paper row's networks: the same curve, the lowest-validation-loss point of it
    curves = {name: _rows(tmp_path / "rows" / name / "quality-leduc.csv") for name in ("paper", "checkpoint")}
    assert [r["trunk_exploitability"] for r in curves["paper"]] == [
        r["trunk_exploitability"] for r in curves["checkpoint"]
    ]
    # trained once: the paper row's histories are the validated ones the checkpoint row wrote
    assert all(math.isfinite(float(r["val_loss"])) for r in curves["paper"])
    for seed in ("0", "1"):
        mine = [r for r in curves["checkpoint"] if r["seed"] == seed]
        (chosen,) = [r for r in mine if r["chosen"] == "1"]
        assert float(chosen["val_loss"]) == min(float(r["val_loss"]) for r in mine)
    # a row is the run its protocol gives alone; the paper row's too, though it reuses the networks the checkpoint
    # row trained with validation (validation does not change training)
    for protocol in ablation_protocols(paper, recipe)[:2]:
        alone = _rows(
            reproduce_quality(_config(tmp_path / "alone" / protocol.name, protocol, trunks=10), protocol)["leduc"][
                "csv"
            ]
        )
        assert [r["trunk_exploitability"] for r in alone] == [
            r["trunk_exploitability"] for r in _rows(tmp_path / "rows" / protocol.name / "quality-leduc.csv")
        ]
    assert len({r["oracle"] for r in table.values()}) == 1 and float(table["paper"]["oracle"]) > 0
    assert (tmp_path / "ablation-leduc.png").stat().st_size > 0


def test_an_ablation_run_with_other_architectures_adds_its_columns_to_the_table(tmp_path):
    from pvf.experiments.quality_ablation import merged_table
    from pvf.results import write_csv

    def line(row, arch, value):
        return {"game": "leduc", "row": row, "architecture": arch, "trunk_exploitability_mean": value}

    path = tmp_path / "ablation-leduc.csv"
    write_csv([line("paper", "particle", 0.5), line("recipe", "particle", 0.1), line("paper", "attention", 0.9)], path)
    table = merged_table([line("paper", "attention", 0.3), line("recipe", "attention", 0.2)], path)
    # attention's lines are the new run's, the particle lines are kept, rows in protocol order
    assert [(r["row"], r["architecture"], float(r["trunk_exploitability_mean"])) for r in table] == [
        ("paper", "attention", 0.3),
        ("paper", "particle", 0.5),
        ("recipe", "attention", 0.2),
        ("recipe", "particle", 0.1),
    ]
    # a table of other columns (an older layout) is not mixed in
    write_csv([{"game": "leduc", "row": "paper", "architecture": "particle"}], path)
    assert len(merged_table([line("paper", "attention", 0.3)], path)) == 1
    assert len(merged_table([line("paper", "attention", 0.3)], tmp_path / "absent.csv")) == 1
