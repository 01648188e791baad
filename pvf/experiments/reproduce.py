"""`pvf reproduce`'s shared part: its options (`ReproduceConfig`), its datasets and the training of its networks.

Each figure is its own module on top of this one: `pvf.experiments.fig3`,
`pvf.experiments.fig4` and, beyond the public tree, `pvf.experiments.particles_figure`.
Every network is built from the configs `pvf train` composes
(`pvf.trainers.configs`): an architecture's sizes from
`configs/model/<architecture>.yaml` (the particle games' from
`particle_model`, default `configs/model/particle-fixed-width.yaml`), Adam's
learning rate, the validation share and the defaults of steps and batch
size from `configs/train.yaml`; each seed's dataset is split by that seed.
The target and the schedule default to the paper's (average, constant):
fig. 3 and 4 are the paper's figures, while `pvf train` and `pvf generate`
default to the recipe's (`pvf.experiments.quality`).
File names carry the parameters that make them (trunks, CFR+ iterations,
seed, steps), so a rerun with the same options reuses finished work (the
configs' contents are not in the names: after editing one, use a new `out`).
By default the seeds of one network are trained together as an ensemble
(`pvf.trainers.ensemble_training`: one batched step for all seeds, their
trunk exploitabilities in one batched solve, the training state saved so
that a killed rerun continues); `separate_runs` trains one Lightning run
per seed instead. Either way the runs are independent once the datasets
exist: with `jobs` > 1 they (ensembles: one per network) run in that many
spawned processes (`pvf.trainers.processes`: the parent's torch thread
count; stopped with the parent, by Ctrl-C, SIGTERM or SIGKILL), and the
results are collected in the same order as sequentially. On a CPU each
ensemble is then split into up to `jobs` parts of consecutive seeds
(`split_ensembles`), so that a single network's seeds (fig. 4) use every core
and networks of unequal cost (fig. 3) finish together; a part trains its
members as the whole would (members are independent; only batched
products may round differently). A saved state is resumed in the parts
it was saved in, whatever `jobs` is.
"""

from __future__ import annotations

import contextlib
import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from pvf.datasets.backends import check_backend
from pvf.datasets.generate import generate
from pvf.datasets.sampling import SamplingConfig
from pvf.datasets.spec import GenerationSpec
from pvf.errors import PvfError
from pvf.experiments.figures import PROTOCOLS
from pvf.experiments.sparse_sweep import (
    DEFAULT_FRACTIONS,
)
from pvf.games.paper import PAPER_GAMES, PARTICLE_GAMES
from pvf.games.public_tree import PublicTree, build_public_tree
from pvf.outputs import output_lock
from pvf.results import write_csv
from pvf.solvers.guarded_values import RESPONSE_TARGETS
from pvf.trainers.configs import model_config, training_defaults
from pvf.trainers.data import validation_trunk_count
from pvf.trainers.ensemble_training import train_ensemble
from pvf.trainers.member_groups import group_bounds
from pvf.trainers.processes import run_in_processes
from pvf.trainers.training import TrainingRun, train_value_function

# Short names used on the command line and in file names.
GAMES = {name: g.game for name, g in PAPER_GAMES.items()} | {name: g.game for name, g in PARTICLE_GAMES.items()}


