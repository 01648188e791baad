"""`induced_pbs_evaluator`: the PBS each leaf's particles induce, checked against the enumerated public tree."""

import numpy as np

from pvf.datasets.induced_targets import induced_pbs_evaluator
from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.targets import LeafSolver
from pvf.experiments.particle_sweep import particle_trunk_setting, run_particle_sweep
from pvf.experiments.trunk_sweep import ORACLE, SweepEvaluator
from pvf.games.loading import load_game
from pvf.solvers.evaluators import CFRTargetEvaluator
from pvf.solvers.sparse_trunks import select_histories, sparse_trunk
from tests.conftest import GOOF5, cached_tree


def test_values_are_the_enumerated_solvers_on_each_leafs_induced_pbs():
    """Random leaf beliefs: every leaf infostate's value equals the enumerated solver's (LeafSolver on the full
    public tree, beliefs zero on infostates without a particle) for the same infostate string."""
    loaded = load_game(GOOF5)
    setting = particle_trunk_setting(loaded, 2, 3, draws=16, seed=2, reference=SamplingConfig(), roots="drawn")
    trunk = sparse_trunk(setting, select_histories(setting, fraction=1.0))
    evaluator = induced_pbs_evaluator(loaded, trunk, iterations=100)
    restricted = CFRTargetEvaluator(trunk, 100).leaves.game
    assert len(evaluator.leaves.game.histories) > len(restricted.histories)  # the particles miss joined histories
    leaf = trunk.game.leaf_infostates
    rng = np.random.default_rng(0)
    beliefs = [rng.uniform(0.1, 1.0, size=(2, len(leaf[n]))) for n in (0, 1)]
    values = evaluator(*beliefs)
    full = cached_tree(GOOF5)
    index = [{s: i for i, s in enumerate(full.infostate_strings[n])} for n in (0, 1)]
    found = [np.array([index[n][trunk.tree.infostate_strings[n][j]] for j in leaf[n]]) for n in (0, 1)]
    publics = full.public_state[full.infostate_history[0][found[0]]]
    assert len(np.unique(publics)) == 3  # won, lost, drawn
    for pub in np.unique(publics):
        solver = LeafSolver(full, np.array([pub]), 100)
        columns = [{int(j): c for c, j in enumerate(solver.infostates[n])} for n in (0, 1)]
        mine = [np.flatnonzero(full.public_state[full.infostate_history[n][found[n]]] == pub) for n in (0, 1)]
        for b in range(2):
            dense = [np.zeros((1, len(solver.infostates[n]))) for n in (0, 1)]
            for n in (0, 1):
                dense[n][0, [columns[n][int(found[n][k])] for k in mine[n]]] = beliefs[n][b, mine[n]]
            expected = solver.solve(tuple(dense)).average
            for n in (0, 1):
                got = values[n][b, mine[n]]
                want = expected[n][0, [columns[n][int(found[n][k])] for k in mine[n]]]
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_one_particle_covers_its_leaves_so_it_is_the_restricted_target():
    """With one particle every joined leaf history is in the trunk: the same figure as CFR+ on the trunk's leaves."""
    loaded = load_game(GOOF5)
    evaluators = {
        "restricted": SweepEvaluator(lambda setting: lambda trunk: CFRTargetEvaluator(trunk, 100), game_root=False),
        "induced": SweepEvaluator(
            lambda setting: lambda trunk: induced_pbs_evaluator(loaded, trunk, 100), game_root=True
        ),
    }
    rows = run_particle_sweep(loaded, 2, 3, [1], [0, 1, 2], evaluators, iterations=50, roots="drawn")
    by = {(r.evaluator, r.seed): r.exploitability for r in rows}
    for seed in (0, 1, 2):
        assert abs(by[("induced", seed)] - by[("restricted", seed)]) < 1e-9


def test_induced_roots_make_the_leaf_pbss_the_trunks_own_leaves():
    """Rooted at the PBS the particles induce, every leaf PBS is the trunk's own leaf subgame: the induced-PBS
    evaluator (what a perfect particle network gives) is CFR+ on the trunk's leaves, so both give the same figure,
    and it is near the exact oracle's."""
    loaded = load_game(GOOF5)
    evaluators = {
        "restricted": SweepEvaluator(lambda setting: lambda trunk: CFRTargetEvaluator(trunk, 100), game_root=False),
        "induced": SweepEvaluator(
            lambda setting: lambda trunk: induced_pbs_evaluator(loaded, trunk, 100), game_root=True
        ),
        "oracle": ORACLE,
    }
    rows = run_particle_sweep(loaded, 2, 3, [16], [0, 2], evaluators, iterations=50)
    by = {(r.evaluator, r.seed): r for r in rows}
    for seed in (0, 2):
        assert (
            by[("induced", seed)].root_histories > by[("induced", seed)].particles
        )  # the root holds undrawn histories
        assert abs(by[("induced", seed)].exploitability - by[("restricted", seed)].exploitability) < 1e-9
        assert by[("induced", seed)].exploitability < 0.1 * by[("uniform", seed)].exploitability
