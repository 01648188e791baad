"""Data near a trunk solve's leaf queries (`--p-solve`): the queries, the mix, the files it makes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pvf.datasets.pbs_tasks import SampleLayout
from pvf.datasets.sampling import SamplingConfig, leaf_beliefs
from pvf.datasets.solve_queries import solve_queries
from pvf.errors import PvfError
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES
from pvf.solvers.sequence_form import build_sequence_game
from pvf.solvers.sequence_ops import uniform_strategy
from tests.datasets.pbs_helpers import LEDUC, datasets_of, make, small_spec

CFR = 20  # the small specs' CFR+ iterations per leaf subgame


def test_files_without_it_keep_their_sampling_text():
    """Older files' attribute reads back unchanged; a p_solve round-trips."""
    assert SamplingConfig().to_json() == '{"method": "authors_mix", "p_keep": 0.9, "p_pure": 0.1, "p_uniform": 0.05}'
    mix = SamplingConfig(p_solve=0.3)
    assert json.loads(mix.to_json())["p_solve"] == 0.3 and SamplingConfig.from_json(mix.to_json()) == mix
    with pytest.raises(PvfError, match="p_solve"):
        SamplingConfig(p_solve=1.5)


def test_queries_start_at_uniform_play_and_are_reaches(leduc):
    """The solve's first query is the leaf reach of uniform play (its first iterate), in `leaf_beliefs`' columns;
    every query is a reach, in [0, 1], and the solve moves away from uniform play."""
    q1, q2 = solve_queries(LEDUC, 7, CFR, "average", DEFAULT_MAX_HISTORIES)
    trunk = build_sequence_game(leduc, depth_limit=7)
    u1, u2 = leaf_beliefs(trunk, tuple(uniform_strategy(seqs, 1) for seqs in trunk.players))
    np.testing.assert_array_equal(q1[0], u1[0])
    np.testing.assert_array_equal(q2[0], u2[0])
    assert q1.shape == (202, len(trunk.leaf_infostates[0])) and q2.shape[0] == 202
    for q in (q1, q2):
        assert q.min() >= 0.0 and q.max() <= 1.0
    assert not np.allclose(q1[-1], q1[0])  # the solve moves away from uniform play


def test_mixed_trunks_lie_between_their_random_beliefs_and_one_query(tmp_path, leduc):
    """With p_solve, each trunk's beliefs are its p_solve = 0 beliefs (bit for bit) or on the segment from them to
    one of the solve's queries; about p_solve of the trunks move; the rest of the file is as without it."""
    trunks = 40
    plain = datasets_of(make(tmp_path / "plain.h5", small_spec(trunks=trunks, iterations=CFR)))
    mixed = datasets_of(
        make(tmp_path / "mixed.h5", small_spec(trunks=trunks, iterations=CFR, sampling=SamplingConfig(p_solve=0.5)))
    )
    for name in ("infostates/index", "infostates/player", "samples/trunk", "samples/public_state"):
        np.testing.assert_array_equal(plain[name], mixed[name])
    a = plain["infostates/belief"].reshape(trunks, -1).astype(np.float64)
    b = mixed["infostates/belief"].reshape(trunks, -1).astype(np.float64)
    trunk = build_sequence_game(leduc, depth_limit=7)
    columns = SampleLayout.of_trunk(trunk).columns
    queries = np.concatenate(solve_queries(LEDUC, 7, CFR, "average", DEFAULT_MAX_HISTORIES), axis=1)[:, columns]
    moved = ~np.all(a == b, axis=1)
    assert 0.25 < moved.mean() < 0.75  # 40 trunks at p = 0.5: 6 sigma is ±0.47, 0.25–0.75 is ±3.2
    for t in np.flatnonzero(moved):
        step, towards = b[t] - a[t], queries - a[t]  # [K], [Q, K]
        weight = towards @ step / np.maximum((towards * towards).sum(axis=1), 1e-300)  # λ per query
        residual = np.abs(step - weight[:, None] * towards).max(axis=1)
        k = int(np.argmin(residual))
        assert residual[k] < 1e-6 and -1e-9 <= weight[k] <= 1 + 1e-9
    assert not np.array_equal(plain["infostates/target"], mixed["infostates/target"])


def test_particle_datasets_refuse_it():
    from pvf.datasets.spec import ParticleSpec

    with pytest.raises(PvfError, match="--p-solve"):
        ParticleSpec(LEDUC, 7, 2, 4, CFR, sampling=SamplingConfig(p_solve=0.5))
