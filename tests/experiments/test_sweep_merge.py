"""Sweeps run apart and merged equal the sweep run whole; tables that disagree are refused."""

import csv

import pytest

from pvf.cli import main
from pvf.experiments import sweep_merge
from pvf.module_main import reported_status

SWEEP = ["experiment", "particle-trunks", "--game", "goofspiel5", "--root-move", "2", "--depth", "3"]
SWEEP += ["--draws", "1,4", "--iterations", "20"]


def table(path):
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k != "seconds" and k != "seconds_mean"} for r in csv.DictReader(f)]


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """One sweep over seeds 0, 1, 2; the same as two sweeps (seeds 0, 1 and 2), the second without the oracle."""
    root = tmp_path_factory.mktemp("sweeps")
    assert main([*SWEEP, "--seeds", "0,1,2", "--out", str(root / "whole")]) == 0
    assert main([*SWEEP, "--seeds", "0,1", "--no-oracle", "--out", str(root / "a")]) == 0
    assert main([*SWEEP, "--seeds", "2", "--no-oracle", "--out", str(root / "b")]) == 0
    return root


def test_split_sweeps_merge_into_the_whole_sweep(sweeps, capsys):
    """The split runs (uniform rows only) and the whole sweep's oracle rows alone, as an earlier run's, give the
    whole sweep's summary and runs tables (but for the seconds)."""
    whole = sweeps / "whole" / "fig4-goofspiel5-runs.csv"
    oracle = sweeps / "oracle-runs.csv"
    with open(whole, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["evaluator"] == "oracle"]
    assert len(rows) == 6  # 2 K x 3 seeds; every uniform row of the merge comes from the split runs
    with open(oracle, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    parts = [sweeps / p / "fig4-goofspiel5-runs.csv" for p in ("a", "b")]
    out = sweeps / "merged"
    assert sweep_merge.main([*map(str, parts), str(oracle), "--out", str(out), "--name", "goofspiel5"]) == 0
    assert table(out / "fig4-goofspiel5.csv") == table(sweeps / "whole" / "fig4-goofspiel5.csv")
    assert table(out / "fig4-goofspiel5-runs.csv") == table(whole)
    assert (out / "fig4-goofspiel5.png").stat().st_size > 0
    assert "12 runs" in capsys.readouterr().out  # 2 K x 3 seeds x (uniform, oracle)


def test_tables_that_disagree_are_refused(sweeps, tmp_path, capsys):
    """A run of the same (evaluator, K, seed) with another exploitability is named; the status is 2."""
    part = sweeps / "a" / "fig4-goofspiel5-runs.csv"
    rows = list(csv.DictReader(open(part, newline="")))
    rows[0]["exploitability"] = str(float(rows[0]["exploitability"]) + 1e-6)
    other = tmp_path / "other-runs.csv"
    with open(other, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    status = reported_status(lambda: sweep_merge.main([str(part), str(other), "--out", str(tmp_path / "m")]), "m")
    assert status == 2
    assert "uniform, K = 1, seed 0 differs between the tables" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()  # nothing written


def test_a_table_whose_rows_are_not_runs_is_refused_in_one_line(sweeps, tmp_path, capsys):
    """An evaluator name with an unquoted comma shifts the fields: the file and the bad field are named."""
    part = sweeps / "a" / "fig4-goofspiel5-runs.csv"
    lines = part.read_text().splitlines()
    lines[1] = lines[1].replace(",uniform,", ",nets, 51,200 samples,")
    broken = tmp_path / "broken-runs.csv"
    broken.write_text("\n".join(lines) + "\n")
    status = reported_status(lambda: sweep_merge.main([str(broken), "--out", str(tmp_path / "m")]), "m")
    err = capsys.readouterr().err
    assert status == 2 and "broken-runs.csv: a row is not a particle-trunk run" in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()
