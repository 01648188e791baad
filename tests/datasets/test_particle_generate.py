"""`pvf generate --particles K`: samples, determinism, resume, refusals, version-1 files."""

from __future__ import annotations

from dataclasses import replace

import h5py
import numpy as np
import pytest

from pvf.cli import main
from pvf.datasets import generate as driver
from pvf.datasets.generate import generate
from pvf.datasets.layout import DataLayout
from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.particle_spec import ParticleSpec
from pvf.datasets.reader import PBSDataset
from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.targets import LeafSolver
from pvf.errors import PvfError
from pvf.games.depths import positional_inputs
from pvf.games.features import build_feature_tables
from pvf.valuefn.registry import make_architecture
from tests.conftest import GOOF5, cached_tree
from tests.datasets.pbs_helpers import datasets_of
from tests.games.test_history_sampling import exact_reach

SPEC = ParticleSpec(GOOF5, depth=2, num_trunks=12, particles=6, cfr_iterations=50, task_size=4)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("particles") / "ref.h5"
    generate(SPEC, path, progress=False)
    return path


def test_rows_are_the_particles_infostates_with_exact_beliefs_and_features(reference):
    tree = cached_tree(GOOF5)
    full = build_feature_tables(tree)
    with PBSDataset(reference) as ds:
        assert ds.attrs["schema_version"] == 2 and ds.attrs["particles"] == 6
        assert np.abs(ds.zero_sum_residual()).max() < 1e-12
        private = ds.private_features
        for i in range(ds.num_samples):
            strategy = LazyTrunkStrategy(SPEC.seed, int(ds.trunk[i]), SPEC.sampling)
            reach = exact_reach(tree, strategy)
            lo, hi = ds.offset[i], ds.offset[i + 1]
            for r in range(lo, hi):
                n = int(ds.player[r])
                # the row's infostate: the one of the full tree with the same private features in this public state
                pub = [
                    p
                    for p in tree.public_states_at_depth(2)
                    if np.array_equal(full.public[p], ds.public_features[ds.public_state[i]])
                ]
                assert len(pub) == 1
                infos = [
                    j
                    for j in tree.public_state_infostates[n][pub[0]]
                    if np.array_equal(full.private[n][j], private[n][ds.index[r]])
                ]
                assert len(infos) == 1
                own = reach[tree.infostate_history[n][infos[0]], 1 + n]
                assert ds.belief[r] == pytest.approx(own, rel=1e-12)


