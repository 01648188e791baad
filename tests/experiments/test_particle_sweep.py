"""Fig. 4 generalised on Goofspiel-5: particle trunks drawn by the random-trunk mix."""

from dataclasses import replace

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

from pvf.cli import main
from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError
from pvf.experiments.particle_sweep import (
    LEGEND_INSIDE,
    particle_trunk_setting,
    run_particle_sweep,
    summarize,
    sweep_figure,
)
from pvf.experiments.trunk_sweep import ORACLE, SweepEvaluator
from pvf.games.loading import load_game
from pvf.games.particle_tree import history_actions
from pvf.solvers.evaluators import ExactEvaluator
from tests.conftest import GOOF5, cached_tree


def test_particle_weights_are_the_reference_reach():
    """w = π_c·π₁·π₂ of each particle, recomputed on the enumerated tree."""
    from pvf.datasets.lazy_strategy import LazyTrunkStrategy
    from tests.games.test_history_sampling import exact_reach

    setting = particle_trunk_setting(load_game(GOOF5), 2, 3, draws=16, seed=1, reference=SamplingConfig())
    tree = cached_tree(GOOF5)
    reach = exact_reach(tree, LazyTrunkStrategy(0, 1, SamplingConfig()))
    paths = {tuple(history_actions(tree, h)): h for h in np.flatnonzero(tree.depth == 2)}
    full = [paths[tuple(history_actions(setting.tree, h))] for h in setting.histories]
    np.testing.assert_allclose(setting.weights, reach[full].prod(axis=1), rtol=1e-12)
    assert len(np.unique(tree.public_state[full])) == 1  # one public state


def test_oracle_beats_uniform_and_runs_repeat():
    loaded = load_game(GOOF5)
    evaluators = {"oracle": ORACLE}
    rows = run_particle_sweep(loaded, 2, 3, [4], [0, 1], evaluators, iterations=30)
    again = run_particle_sweep(loaded, 2, 3, [4], [0, 1], evaluators, iterations=30)
    assert [r.exploitability for r in rows] == [r.exploitability for r in again]
    by = {(r.evaluator, r.seed): r.exploitability for r in rows}
    for seed in (0, 1):
        assert -1e-9 <= by[("oracle", seed)] <= by[("uniform", seed)] + 1e-9
    assert max(by[("uniform", s)] for s in (0, 1)) > 0.05


def test_both_engines_give_the_same_rows():
    """The native Goofspiel kernel and OpenSpiel's walk: the same particles, restricted games and exploitabilities."""
    from pvf.datasets.induced_targets import induced_pbs_evaluator

    loaded = load_game(GOOF5)
    rows = {}
    for engine in ("native", "openspiel"):
        targets = SweepEvaluator(
            lambda setting, engine=engine: lambda trunk: induced_pbs_evaluator(loaded, trunk, 20, engine=engine),
            game_root=True,
        )
        policies = []
        found = run_particle_sweep(
            loaded, 2, 3, [4, 16], [0, 1], {"targets": targets}, iterations=20, policies=policies, engine=engine
        )
        rows[engine] = ([(r.evaluator, r.draws, r.particles, r.histories, r.exploitability) for r in found], policies)
    assert rows["native"][0] == rows["openspiel"][0]
    assert [p["particles"] for p in rows["native"][1]] == [p["particles"] for p in rows["openspiel"][1]]


