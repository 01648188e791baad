"""`pvf reproduce` at toy scale: the whole pipeline runs and writes its figures."""

import csv
import dataclasses

import pytest

from pvf.experiments.fig3 import reproduce_fig3
from pvf.experiments.fig4 import reproduce_fig4
from pvf.experiments.reproduce import ReproduceConfig, ensemble_state_path, split_ensembles


def test_fig3_and_fig4_end_to_end(tmp_path):
    config = ReproduceConfig(
        out=tmp_path,
        games=("leduc",),
        seeds=(0,),
        trunks=3,
        cfr_iterations=5,
        max_steps=4,
        eval_every=2,
        batch_size=16,
        iterations=5,
        fractions=(1.0, 0.5),
    )
    fig3 = reproduce_fig3(config)["leduc"]
    with open(fig3["csv"]) as f:
        rows = list(csv.DictReader(f))
    assert {(r["architecture"], r["step"]) for r in rows} == {
        (a, s) for a in ("positional", "particle") for s in ("0", "2", "4")
    }
    assert fig3["particle"]["step"] == 4
    fig4 = reproduce_fig4(config)["leduc"]  # reuses fig. 3's dataset and particle net
    assert fig4["support_histories"] == 290
    assert [p["point"] for p in fig4["points"]] == ["1", "0.5", "2 histories"]
    assert len(list((tmp_path / "checkpoints").glob("*.ckpt"))) == 2
    assert (tmp_path / "fig3-leduc.png").exists() and (tmp_path / "fig4-leduc.png").exists()
    with open(tmp_path / "fig4-leduc-runs.csv") as f:  # each net by its path under out: the CSV is portable
        networks = {r["network"] for r in csv.DictReader(f)}
    assert networks == {"checkpoints/leduc-d7-t3-k5-seed0-particle-steps4-b16-ens.ckpt"}
    assert (tmp_path / networks.pop()).exists()


def test_parallel_training_jobs_give_the_same_figures(tmp_path):
    """Two training processes, each network's two seeds split between them, give the sequential run's
    measurements (batched products over one member instead of two may round differently in float32)."""
    base = ReproduceConfig(
        out=tmp_path / "one",
        games=("leduc",),
        seeds=(0, 1),
        trunks=3,
        cfr_iterations=5,
        max_steps=4,
        eval_every=2,
        batch_size=16,
        iterations=5,
    )
    sequential = reproduce_fig3(base)["leduc"]
    parallel = reproduce_fig3(dataclasses.replace(base, out=tmp_path / "two", jobs=2))["leduc"]
    with open(sequential["csv"]) as f, open(parallel["csv"]) as g:
        rows, others = list(csv.DictReader(f)), list(csv.DictReader(g))
    assert [r.keys() for r in rows] == [r.keys() for r in others] and len(rows) == 12
    for row, other in zip(rows, others):
        for key, value in row.items():
            if key in ("game", "architecture", "seed", "step", "epoch"):
                assert value == other[key]
            else:
                assert float(other[key]) == pytest.approx(float(value), rel=1e-5, nan_ok=True)


def test_ensembles_split_over_cpu_jobs_and_resume_as_saved(tmp_path):
    """jobs > 1 on a CPU: each network's seeds in up to `jobs` parts; a GPU keeps one ensemble; saved states
    (of the whole or of other parts) keep the parts they were saved in."""
    config = ReproduceConfig(
        out=tmp_path, games=("leduc",), seeds=(0, 1, 2), trunks=3, max_steps=4, eval_every=2, jobs=2
    )
    runs = [
        (tmp_path / f"leduc-d7-t3-k100-seed{s}.h5", arch, s, 2) for arch in ("positional", "particle") for s in range(3)
    ]
    assert split_ensembles(config, runs) == [[0, 1], [2], [3, 4], [5]]
    assert split_ensembles(dataclasses.replace(config, jobs=1), runs) == [[0, 1, 2], [3, 4, 5]]
    assert split_ensembles(dataclasses.replace(config, accelerator="gpu"), runs) == [[0, 1, 2], [3, 4, 5]]
    assert split_ensembles(dataclasses.replace(config, jobs=8), runs) == [[0], [1], [2], [3], [4], [5]]
    whole = ensemble_state_path(config, runs[:3])
    assert whole.name == "leduc-d7-t3-k100-seeds0-1-2-positional-steps4-b64-ens-e2.state.pt"
    whole.write_bytes(b"")
    ensemble_state_path(config, runs[4:]).write_bytes(b"")  # particle, seeds 1 and 2
    assert split_ensembles(dataclasses.replace(config, jobs=8), runs) == [[0, 1, 2], [3], [4, 5]]


