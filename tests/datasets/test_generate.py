"""`pvf generate`: counts, layout, determinism across workers/backends, resume, refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from pbs_helpers import assert_same_samples, make, small_spec

from pvf.cli import main
from pvf.datasets import generate as generate_module
from pvf.datasets.generate import generate, shard_path, work_dir
from pvf.datasets.reader import PBSDataset
from pvf.datasets.task_plan import plan_tasks
from pvf.datasets.tasks import run_task
from pvf.datasets.writer import write_shard
from pvf.errors import PvfError
from pvf.games.features import build_feature_tables


def test_counts_and_layout(leduc_file, leduc):
    leaf_ps = leduc.public_states_at_depth(7)
    assert len(leaf_ps) == 54
    with PBSDataset(leduc_file) as ds:
        assert ds.num_samples == 3 * 54
        np.testing.assert_array_equal(ds.leaf_public_states, leaf_ps)
        np.testing.assert_array_equal(ds.trunk, np.repeat(np.arange(3), 54))
        np.testing.assert_array_equal(ds.public_state, np.tile(leaf_ps, 3))
        for row in (0, 53, 54 + 17, 2 * 54 + 40):
            lo, hi = ds.offset[row], ds.offset[row + 1]
            ps = ds.public_state[row]
            infos = [leduc.public_state_infostates[n][ps] for n in (0, 1)]
            np.testing.assert_array_equal(ds.player[lo:hi], np.repeat([0, 1], [len(infos[0]), len(infos[1])]))
            np.testing.assert_array_equal(ds.index[lo:hi], np.concatenate(infos))
            np.testing.assert_array_equal(ds.slot[lo:hi], np.concatenate([np.arange(len(i)) for i in infos]))
        tables = build_feature_tables(leduc)
        np.testing.assert_array_equal(ds.public_features, tables.public)
        for n in (0, 1):
            np.testing.assert_array_equal(ds.private_features[n], tables.private[n])
        assert ds.attrs["complete"] and ds.attrs["num_trunks"] == 3 and ds.attrs["task_size"] == 2
        assert json.loads(ds.attrs["sampling"])["p_pure"] == 0.1


def test_same_file_for_any_worker_count(tmp_path):
    spec = small_spec(trunks=4, iterations=10, task_size=1)
    one = make(tmp_path / "w1.h5", spec, workers=1)
    two = make(tmp_path / "w2.h5", spec, workers=2)
    assert_same_samples(one, two)


@pytest.mark.ray
def test_ray_backend_matches_local(tmp_path):
    """A local Ray instance (2 CPUs, no dashboard); ray is a dev dependency, so this never skips."""
    spec = small_spec(trunks=4, iterations=10, task_size=1)
    assert_same_samples(make(tmp_path / "local.h5", spec), make(tmp_path / "ray.h5", spec, workers=2, backend="ray"))


def _interrupt_after_first_shard(spec, out, monkeypatch) -> None:
    """Run generate() and stop it as a Ctrl-C would, right after its first shard is written."""
    real_write = generate_module.write_shard

    def write_then_stop(*args):
        real_write(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(generate_module, "write_shard", write_then_stop)
    with pytest.raises(KeyboardInterrupt):
        generate(spec, out, progress=False)
    monkeypatch.undo()


def test_resume_skips_finished_shards_and_redoes_broken_ones(tmp_path, monkeypatch):
    spec = small_spec(trunks=5, iterations=10, task_size=1)
    reference = make(tmp_path / "ref.h5", spec)
    out = tmp_path / "resumed.h5"
    tasks = plan_tasks(spec.num_trunks, spec.task_size)
    parts = work_dir(out)
    _interrupt_after_first_shard(spec, out, monkeypatch)
    assert not out.exists() and (parts / "manifest.json").is_file()
    write_shard(shard_path(parts, tasks[1]), tasks[1], run_task(spec, tasks[1]))
    shard_path(parts, tasks[3]).write_bytes(b"half a shard")  # atomic writes prevent this; it is redone anyway
    (parts / "shard-000004.h5.tmp").write_bytes(b"stale")
    report = generate(spec, out, progress=False)
    assert (report.tasks_resumed, report.tasks_run) == (2, 3)
    assert not parts.exists()
    assert_same_samples(reference, out)


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["generate", *argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_rerun_on_a_finished_file(tmp_path, capsys):
    out = tmp_path / "k.h5"
    args = ["--game", "kuhn_poker", "--depth", "3", "--trunks", "2", "--cfr-iterations", "5", "--out", str(out)]
    assert _cli(capsys, *args, "--json")[0] == 0
    rc, stdout, _ = _cli(capsys, *args, "--json")
    assert rc == 0 and json.loads(stdout)["status"] == "complete"
    rc, _, err = _cli(capsys, *args[:-2], "--seed", "1", "--out", str(out))
    assert rc == 2 and "seed" in err and "--overwrite" in err and len(err.strip().splitlines()) == 1
    rc, stdout, _ = _cli(capsys, *args, "--seed", "1", "--overwrite", "--json")
    assert rc == 0 and json.loads(stdout)["status"] == "generated"
    with PBSDataset(out) as ds:
        assert ds.attrs["seed"] == 1


def test_foreign_work_directory_is_refused(tmp_path):
    out = tmp_path / "k.h5"
    work_dir(out).mkdir()
    (work_dir(out) / "notes.txt").write_text("mine")
    spec = small_spec("kuhn_poker", depth=3, trunks=2, iterations=5)
    with pytest.raises(PvfError, match="--overwrite"):
        generate(spec, out, progress=False)
    generate(spec, out, progress=False, overwrite=True)
    assert out.is_file() and not work_dir(out).exists()


@pytest.mark.parametrize(
    "change, message",
    [
        (("--trunks", "0"), "trunks"),
        (("--cfr-iterations", "0"), "iterations"),
        (("--workers", "0"), "workers"),
        (("--depth", "0"), "depth"),
        (("--depth", "-3"), "depth"),
        (("--depth", "40"), "depth"),
        (("--depth", "11"), "no non-terminal public state"),
        (("--game", "no_such_game"), "no_such_game"),
        (("--task-size", "0"), "task size"),
        (("--p-keep", "2"), "p_keep"),
        (("--p-solve", "1.5"), "p_solve"),
        (("--p-solve", "0.5", "--particles", "4"), "--p-solve"),
        (("--backend", "ray", "--seed", "-1"), "seed"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, change, message):
    args = {"--game": "leduc_poker", "--depth": "7", "--trunks": "2", "--out": str(tmp_path / "x.h5")}
    extra = list(change)
    for flag, value in zip(extra[::2], extra[1::2]):
        args[flag] = value
    rc, _, err = _cli(capsys, *[x for kv in args.items() for x in kv])
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and message in err
    assert not (tmp_path / "x.h5").exists() and not work_dir(tmp_path / "x.h5").exists()


def _session_processes(sid: int) -> list[int]:
    """Pids of live processes in session `sid` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")
