"""Files generated with --target best_response or grouped: the leaf evaluator's values, the rest unchanged.

What the targets are worth at the leaves of a trunk is measured against the exact oracle in
tests/solvers/test_guarded_values.py; here: that the files hold them, enumerated and particle alike.
"""

from __future__ import annotations

import numpy as np
import pytest
from pbs_helpers import GOOF5, datasets_of, make, small_spec

from pvf.datasets.layout import check_target
from pvf.datasets.reader import PBSDataset
from pvf.datasets.spec import ParticleSpec
from pvf.errors import PvfError
from pvf.games.public_tree import build_public_tree
from pvf.solvers.evaluators import CFRTargetEvaluator
from pvf.solvers.guarded_values import RESPONSE_KINDS
from pvf.solvers.trunk_solver import build_trunk


@pytest.fixture(scope="module")
def leduc_pair(tmp_path_factory):
    out = tmp_path_factory.mktemp("br")
    spec = dict(trunks=4, iterations=30)
    return make(out / "avg.h5", small_spec(**spec)), make(out / "br.h5", small_spec(target="best_response", **spec))


@pytest.fixture(scope="module")
def leduc_mixed(tmp_path_factory):
    """Files with targets of the two one-plan kinds a dataset stores: {"grouped": path, "local": path}."""
    out = tmp_path_factory.mktemp("mixed")
    return {
        kind: make(out / f"{kind}.h5", small_spec(target=kind, trunks=4, iterations=30))
        for kind in ("grouped", "local")
    }


def test_only_the_target_column_and_its_attribute_differ(leduc_pair):
    average, responses = (datasets_of(p) for p in leduc_pair)
    assert sorted(average) == sorted(responses)
    for name in average:
        if name != "infostates/target":
            np.testing.assert_array_equal(average[name], responses[name], err_msg=name, strict=True)
    with PBSDataset(leduc_pair[1]) as ds:
        assert ds.attrs["target"] == "best_response"


@pytest.mark.parametrize("target", ["best_response", "grouped", "local"])
def test_the_file_holds_the_leaf_evaluators_values_at_its_beliefs(leduc_pair, leduc_mixed, target):
    """Each trunk's rows are `CFRTargetEvaluator(..., target)` at that trunk's leaf beliefs."""
    trunk = build_trunk(build_public_tree("leduc_poker"), 7)
    leaves = trunk.game.leaf_infostates
    column = [{int(s): j for j, s in enumerate(leaves[n])} for n in (0, 1)]
    evaluator = CFRTargetEvaluator(trunk, 30, target)
    with PBSDataset(leduc_pair[1] if target == "best_response" else leduc_mixed[target]) as ds:
        assert ds.attrs["target"] == target
        rows_of = np.repeat(ds.trunk, np.diff(ds.offset))
        for t in np.unique(ds.trunk):
            mine = rows_of == t
            reach = [np.zeros((1, len(leaves[n]))) for n in (0, 1)]
            where = [[column[n][int(s)] for s in ds.index[mine & (ds.player == n)]] for n in (0, 1)]
            for n in (0, 1):
                reach[n][0, where[n]] = ds.belief[mine & (ds.player == n)]
            values = evaluator(*reach)
            for n in (0, 1):
                np.testing.assert_allclose(
                    ds.target[mine & (ds.player == n)], values[n][0, where[n]], rtol=1e-9, atol=1e-12
                )


def test_best_responses_never_fall_below_the_profiles_own_values(leduc_pair):
    """At a positive belief a best response to the average is worth at least the average itself, so
    target ≥ average target row by row, and Σ b₁·v₁ + Σ b₂·v₂ is a small non-negative NashConv."""
    with PBSDataset(leduc_pair[0]) as avg, PBSDataset(leduc_pair[1]) as br:
        positive = br.belief > 0
        assert np.all(br.target[positive] >= avg.target[positive] - 1e-12)
        residual = br.zero_sum_residual()
        assert residual.min() >= -1e-12 and residual.max() < 1e-2  # 30 CFR+ iterations
        assert np.any(br.target[~positive] != avg.target[~positive])


@pytest.mark.parametrize("target", ["grouped", "local"])
def test_one_plan_targets_are_best_responses_within_the_budget(leduc_pair, leduc_mixed, target):
    """A grouped or local file differs from the guarded one only in its target column; its per-sample residual
    Σ b₁·v₁ + Σ b₂·v₂ (the plans' NashConv; a sample is one leaf public state) lies within the budget's slack of
    the average profile's."""
    guarded, mixed_file = datasets_of(leduc_pair[1]), datasets_of(leduc_mixed[target])
    for name in guarded:
        if name != "infostates/target":
            np.testing.assert_array_equal(guarded[name], mixed_file[name], err_msg=name, strict=True)
    assert np.any(guarded["infostates/target"] != mixed_file["infostates/target"])
    with PBSDataset(leduc_pair[1]) as br, PBSDataset(leduc_mixed[target]) as gr:
        plain, mixed = br.zero_sum_residual(), gr.zero_sum_residual()
        assert mixed.min() >= -1e-12
        assert np.all(mixed <= plain + RESPONSE_KINDS[target].slack + 1e-12)


def test_training_on_a_target_the_file_lacks_says_how_to_get_it(leduc_pair):
    with PBSDataset(leduc_pair[1]) as ds:
        assert check_target(ds, "best_response") == "target"
        assert check_target(ds, "current") == "target_current"
        with pytest.raises(PvfError, match="--target average"):
            check_target(ds, "average")


@pytest.mark.parametrize("rows", ["particles", "children"])
@pytest.mark.parametrize("target", ["best_response", "local"])
def test_particle_files_hold_best_responses_too(tmp_path, rows, target):
    spec = dict(game=GOOF5, depth=2, num_trunks=4, particles=6, cfr_iterations=40, task_size=4, rows=rows)
    average = make(tmp_path / "avg.h5", ParticleSpec(**spec))
    responses = make(tmp_path / "br.h5", ParticleSpec(target=target, **spec))
    a, b = datasets_of(average), datasets_of(responses)
    for name in a:
        if name != "infostates/target":
            np.testing.assert_array_equal(a[name], b[name], err_msg=name, strict=True)
    positive = b["infostates/belief"] > 0
    assert np.all(b["infostates/target"][positive] >= a["infostates/target"][positive] - 1e-12)
    if rows == "children":  # zero beliefs: values against the guarded strategy, not uniform play
        assert np.any(~positive) and np.any(b["infostates/target"][~positive] != a["infostates/target"][~positive])


def test_particle_rows_of_every_kind_are_the_plain_best_responses(tmp_path):
    """Particle rows have belief 1 at every root, so the guarded solve is the solve: every kind is the best
    responses to the average profile, the same file bit for bit."""
    spec = dict(game=GOOF5, depth=2, num_trunks=4, particles=6, cfr_iterations=40, task_size=4)
    guarded = datasets_of(make(tmp_path / "br.h5", ParticleSpec(target="best_response", **spec)))
    for kind in ("grouped", "local"):
        other = datasets_of(make(tmp_path / f"{kind}.h5", ParticleSpec(target=kind, **spec)))
        for name in guarded:
            np.testing.assert_array_equal(guarded[name], other[name], err_msg=name, strict=True)