def test_cosine_runs_have_their_own_files_and_load_weights_only(tmp_path):
    from pvf.valuefn.checkpoint import load_checkpoint

    config = ReproduceConfig(
        out=tmp_path,
        games=("leduc",),
        seeds=(0,),
        trunks=3,
        cfr_iterations=5,
        max_steps=4,
        eval_every=2,
        batch_size=16,
        iterations=5,
        lr_schedule="cosine",
        separate_runs=True,
    )
    reproduce_fig3(config)
    checkpoints = sorted(p.name for p in (tmp_path / "checkpoints").glob("*.ckpt"))
    assert checkpoints == [f"leduc-d7-t3-k5-seed0-{a}-steps4-b16-cosine.ckpt" for a in ("particle", "positional")]
    load_checkpoint(tmp_path / "checkpoints" / checkpoints[0], expect_game="leduc_poker")


def _two_seeds(tmp_path, **options) -> ReproduceConfig:
    """Leduc fig. 3 at toy size, seeds 0 and 1: 3 trunks, 4 training steps measured every 2."""
    tiny = dict(games=("leduc",), seeds=(0, 1), trunks=3, cfr_iterations=5, max_steps=4, eval_every=2, batch_size=16)
    return ReproduceConfig(out=tmp_path, iterations=5, **{**tiny, **options})


def test_ensembles_are_the_default_and_are_reused(tmp_path):
    """Two seeds per network as one ensemble: member files per seed, no state left, a rerun trains nothing."""
    from pvf.valuefn.checkpoint import load_checkpoint

    config = _two_seeds(tmp_path)
    first = reproduce_fig3(config)["leduc"]
    names = sorted(p.name for p in (tmp_path / "checkpoints").glob("*"))
    assert names == sorted(
        f"leduc-d7-t3-k5-seed{s}-{a}-steps4-b16-ens.{ext}"
        for s in (0, 1)
        for a in ("particle", "positional")
        for ext in ("ckpt", "csv")
    )
    for name in names[::2]:
        load_checkpoint(tmp_path / "checkpoints" / name, expect_game="leduc_poker")
    with open(first["csv"]) as f:
        rows = list(csv.DictReader(f))
    assert {(r["architecture"], r["seed"], r["step"]) for r in rows} == {
        (a, s, t) for a in ("positional", "particle") for s in ("0", "1") for t in ("0", "2", "4")
    }
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*")}
    again = reproduce_fig3(config)["leduc"]
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*")} == stamps
    assert again["particle"] == first["particle"]


def test_a_larger_ensemble_reuses_the_finished_members_and_trains_only_the_others(tmp_path):
    """Three seeds after two in the same store: members 0 and 1 are kept as they are (not retrained into the
    larger ensemble, which would overwrite them), member 2 trains alone; a rerun trains nothing."""
    two = _two_seeds(tmp_path, architectures=("particle",))
    reproduce_fig3(two)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*")}
    three = reproduce_fig3(dataclasses.replace(two, seeds=(0, 1, 2)))["leduc"]
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert (tmp_path / "checkpoints" / "leduc-d7-t3-k5-seed2-particle-steps4-b16-ens.ckpt").exists()
    with open(three["csv"]) as f:
        assert {r["seed"] for r in csv.DictReader(f)} == {"0", "1", "2"}
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*")}
    reproduce_fig3(dataclasses.replace(two, seeds=(0, 1, 2)))
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*")} == stamps


def test_attention_trains_as_an_ensemble_in_fig3_and_fig4(tmp_path):
    """`--architectures attention`: an ensemble (vmap backend) whose members serve fig. 4's sweep."""
    config = ReproduceConfig(
        out=tmp_path,
        games=("leduc",),
        architectures=("attention",),
        seeds=(0, 1),
        trunks=3,
        cfr_iterations=5,
        max_steps=2,
        eval_every=2,
        batch_size=16,
        iterations=5,
        fractions=(1.0,),
    )
    assert reproduce_fig3(config)["leduc"]["attention"]["step"] == 2
    fig4 = reproduce_fig4(config)["leduc-attention"]
    assert fig4["architecture"] == "attention" and (tmp_path / "fig4-leduc-attention.png").exists()
    assert sorted(p.name for p in (tmp_path / "checkpoints").glob("*.ckpt")) == [  # fig. 4 reused fig. 3's members
        f"leduc-d7-t3-k5-seed{s}-attention-steps2-b16-ens.ckpt" for s in (0, 1)
    ]


def test_a_finer_eval_every_retrains_into_the_same_network(tmp_path):
    """A finished run measured every 4 steps is not reused for every 2: it is retrained (same weights, finer history);
    every 4 is then served by the every-2 run."""
    import torch

    coarse = _two_seeds(tmp_path, eval_every=4, architectures=("particle",))
    reproduce_fig3(coarse)
    member = tmp_path / "checkpoints" / "leduc-d7-t3-k5-seed1-particle-steps4-b16-ens.ckpt"
    weights = torch.load(member, weights_only=True)["state_dict"]
    fine = reproduce_fig3(dataclasses.replace(coarse, eval_every=2))["leduc"]
    with open(fine["csv"]) as f:
        assert sorted({int(r["step"]) for r in csv.DictReader(f)}) == [0, 2, 4]
    again = torch.load(member, weights_only=True)["state_dict"]
    assert all(torch.equal(weights[k], again[k]) for k in weights)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*")}
    reproduce_fig3(coarse)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "checkpoints").glob("*")} == stamps


