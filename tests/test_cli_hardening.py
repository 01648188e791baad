"""Every user path ends in a result or one line: the `pvf` command as a user runs it, in real processes.

Each refusal is exit status 2, one line on stderr, no traceback, and leaves the
working directory as it was (listed before and after)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyspiel
import pytest

import pvf
from pvf.datasets.spec import GenerationSpec
from pvf.games.loading import canonical_game_string


def pvf_cmd(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pvf.cli", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def pvf_here(capsys, *args: str) -> subprocess.CompletedProcess:
    """The same command in this process (cheaper than a new interpreter for argument checks)."""
    from pvf.cli import main

    rc = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, rc, out, err)


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def assert_refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# Measured in a wrapper process whose only child is pvf, so RUSAGE_CHILDREN is pvf's peak.
_PEAK = """
import resource, subprocess, sys, time
start = time.monotonic()
proc = subprocess.run([sys.executable, "-m", "pvf.cli", *sys.argv[1:]], capture_output=True, text=True)
print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.monotonic() - start)
sys.stderr.write(proc.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "goofspiel", "--iterations", "100"],
        ["solve", "phantom_ttt"],
        ["describe", "goofspiel"],
        ["generate", "--game", "goofspiel", "--depth", "1", "--trunks", "10", "--out", "x.h5"],
    ],
)
def test_oversized_games_are_refused_with_little_memory(tmp_path, args):
    """OpenSpiel's default Goofspiel (13 cards) used to be killed at 24 GB; phantom_ttt took 112 s and 12.7 GB."""
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    rc, peak_kb, _seconds = proc.stdout.split()
    assert int(rc) == 2
    line = assert_refused(subprocess.CompletedProcess(args, 2, "", proc.stderr), "more than 2,000,000 histories")
    assert "--max-histories" in line
    assert int(peak_kb) < 2 * 1024 * 1024  # KiB on Linux: under 2 GiB
    assert listing(tmp_path) == []


def test_the_cap_flag_raises_the_cap(tmp_path):
    small = pvf_cmd("solve", "kuhn_poker", "--max-histories", "57")
    assert_refused(small, "more than 57 histories", "--max-histories")
    assert pvf_cmd("solve", "kuhn_poker", "--max-histories", "58", "--iterations", "10").returncode == 0
    gen = ["generate", "--game", "kuhn_poker", "--depth", "3", "--trunks", "2", "--out", "k.h5"]
    assert_refused(pvf_cmd(*gen, "--max-histories", "57", cwd=tmp_path), "more than 57 histories")
    assert listing(tmp_path) == []
    assert pvf_cmd(*gen, "--max-histories", "58", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    "command",
    [
        ["solve", "kuhn_poker"],
        ["describe", "kuhn_poker"],
        ["generate", "--game", "kuhn_poker", "--depth", "3", "--trunks", "2", "--out", "k.h5"],
    ],
)
@pytest.mark.parametrize("value", ["0", "-5"])
def test_non_positive_cap_is_refused(tmp_path, monkeypatch, capsys, command, value):
    monkeypatch.chdir(tmp_path)
    assert_refused(pvf_here(capsys, *command, "--max-histories", value), "--max-histories", value)
    assert listing(tmp_path) == []


def _output_cases():
    solve = ["solve", "kuhn_poker", "--iterations", "10", "--save-policy"]
    gen = ["generate", "--game", "kuhn_poker", "--depth", "3", "--trunks", "2", "--out"]
    evaluate = ["evaluate", "--checkpoint", "missing.ckpt", "--save-policy"]
    return [
        (solve + ["nodir/p.json"], "directory nodir does not exist"),
        (solve + ["sub"], "sub is a directory"),
        (solve + ["/proc/p.json"], "cannot write in /proc"),
        (solve + ["afile/p.json"], "afile is not a directory"),
        (solve + [""], "--save-policy is empty"),
        (gen + ["."], ". is a directory"),
        (gen + [""], "--out is empty"),
        (gen + ["sub"], "sub is a directory"),
        (gen + ["sub/"], "is a directory"),
        (gen + ["nodir/x.h5"], "directory nodir does not exist"),
        (gen + ["/proc/x.h5"], "cannot write in /proc"),
        (evaluate + ["sub"], "sub is a directory"),
        (evaluate + ["nodir/p.json"], "directory nodir does not exist"),
        (["evaluate", "sparse", "--checkpoint", "missing.ckpt", "--out", "afile"], "afile is a file"),
        (
            ["evaluate", "sparse", "--checkpoint", "missing.ckpt", "--out", "/proc/sparse"],
            "cannot create directory /proc/sparse",
        ),
        (["reproduce", "fig3", "--out", "afile"], "afile is a file"),
        (["experiment", "linear", "--out", "afile"], "afile is a file"),
    ]


