"""Children samples near a particle trunk solve's queries (`--p-solve` with `--rows children`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pvf.cli import main
from pvf.datasets.induced_targets import induced_pbs_evaluator
from pvf.datasets.particle_children import pose_children
from pvf.datasets.particle_draws import draw_particles
from pvf.datasets.particle_solve_queries import QueryBehaviour, group_solve, solve_query
from pvf.datasets.particle_spec import ParticleSpec
from pvf.datasets.particle_tasks import solve_samples
from pvf.datasets.sample_networks import NO_NETWORKS, check_networks
from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.spec import DEFAULT_SOLVE_GROUP
from pvf.errors import PvfError
from pvf.games.engine import particle_engine
from pvf.games.features import build_feature_tables
from pvf.games.loading import load_game
from pvf.solvers.evaluators import RecordingEvaluator
from pvf.solvers.particle_settings import setting_from_particles
from pvf.solvers.sparse_trunks import select_histories, sparse_trunk_strategy
from pvf.valuefn.network import load_value_function
from pvf.valuefn.network_leaves import NetworkLeaves, network_leaves
from tests.conftest import GOOF5
from tests.datasets.pbs_helpers import network_files

CFR = 20


def _spec(p_solve: float, trunks: int = 6, solve_network: str = "", solve_group: int = DEFAULT_SOLVE_GROUP):
    sampling = SamplingConfig(p_solve=p_solve)
    return ParticleSpec(
        GOOF5,
        3,
        trunks,
        particles=8,
        cfr_iterations=CFR,
        target="best_response",
        rows="children",
        sampling=sampling,
        solve_network=solve_network,
        solve_group=solve_group,
    )


def _row_beliefs(posed):
    """Per player {infostate string: belief} of posed children rows."""
    zeros = tuple(np.zeros_like(b) for b in posed.root_beliefs)
    rows = posed.solved(zeros, zeros, zeros)
    return [dict(zip((rows.tree.infostate_strings[n][i] for i in rows.infostates[n]), rows.belief[n])) for n in (0, 1)]


@pytest.mark.parametrize("leaves", ["targets", "network"])
def test_children_posed_with_a_query_iterate_carry_that_querys_beliefs_zeros_included(leaves, goof5_children_net):
    """The rows' beliefs are the sweep's own recorded leaf query (the game-root convention σ·π_t, recorded
    inside its `ScaledEvaluator`), infostate for infostate, at the first, a middle and the last query; every
    recovered iterate is a distribution, the first one uniform. The same with a net at the solve's leaves
    (`--solve-network`): the queries of the net's own trunk solve."""
    network = network_leaves(goof5_children_net[0], GOOF5, 3) if leaves == "network" else None
    spec = _spec(1.0, solve_network="" if network is None else network.digest)
    loaded = load_game(GOOF5)
    engine = particle_engine(loaded, "auto")
    sample, base, _ = draw_particles(spec, engine, 0)
    setting = setting_from_particles(loaded, sample.particles, sample.own_reach, 2, 3, "induced", engine.name)
    made = []

    def make(trunk):
        if network is None:
            inner = induced_pbs_evaluator(loaded, trunk, CFR, spec.target, engine.name)
        else:
            inner = load_value_function(network.paths[0]).evaluator(trunk, build_feature_tables(setting.tree))
        made.append((trunk, RecordingEvaluator(inner)))
        return made[-1][1]

    sparse_trunk_strategy(setting, select_histories(setting, fraction=1.0), make)
    ((trunk, recording),) = made
    solved = group_solve(spec, engine.name, 0, network)
    assert solved.sample.particles == sample.particles  # the group's particles: its first sample's draw
    behaviours = solved.behaviours
    assert len(behaviours) == len(recording.queries) == 202
    for probs in behaviours[0].values():
        np.testing.assert_allclose(probs, np.full(len(probs), 1 / len(probs)), rtol=0, atol=1e-15)
    for behaviour in behaviours:
        assert behaviour and all(abs(p.sum() - 1) < 1e-12 and p.min() >= 0 for p in behaviour.values())
    strings = [[trunk.tree.infostate_strings[n][int(i)] for i in trunk.game.leaf_infostates[n]] for n in (0, 1)]
    checked = zeros = 0
    for k in (0, 101, 201):
        rng = np.random.default_rng(k)
        posed = pose_children(engine, sample, QueryBehaviour(behaviours[k], base), 3, 10**6, rng)
        query = dict(zip(strings[0], recording.queries[k][0][0])), dict(zip(strings[1], recording.queries[k][1][0]))
        for n, beliefs in enumerate(_row_beliefs(posed)):
            for key, belief in beliefs.items():
                assert belief == pytest.approx(query[n][key], rel=1e-12, abs=1e-15)
                checked += 1
                zeros += belief == 0
    assert checked > 30 and zeros > 0


