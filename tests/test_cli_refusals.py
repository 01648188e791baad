"""Late refusals and tracebacks found by trying every option as a user would: each is now one line, exit 2,
before any work where the input alone decides, and the working directory is left as it was (issue: hardening)."""

from __future__ import annotations

import pytest

from tests.test_cli_hardening import assert_refused, listing, pvf_here

SWEEP = [
    "experiment",
    "particle-trunks",
    "--game",
    "goofspiel5",
    "--root-move",
    "2",
    "--depth",
    "3",
    "--draws",
    "1",
    "--seeds",
    "0",
    "--no-oracle",
]
LINEAR = ["experiment", "linear", "--out", "lin"]
FIG = ["reproduce", "fig3", "--games", "leduc", "--seeds", "1", "--trunks", "4", "--max-steps", "2", "--out", "r"]
SPARSE = ["evaluate", "sparse", "--out", "sp"]  # the checkpoint is added by the test

CASES = {
    # --out checked before the sweep, not after it (its results were lost)
    "particle-trunks --out empty": ([*SWEEP, "--out", ""], ["--out is empty"]),
    "particle-trunks --out a file": ([*SWEEP, "--out", "a-file"], ["a-file is a file"]),
    "particle-trunks --out /dev/null": ([*SWEEP, "--out", "/dev/null"], ["/dev/null is a file"]),
    # tracebacks
    "particle-trunks beyond the game": (
        [*SWEEP[:4], "--root-move", "9", "--depth", "10", "--out", "o"],
        ["5-card Goofspiel has 5 moves", "--depth must be at most 5"],
    ),
    "particle-trunks --seeds -1": ([*SWEEP[:-3], "--seeds", "-1", "--out", "o"], ["--seeds must be non-negative"]),
    "particle-trunks --rollouts 0": ([*SWEEP, "--rollouts", "0", "--out", "o"], ["positive number of bid orders"]),
    "particle-trunks --rollout-greed alone": ([*SWEEP, "--rollout-greed", "1", "--out", "o"], ["add --rollouts"]),
    "particle-trunks --rollout-greed -1": (
        [*SWEEP, "--rollouts", "--rollout-greed", "-1", "--out", "o"],
        ["--rollout-greed is a number >= 0"],
    ),
    "particle-trunks --rollouts exact, 7 cards left": (
        [
            "experiment",
            "particle-trunks",
            "--game",
            "goofspiel8",
            "--root-move",
            "0",
            "--depth",
            "1",
            "--rollouts",
            "exact",
            "--out",
            "o",
        ],
        ["at most 6: 7 are left at move 1"],
    ),
    "particle-trunks --rollouts in Leduc": (
        [
            "experiment",
            "particle-trunks",
            "--game",
            "leduc",
            "--root-move",
            "1",
            "--depth",
            "2",
            "--rollouts",
            "--out",
            "o",
        ],
        ["rollout leaves play Goofspiel"],
    ),
    "linear --n 100000": ([*LINEAR, "--n", "100000"], ["GiB for the particle features", "smaller --n"]),
    # directories made before the input was checked
    "quality --p-solve 2": (
        ["reproduce", "quality", "--games", "leduc", "--p-solve", "2", "--out", "q"],
        ["sampling probability p_solve = 2.0 is outside [0, 1]"],
    ),
    "quality --ablation --p-solve": (
        ["reproduce", "quality", "--games", "leduc", "--ablation", "--p-solve", "0.5", "--out", "q"],
        ["--ablation sets every lever itself; drop --p-solve"],
    ),
    "linear --n 0": ([*LINEAR, "--n", "0"], ["must be >= 1"]),
    "linear --lr -1": ([*LINEAR, "--lr", "-1"], ["positive finite"]),
    "linear --lr nan": ([*LINEAR, "--lr", "nan"], ["positive finite"]),
    # values that cannot work
    "linear --lr inf": ([*LINEAR, "--lr", "inf"], ["positive finite"]),
    "mmd --alpha 1e308": (
        ["solve", "kuhn_poker", "--solver", "mmd", "--alpha", "1e308"],
        ["alpha must be finite and non-negative, at most 1e+06"],
    ),
    "mmd --stepsize 1e308": (["solve", "kuhn_poker", "--solver", "mmd", "--stepsize", "1e308"], ["stepsize"]),
    "mmd --alpha -1": (["solve", "kuhn_poker", "--solver", "mmd", "--alpha", "-1"], ["alpha"]),
    "particle-trunks --draws 1e8": (
        [*SWEEP[:8], "--draws", "100000000", "--out", "o"],
        ["K² histories", "up to 1,024"],
    ),
    "reproduce particles --draws 1e8": (
        ["reproduce", "particles", "--games", "goofspiel8", "--draws", "1,100000000", "--out", "r"],
        ["K² histories"],
    ),
    # refused only after data generation and training
    "fig4 --fractions 0,1.5": (
        [*FIG[:1], "fig4", *FIG[2:], "--fractions", "0,1.5"],
        ["--fractions must lie in (0, 1]"],
    ),
    "fig3 --accelerator gpu without one": ([*FIG, "--accelerator", "gpu"], ["sees no CUDA device"]),
    "fig3 an architecture twice": ([*FIG, "--architectures", "positional,positional"], ["positional twice"]),
    # found by scripts/option_sweep.py: the particle figure's dataset and the training sizes
    "particles --particle-trunks 2^63": (
        ["reproduce", "particles", "--games", "goofspiel8", "--particle-trunks", str(2**63), "--out", "r"],
        ["num_trunks", "too large"],
    ),
    "particles --workers 2^63": (
        ["reproduce", "particles", "--games", "goofspiel8", "--workers", str(2**63), "--out", "r"],
        ["local workers"],
    ),
    "fig3 --batch-size 2^63": ([*FIG, "--batch-size", str(2**63)], ["--batch-size", "more than pvf runs"]),
    "linear --steps 2^63": ([*LINEAR, "--steps", str(2**63)], ["--steps", "at most 10,000,000"]),
    "linear --seed -2^63 - 1": ([*LINEAR, "--seed", str(-(2**63) - 1)], ["--seed must lie in [0, 2^63)"]),
    # pvf evaluate sparse: the output directory was made first
    "sparse --seeds -1": ([*SPARSE, "--seeds", "-1"], ["--seeds must be non-negative"]),
    "sparse --fractions 0,2": ([*SPARSE, "--fractions", "0,2"], ["--fractions must lie in (0, 1]"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refused_in_one_line_before_any_work(case, kuhn_runs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    args, words = CASES[case]
    if args[:2] == ["evaluate", "sparse"]:
        args = [*args, "--checkpoint", str(kuhn_runs["particle"].checkpoint), "--root-move", "2"]
    before = listing(tmp_path)
    assert_refused(pvf_here(capsys, *args), *words)
    assert listing(tmp_path) == before


@pytest.mark.parametrize(
    "address, words",
    [("127.0.0.1:1", ["no Ray cluster answers at RAY_ADDRESS=127.0.0.1:1"]), ("nonsense", ["is not host:port"])],
)
def test_a_ray_address_nothing_answers_at_is_refused_at_once(address, words, tmp_path, monkeypatch, capsys):
    """It hung for 14 minutes, then printed a 40-line traceback and left x.h5.parts/manifest.json behind."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAY_ADDRESS", address)
    args = [
        "generate",
        "--game",
        "kuhn_poker",
        "--depth",
        "3",
        "--trunks",
        "10",
        "--workers",
        "2",
        "--backend",
        "ray",
        "--out",
        "x.h5",
    ]
    assert_refused(pvf_here(capsys, *args), *words)
    assert listing(tmp_path) == []


def test_generate_warns_where_describe_warns(tmp_path, monkeypatch, capsys):
    """Kuhn at move 1 (before any player acts): every trunk's samples are the same PBSs; said, not refused."""
    monkeypatch.chdir(tmp_path)
    proc = pvf_here(capsys, "generate", "--game", "kuhn", "--depth", "1", "--trunks", "3", "--out", "k.h5")
    assert proc.returncode == 0
    assert proc.stderr.strip().splitlines() == [
        "pvf generate: warning: move 1: no player acts before it, so every trunk strategy gives the same beliefs "
        "and each trunk's samples are the same PBSs; choose a later move (pvf describe kuhn_poker lists them)"
    ]
    assert (
        pvf_here(capsys, "generate", "--game", "kuhn", "--depth", "3", "--trunks", "3", "--out", "k3.h5").stderr == ""
    )


def test_leaf_targets_has_the_max_histories_its_refusal_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    line = assert_refused(pvf_here(capsys, "experiment", "leaf-targets", "--game", "leduc", "--max-histories", "100"))
    assert "--max-histories" in line


@pytest.mark.parametrize(
    "args", [["describe", "kuhn_poker", "--seed", "nan"], ["solve", "kuhn_poker", "--bogus"], ["reproduce"], []]
)
def test_argument_errors_are_one_line_not_the_usage_block(args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        pvf_here(capsys, *args)
    err = capsys.readouterr().err.strip().splitlines()
    assert info.value.code == 2 and len(err) == 1 and "--help` lists the options" in err[0], err


def test_an_absurd_particle_dataset_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """Particle samples' sizes are known only once solved: a lower bound (16 bytes a sample) still refuses 2^63 - 1
    samples at once, where the task list alone would have filled the memory."""
    monkeypatch.chdir(tmp_path)
    args = ["generate", "--game", "goofspiel5", "--depth", "3", "--trunks", str(2**63 - 1), "--particles", "4"]
    line = assert_refused(pvf_here(capsys, *args, "--out", "p.h5"), "trunks need at least", "GB are free")
    assert "use fewer --trunks" in line
    assert listing(tmp_path) == []
