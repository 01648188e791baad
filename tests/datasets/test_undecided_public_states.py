"""`--public-states undecided`: children samples only where the trunk matters, as the particle-trunk sweep's roots."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pvf.cli import main
from pvf.datasets.generate import generate
from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.particle_draws import draw_particles, played_history
from pvf.datasets.particle_spec import ParticleSpec
from pvf.errors import PvfError
from pvf.experiments.particle_trunk_errors import undecided_samples
from pvf.games.engine import particle_engine
from pvf.games.loading import load_game
from pvf.solvers.particle_settings import trunk_matters

GOOF13 = "goofspiel13"


def _spec(public_states: str):
    return ParticleSpec(GOOF13, 10, 8, 16, 100, rows="children", public_states=public_states)


def test_undecided_samples_are_drawn_where_the_trunk_matters_and_otherwise_are_the_plain_ones():
    """Each undecided sample's public state is one where the trunk matters (judged on its particles, every one a
    history of it); where trunk strategy i's first play already reaches such a state the sample is the plain one,
    bit for bit; most plain samples at move 9 of Goofspiel-13 are decided, so both cases occur."""
    every, undecided = _spec("all"), _spec("undecided")
    engine = particle_engine(load_game(GOOF13), "auto")
    first_matters = []
    for i in range(8):
        rng = np.random.default_rng(np.random.SeedSequence(every.seed, spawn_key=(i,)))
        played = engine.play_to_depth(LazyTrunkStrategy(every.seed, i, every.sampling), 9, rng)
        first_matters.append(trunk_matters(engine, played, 9, 10))
        plain, _, _ = draw_particles(every, engine, i)
        chosen, _, _ = draw_particles(undecided, engine, i)
        assert any(trunk_matters(engine, h, 9, 10) for h in chosen.particles)
        if first_matters[-1]:
            assert chosen.particles == plain.particles
            np.testing.assert_array_equal(chosen.own_reach, plain.own_reach)
        else:
            assert chosen.particles != plain.particles
    assert any(first_matters) and not all(first_matters)


def test_undecided_needs_children_rows(tmp_path, capsys):
    argv = ["generate", "--game", "goofspiel5", "--depth", "3", "--trunks", "2", "--public-states", "undecided"]
    for extra, message in ((["--particles", "4"], "--rows children"), ([], "--particles K --rows children")):
        assert main([*argv, *extra, "--out", str(tmp_path / "x.h5")]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_the_errors_script_finds_the_undecided_samples_of_a_file(tmp_path):
    """`particle_trunk_errors.undecided_samples` (its --data split) on files of both kinds: the plain file's mask is
    whether each sample's played history matters; every sample of an undecided file is undecided."""
    engine = particle_engine(load_game(GOOF13), "auto")
    for kind in ("all", "undecided"):
        spec = _spec(kind)
        generate(replace(spec, num_trunks=4, cfr_iterations=10), tmp_path / f"{kind}.h5", progress=False)
        expected = [trunk_matters(engine, played_history(spec, engine, i)[0], 9, 10) for i in range(4)]
        found = undecided_samples(tmp_path / f"{kind}.h5", 10)
        assert found.tolist() == expected and (kind == "all" or all(expected))


def test_a_game_where_the_trunk_never_matters_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr("pvf.solvers.particle_settings.trunk_matters", lambda *args: False)
    engine = particle_engine(load_game(GOOF13), "auto")
    with pytest.raises(PvfError, match="plays to move 9 all reached public states where the trunk does not matter"):
        played_history(_spec("undecided"), engine, 0)