def test_command_writes_csv_and_png(tmp_path, capsys):
    rc = main(
        [
            "experiment",
            "particle-trunks",
            "--game",
            "goofspiel5",
            "--root-move",
            "2",
            "--depth",
            "3",
            "--draws",
            "1,2",
            "--seeds",
            "0",
            "--no-oracle",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    assert (tmp_path / "fig4-goofspiel5.csv").exists() and (tmp_path / "fig4-goofspiel5.png").exists()
    assert "at least 27 infostate inputs" in capsys.readouterr().out


def test_beyond_the_lp_rows_carry_a_certified_bound_that_brackets_the_lp():
    """With exact_up_to = 0 every row is the bound of pvf.solvers.trunk_bound: above the LP's exact figure by at
    most its reported gap; the oracle (LPs at the leaves) is skipped there."""
    loaded = load_game(GOOF5)
    evaluators = {"oracle": ORACLE, "exact leaves": SweepEvaluator(lambda s: ExactEvaluator, game_root=False)}
    exact = run_particle_sweep(loaded, 2, 3, [16], [0, 1], evaluators, iterations=30)
    bound = run_particle_sweep(
        loaded, 2, 3, [16], [0, 1], evaluators, iterations=30, exact_up_to=0, bound_iterations=2000
    )
    assert {r.measure for r in exact} == {"exact"} and {r.measure for r in bound} == {"upper bound"}
    assert {r.evaluator for r in bound} == {"uniform", "exact leaves"}
    elsewhere = [replace(r, draws=2) for r in exact if r.evaluator == "oracle"]  # the oracle at another K only
    assert {(r["evaluator"], r["draws"]) for r in summarize(bound + elsewhere)} == {
        ("uniform", 16),
        ("exact leaves", 16),
        ("oracle", 2),
    }
    lp = {(r.evaluator, r.seed): r.exploitability for r in exact}
    for r in bound:
        assert lp[(r.evaluator, r.seed)] - 1e-9 <= r.exploitability <= lp[(r.evaluator, r.seed)] + r.gap + 1e-9
        assert r.gap < 0.01


def test_command_prints_json(tmp_path, capsys):
    import json

    rc = main(
        [
            "experiment",
            "particle-trunks",
            "--game",
            "goofspiel5",
            "--root-move",
            "2",
            "--depth",
            "3",
            "--draws",
            "2",
            "--seeds",
            "0",
            "--no-oracle",
            "--exact-up-to",
            "0",
            "--json",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["positional_inputs"] == 27 and out["points"][0]["measure"] == "upper bound"


def test_the_mean_of_evaluators_is_their_mean_and_of_copies_the_evaluator_itself():
    from pvf.solvers.evaluators import ConstantEvaluator, MeanEvaluator

    reach = (np.ones((2, 3)), np.ones((2, 4)))
    v1, v2 = MeanEvaluator([ConstantEvaluator(1.0), ConstantEvaluator(-0.5), ConstantEvaluator(2.0)])(*reach)
    assert np.allclose(v1, 2.5 / 3) and np.allclose(v2, 2.5 / 3) and v1.shape == (2, 3) and v2.shape == (2, 4)
    loaded = load_game(GOOF5)
    evaluators = {
        "oracle": ORACLE,
        "mean": SweepEvaluator(
            lambda s: lambda trunk: MeanEvaluator([ExactEvaluator(trunk), ExactEvaluator(trunk)]), game_root=False
        ),
    }
    rows = run_particle_sweep(loaded, 2, 3, [4], [0], evaluators, iterations=20)
    by = {r.evaluator: r.exploitability for r in rows}
    assert by["mean"] == by["oracle"]


def test_draws_over_the_cap_are_named_before_any_solve_or_left_out():
    """A restricted game over --max-histories stops the sweep at once, naming its (K, seed), before anything is
    solved; with --skip-oversized those draws are left out and the others give the rows they give alone."""
    loaded = load_game(GOOF5)
    seeds = [3, 2, 1, 0]  # a draw within the cap comes first: a check made point by point would solve it
    sizes = {s: particle_trunk_setting(loaded, 2, 3, 4, s, SamplingConfig()).tree.num_histories for s in seeds}
    cap = sorted(sizes.values())[1]  # at least one draw over it, at least one within
    over = [s for s in seeds if sizes[s] > cap]
    within = [s for s in seeds if sizes[s] <= cap]
    assert over and within and seeds[0] in within

    calls = []
    never = SweepEvaluator(lambda setting: calls.append(setting) or ExactEvaluator, game_root=True)
    try:
        run_particle_sweep(loaded, 2, 3, [4], seeds, {"never": never}, iterations=5, max_histories=cap)
        raise AssertionError("no error")
    except PvfError as exc:
        assert f"K = 4, seed {over[0]}" in str(exc) and "--skip-oversized" in str(exc)
    assert calls == []  # named before any point was solved

    skipped = []
    rows = run_particle_sweep(
        loaded,
        2,
        3,
        [4],
        seeds,
        {"oracle": ORACLE},
        iterations=20,
        max_histories=cap,
        skip_oversized=True,
        skipped=skipped,
    )
    alone = run_particle_sweep(loaded, 2, 3, [4], within, {"oracle": ORACLE}, iterations=20)
    assert skipped == sorted((4, s) for s in over)
    assert [(r.evaluator, r.seed, r.exploitability) for r in rows] == [
        (r.evaluator, r.seed, r.exploitability) for r in alone
    ]
    assert {row["runs"] for row in summarize(rows)} == {len(within)}


def test_command_names_the_oversized_draw_in_one_line(tmp_path, capsys):
    out = tmp_path / "sweep"
    args = ["experiment", "particle-trunks", "--game", "goofspiel5", "--root-move", "2", "--depth", "3"]
    args += ["--draws", "4", "--seeds", "0,1", "--no-oracle", "--max-histories", "10", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "K = 4, seed 0" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()  # nothing half-written


def test_rollout_leaves_at_the_last_round_are_the_oracle(tmp_path, capsys):
    """`--rollouts` at leaves one card from the end: play is forced there (uniform or greedy), so every sampled
    rollout is the leaf history's exact value and the row equals the exact oracle's."""
    import json

    args = ["experiment", "particle-trunks", "--game", "goofspiel5", "--root-move", "3", "--depth", "4"]
    by = {}
    greedy = ["--rollouts", "--rollout-greed", "2"]
    for rollouts, out in ((["--rollouts"], "sampled"), (["--rollouts", "exact"], "exact"), (greedy, "greedy")):
        rc = main([*args, "--draws", "1,4", "--seeds", "0,1", *rollouts, "--json", "--out", str(tmp_path / out)])
        assert rc == 0
        points = json.loads(capsys.readouterr().out)["points"]
        by.update({(p["evaluator"], p["draws"]): p["exploitability_mean"] for p in points})
    assert {e for e, _ in by} == {"uniform", "oracle", "rollout", "rollout exact", "rollout greed 2"}
    for k in (1, 4):
        for row in ("rollout", "rollout exact", "rollout greed 2"):  # any policy is forced in the last round
            assert abs(by[(row, k)] - by[("oracle", k)]) < 1e-9
    assert max(by[("uniform", k)] for k in (1, 4)) > by[("oracle", 4)] + 0.01


def _summary_rows(names):
    """A summary table (`summarize`'s columns) with one row per evaluator and K = 1, 4."""
    return [
        {"evaluator": name, "draws": k, "exploitability_mean": 0.1 * (i + 1), "exploitability_std": 0.01}
        for i, name in enumerate(names)
        for k in (1, 4)
    ]


def test_the_figure_draws_single_nets_faint_and_a_long_legend_beside_the_axes():
    few = ["uniform", "network a.ckpt", "network b.ckpt", "mean of 2 networks"]
    many = few + [f"residual net, seed {s}" for s in range(LEGEND_INSIDE)]
    for names, outside in ((few, False), (many, True)):
        fig = sweep_figure(_summary_rows(names), "t")
        ax = fig.axes[0]
        renderer = FigureCanvasAgg(fig).get_renderer()
        legend, frame = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
        assert (legend.x0 >= frame.x1) == outside  # beside the axes exactly when it is long
        assert [t.get_text() for t in ax.get_legend().get_texts()] == names
        widths = {bars.get_label(): bars.lines[0].get_linewidth() for bars in ax.containers}
        assert widths["network a.ckpt"] < widths["mean of 2 networks"] == widths["uniform"]
