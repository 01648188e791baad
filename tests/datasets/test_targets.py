"""Targets: zero-sum, the values of the CFR+ profile, near-equilibrium after 100 iterations.

Measured (figures in docs/results/value-function-quality.md): the average profile after 100 CFR+
iterations has subgame NashConv at most 7.7e-4 over 3,780 Leduc PBSs
(7 seeds x 10 trunks x 54 public states; median 1.4e-5, 99th percentile
2.4e-4), and its value is within 2.0e-4 of a 5,000-iteration solve (1,080
PBSs). Goofspiel-5 at move 2: at most 2.2e-3 over 360 PBSs. All in the
file's units (values carry chance and reach). The bounds leave a margin of
about 2.5x.
"""

from __future__ import annotations

import numpy as np
import pytest
from pbs_helpers import GOOF5, LEDUC, make, small_spec

from pvf.datasets.pbs_tasks import context
from pvf.datasets.reader import PBSDataset
from pvf.datasets.sampling import leaf_beliefs, sample_trunk_strategies
from pvf.solvers.best_response import nash_conv
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game

NASHCONV_BOUND = 2e-3  # Leduc at move 7, 100 CFR+ iterations, file units
NASHCONV_BOUND_GOOFSPIEL = 6e-3  # Goofspiel-5 at move 2
LONG_ITERATIONS = 5000


def test_zero_sum_every_sample(leduc_file):
    with PBSDataset(leduc_file) as ds:
        scale = np.add.reduceat(np.abs(ds.belief * ds.target), ds.offset[:-1]).max()
        assert np.abs(ds.zero_sum_residual()).max() <= 1e-12 * max(scale, 1.0)
        assert np.abs(ds.zero_sum_residual(current=True)).max() <= 1e-12 * max(scale, 1.0)


def test_goofspiel_counts_and_zero_sum(tmp_path):
    """Goofspiel-5 after two rounds: 9 public states per trunk."""
    with PBSDataset(make(tmp_path / "g.h5", small_spec(GOOF5, depth=2, trunks=2, iterations=10))) as ds:
        assert ds.num_samples == 18
        assert np.abs(ds.zero_sum_residual()).max() <= 1e-12


def _check_pbs(spec, path, public_states, trunks):
    """Solve the file's PBSs at `public_states` independently, one subgame per public state.

    Checks that the file's targets are that solve's root cfvs; returns
    (NashConv of its average profile, |its value − a long solve's value|), [len(public_states) · B].
    """
    ctx = context(spec.game, spec.depth, spec.cfr_iterations)
    trunk, tree = ctx.trunk, ctx.tree
    beliefs = leaf_beliefs(trunk, sample_trunk_strategies(trunk, trunks, spec.seed, spec.sampling))
    ncs, gaps = [], []
    with PBSDataset(path) as ds:
        for ps in public_states:
            k = int(np.flatnonzero(trunk.leaf_public_states == ps)[0])
            b = tuple(beliefs[n][:, trunk.leaf_offsets[n][k] : trunk.leaf_offsets[n][k + 1]] for n in (0, 1))
            game = build_sequence_game(tree, root_public_state=int(ps))
            result = cfr_plus(game, spec.cfr_iterations, root_beliefs=b)
            rows = [int(np.flatnonzero((ds.trunk == t) & (ds.public_state == ps))[0]) for t in trunks]
            for j, row in enumerate(rows):
                lo, hi = ds.offset[row], ds.offset[row + 1]
                np.testing.assert_array_equal(ds.belief[lo:hi], np.concatenate([b[0][j], b[1][j]]))
                expected = np.concatenate([result.root_values[0][j], result.root_values[1][j]])
                np.testing.assert_allclose(ds.target[lo:hi], expected, rtol=0, atol=1e-13)
            ncs.append(nash_conv(game, result.average_strategy, b))
            gaps.append(np.abs(result.value - cfr_plus(game, LONG_ITERATIONS, root_beliefs=b).value))
    return np.concatenate(ncs), np.concatenate(gaps)


def test_targets_are_a_near_equilibrium_profile(tmp_path):
    spec = small_spec(trunks=3, iterations=100, task_size=3)
    path = make(tmp_path / "l100.h5", spec)
    leaf_ps = context(spec.game, spec.depth, spec.cfr_iterations).trunk.leaf_public_states
    ncs, gaps = _check_pbs(spec, path, leaf_ps[::27], np.arange(3))
    assert np.all(ncs >= -1e-12)
    assert ncs.max() < NASHCONV_BOUND
    assert gaps.max() < NASHCONV_BOUND


@pytest.mark.slow
@pytest.mark.parametrize(
    "game, depth, trunks, bound",
    [(LEDUC, 7, 10, NASHCONV_BOUND), (GOOF5, 2, 20, NASHCONV_BOUND_GOOFSPIEL)],
)
def test_nashconv_bound_over_hundreds_of_pbs(tmp_path, game, depth, trunks, bound):
    """The measurement behind the bounds: every PBS of 10 Leduc trunks (540) / 20 Goofspiel trunks (180)."""
    spec = small_spec(game, depth=depth, trunks=trunks, iterations=100, task_size=trunks)
    path = make(tmp_path / "f.h5", spec)
    leaf_ps = context(spec.game, spec.depth, spec.cfr_iterations).trunk.leaf_public_states
    ncs, gaps = _check_pbs(spec, path, leaf_ps, np.arange(trunks))
    assert len(ncs) == trunks * len(leaf_ps)
    print(f"{game}: worst NashConv {ncs.max():.3g}, median {np.median(ncs):.3g}, worst value gap {gaps.max():.3g}")
    assert ncs.max() < bound
    assert gaps.max() < bound