def test_plain_samples_are_unchanged_and_moved_ones_use_their_groups_particles():
    """With p_solve = 0.5, a sample its draw leaves alone is bit for bit the p_solve = 0 sample; a moved one has the
    particles of its group's first sample (here sample 0) and beliefs of its own."""
    plain, mixed = (solve_samples(_spec(p), range(6)) for p in (0.0, 0.5))
    queries = [solve_query(_spec(0.5), i) for i in range(6)]
    assert 0 < sum(q is not None for q in queries) < 6 and DEFAULT_SOLVE_GROUP > 6
    for i, (a, b, q) in enumerate(zip(plain, mixed, queries)):
        if q is None:
            for key in a:
                np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), err_msg=f"{i} {key}")
            continue
        assert q.group == 0 and b["stats"][0] == plain[0]["stats"][0]  # the group's distinct particles
        assert i == 0 or not np.array_equal(a["belief"], b["belief"])


def test_p_solve_needs_children_rows(tmp_path, capsys):
    out = tmp_path / "bad.h5"
    argv = ["generate", "--game", "goofspiel5", "--depth", "2", "--particles", "4", "--p-solve", "0.5"]
    assert main([*argv, "--trunks", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--rows children" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_solve_network_files_record_the_net_and_differ_only_at_query_samples(tmp_path, goof5_children_net, capsys):
    """`--solve-network`: the file records the checkpoint's SHA-256; native and OpenSpiel engines write the same
    file; its plain samples are those of the targets' `--p-solve` file (the same draws), its query samples are
    not; a rerun without the net, or with other bytes, is refused in one line and leaves the file alone."""
    checkpoint = Path(goof5_children_net[0])
    argv = ["generate", "--game", "goofspiel5", "--depth", "3", "--particles", "8", "--rows", "children"]
    argv += ["--p-solve", "0.5", "--trunks", "6", "--cfr-iterations", str(CFR), "--task-size", "2"]
    argv += ["--target", "best_response", "--no-progress"]
    native, targets = network_files(argv, "--solve-network", checkpoint, tmp_path)
    spec = _spec(0.5)
    queries = [solve_query(spec, i) is not None for i in range(6)]
    assert any(queries) and not all(queries)
    beliefs = lambda data, i: data["infostates/belief"][slice(*data["samples/offset"][i : i + 2])]  # noqa: E731
    same = [np.array_equal(beliefs(native, i), beliefs(targets, i)) for i in range(6)]
    assert all(s for s, q in zip(same, queries) if not q) and not all(s for s, q in zip(same, queries) if q)
    capsys.readouterr()
    written = tmp_path / "native.h5"
    before = written.read_bytes()
    other = tmp_path / "other.ckpt"
    other.write_bytes(checkpoint.read_bytes() + b"\0")
    for extra in ([], ["--solve-network", str(other)]):
        assert main([*argv, *extra, "--out", str(written)]) == 2
        err = capsys.readouterr().err
        assert "solve_network" in err and len(err.strip().splitlines()) == 1
    assert written.read_bytes() == before


def test_solve_network_refusals(tmp_path, goof5_children_net, capsys):
    checkpoint = str(goof5_children_net[0])
    argv = ["generate", "--game", "goofspiel5", "--depth", "3", "--particles", "8", "--trunks", "2", "--no-progress"]
    cases = [
        (["--rows", "children", "--solve-network", checkpoint], "--p-solve"),
        (["--solve-network", checkpoint], "--rows children"),
        (["--rows", "children", "--p-solve", "0.5", "--solve-network", "missing.ckpt"], "no such file"),
    ]
    for extra, message in cases:
        assert main([*argv, *extra, "--out", str(tmp_path / "x.h5")]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []
    leaves = NetworkLeaves((checkpoint,), ("0" * 64,))
    with pytest.raises(PvfError, match="restore it or start over"):
        leaves(None)
    with pytest.raises(PvfError, match="pass that checkpoint"):
        check_networks(_spec(0.5, solve_network="0" * 64), NO_NETWORKS)


def test_solve_groups_of_g_samples_take_the_particles_of_their_first():
    """`--solve-group 2`: samples 2g and 2g + 1 are posed from sample 2g's particles and one solve; the attribute
    is written only where G is not the default (earlier files read as 128)."""
    spec = _spec(1.0, solve_group=2)
    assert [solve_query(spec, i).group for i in range(6)] == [0, 0, 1, 1, 2, 2]
    engine = particle_engine(load_game(GOOF5), "auto")
    for group in range(3):
        first, _, _ = draw_particles(spec, engine, 2 * group)
        assert group_solve(spec, engine.name, group).sample.particles == first.particles
    assert spec.to_attrs()["solve_group"] == 2 and "solve_group" not in _spec(1.0).to_attrs()
    assert type(spec).from_attrs(spec.to_attrs()) == spec
