"""Generation and reading under abuse, with real processes and real damaged files:
two writers of one output, a full disk, NaN / out-of-range values in files and shards.
The generation tests run for both kinds of dataset (enumerated and particles): one driver gives both the same
guarantees."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from pbs_helpers import GOOF5, assert_same_samples, make, small_spec

from pvf.datasets.generate import shard_path, work_dir
from pvf.datasets.spec import GenerationSpec, ParticleSpec
from pvf.datasets.task_plan import plan_tasks

KINDS = ("enumerated", "particles")


def _spec(kind: str, trunks: int, iterations: int, task_size: int) -> GenerationSpec:
    """Leduc at move 7 (54 PBSs per trunk), or Goofspiel-5 at move 2 with 4 particles per sample."""
    if kind == "particles":
        return ParticleSpec(GOOF5, 2, trunks, 4, iterations, seed=7, task_size=task_size)
    return small_spec(trunks=trunks, iterations=iterations, task_size=task_size)


def _cmd(spec, out: Path, *extra: str) -> list[str]:
    particles = [] if spec.particles is None else ["--particles", str(spec.particles.count)]
    return [
        sys.executable, "-m", "pvf.cli", "generate", "--game", spec.game, "--depth", str(spec.depth),
        "--trunks", str(spec.num_trunks), "--cfr-iterations", str(spec.cfr_iterations),
        "--task-size", str(spec.task_size), "--seed", str(spec.seed), "--target", spec.target, "--out", str(out),
        *particles, *extra,
    ]  # fmt: skip


def _error_lines(stderr: str) -> list[str]:
    """stderr less the progress bar."""
    return [line for line in stderr.replace("\r", "\n").splitlines() if line.strip() and "PBS/s" not in line]


def _assert_one_line_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = _error_lines(proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize("kind", KINDS)
def test_second_generator_is_refused_at_once_and_first_finishes_the_same_file(tmp_path, kind):
    spec = _spec(kind, trunks=30, iterations=10, task_size=1)
    reference = make(tmp_path / "ref.h5", spec)
    out = tmp_path / "same.h5"
    first = subprocess.Popen(_cmd(spec, out, "--json"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(work_dir(out).glob("shard-*.h5")):  # the first one holds the lock and is working
        assert first.poll() is None and time.monotonic() < deadline, "the first generator did not start"
        time.sleep(0.005)
    os.kill(first.pid, signal.SIGSTOP)  # keep it mid-run, lock held, while the second one tries
    try:
        second = subprocess.run(_cmd(spec, out), capture_output=True, text=True, timeout=120)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    _assert_one_line_error(second, str(out), f"pid {first.pid}")
    stdout, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    assert json.loads(stdout)["tasks_run"] == 30
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref.h5", "same.h5"]
    assert_same_samples(reference, out)


def _fsize_limit(limit: int):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("kind", KINDS)
def test_full_disk_is_one_line_and_the_rerun_resumes(tmp_path, kind):
    """A file-size limit (EFBIG, as a full disk gives ENOSPC) hits the final join: the shards survive."""
    spec = _spec(kind, trunks=3, iterations=5, task_size=1)
    reference = make(tmp_path / "ref.h5", spec)
    out = tmp_path / "full.h5"
    shard_bytes = (reference.stat().st_size // 3) * 3 // 2  # room for a shard, not for the joined file
    limited = subprocess.run(
        _cmd(spec, out), capture_output=True, text=True, timeout=300, preexec_fn=_fsize_limit(shard_bytes)
    )
    _assert_one_line_error(limited, f"cannot write {out}", "File too large", "rerun the same command")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full.h5.parts", "ref.h5"]
    assert sorted(p.name for p in work_dir(out).iterdir()) == [
        "manifest.json",
        "shard-000000.h5",
        "shard-000001.h5",
        "shard-000002.h5",
    ]
    rerun = subprocess.run(_cmd(spec, out, "--json"), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["tasks_resumed"] == 3
    assert_same_samples(reference, out)


@pytest.mark.parametrize("kind", KINDS)
def test_full_disk_while_writing_shards(tmp_path, kind):
    spec = _spec(kind, trunks=3, iterations=5, task_size=1)
    out = tmp_path / "full.h5"
    limited = subprocess.run(
        _cmd(spec, out), capture_output=True, text=True, timeout=300, preexec_fn=_fsize_limit(4096)
    )
    _assert_one_line_error(limited, "File too large")
    assert [p.name for p in tmp_path.iterdir()] == ["full.h5.parts"]
    assert [p.name for p in work_dir(out).iterdir()] == ["manifest.json"]  # no *.tmp left


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("column, value", [("target", np.nan), ("belief", 2.0)])
def test_bad_values_in_a_shard_are_recomputed_on_resume(tmp_path, kind, column, value):
    spec = _spec(kind, trunks=3, iterations=5, task_size=1)
    reference = make(tmp_path / "ref.h5", spec)
    out = tmp_path / "resumed.h5"
    interrupted = subprocess.run(
        _cmd(spec, out),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_fsize_limit(reference.stat().st_size // 2),
    )
    assert interrupted.returncode == 2  # all shards written, the join refused
    with h5py.File(shard_path(work_dir(out), plan_tasks(3, 1)[1]), "r+") as f:
        f[column][1] = value
    rerun = subprocess.run(_cmd(spec, out, "--json"), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert (report["tasks_resumed"], report["tasks_run"]) == (2, 1)
    assert_same_samples(reference, out)


def _inspect(path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pvf.cli", "inspect", str(path), *extra], capture_output=True, text=True, timeout=120
    )


def _set(dataset: str, row: int, value):
    def damage(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            f[dataset][row] = value

    return damage


def _set_attr(name: str, value):
    def damage(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            f.attrs[name] = value

    return damage


# Row 60 is in sample 6 of the Leduc fixture (10 rows per sample at move 7).
@pytest.mark.parametrize(
    "damage, words",
    [
        (_set("infostates/belief", 60, np.nan), ["sample 6", "belief nan"]),
        (_set("infostates/belief", 60, np.inf), ["sample 6", "belief inf"]),
        (_set("infostates/belief", 60, -0.25), ["sample 6", "outside [0, 1]"]),
        (_set("infostates/belief", 60, 1.5), ["sample 6", "outside [0, 1]"]),
        (_set("infostates/target", 60, np.nan), ["sample 6", "target nan"]),
        (_set("infostates/target_current", 60, -np.inf), ["sample 6", "target_current -inf"]),
        (_set("infostates/index", 60, 10_000), ["sample 6", "infostate index 10000 outside"]),
        (_set("infostates/index", 60, -1), ["sample 6", "infostate index -1"]),
        (_set("infostates/player", 60, 7), ["sample 6", "player 7"]),
        (_set("samples/public_state", 6, 0), ["sample 6", "not a leaf public state"]),
        (_set("features/public", 0, np.full(22, np.nan, dtype=np.float32)), ["features/public", "non-finite"]),
        (_set_attr("game", "not_a_game"), ["game", "not_a_game"]),
    ],
)
def test_bad_values_are_one_line_errors(leduc_file, tmp_path, damage, words):
    path = tmp_path / "bad.h5"
    shutil.copy(leduc_file, path)
    damage(path)
    before = sorted(tmp_path.iterdir())
    proc = _inspect(path)
    _assert_one_line_error(proc, str(path), *words)
    assert proc.stdout == "" and sorted(tmp_path.iterdir()) == before


def test_inspect_json_is_strict_json(leduc_file):
    proc = _inspect(leduc_file, "--json")
    assert proc.returncode == 0, proc.stderr

    def no_constants(name):
        raise AssertionError(f"{name} is not JSON")

    summary = json.loads(proc.stdout, parse_constant=no_constants)
    assert summary["num_samples"] == 162


def test_large_files_are_joined_on_disk(tmp_path, monkeypatch):
    """Past IN_MEMORY_BYTES the final file is written by HDF5 directly: the same file."""
    from pvf.datasets import writer

    spec = small_spec(trunks=3, iterations=5, task_size=1)
    reference = make(tmp_path / "ref.h5", spec)
    monkeypatch.setattr(writer, "IN_MEMORY_BYTES", 0)
    assert_same_samples(reference, make(tmp_path / "disk.h5", spec))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk.h5", "ref.h5"]


def test_sigterm_removes_the_lock_and_keeps_the_shards(tmp_path):
    spec = small_spec(
        trunks=20_000, iterations=10, task_size=1
    )  # far more work than the two shards it waits for: SIGTERM always lands mid-run
    out = tmp_path / "t.h5"
    proc = subprocess.Popen(_cmd(spec, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(list(work_dir(out).glob("shard-*.h5"))) < 2:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.005)
    proc.terminate()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in stderr  # 128 + SIGTERM, the shell's convention
    assert _error_lines(stderr) == ["pvf generate: interrupted"]
    assert [p.name for p in tmp_path.iterdir()] == ["t.h5.parts"]
    assert not list(work_dir(out).glob("*.tmp"))
