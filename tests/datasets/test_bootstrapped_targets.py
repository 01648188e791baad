"""Bootstrapped targets: children rows' PBSs solved one move deep with a net at their leaves (`--target-network`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from pvf.cli import main
from pvf.datasets.particle_children import induced_subgames
from pvf.datasets.particle_spec import ParticleSpec
from pvf.datasets.particle_tasks import solve_samples
from pvf.datasets.sample_networks import SampleNetworks
from pvf.datasets.sampling import SamplingConfig
from pvf.experiments.particle_sweep import particle_trunk_setting
from pvf.games.engine import particle_engine
from pvf.games.loading import load_game
from pvf.solvers.evaluators import ExactEvaluator
from pvf.solvers.sparse_trunks import select_histories, sparse_trunk
from pvf.solvers.trunk_solver import Trunk
from pvf.valuefn.network_leaves import network_leaves
from tests.conftest import GOOF5
from tests.datasets.pbs_helpers import datasets_of, network_files


@dataclass(frozen=True)
class OracleLeaves:
    """A `LeafNetwork` that is the exact oracle: each leaf PBS (the histories its infostates induce, built to the
    end of the game) solved by an LP, as a perfect net would value it."""

    digest: str = "e" * 64

    def __call__(self, trunk: Trunk) -> ExactEvaluator:
        engine = particle_engine(load_game(GOOF5), "auto")
        return ExactEvaluator(trunk, induced_subgames(engine, trunk.tree, trunk.game.leaf_infostates))


def test_the_exact_oracle_at_the_leaves_gives_the_to_the_end_pbs_values():
    """Goofspiel-5, rows at move 2: the target solves stop at move 3 (two rounds before the end) with the oracle
    there. Depth-limited solving with exact leaf values is sound: each sample's PBS value Σ b₁·v₁ (average
    targets) is the to-the-end solve's, to CFR+'s accuracy after 100 iterations (half of them are over 0.02,
    what zero leaves would make 0); the rows' features and beliefs are the same draws'."""
    kw = dict(game=GOOF5, depth=2, num_trunks=12, particles=6, cfr_iterations=100, target="average", rows="children")
    plain = solve_samples(ParticleSpec(**kw), range(12))
    boot = solve_samples(
        ParticleSpec(**kw, target_network="e" * 64), range(12), networks=SampleNetworks(targets=OracleLeaves())
    )
    value = lambda s: float(np.sum((s["belief"] * s["target"])[s["player"] == 0]))  # noqa: E731
    decided = 0
    for a, b in zip(plain, boot):
        for key in ("player", "belief", "mass", "cf_reach", "private", "slot", "public"):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        assert b["stats"][2] < a["stats"][2]  # the depth-limited PBS is smaller
        assert value(b) == pytest.approx(value(a), abs=1e-3)
        assert value(b) == pytest.approx(-float(np.sum((b["belief"] * b["target"])[b["player"] == 1])), abs=1e-12)
        decided += np.abs(a["target"] - b["target"]).max() < 1e-12  # nothing left to decide below move 3
    assert 0 < decided < 12
    assert sum(abs(value(a)) > 0.02 for a in plain) >= 6


def test_target_network_files_record_the_net_and_are_the_same_from_either_engine(tmp_path, goof5_children_net):
    """`--target-network` with a net trained at move 3 makes move-2 data: the file records the net's SHA-256, the
    native and OpenSpiel engines write the same file, and its targets differ from the to-the-end file's while
    its beliefs do not (the same draws)."""
    argv = ["generate", "--game", "goofspiel5", "--depth", "2", "--particles", "6", "--rows", "children"]
    argv += ["--trunks", "4", "--cfr-iterations", "20", "--task-size", "2", "--no-progress"]
    native, plain = network_files(argv, "--target-network", Path(goof5_children_net[0]), tmp_path)
    np.testing.assert_array_equal(native["infostates/belief"], plain["infostates/belief"])
    assert np.isfinite(native["infostates/target"]).all()
    assert not np.allclose(native["infostates/target"], plain["infostates/target"], atol=1e-3)


def test_target_network_refusals(tmp_path, goof5_children_net, capsys):
    """A net of another depth, particle rows, or a rerun without the net: one line, exit 2, nothing written."""
    checkpoint = str(goof5_children_net[0])
    argv = ["generate", "--game", "goofspiel5", "--particles", "6", "--trunks", "2", "--no-progress"]
    cases = [
        (["--depth", "3", "--rows", "children", "--target-network", checkpoint], "trained at depth 4"),
        (["--depth", "2", "--target-network", checkpoint], "--rows children"),
        (["--depth", "2", "--rows", "children", "--target-network", "missing.ckpt"], "no such file"),
    ]
    for extra, message in cases:
        assert main([*argv, *extra, "--out", str(tmp_path / "x.h5")]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []
    out = tmp_path / "boot.h5"
    boot = [*argv, "--depth", "2", "--rows", "children", "--out", str(out)]
    assert main([*boot, "--target-network", checkpoint]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert main(boot) == 2
    err = capsys.readouterr().err
    assert "target_network" in err and len(err.strip().splitlines()) == 1, err
    assert out.read_bytes() == before


def test_the_sweeps_bootstrapped_targets_with_the_oracle_below_reach_its_to_the_end_pbs_values():
    """The particle-trunk sweep's targets evaluator (`induced_pbs_evaluator`) at a Goofspiel-5 particle trunk's
    leaves (move 1 to 2, K = 4): with the leaf PBSs solved one move deep and the exact oracle below, each leaf
    PBS's value Σ b₁·v₁ at random beliefs is the to-the-end solve's to 2% after 100 CFR+ iterations (the
    depth-limited solve converges more slowly: measured 1.7%, 1.2% after 400 iterations, 0.7% after 1,600),
    where constant-zero values below miss it by far more."""
    from pvf.datasets.induced_targets import induced_pbs_evaluator
    from pvf.datasets.sampling import SamplingConfig
    from pvf.experiments.particle_sweep import particle_trunk_setting
    from pvf.solvers.evaluators import ConstantEvaluator

    @dataclass(frozen=True)
    class ZeroLeaves:
        digest: str = "0" * 64

        def __call__(self, trunk: Trunk) -> ConstantEvaluator:
            return ConstantEvaluator(0.0)

    loaded = load_game(GOOF5)
    trunk = particle_trunk_setting(loaded, 1, 2, 4, 0, SamplingConfig()).evaluation
    leaf_infostates = trunk.game.leaf_infostates
    rng = np.random.default_rng(0)
    reach = [rng.random((1, len(leaf_infostates[n]))) for n in (0, 1)]
    public = trunk.tree.infostate_public_state[0][leaf_infostates[0]]

    def pbs_values(below) -> np.ndarray:
        v1, _ = induced_pbs_evaluator(loaded, trunk, 100, "average", "auto", below)(*reach)
        return np.bincount(np.unique(public, return_inverse=True)[1], weights=(reach[0] * v1)[0])

    end, oracle, zero = (pbs_values(below) for below in (None, OracleLeaves(), ZeroLeaves()))
    assert len(end) >= 2 and np.abs(end).min() > 0.5
    np.testing.assert_allclose(oracle, end, rtol=0.02, atol=0)
    assert np.abs(zero / end - 1).max() > 0.2


def test_the_sweep_names_the_bootstrapped_row_and_refuses_it_without_targets(tmp_path, goof5_children_net, capsys):
    import json

    args = ["experiment", "particle-trunks", "--game", "goofspiel5", "--root-move", "1", "--depth", "2"]
    args += ["--draws", "1", "--seeds", "0", "--iterations", "3", "--no-oracle"]
    args += ["--target-network", str(goof5_children_net[0])]
    assert main([*args, "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "add --targets" in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()
    assert main([*args, "--targets", "best_response", "--json", "--out", str(tmp_path / "ok")]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    row = [p for p in points if p["evaluator"] == "targets best_response bootstrapped"]
    assert len(row) == 1 and 0 <= row[0]["exploitability_mean"] < 10


def test_an_ensemble_at_the_leaves_is_the_mean_of_its_members(tmp_path, goof5_children_net):
    """`A.ckpt+B.ckpt` values a trunk's leaves by the mean of A's and B's values, and its digest is theirs joined
    by '+'; a file made with an ensemble of two copies of one net records both and is that net's file."""
    first = Path(goof5_children_net[0])
    checkpoint = torch.load(first, map_location="cpu", weights_only=True)
    name = next(k for k, v in checkpoint["state_dict"].items() if k.startswith("net.") and v.dim() == 2)
    checkpoint["state_dict"][name] = checkpoint["state_dict"][name] * 1.5
    other = tmp_path / "other.ckpt"
    torch.save(checkpoint, other)
    both = network_leaves(f"{first}+{other}", GOOF5, 3)
    singles = [network_leaves(p, GOOF5, 3) for p in (first, other)]
    assert both.digest == f"{singles[0].digest}+{singles[1].digest}"
    setting = particle_trunk_setting(load_game(GOOF5), 2, 3, 6, 0, SamplingConfig())
    trunk = sparse_trunk(setting, select_histories(setting, fraction=1.0))
    rng = np.random.default_rng(0)
    reach = [rng.random((2, len(trunk.game.leaf_infostates[n]))) for n in (0, 1)]  # [B, J_n]
    mean, (a, b) = both(trunk)(*reach), (s(trunk)(*reach) for s in singles)
    for n in (0, 1):
        assert not np.allclose(a[n], b[n])
        np.testing.assert_allclose(mean[n], (a[n] + b[n]) / 2, rtol=1e-12, atol=1e-15)
    twin = tmp_path / "twin.ckpt"
    twin.write_bytes(first.read_bytes())
    argv = ["generate", "--game", "goofspiel5", "--depth", "2", "--particles", "6", "--rows", "children"]
    argv += ["--trunks", "2", "--cfr-iterations", "10", "--no-progress"]
    files = {"single": str(first), "twin": f"{first}+{twin}"}
    for label, nets in files.items():
        assert main([*argv, "--target-network", nets, "--out", str(tmp_path / f"{label}.h5")]) == 0
    single, twins = (datasets_of(tmp_path / f"{label}.h5") for label in files)
    for name, values in single.items():
        np.testing.assert_array_equal(values, twins[name], err_msg=name)
    with h5py.File(tmp_path / "twin.h5") as f:
        assert f.attrs["target_network"] == f"{singles[0].digest}+{singles[0].digest}"
