"""`pvf solve` end to end, as a user runs it."""

import json
import subprocess
import sys

import pyspiel
import pytest

from pvf.solvers.tabular import load_policy, to_openspiel


def pvf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pvf.cli", *args], capture_output=True, text=True, timeout=300)


def test_solve_json_and_policy_checked_by_openspiel(tmp_path):
    policy_file = tmp_path / "kuhn.json"
    out = pvf("solve", "kuhn_poker", "--iterations", "300", "--json", "--save-policy", str(policy_file))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) >= {"nash_conv", "exploitability", "value", "ms_per_iteration", "iterations", "game"}
    game = pyspiel.load_game("kuhn_poker")
    theirs = pyspiel.nash_conv(game, to_openspiel(load_policy(policy_file)))
    assert result["nash_conv"] == pytest.approx(theirs, abs=1e-9)
    assert result["exploitability"] == pytest.approx(theirs / 2, abs=1e-9)
    assert result["value"] == pytest.approx(-1 / 18, abs=2e-3)


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "not_a_game"],
        ["solve", "kuhn_poker(players=3)"],
        ["solve", "kuhn_poker", "--iterations", "0"],
        ["solve", "kuhn_poker", "--iterations", "-5"],
        ["solve", "kuhn_poker", "--solver", "cfr"],
        ["solve", "kuhn_poker", "--alpha", "0.1"],
        ["solve", "kuhn_poker", "--solver", "mmd", "--schedule", "fixed"],
        ["solve", "kuhn_poker", "--solver", "mmd", "--schedule", "linear"],
        ["solve", "kuhn_poker", "--solver", "mmd", "--alpha", "-1"],
        ["solve", "kuhn_poker", "--solver", "mmd", "--stepsize", "0"],
    ],
)
def test_bad_input_is_one_line_exit_2(args):
    out = pvf(*args)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "error" in out.stderr


def test_solve_mmd_fixed_alpha_is_openspiels_qre(tmp_path):
    """--schedule fixed --alpha A: the saved policy is OpenSpiel's MMDDilatedEnt(alpha=A) fixed point."""
    from open_spiel.python.algorithms.mmd_dilated import MMDDilatedEnt

    policy_file = tmp_path / "kuhn_mmd.json"
    args = ["solve", "kuhn_poker", "--solver", "mmd", "--schedule", "fixed", "--alpha", "0.1", "--iterations", "400"]
    out = pvf(*args, "--json", "--save-policy", str(policy_file))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["solver"] == "mmd"
    game = pyspiel.load_game("kuhn_poker")
    ours = load_policy(policy_file)
    assert result["nash_conv"] == pytest.approx(pyspiel.nash_conv(game, to_openspiel(ours)), abs=1e-9)
    reference = MMDDilatedEnt(game, alpha=0.1)
    for _ in range(400):
        reference.update_sequences()
    theirs = reference.get_policies()
    for name, probs in ours.items():
        row = theirs.policy_for_key(name)
        for a, p in probs.items():
            assert p == pytest.approx(row[a], abs=1e-6)


def test_help():
    assert pvf("solve", "--help").returncode == 0
