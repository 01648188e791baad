"""The sparse setting K particles give: a chance-node root over the PBS they induce, or over the particles.

Particles are distinct histories of one public state at move r, each with
its players' own reaches σ₁, σ₂ (`pvf.games.history_sampling`). Their
setting (`pvf.solvers.sparse_trunks.SparseSetting`) is the trunk from r to
a depth whose root is a chance node:
  - `roots="induced"` (the paper, sec. 5.1): over every history joining two
    particle infostates (`pvf.games.induced_pbs`), each weighing
    w(h) = π_c(h)·σ₁(s₁)·σ₂(s₂). That is the PBS a particle network is
    trained on (`pvf.datasets.particle_tasks`), and its leaf PBSs are again
    the PBSs their infostates induce.
  - `roots="drawn"`: over the particles alone, each weighing π_c·σ₁·σ₂.
The subgame below the roots is built to the end of the game (the
evaluation trunk measures exploitability there) by the game's particle
engine (`pvf.games.engine`). Used by the particle-trunk sweep
(`pvf.experiments.particle_sweep`) and the particle re-solving agent
(`pvf.agents.particle_agent`). `trunk_matters` says whether a history's
public state is one where the trunk's play changes anything (late in
win/lose Goofspiel most are decided under good play);
`play_until_trunk_matters` replays a strategy until it reaches one: the
sweep's roots and `--public-states undecided` data are drawn so.
"""

from __future__ import annotations

import numpy as np

from pvf.errors import PvfError
from pvf.games.engine import ParticleEngine, particle_engine
from pvf.games.history_sampling import MAX_PLAYS, Strategy
from pvf.games.induced_pbs import induced_roots
from pvf.games.loading import LoadedGame
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES
from pvf.solvers.sparse_trunks import SparseSetting, particle_setting, uniform_exploitability

ROOTS = ("induced", "drawn")


def trunk_matters(game: ParticleEngine, history: tuple[int, ...], root_move: int, depth: int) -> bool:
    """Whether the uniform trunk strategy is exploitable in the one-history game of `history` (at `root_move`,
    trunk to `depth`, solved to the end of the game): if not, every trunk strategy scores the same there."""
    alone, at = game.particle_tree([history])
    single = particle_setting(alone, at, np.ones(1), np.ones((1, 2)), root_move, depth)
    return uniform_exploitability(single).exploitability > 1e-12


def play_until_trunk_matters(
    game: ParticleEngine,
    strategy: Strategy,
    root_move: int,
    depth: int,
    rng: np.random.Generator,
    hint: str = "",
) -> tuple[int, ...]:
    """The first history `strategy` plays to `root_move` from `rng`'s stream (each play continuing it) for which
    `trunk_matters`; a PvfError ending in `hint` after `MAX_PLAYS` plays without one."""
    for _ in range(MAX_PLAYS):
        history = game.play_to_depth(strategy, root_move, rng)
        if trunk_matters(game, history, root_move, depth):
            return history
    raise PvfError(
        f"{MAX_PLAYS} plays to move {root_move} all reached public states where the trunk does not matter{hint}"
    )


def setting_from_particles(
    loaded: LoadedGame,
    particles: list[tuple[int, ...]],
    own: np.ndarray,
    root_move: int,
    depth: int,
    roots: str = "induced",
    engine: str = "auto",
    below_leaves: bool = True,
    max_histories: int = DEFAULT_MAX_HISTORIES,
) -> SparseSetting:
    """The chance-node root over the particles' induced PBS ("induced") or over the particles ("drawn").

    particles: k distinct histories at `root_move`; own: [k, 2] each player's own reach of each.
    below_leaves: the setting's tree holds the game below the trunk's leaves (its evaluation trunk's
        exploitability and the exact oracle need it); False: the tree stops at `depth`.
    max_histories: size cap of the setting's tree (PvfError beyond it).
    """
    if roots not in ROOTS:
        raise PvfError(f"roots must be one of {', '.join(ROOTS)}, got {roots!r}")
    game = particle_engine(loaded, engine)
    if roots == "induced":
        drawn, at = game.particle_tree(particles, depth_limit=depth)
        joined, own = induced_roots(game.induced_histories, drawn, at, own)
        particles = [tuple(int(a) for a in path) for path in joined]
    order = sorted(range(len(particles)), key=lambda k: particles[k])
    particles, own = [particles[k] for k in order], own[order]
    tree, histories = game.particle_tree(particles, None if below_leaves else depth, max_histories)
    weights = tree.chance_reach[histories] * own[:, 0] * own[:, 1]
    return particle_setting(tree, histories, weights, own, root_move, depth)