def test_a_network_another_process_is_training_is_refused_not_trained_twice(tmp_path):
    """A member's checkpoint locked (as a concurrent `pvf reproduce` on the same --out holds it): refused with
    the holder's pid; once free, a rerun trains it."""
    from pvf.errors import PvfError
    from pvf.outputs import output_lock

    config = ReproduceConfig(
        out=tmp_path,
        games=("leduc",),
        architectures=("particle",),
        seeds=(0, 1),
        trunks=3,
        cfr_iterations=5,
        max_steps=2,
        eval_every=2,
        batch_size=16,
        iterations=5,
    )
    member = tmp_path / "checkpoints" / "leduc-d7-t3-k5-seed1-particle-steps2-b16-ens.ckpt"
    member.parent.mkdir()
    with output_lock(member):
        with pytest.raises(PvfError, match=r"being written by another pvf process \(pid \d+\)"):
            reproduce_fig3(config)
    assert not member.exists()
    reproduce_fig3(config)
    assert member.exists() and not list(tmp_path.glob("checkpoints/*.lock"))


@pytest.mark.parametrize("runs", [[], ["--separate-runs"]])  # ensembles; Lightning runs (which catch the interrupt)
def test_sigterm_stops_the_training_processes_and_releases_their_locks(tmp_path, runs):
    """`pvf reproduce --jobs 2` terminated while its two worker processes train: it exits (143, 128 + SIGTERM) within
    seconds instead of waiting for them, saying so in one line; the workers are gone and so are their
    lock files."""
    import os
    import signal
    import subprocess
    import sys
    import time

    command = [
        sys.executable,
        "-m",
        "pvf.cli",
        "reproduce",
        "fig3",
        "--games",
        "leduc",
        "--architectures",
        "particle",
        "--seeds",
        "2",
        "--trunks",
        "3",
        "--cfr-iterations",
        "5",
        "--max-steps",
        "1000000",
        "--eval-every",
        "100000",
        "--iterations",
        "5",
        "--jobs",
        "2",
        "--out",
        str(tmp_path),
        *runs,
    ]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,
    )
    locks = tmp_path / "checkpoints"
    deadline = time.monotonic() + 120
    while len(list(locks.glob("*.lock"))) < 2:  # both workers hold their members' locks: training
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    time.sleep(3)  # into the training loop (its progress bar made, even when hidden)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "pvf reproduce: interrupted" in err.splitlines(), (
        err
    )  # Lightning's workers add lines
    if not runs:  # nothing else: no warning of semaphores the workers left behind
        assert err.splitlines() == ["pvf reproduce: interrupted"], err
    assert children and not list(locks.glob("*.lock"))

    def running(pid: str) -> bool:  # a zombie (exited, not reaped yet) does not count
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 10  # the workers are joined before the parent exits; multiprocessing's
    while any(running(pid) for pid in children):  # resource tracker follows once its pipe closes
        assert time.monotonic() < deadline, [pid for pid in children if running(pid)]
        time.sleep(0.2)


def test_an_error_in_one_training_process_is_one_line(tmp_path):
    """A PvfError raised in a training worker (injected: a batch that cannot be drawn; too large a batch is now
    refused before any data is made) stops the others (busy or idle, quietly) and is the one line pvf prints
    (status 2)."""
    import os
    import subprocess
    import sys

    command = [
        sys.executable,
        "-m",
        "pvf.cli",
        "reproduce",
        "fig3",
        "--games",
        "goofspiel5",
        "--architectures",
        "particle",
        "--seeds",
        "3",
        "--trunks",
        "3",
        "--cfr-iterations",
        "5",
        "--max-steps",
        "4",
        "--eval-every",
        "2",
        "--iterations",
        "5",
        "--batch-size",
        "8",
        "--jobs",
        "2",
        "--out",
        str(tmp_path / "run"),
    ]
    hook = tmp_path / "hook"  # every process of the run (the workers too) starts with this patch
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "from pvf.errors import PvfError\n"
        "import pvf.trainers.ensemble as ensemble\n"
        "def refuse(self, *args, **kwargs):\n"
        "    raise PvfError('no batch can be drawn (injected)')\n"
        "ensemble.MemberSampler.__init__ = refuse\n"
    )
    path = os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": path}
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == ["pvf reproduce: error: no batch can be drawn (injected)"]