def test_sigkill_then_rerun_gives_the_uninterrupted_file(tmp_path):
    spec = small_spec(trunks=40, iterations=10, task_size=1)
    reference = make(tmp_path / "ref.h5", spec)
    out = tmp_path / "killed.h5"
    cmd = [
        sys.executable, "-m", "pvf.cli", "generate", "--game", spec.game, "--depth", str(spec.depth),
        "--trunks", str(spec.num_trunks), "--cfr-iterations", str(spec.cfr_iterations), "--task-size", "1",
        "--seed", str(spec.seed), "--target", spec.target, "--workers", "2", "--out", str(out), "--json",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(work_dir(out).glob("shard-*.h5"))) < 3:
            assert proc.poll() is None, "generation ended before it could be killed"
            assert time.monotonic() < deadline, "no shards appeared"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not out.exists()
        assert out.with_name("killed.h5.lock").exists()  # the file stays; its flock died with the holder
        assert 3 <= len(list(work_dir(out).glob("shard-*.h5"))) < 40
        deadline = time.monotonic() + 10  # orphaned pool workers notice the dead parent and exit
        while _session_processes(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _session_processes(proc.pid)
    finally:
        for pid in _session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["tasks_resumed"] >= 3 and report["tasks_resumed"] + report["tasks_run"] == 40
    assert not work_dir(out).exists() and not out.with_name("killed.h5.lock").exists()
    assert_same_samples(reference, out)


def test_work_directory_of_other_parameters_is_refused(tmp_path, monkeypatch):
    out = tmp_path / "k.h5"
    spec = small_spec("kuhn_poker", depth=3, trunks=4, iterations=5, task_size=1)
    _interrupt_after_first_shard(spec, out, monkeypatch)
    other = small_spec("kuhn_poker", depth=3, trunks=4, iterations=6, task_size=1)
    with pytest.raises(PvfError, match="cfr_iterations"):
        generate(other, out, progress=False)
    assert generate(other, out, progress=False, overwrite=True).tasks_resumed == 0


def test_target_current_column(tmp_path):
    with PBSDataset(make(tmp_path / "c.h5", small_spec("kuhn_poker", depth=3, trunks=2, target="current"))) as ds:
        assert ds.attrs["target"] == "current"
        np.testing.assert_array_equal(ds.target, ds.target_current)
    with PBSDataset(make(tmp_path / "a.h5", small_spec("kuhn_poker", depth=3, trunks=2))) as ds:
        assert not np.array_equal(ds.target, ds.target_current)