@dataclass(frozen=True)
class ReproduceConfig:
    """Options of a reproduction run (paper scale by default).

    out: directory for the figures, and for data/ and checkpoints/ unless `store` is given.
    store: directory for data/ and checkpoints/ (None: `out`); runs that share one reuse each other's
        files (`pvf.experiments.quality_ablation`'s rows).
    games: short names from GAMES.
    architectures: registry names; None = the paper's (fig. 3: positional and
        particle; fig. 4: particle).
    seeds: the seeds s (each: its own dataset, training run and tie-breaking).
    trunks, cfr_iterations: dataset size and target iterations (paper: 1,000 and 100).
    solver: the targets' solver, "cfr+" or "mmd" (its last iterate; "-mmd" in data file names).
    target: what is trained on: "average", "current" (CFR+'s last iterate,
        stored in every file), "best_response" (best responses, guarded
        where a belief is zero, `pvf.solvers.guarded_values`; its own data
        files, "-best_response" in their names) or another best-response
        kind ("grouped", "local": data files "-<target>"); "-<target>" in checkpoint names but
        for "average"; default the paper's, "average".
    max_steps, eval_every, batch_size: training (authors: 2,048 loops × 64 batches, batch 64;
        max_steps and batch_size default to configs/train.yaml's).
    iterations: CFR+ iterations in every trunk (paper: 100).
    workers: dataset-generation processes.
    jobs: training runs at once (processes; 1 = in this process).
    accelerator: Lightning accelerator for training ("cpu", "gpu", "auto").
    lr_schedule: "constant" (the authors') or "cosine" (annealed to 0; in file names); default the paper's, "constant".
    separate_runs: one Lightning run per seed instead of one ensemble per network.
    cuda_graph: on a GPU, each ensemble step is one replayed CUDA graph (`pvf.trainers.graph_step`).
    group_size: members of an ensemble trained together (`pvf.trainers.member_groups`; None: by
        the members' size, all on a GPU).
    fractions, equilibrium_iterations: the sparse sweep.
    particle_trunks, particle_steps, draws: particle games' dataset size,
        training steps and sweep K; None = the game's defaults (PARTICLE_GAMES).
    save_policy: particle games also write fig4-<game>-policy.json.
    particle_model: the model config (configs/model/<name>.yaml) of the particle games' network;
        the paper's sizes (app. F) are "particle".
    select: the checkpoint a run stands for: "last" (the paper's) or "val_loss" (the weights at the lowest
        validation loss, validated at every measurement, kept as "-chosen" checkpoints; ensembles only).
    p_solve: the data's `SamplingConfig.p_solve` (trunks moved towards a trunk solve's leaf queries;
        "-solve<p>" in data file names where it is not 0).
    """

    out: Path
    games: tuple[str, ...] = ("leduc", "goofspiel5")
    architectures: tuple[str, ...] | None = None
    seeds: tuple[int, ...] = tuple(range(10))
    trunks: int = 1000
    cfr_iterations: int = 100
    solver: str = "cfr+"
    target: str = PROTOCOLS["paper"].target
    max_steps: int = field(default_factory=lambda: training_defaults().max_steps)
    eval_every: int = 64
    batch_size: int = field(default_factory=lambda: training_defaults().batch_size)
    iterations: int = 100
    workers: int = 1
    jobs: int = 1
    accelerator: str = "cpu"
    lr_schedule: str = PROTOCOLS["paper"].lr_schedule
    separate_runs: bool = False
    cuda_graph: bool = True
    group_size: int | None = None
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    equilibrium_iterations: int = 1000
    progress: bool = False
    particle_trunks: int | None = None
    particle_steps: int | None = None
    draws: tuple[int, ...] | None = None
    save_policy: bool = False
    particle_model: str = "particle-fixed-width"
    select: str = "last"
    store: Path | None = None
    p_solve: float = 0.0

    @property
    def store_dir(self) -> Path:
        """Where data/ and checkpoints/ live."""
        return self.out if self.store is None else self.store


def training_options(architecture: str, model: str | None = None) -> dict[str, Any]:
    """The trainers' options from the configs: `configs/model/<model>.yaml`'s architecture arguments
    (model None: the one named `architecture`), Adam's lr and the validation share of `configs/train.yaml`."""
    network = model_config(model or architecture)
    if network.architecture != architecture:
        raise PvfError(f"configs/model/{network.name}.yaml builds a {network.architecture} network, not {architecture}")
    defaults = training_defaults()
    return {**network.arguments, "lr": defaults.lr, "val_fraction": defaults.val_fraction}


