"""Matches: every game reproducible on its own, so a match table resumes and extends without changing a game."""

from __future__ import annotations

import csv

import pytest

from pvf.agents.spec import parse_agent
from pvf.errors import PvfError
from pvf.experiments.match_table import main, pairing_lock, play_pairing, short_label, wrapped
from pvf.games.loading import load_game
from pvf.outputs import output_lock

AGENT = "particles:k=4,leaves=rollout,horizon=1"


def test_a_resumed_match_plays_the_games_an_uninterrupted_one_plays(tmp_path):
    """Games 0-5 against IS-MCTS and the uniform bot: played at once, or 3 then resumed to 6 in a new log read
    back from disk, the same returns; the summary CSV and PNG are written, and keep the rows of pairings a later
    run does not play."""
    loaded = load_game("goofspiel4")
    for opponent in ("ismcts:sims=20", "random"):
        whole = play_pairing(loaded, AGENT, opponent, 6, 0, tmp_path / f"whole-{opponent}.csv", progress=False)
        play_pairing(loaded, AGENT, opponent, 3, 0, tmp_path / f"parts-{opponent}.csv", progress=False)
        resumed = play_pairing(loaded, AGENT, opponent, 6, 0, tmp_path / f"parts-{opponent}.csv", progress=False)
        assert [r.agent_return for r in resumed] == [r.agent_return for r in whole]
        assert [r.seat for r in whole] == [0, 1, 0, 1, 0, 1]
        with open(tmp_path / f"parts-{opponent}.csv", newline="") as f:
            assert sorted(int(r["index"]) for r in csv.DictReader(f)) == list(range(6))  # each game once
    out = tmp_path / "table.csv"
    assert (
        main(
            [
                "--game",
                "goofspiel4",
                "--out",
                str(out),
                "--pairings",
                f"{AGENT}@random",
                "--games",
                "4",
                "--no-progress",
            ]
        )
        == 0
    )
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["opponent"] for r in rows] == ["random"] and rows[0]["games"] == "4"
    assert out.with_suffix(".png").stat().st_size > 0
    pairing = f"{AGENT}@ismcts:sims=20"
    assert (
        main(["--game", "goofspiel4", "--out", str(out), "--pairings", pairing, "--games", "2", "--no-progress"]) == 0
    )
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["opponent"], r["games"]) for r in rows] == [("random", "4"), ("ismcts:sims=20", "2")]  # kept


def test_a_pairing_played_elsewhere_is_refused_and_others_share_the_log(tmp_path):
    """While another process plays a pairing into the log (its lock held), the same pairing is refused with one line
    and nothing written; another pairing plays into the same log meanwhile, its header written once."""
    loaded, log = load_game("goofspiel4"), tmp_path / "games.csv"
    with output_lock(pairing_lock(log, AGENT, "random")):
        with pytest.raises(PvfError, match="is being played into .* by another process; wait for it"):
            play_pairing(loaded, AGENT, "random", 2, 0, log, progress=False)
        assert not log.exists()
        play_pairing(loaded, AGENT, "ismcts:sims=20", 2, 0, log, progress=False)
    play_pairing(loaded, AGENT, "random", 2, 0, log, progress=False)
    with open(log, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["opponent"], r["index"]) for r in rows] == [
        ("ismcts:sims=20", "0"),
        ("ismcts:sims=20", "1"),
        ("random", "0"),
        ("random", "1"),
    ]
    assert not list(tmp_path.glob(".*"))  # the locks are gone


def test_an_openspiel_bot_named_as_the_agent_is_refused_with_where_it_belongs():
    for bot in ("ismcts", "ismcts:sims=50", "random", "mcts", "human"):
        with pytest.raises(PvfError, match="is an OpenSpiel bot: it plays only as the opponent"):
            parse_agent(bot)


def test_the_figure_names_checkpoints_by_their_file_names():
    spec = "particles:k=16,leaves=runs/a/u0.ckpt+/tmp/b/u1.ckpt,horizon=1,fallback=rollout"
    assert short_label(spec) == "particles:k=16,leaves=u0.ckpt+u1.ckpt,horizon=1,fallback=rollout"
    assert short_label("ismcts:sims=20") == "ismcts:sims=20"
    lines = wrapped(spec, width=30).split("\n")  # broken after commas only, the label whole
    assert lines == ["particles:k=16,", "leaves=u0.ckpt+u1.ckpt,", "horizon=1,fallback=rollout"]
    assert "".join(lines) == short_label(spec) and wrapped("mmds") == "mmds"