def test_same_file_for_any_workers_and_after_a_kill(reference, tmp_path, monkeypatch):
    two = tmp_path / "two.h5"
    generate(SPEC, two, workers=2, progress=False)
    real = driver.run_tasks

    def dies_after_two(*args, **kwargs):
        for k, item in enumerate(real(*args, **kwargs)):
            if k == 2:
                raise KeyboardInterrupt
            yield item

    killed = tmp_path / "killed.h5"
    monkeypatch.setattr(driver, "run_tasks", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        generate(SPEC, killed, progress=False)
    monkeypatch.setattr(driver, "run_tasks", real)
    report = generate(SPEC, killed, progress=False)
    assert (report.tasks_resumed, report.tasks_run) == (2, 1)
    ref = datasets_of(reference)
    for other in (two, killed):
        data = datasets_of(other)
        assert data.keys() == ref.keys()
        for name in ref:
            np.testing.assert_array_equal(data[name], ref[name], err_msg=name)
    assert generate(SPEC, killed, progress=False).status == "complete"


def test_the_join_streams_chunk_by_chunk(reference, tmp_path, monkeypatch):
    """The final file is joined shard by shard into datasets of many chunks (`ChunkAppender`: chunks of 5 rows
    here, so chunks straddle shards and shards straddle chunks): the same datasets as the reference's."""
    from pvf.datasets import schema

    monkeypatch.setattr(schema, "CHUNK_ROWS", 5)
    small = tmp_path / "small-chunks.h5"
    generate(SPEC, small, progress=False)
    with h5py.File(small) as f:
        assert f["infostates/belief"].chunks == (5,) and len(f["infostates/belief"]) > 3 * 5
        assert f["features/public"].chunks[0] == 5 and len(f["features/public"]) == SPEC.num_trunks
    ref, data = datasets_of(reference), datasets_of(small)
    assert data.keys() == ref.keys()
    for name in ref:
        np.testing.assert_array_equal(data[name], ref[name], err_msg=name)


def test_shards_of_an_earlier_version_resume(reference, tmp_path, monkeypatch):
    """Particle shards written before the two kinds shared a driver lack the size attributes: a rerun keeps them."""
    real = driver.run_tasks

    def dies_after_two(*args, **kwargs):
        for k, item in enumerate(real(*args, **kwargs)):
            if k == 2:
                raise KeyboardInterrupt
            yield item

    out = tmp_path / "old.h5"
    monkeypatch.setattr(driver, "run_tasks", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        generate(SPEC, out, progress=False)
    monkeypatch.setattr(driver, "run_tasks", real)
    for shard in driver.work_dir(out).glob("shard-*.h5"):
        with h5py.File(shard, "r+") as f:
            del f.attrs["num_samples"], f.attrs["num_rows"]
    report = generate(SPEC, out, progress=False)
    assert (report.tasks_resumed, report.tasks_run) == (2, 1)
    ref, data = datasets_of(reference), datasets_of(out)
    assert data.keys() == ref.keys()
    for name in ref:
        np.testing.assert_array_equal(data[name], ref[name], err_msg=name)


@pytest.mark.ray
def test_ray_backend_writes_the_same_file(reference, tmp_path):
    """A local Ray instance (2 CPUs) runs the particle tasks: the file is the local one's, dataset by dataset."""
    ray_file = tmp_path / "ray.h5"
    generate(SPEC, ray_file, workers=2, backend="ray", progress=False)
    ref, data = datasets_of(reference), datasets_of(ray_file)
    assert data.keys() == ref.keys()
    for name in ref:
        np.testing.assert_array_equal(data[name], ref[name], err_msg=name)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--game", "goofspiel5", "--depth", "2", "--particles", "0"], "--particles must be at least 1"),
        (["--game", "goofspiel13", "--depth", "3", "--particles", "4"], "more than 200,000 histories"),
        (["--game", "goofspiel5", "--depth", "9", "--particles", "4"], "ended before move 9"),
        (["--game", "liars_dice", "--depth", "2", "--particles", "4"], "no perfect-recall public observer"),
        (["--game", "goofspiel5", "--depth", "2", "--rows", "children"], "--rows applies to particle datasets"),
        (
            ["--game", "goofspiel5", "--depth", "1", "--particles", "4", "--rows", "children"],
            "children rows need particles at move",
        ),
        (
            ["--game", "goofspiel13", "--depth", "4", "--particles", "4", "--rows", "children"],
            "more than 200,000 histories",
        ),
        (  # Goofspiel-5's last round is forced: every child of move 3 is terminal
            ["--game", "goofspiel5", "--depth", "4", "--particles", "4", "--rows", "children"],
            "no public state at move 4 was one both players reach",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, argv, message):
    out = tmp_path / "bad.h5"
    rc = main(["generate", *argv, "--trunks", "3", "--cfr-iterations", "5", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_version_1_files_are_still_read(tmp_path):
    out = tmp_path / "k.h5"
    assert (
        main(
            [
                "generate",
                "--game",
                "kuhn_poker",
                "--depth",
                "3",
                "--trunks",
                "2",
                "--cfr-iterations",
                "5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    with h5py.File(out, "a") as f:
        f.attrs["schema_version"] = 1
    with PBSDataset(out) as ds:
        assert ds.attrs["schema_version"] == 1 and ds.num_samples > 0
    make_architecture("positional").build(DataLayout.from_file(out))  # an enumerated file: no objection


def test_positional_value_functions_refuse_particle_files(reference):
    layout = DataLayout.from_file(reference)
    make_architecture("particle").build(layout)
    with pytest.raises(
        PvfError, match="particle dataset .6 particles per sample.*positional value function would need"
    ):
        make_architecture("positional").build(layout)
    g13 = "goofspiel(num_cards=13,imp_info=True,points_order=descending)"
    big = replace(layout, particles=64, depth=4, positional_inputs=positional_inputs(g13, 4))
    with pytest.raises(PvfError, match="at least 7,139 inputs"):
        make_architecture("positional").build(big)


def test_particle_nets_take_the_counterfactual_reach_where_the_file_has_it(reference):
    """Files with `/infostates/cf_reach` give particle nets one more input, `/infostates/cf_opponent` Fq more; a net
    trained with either refuses data without it, and the other way round, in one line; `reach_feature=False` /
    `opponent_feature=False` read such a file as one without."""
    layout = DataLayout.from_file(reference)
    plain = DataLayout.from_file(reference, reach_feature=False)
    assert layout.reach_feature and not plain.reach_feature
    particle = make_architecture("particle")
    widths = [particle.build(x).change_basis[0].in_features for x in (layout, plain)]
    assert widths[0] == widths[1] + 1
    particle.check_layout(layout, DataLayout.from_dict(layout.to_dict()))
    with pytest.raises(PvfError, match="counterfactual reach as an input; the data has none"):
        particle.check_layout(layout, plain)
    with pytest.raises(PvfError, match="without the counterfactual-reach input"):
        particle.check_layout(plain, layout)
    alone = DataLayout.from_file(reference, opponent_feature=False)
    assert layout.opponent_feature and not alone.opponent_feature and alone.reach_feature
    widths = [particle.build(x).change_basis[0].in_features for x in (layout, alone)]
    assert widths[0] == widths[1] + layout.private_dim
    with pytest.raises(PvfError, match="mean opponent features as inputs; the data has none"):
        particle.check_layout(layout, alone)
    with pytest.raises(PvfError, match="without the mean-opponent-features input"):
        particle.check_layout(alone, layout)
    per_reach = make_architecture("particle", reach_output=True)
    assert per_reach.build(layout).reach_output
    with pytest.raises(PvfError, match="reach_output needs the counterfactual-reach input"):
        per_reach.build(plain)


def test_positional_bound_is_the_papers_table_1():
    """Lemma 2 (app. A), 13 cards: 7,139 infostates at depth 4 and 4.0·10⁶ at depth 8, as Table 1."""
    g13 = "goofspiel(num_cards=13,imp_info=True,points_order=descending)"
    x = 13 * 12 * 11 * 10 * 12 * 11 * 10 * 9 / 16
    assert positional_inputs(g13, 4) == int(np.ceil(2 * np.sqrt(x))) == 7139
    assert positional_inputs(g13, 8) == pytest.approx(4.0e6, rel=0.02)
    assert positional_inputs("leduc_poker", 4) == 0


def test_an_enumerated_generation_refuses_a_particle_file(reference, tmp_path, capsys):
    out = tmp_path / "p.h5"
    out.write_bytes(reference.read_bytes())
    rc = main(
        [
            "generate",
            "--game",
            "goofspiel5",
            "--depth",
            "2",
            "--trunks",
            "12",
            "--cfr-iterations",
            "50",
            "--task-size",
            "4",
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and "particle dataset" in err and "--overwrite" in err


def _enumerated_targets(tree, full, ds, i, depth, iterations):
    """(the file's targets of sample i, the enumerated solver's values of the same infostates with the rows' beliefs,
    the number of histories joining two row infostates, each row's counterfactual reach summed over the enumerated
    public state's histories: Σ_{h∈s} π_c(h)·b_{−n}(h), and its mean opponent features over them:
    Σ_{h∈s} π_c(h)·b_{−n}(h)·q_{−n}(h) / reach, 0 where the reach is)."""
    (pub,) = [
        p
        for p in tree.public_states_at_depth(depth)
        if np.array_equal(full.public[p], ds.public_features[ds.public_state[i]])
    ]
    solver = LeafSolver(tree, np.array([pub]), iterations)
    rows = range(ds.offset[i], ds.offset[i + 1])
    column, beliefs = [], [np.zeros((1, len(solver.infostates[n]))) for n in (0, 1)]
    for r in rows:
        n = int(ds.player[r])
        (j,) = [
            j
            for j in tree.public_state_infostates[n][pub]
            if np.array_equal(full.private[n][j], ds.private_features[n][ds.index[r]])
        ]
        column.append(int(np.flatnonzero(solver.infostates[n] == j)[0]))
        beliefs[n][0, column[-1]] = ds.belief[r]
    where = [{int(j): c for c, j in enumerate(solver.infostates[n])} for n in (0, 1)]
    joined = sum(
        all(beliefs[n][0, where[n][int(tree.infostate[h, n])]] > 0 for n in (0, 1)) for h in tree.histories_in(pub)
    )
    reach = [np.zeros(len(solver.infostates[n])) for n in (0, 1)]
    opponent = [np.zeros((len(solver.infostates[n]), full.private[1 - n].shape[1])) for n in (0, 1)]
    for h in tree.histories_in(pub):
        c = [where[n][int(tree.infostate[h, n])] for n in (0, 1)]
        for n in (0, 1):
            weight = tree.chance_reach[h] * beliefs[1 - n][0, c[1 - n]]
            reach[n][c[n]] += weight
            opponent[n][c[n]] += weight * full.private[1 - n][int(tree.infostate[h, 1 - n])]
    for n in (0, 1):
        opponent[n][reach[n] > 0] /= reach[n][reach[n] > 0, None]
    values = solver.solve(tuple(beliefs)).average
    return (
        ds.target[rows.start : rows.stop],
        np.array([values[int(ds.player[r])][0, c] for r, c in zip(rows, column)]),
        joined,
        np.array([reach[int(ds.player[r])][c] for r, c in zip(rows, column)]),
        np.array([opponent[int(ds.player[r])][c] for r, c in zip(rows, column)]),
    )


def _against_enumerated(spec, tmp_path):
    """Write `spec`'s file; yield (dataset, sample i, its targets, the enumerated values, joined histories, enumerated
    counterfactual reach and mean opponent features) per sample."""
    path = tmp_path / "compare.h5"
    generate(spec, path, progress=False)
    tree = cached_tree(spec.game)
    full = build_feature_tables(tree)
    with PBSDataset(path) as ds:
        assert GenerationSpec.from_attrs(dict(ds.attrs)) == spec
        for i in range(ds.num_samples):
            yield (ds, i, *_enumerated_targets(tree, full, ds, i, spec.depth, spec.cfr_iterations))


def _check_reach(ds, i, targets, reach, opponent):
    """The file's counterfactual reach of sample i's rows is the enumerated one, and bounds the targets
    (|u| ≤ 1 in Goofspiel's win/loss; Leduc's largest pot is 13 chips each); its mean opponent features are the
    enumerated ones (float32)."""
    rows = slice(ds.offset[i], ds.offset[i + 1])
    np.testing.assert_allclose(ds.cf_reach[rows], reach, rtol=0, atol=1e-12)
    assert np.all(np.abs(targets) <= 13 * reach + 1e-12)
    np.testing.assert_allclose(ds.cf_opponent[rows], opponent, rtol=1e-6, atol=1e-7)
    return bool(np.any((opponent > 0) & (opponent < 1)))  # a mean over several opponent infostates


@pytest.mark.parametrize("game, depth", [(GOOF5, 2), ("leduc_poker", 5)])
def test_targets_are_the_enumerated_values_of_the_pbs_the_particles_induce(tmp_path, game, depth):
    """Each row's target is the enumerated solver's value of that row's infostate in the PBS whose beliefs are the
    rows' (zero elsewhere), although the particles are a few of that PBS's histories (the paper, sec. 5.1)."""
    spec = ParticleSpec(game, depth, num_trunks=6, particles=6, cfr_iterations=100, task_size=6)
    sparse = 0
    mixed = 0
    for ds, i, targets, enumerated, joined, reach, opponent in _against_enumerated(spec, tmp_path):
        sparse += joined > ds._read("samples/particles")[i]
        np.testing.assert_allclose(targets, enumerated, rtol=0, atol=1e-12)
        mixed += _check_reach(ds, i, targets, reach, opponent)
    assert mixed >= 3
    assert sparse >= 3  # most samples' PBS holds histories that were not drawn


def test_drawn_subgame_targets_depend_on_the_draws(tmp_path):
    """subgame="drawn" (files from before the induced PBS) solves the drawn histories only: its targets are the
    enumerated PBS values where the particles cover that PBS, and differ where they do not."""
    spec = ParticleSpec(GOOF5, 2, num_trunks=8, particles=40, cfr_iterations=100, task_size=8, subgame="drawn")
    covered = differ = 0
    for ds, i, targets, enumerated, joined, _, _ in _against_enumerated(spec, tmp_path):
        if joined == ds._read("samples/particles")[i]:
            covered += 1
            np.testing.assert_allclose(targets, enumerated, rtol=0, atol=1e-4)
        else:
            differ += np.abs(targets - enumerated).max() > 1e-3
    assert covered >= 1 and differ >= 1


@pytest.mark.parametrize("game, depth", [(GOOF5, 2), ("leduc_poker", 5)])
def test_children_rows_are_the_enumerated_values_zero_beliefs_included(tmp_path, game, depth):
    """rows="children": every infostate one move below the particles' induced PBS, in one public state, with the
    trunk strategy's beliefs (zeros included); each target is the enumerated solver's value of that infostate in
    the PBS of those beliefs, so zero-belief rows carry their value against the opponent's belief."""
    spec = ParticleSpec(
        game,
        depth,
        num_trunks=8,
        particles=6,
        cfr_iterations=100,
        task_size=8,
        rows="children",
        sampling=SamplingConfig(p_pure=0.5),
    )
    zero = 0
    for ds, i, targets, enumerated, _, reach, opponent in _against_enumerated(spec, tmp_path):
        np.testing.assert_allclose(targets, enumerated, rtol=0, atol=1e-12)
        _check_reach(ds, i, targets, reach, opponent)
        rows = slice(ds.offset[i], ds.offset[i + 1])
        zero += int(np.sum(ds.belief[rows] == 0))
        assert all(ds.belief[rows][ds.player[rows] == n].sum() > 0 for n in (0, 1))
    assert zero >= 3


def test_children_samples_whose_parents_have_no_live_children_play_again(tmp_path, monkeypatch):
    """Leduc at move 9: some parents at move 8 have no child public state that both players reach (the game
    ends, or one player's belief is 0 in each); those samples play their trunk strategy again from the same
    stream instead of failing (they once raised a traceback)."""
    from pvf.datasets import particle_tasks
    from pvf.datasets.particle_children import NoLiveChildren, pose_children

    refused = []

    def counting(*args, **kwargs):
        try:
            return pose_children(*args, **kwargs)
        except NoLiveChildren:
            refused.append(1)
            raise

    spec = ParticleSpec("leduc_poker", 9, num_trunks=12, particles=4, cfr_iterations=20, task_size=12, rows="children")
    monkeypatch.setattr(particle_tasks, "pose_children", counting)
    generate(spec, tmp_path / "l9.h5", progress=False)
    assert refused, "no sample needed a second play: pick a depth where some do"
    with PBSDataset(tmp_path / "l9.h5") as ds:
        assert ds.num_samples == 12
        for i in range(12):
            rows = slice(ds.offset[i], ds.offset[i + 1])
            assert all(ds.belief[rows][ds.player[rows] == n].sum() > 0 for n in (0, 1))
