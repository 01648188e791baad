"""`pvf reproduce particles --games goofspiel8` at toy scale: particle data, a particle net, the particle-trunk sweep;
its old spelling `pvf reproduce fig4 --games goofspiel8` prints the same and names the new one on stderr."""

import csv
import json

import pytest

from pvf.cli import main

TOY = ["--particle-trunks", "12", "--particle-steps", "6", "--draws", "1,2", "--seeds", "1", "--iterations", "20"]


def test_particle_fig4_end_to_end_and_reuse(tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["reproduce", "particles", "--games", "goofspiel8", *TOY, "--save-policy", "--out", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert "a positional VF would need 1,455 inputs" in printed and err == ""
    with open(out / "fig4-goofspiel8.csv") as f:
        table = list(csv.DictReader(f))
    assert {(r["evaluator"], r["draws"]) for r in table} == {
        (e, k) for e in ("uniform", "oracle", "particle VF") for k in ("1", "2")
    }
    by = {(r["evaluator"], r["draws"]): float(r["exploitability_mean"]) for r in table}
    assert by[("oracle", "1")] <= by[("uniform", "1")] + 1e-9
    assert (out / "fig4-goofspiel8.png").exists()
    with open(out / "fig4-goofspiel8-policy.json") as f:
        policy = json.load(f)
    assert policy["root_move"] == 4 and policy["depth"] == 5 and len(policy["runs"]) == 2
    for run in policy["runs"]:
        assert all(len(p["actions"]) == 8 for p in run["particles"])  # four rounds of two bids, turn-based
        assert run["evaluators"]["particle VF"]["exploitability"] == pytest.approx(
            by[("particle VF", str(run["draws"]))]
        )
    (checkpoint,) = (out / "checkpoints").glob("*.ckpt")
    with open(checkpoint.with_suffix(".csv")) as f:
        assert len(list(csv.DictReader(f))) >= 1  # validation losses
    stamps = {p: p.stat().st_mtime_ns for p in [checkpoint, *(out / "data").glob("*.h5")]}
    assert main(["reproduce", "fig4", "--games", "goofspiel8", *TOY, "--save-policy", "--out", str(out)]) == 0
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # dataset and network reused
    again, err = capsys.readouterr()
    assert again == printed
    assert err.splitlines() == [
        "pvf reproduce: `fig4 --games goofspiel8` is now `pvf reproduce particles --games goofspiel8`"
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fig3", "--games", "goofspiel13"], "fig3 needs the public tree"),
        (["fig4", "--games", "goofspiel13", "--draws", "0,4"], "--draws must be at least 1"),
        (["fig4", "--games", "goofspiel13", "--draws", "a"], "--draws takes"),
        (["fig4", "--games", "goofspiel13", "--particle-trunks", "0"], "--particle-trunks must be positive"),
        (["fig4", "--games", "goofspiel14"], "--games takes names"),
        (["particles", "--games", "leduc"], "--games takes names from goofspiel8, goofspiel13"),
        (["particles", "--draws", "1,-4"], "--draws must be at least 1"),
        (["particles", "--particle-steps", "0"], "--particle-steps must be positive"),
        (["fig3", "--games", "goofspiel5", "--solver", "cfr"], "unknown --solver 'cfr'"),
        (["fig4", "--architectures", "positional"], "fig4 sweeps sparse particle trunks"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, capsys, argv, message):
    out = tmp_path / "r"
    assert main(["reproduce", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize(
    "argv, ignored",
    [
        (
            ["fig4", "--eval-every", "1024"],
            "pvf reproduce fig4: --eval-every applies to `pvf reproduce fig3` and `pvf reproduce quality` only; "
            "ignored",
        ),
        (
            ["fig3", "--fractions", "1.0,0.5"],
            "pvf reproduce fig3: --fractions applies to `pvf reproduce fig4` only; ignored",
        ),
        (["fig3", "--draws", "1,2", "--save-policy"], None),
    ],
)
def test_options_of_another_figure_still_parse_and_are_named_ignored(argv, ignored):
    """Scripts written before the split keep working: fig4 once took --eval-every, every figure --draws."""
    from pvf.cli import build_parser
    from pvf.commands.reproduce import config_options

    options, notes = config_options(build_parser().parse_args(["reproduce", *argv]))
    assert "eval_every" not in options or argv[0] == "fig3"
    if ignored:
        assert notes == [ignored]
    else:
        assert [n.split(":")[1].split()[0] for n in notes] == ["--draws", "--save-policy"]