def check_datasets(
    config: ReproduceConfig, depths: dict[str, int], trees: dict[str, PublicTree] | None = None
) -> dict[str, PublicTree]:
    """PvfError, before any data is made, for datasets that cannot be made or cannot fill a batch.

    depths: game -> the move its data is at. Each trunk strategy gives one PBS per public state at
    that move; `validation_trunk_count` of them are held out for validation, as training splits them.
    trees: the games' public trees where already built.
    Returns the games' public trees (built for the check; the figure reuses them).
    """
    check_backend(config.workers, "local")
    val_fraction = training_defaults().val_fraction
    held_out = validation_trunk_count(config.trunks, val_fraction)
    if held_out >= config.trunks:
        raise PvfError(
            f"--trunks {config.trunks} leaves no trunk strategy to train on once {held_out} are held out "
            f"for validation ({val_fraction:g} of them); use more --trunks"
        )
    trees = dict(trees or {})
    for game, depth in depths.items():
        dataset_spec(config, game, depth, min(config.seeds))  # its own checks (sizes an HDF5 file can hold, ...)
        if game not in trees:
            trees[game] = build_public_tree(GAMES[game])
        rows = (config.trunks - held_out) * len(trees[game].public_states_at_depth(depth))
        if config.batch_size > rows and not config.separate_runs:  # an ensemble member takes whole batches
            raise PvfError(
                f"batch size {config.batch_size} does not fit a member's {rows} training samples of {game} "
                f"({config.trunks - held_out} trunks); use a batch size from 1 to {rows}, or more --trunks"
            )
    return trees


def dataset_spec(config: ReproduceConfig, game: str, depth: int, seed: int) -> GenerationSpec:
    """The spec of (game, depth, seed)'s PBS file."""
    return GenerationSpec(
        game=GAMES[game],
        depth=depth,
        num_trunks=config.trunks,
        cfr_iterations=config.cfr_iterations,
        seed=seed,
        solver=config.solver,
        target=_data_target(config),
        sampling=SamplingConfig(p_solve=config.p_solve),
    )


def _data_target(config: ReproduceConfig) -> str:
    """The file's target column: best responses when trained on, else the average (the last iterate is always in)."""
    return config.target if config.target in RESPONSE_TARGETS else "average"


