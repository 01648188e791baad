"""`pvf generate --solver mmd`: targets are MMD's last iterate, per PBS as if solved alone; provenance."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
from pbs_helpers import make, small_spec

from pvf.cli import main
from pvf.datasets.pbs_tasks import context
from pvf.datasets.reader import PBSDataset
from pvf.datasets.sampling import leaf_beliefs, sample_trunk_strategies
from pvf.datasets.spec import GenerationSpec
from pvf.errors import PvfError
from pvf.solvers.mmd import mmd
from pvf.solvers.sequence_form import build_sequence_game


def test_mmd_targets_are_each_subgames_last_iterate(tmp_path):
    spec = small_spec(trunks=3, iterations=30, task_size=3, solver="mmd")
    path = make(tmp_path / "mmd.h5", spec)
    ctx = context(spec.game, spec.depth, spec.cfr_iterations, spec.solver)
    trunk, tree = ctx.trunk, ctx.tree
    beliefs = leaf_beliefs(trunk, sample_trunk_strategies(trunk, np.arange(3), spec.seed, spec.sampling))
    with PBSDataset(path) as ds:
        assert ds.attrs["solver"] == "mmd"
        np.testing.assert_array_equal(ds.target, ds.target_current)  # MMD has no average: both are the last iterate
        for k in (0, 20, 53):
            ps = int(trunk.leaf_public_states[k])
            b = tuple(beliefs[n][:, trunk.leaf_offsets[n][k] : trunk.leaf_offsets[n][k + 1]] for n in (0, 1))
            alone = mmd(build_sequence_game(tree, root_public_state=ps), spec.cfr_iterations, root_beliefs=b)
            for t in range(3):
                row = int(np.flatnonzero((ds.trunk == t) & (ds.public_state == ps))[0])
                lo, hi = ds.offset[row], ds.offset[row + 1]
                expected = np.concatenate([alone.root_values[0][t], alone.root_values[1][t]])
                np.testing.assert_allclose(ds.target[lo:hi], expected, rtol=0, atol=1e-13)


def test_files_without_a_solver_attribute_read_as_cfr_plus(tmp_path):
    path = make(tmp_path / "old.h5", small_spec("kuhn_poker", depth=3, trunks=2, iterations=5))
    with h5py.File(path, "a") as f:
        assert f.attrs["solver"] == "cfr+"
        del f.attrs["solver"]  # as written before the attribute existed
    with PBSDataset(path) as ds:
        assert ds.attrs["solver"] == "cfr+"
        assert GenerationSpec.from_attrs(ds.attrs) == small_spec("kuhn_poker", depth=3, trunks=2, iterations=5)


def test_solver_is_part_of_the_files_identity(tmp_path):
    out = tmp_path / "k.h5"
    make(out, small_spec("kuhn_poker", depth=3, trunks=2, iterations=5))
    with pytest.raises(PvfError, match="solver"):
        make(out, small_spec("kuhn_poker", depth=3, trunks=2, iterations=5, solver="mmd"))


def test_bad_solver_is_one_line_exit_2(tmp_path, capsys):
    code = main(
        [
            "generate",
            "--game",
            "kuhn_poker",
            "--depth",
            "3",
            "--trunks",
            "2",
            "--solver",
            "mmdx",
            "--out",
            str(tmp_path / "x.h5"),
        ]
    )
    assert code == 2
    assert "mmdx" in capsys.readouterr().err