@pytest.mark.parametrize("args, message", _output_cases())
def test_output_paths_are_checked_before_any_work(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "afile").write_text("keep")
    before = listing(tmp_path)
    assert_refused(pvf_here(capsys, *args), message)
    assert listing(tmp_path) == before and (tmp_path / "afile").read_text() == "keep"


def test_unwritable_directory(tmp_path):
    """A read-only directory: by permissions, or (root ignores those) a read-only tmpfs where we may mount one."""
    import os

    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    mounted = False
    if os.geteuid() == 0:
        mounted = (
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(ro)], capture_output=True
            ).returncode
            == 0
        )
        if not mounted:
            pytest.skip("root ignores permissions and cannot mount a read-only tmpfs here")
    try:
        for args in (
            ["solve", "kuhn_poker", "--save-policy", str(ro / "p.json")],
            ["generate", "--game", "kuhn_poker", "--depth", "3", "--trunks", "2", "--out", str(ro / "x.h5")],
        ):
            assert_refused(pvf_cmd(*args), f"cannot write in {ro}")
        assert listing(ro) == []
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)], check=True)


def test_inspect_a_directory(tmp_path, capsys):
    assert_refused(pvf_here(capsys, "inspect", str(tmp_path)), "is a directory")


def test_version():
    proc = pvf_cmd("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"pvf {pvf.__version__}"


def test_closed_stdout_ends_quietly():
    """`pvf solve kuhn_poker --json | head -c 0`: the reader is gone before pvf writes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pvf.cli", "solve", "kuhn_poker", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert stderr == "" and proc.returncode == 1


def test_shell_pipe_into_head():
    proc = subprocess.run(
        f"{sys.executable} -m pvf.cli solve kuhn_poker --json | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.stdout == '{"game": "' and proc.stderr == ""


@pytest.mark.parametrize(
    "spelling, canonical",
    [
        ("kuhn_poker()", "kuhn_poker"),
        (" kuhn_poker(players=2) ", "kuhn_poker"),
        ("kuhn", "kuhn_poker"),
        (
            "goofspiel(points_order=descending,num_cards=5,imp_info=True)",
            "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
        ),
        ("goofspiel5", "goofspiel(num_cards=5,imp_info=True,points_order=descending)"),
        ("liars_dice(numdice=1, dice_sides=3)", "liars_dice(dice_sides=3)"),
        ("liars_dice(dice_sides=3,numdice=1)", "liars_dice(dice_sides=3)"),
    ],
)
def test_equivalent_game_strings_are_one_game(spelling, canonical):
    assert canonical_game_string(spelling) == canonical
    if "(" in spelling and " " not in spelling:  # OpenSpiel loads both as the same game (it refuses spaces)
        assert pyspiel.load_game(spelling.strip()).get_parameters() == pyspiel.load_game(canonical).get_parameters()


def test_reordered_parameters_reuse_a_finished_file(tmp_path):
    game = "goofspiel(num_cards=4,imp_info=True,points_order=descending)"
    reordered = "goofspiel(points_order=descending,imp_info=True,num_cards=4)"
    assert GenerationSpec(game=game, depth=1, num_trunks=2, cfr_iterations=5) == GenerationSpec(
        game=reordered, depth=1, num_trunks=2, cfr_iterations=5
    )
    common = ["--depth", "1", "--trunks", "2", "--cfr-iterations", "5", "--out", "g.h5"]
    assert pvf_cmd("generate", "--game", game, *common, cwd=tmp_path).returncode == 0
    again = pvf_cmd("generate", "--game", reordered, *common, cwd=tmp_path)
    assert again.returncode == 0 and "is complete" in again.stdout
    assert pvf_cmd("solve", "kuhn_poker()", "--iterations", "10", "--json").stdout.startswith('{"game": "kuhn_poker"')


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--seed", str(2**70)], "seed 1180591620717411303424 is too large"),
        (["--trunks", str(10**12)], "1,000,000,000,000 trunks need up to"),
        (["--workers", "100000"], "100000 local workers"),
    ],
)
def test_huge_generation_options_are_refused_before_work(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    args = ["generate", "--game", "kuhn_poker", "--depth", "3", "--trunks", "2", "--out", "k.h5"]
    assert_refused(pvf_here(capsys, *args, *extra), message)
    assert listing(tmp_path) == []


@pytest.mark.parametrize("value", ["0", "-2"])
def test_non_positive_group_size_is_refused(tmp_path, monkeypatch, capsys, value):
    monkeypatch.chdir(tmp_path)
    assert_refused(pvf_here(capsys, "reproduce", "fig3", "--group-size", value, "--out", "runs"), "--group-size", value)
    assert listing(tmp_path) == []