def ensure_dataset(config: ReproduceConfig, game: str, depth: int, seed: int) -> Path:
    """The PBS file of (game, depth, seed), generated unless already complete."""
    variant = "" if config.solver == "cfr+" else f"-{config.solver}"
    if _data_target(config) != "average":
        variant += f"-{_data_target(config)}"
    if config.p_solve:
        variant += f"-solve{config.p_solve:g}"
    path = (
        config.store_dir / "data" / f"{game}-d{depth}-t{config.trunks}-k{config.cfr_iterations}{variant}-seed{seed}.h5"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    spec = dataset_spec(config, game, depth, seed)
    generate(spec, path, workers=config.workers, progress=config.progress)
    return path


def _checkpoint(config: ReproduceConfig, data: Path, arch: str, seed: int, suffix: str = "") -> Path:
    """Where the run of `arch` on `data` with `seed` and the config's training options keeps its checkpoint.

    A per-seed file names its seed ("...-seed3.h5"); members trained on one shared file get "-train<seed>".
    """
    stem = f"{data.stem}-{arch}-steps{config.max_steps}-b{config.batch_size}"
    if config.target != "average":
        stem += f"-{config.target}"
    if config.lr_schedule != "constant":
        stem += f"-{config.lr_schedule}"
    if not data.stem.endswith(f"-seed{seed}"):
        stem += f"-train{seed}"
    checkpoint = config.store_dir / "checkpoints" / f"{stem}{suffix}.ckpt"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    return checkpoint


def chosen_checkpoint(checkpoint: Path) -> Path:
    """Where `select="val_loss"` keeps the weights of `checkpoint`'s run at its lowest validation loss."""
    return checkpoint.with_name(f"{checkpoint.stem}-chosen.ckpt")


def _measured_every(history: list[dict[str, Any]], eval_every: int, max_steps: int, validated: bool = False) -> bool:
    """Whether a finished run's history has a trunk measurement at every multiple of `eval_every` up to `max_steps`
    (and, if `validated`, a validation loss there too).

    A finished network is reused only then: a run measured every 1,024 steps cannot stand in for one asked
    every 64 (it is retrained; training does not depend on the interval, so the network is the same).
    """
    measured = {
        int(row["step"])
        for row in history
        if row.get("trunk_exploitability") not in (None, "")
        and (not validated or math.isfinite(float(row.get("val_loss", math.nan))))
    }
    return set(range(eval_every, max_steps + 1, eval_every)) <= measured


def _trained(config: ReproduceConfig, data: Path, arch: str, seed: int, eval_every: int) -> TrainingRun:
    """Train `arch` on `data`, or reuse the checkpoint and history of an identical finished run."""
    checkpoint = _checkpoint(config, data, arch, seed)
    history_path = checkpoint.with_suffix(".csv")
    with output_lock(checkpoint):  # a concurrent `pvf reproduce` on the same --out is refused, not run twice
        if checkpoint.exists() and history_path.exists():
            history = _read_history(history_path)
            if _measured_every(history, eval_every, config.max_steps):
                return TrainingRun(str(checkpoint), history)
        run = train_value_function(
            data,
            arch,
            checkpoint,
            seed,
            config.max_steps,
            eval_every,
            config.iterations,
            config.batch_size,
            config.progress,
            config.accelerator,
            lr_schedule=config.lr_schedule,
            target=config.target,
            **training_options(arch),
        )
        write_csv(run.history, history_path)
        return run


def _trained_ensemble(
    config: ReproduceConfig, runs: list[tuple[Path, str, int, int]], position: int = 0
) -> list[TrainingRun]:
    """The (data, architecture, seed, eval_every) runs of one network as one ensemble (members: "-ens" files).

    Finished members (of this or another ensemble: a 10-seed run after a 5-seed one in the same store) are
    reused and the others train as one ensemble, resuming from its saved state; where a saved state of the
    whole group exists, every member trains from it.
    position: the line of its progress bar (ensembles trained at once each get one).
    """
    arch = runs[0][1]
    with contextlib.ExitStack() as locks:
        for data, _, seed, _ in runs:  # one writer per member, whatever ensemble another process put it in
            locks.enter_context(output_lock(_checkpoint(config, data, arch, seed, "-ens")))
        finished = {} if ensemble_state_path(config, runs).exists() else _finished_members(config, runs)
        todo = [run for i, run in enumerate(runs) if i not in finished]
        trained = iter(_train_members(config, todo, position) if todo else ())
        return [finished[i] if i in finished else next(trained) for i in range(len(runs))]


def _finished_members(config: ReproduceConfig, runs: list[tuple[Path, str, int, int]]) -> dict[int, TrainingRun]:
    """The runs (by index) whose member files are complete and measured at every `eval_every` step."""
    validated = config.select == "val_loss"
    finished = {}
    for i, (data, arch, seed, eval_every) in enumerate(runs):
        checkpoint = _checkpoint(config, data, arch, seed, "-ens")
        kept = [checkpoint, checkpoint.with_suffix(".csv")] + ([chosen_checkpoint(checkpoint)] if validated else [])
        if all(path.exists() for path in kept):
            run = TrainingRun(str(checkpoint), _read_history(checkpoint.with_suffix(".csv")))
            if _measured_every(run.history, eval_every, config.max_steps, validated):
                finished[i] = run
    return finished


def _train_members(config: ReproduceConfig, runs: list[tuple[Path, str, int, int]], position: int) -> list[TrainingRun]:
    """The runs of one network trained as one ensemble (their locks held by the caller), resuming its saved state."""
    data, arch, eval_every = [r[0] for r in runs], runs[0][1], runs[0][3]
    seeds = [r[2] for r in runs]
    checkpoints = [_checkpoint(config, d, arch, seed, "-ens") for d, seed in zip(data, seeds)]
    histories = [c.with_suffix(".csv") for c in checkpoints]
    chosen = [chosen_checkpoint(c) for c in checkpoints] if config.select == "val_loss" else None
    state = ensemble_state_path(config, runs)
    trained = train_ensemble(
        data,
        arch,
        checkpoints,
        seeds,
        config.max_steps,
        eval_every,
        config.iterations,
        config.batch_size,
        _device(config),
        state,
        target=config.target,
        cuda_graph=None if config.cuda_graph else False,
        group_size=config.group_size,
        progress=config.progress,
        position=position,
        lr_schedule=config.lr_schedule,
        chosen=chosen,
        **training_options(arch),
    )
    for run, history in zip(trained, histories):
        write_csv(run.history, history)
    state.unlink(missing_ok=True)
    return trained


def _device(config: ReproduceConfig) -> str:
    """Where ensembles train: "cuda" for accelerator gpu (or auto with a GPU), else "cpu"."""
    return (
        "cuda" if config.accelerator == "gpu" or (config.accelerator == "auto" and torch.cuda.is_available()) else "cpu"
    )


def ensemble_state_path(config: ReproduceConfig, runs: Sequence[tuple[Path, str, int, int]]) -> Path:
    """The saved training state of the ensemble of `runs` (its seeds and measurement interval in the name)."""
    data, arch, seed, every = runs[0]
    first = _checkpoint(config, data, arch, seed, "-ens")
    seeds = "-".join(str(r[2]) for r in runs)
    if data.stem.endswith(f"-seed{seed}"):  # per-seed files
        stem = first.stem.replace(f"seed{seed}", f"seeds{seeds}")
    else:  # one shared file
        head, _, tail = first.stem.rpartition(f"-train{seed}")
        stem = f"{head}-train{seeds}{tail}"
    validated = "-v" if config.select == "val_loss" else ""
    return first.with_name(f"{stem}-e{every}{validated}.state.pt")


def split_ensembles(config: ReproduceConfig, runs: list[tuple[Path, str, int, int]]) -> list[list[int]]:
    """Indices of `runs` trained together: per (architecture, eval_every) its seeds, in parts (module docstring).

    Saved states (of any consecutive seeds) fix the parts they cover, the widest first; the other
    members are split into up to `config.jobs` parts on a CPU (on a GPU one ensemble fills it).
    """
    by_network: dict[tuple[str, int], list[int]] = {}
    for i, run in enumerate(runs):
        by_network.setdefault((run[1], run[3]), []).append(i)
    parts = []
    for members in by_network.values():
        n = len(members)
        saved = sorted(
            (
                (a, b)
                for a in range(n)
                for b in range(a + 1, n + 1)
                if ensemble_state_path(config, [runs[i] for i in members[a:b]]).exists()
            ),
            key=lambda r: (r[0], -r[1]),
        )
        bounds, start = [], 0
        for a, b in saved + [(n, n)]:
            if a < start:
                continue
            if a > start:  # members between saved parts: split as if fresh
                k = min(config.jobs, a - start) if _device(config) == "cpu" else 1
                bounds += [(start + x, start + y) for x, y in group_bounds(a - start, math.ceil((a - start) / k))]
            if b > a:
                bounds.append((a, b))
            start = b
        parts += [members[a:b] for a, b in bounds]
    return parts


def train_all(config: ReproduceConfig, runs: list[tuple[Path, str, int, int]]) -> list[TrainingRun]:
    """`_trained` for each (data, architecture, seed, eval_every), `config.jobs` at a time, in order.

    Unless `config.separate_runs`, runs of one (architecture, eval_every) are one ensemble (on a CPU
    with jobs > 1, in parts: `split_ensembles`).
    """
    if not config.separate_runs:
        groups = split_ensembles(config, runs)
        members = [[runs[i] for i in group] for group in groups]
        if config.jobs == 1 or len(members) == 1:
            results = [_trained_ensemble(config, m) for m in members]
        else:  # bar lines: parts run about `jobs` at a time, in order
            calls = [(config, m, i % config.jobs) for i, m in enumerate(members)]
            results = run_in_processes(_trained_ensemble, calls, config.jobs)
        out: dict[int, TrainingRun] = {}
        for group, trained in zip(groups, results):
            out.update(zip(group, trained))
        return [out[i] for i in range(len(runs))]
    if config.jobs == 1 or len(runs) <= 1:
        return [_trained(config, *run) for run in runs]
    quiet = replace(config, progress=False)  # one bar for all runs instead of interleaved ones
    # The slower set networks first, so that no process is left with a long run at the end.
    order = sorted(range(len(runs)), key=lambda i: runs[i][1] == "positional")
    trained = run_in_processes(
        _trained, [(quiet, *runs[i]) for i in order], config.jobs, "training runs" if config.progress else None
    )
    by_run = dict(zip(order, trained))
    return [by_run[i] for i in range(len(runs))]


def _read_history(path: Path) -> list[dict[str, Any]]:
    with open(path, newline="") as f:
        return [
            {k: (int(v) if k in ("step", "epoch") else float(v)) for k, v in row.items()} for row in csv.DictReader(f)
        ]
