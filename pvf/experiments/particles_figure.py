"""Figure 4 beyond the public tree (`pvf reproduce particles`): particle data, a particle net, the sweep over K.

Games beyond the public tree's cap (`pvf.games.paper.PARTICLE_GAMES`:
goofspiel8, goofspiel13) get fig. 4 generalised instead (`reproduce_particle_fig4`):
  1. a particle dataset at the trunk's depth (K = 32 particles per sample,
     `particles` samples: default the game's, 4,000 for Goofspiel-8 and
     8,000 for Goofspiel-13), seed = the first seed;
  2. one particle network trained on it (`particle_steps`, default 4,000,
     the weights of the lowest validation loss kept), no trunk measured:
     one Lightning run (`train_value_function`), not an ensemble;
  3. the particle-trunk sweep (`pvf.experiments.particle_sweep`) over K
     (default 1, 4, 16, 64; Goofspiel-13 also 256) and the seeds (reference trunk ids),
     uniform against the oracle and the network: `fig4-<game>.csv`,
     `-runs.csv`, `.png`, and with `save_policy` `fig4-<game>-policy.json`.
"""

from __future__ import annotations

from typing import Any

from pvf.datasets.generate import generate
from pvf.datasets.spec import GenerationSpec, ParticleOptions
from pvf.experiments.particle_sweep import check_trunk, plot_particle_sweep, run_particle_sweep, write_policy_file
from pvf.experiments.particle_sweep import runs_table as particle_runs_table
from pvf.experiments.particle_sweep import summarize as particle_summary

# Short names used on the command line and in file names.
from pvf.experiments.reproduce import ReproduceConfig, training_options
from pvf.experiments.trunk_sweep import ORACLE, SweepEvaluator
from pvf.games.depths import positional_inputs
from pvf.games.features import build_feature_tables
from pvf.games.loading import load_game
from pvf.games.paper import ParticleGame
from pvf.results import write_csv
from pvf.trainers.training import train_value_function
from pvf.valuefn.network import load_value_function


def particle_dataset_spec(config: ReproduceConfig, game: ParticleGame) -> GenerationSpec:
    """Step 1's dataset (its own checks and the trunk's run here: call it before any work)."""
    check_trunk(load_game(game.game), game.root_move, game.depth)
    return GenerationSpec(
        game=game.game,
        depth=game.depth,
        num_trunks=config.particle_trunks or game.trunks,
        cfr_iterations=config.cfr_iterations,
        seed=config.seeds[0],
        particles=ParticleOptions(count=game.particles),
    )


def reproduce_particle_fig4(config: ReproduceConfig, game: ParticleGame) -> dict[str, Any]:
    """Fig. 4 generalised for a game beyond the public tree (module docstring); returns its summary."""
    seed = config.seeds[0]
    loaded = load_game(game.game)
    spec = particle_dataset_spec(config, game)
    data = (
        config.out
        / "data"
        / f"{game.name}-d{game.depth}-p{game.particles}-t{spec.num_trunks}-k{spec.cfr_iterations}-seed{seed}.h5"
    )
    data.parent.mkdir(parents=True, exist_ok=True)
    generate(spec, data, workers=config.workers, progress=config.progress)
    steps = config.particle_steps or game.max_steps
    checkpoint = config.out / "checkpoints" / f"{data.stem}-particle-steps{steps}-b{config.batch_size}.ckpt"
    history = checkpoint.with_suffix(".csv")
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    if not (checkpoint.exists() and history.exists()):
        options = training_options("particle", config.particle_model)
        run = train_value_function(
            data,
            "particle",
            checkpoint,
            seed,
            steps,
            None,
            config.iterations,
            config.batch_size,
            config.progress,
            config.accelerator,
            **options,
        )
        write_csv(run.history, history)
    network = load_value_function(checkpoint, game.game, game.depth)

    def factory(setting):
        features = build_feature_tables(setting.tree)
        return lambda trunk: network.evaluator(trunk, features)

    evaluators = {"oracle": ORACLE, "particle VF": SweepEvaluator(factory, game_root=True)}
    policies: list[dict] | None = [] if config.save_policy else None
    rows = run_particle_sweep(
        loaded,
        game.root_move,
        game.depth,
        config.draws or game.draws,
        config.seeds,
        evaluators,
        iterations=config.iterations,
        policies=policies,
    )
    table = particle_summary(rows)
    csv_path, png_path = config.out / f"fig4-{game.name}.csv", config.out / f"fig4-{game.name}.png"
    write_csv(table, csv_path)
    write_csv(particle_runs_table(rows), config.out / f"fig4-{game.name}-runs.csv")
    plot_particle_sweep(table, str(png_path), f"{game.name}: particle trunks, move {game.root_move} to {game.depth}")
    result = {
        "architecture": "particle",
        "csv": str(csv_path),
        "png": str(png_path),
        "data": str(data),
        "checkpoint": str(checkpoint),
        "positional_inputs": positional_inputs(game.game, game.depth),
        "points": table,
    }
    if policies is not None:
        result["policy"] = str(config.out / f"fig4-{game.name}-policy.json")
        write_policy_file(result["policy"], game.game, game.root_move, game.depth, "mix", policies)
    return result
