"""The paper's games and settings, in one place.

`ALIASES`: short names accepted wherever a game string is
(`pvf.games.loading.canonical_game_string`). `PAPER_GAMES`: per game of the
paper's experiments, its trunk depth in fig. 3 and its sparse setting in
fig. 4 (root move, trunk depth, and the sweep's last point: the K heaviest
histories). Depths are OpenSpiel move numbers (chance moves count).
`PARTICLE_GAMES`: games beyond the public tree's cap, whose fig. 4 is the
particle-trunk sweep (`pvf.experiments.particle_sweep`) with small defaults.
Network sizes are not here: they are model configs
(`configs/model/<name>.yaml`, read by `pvf.trainers.configs`).
"""

from __future__ import annotations

from dataclasses import dataclass

ALIASES = {
    "kuhn": "kuhn_poker",
    "leduc": "leduc_poker",
    "goofspiel4": "goofspiel(num_cards=4,imp_info=True,points_order=descending)",
    "goofspiel5": "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
    # goofspiel6 ... goofspiel13 (13: the standard game) follow the same convention.
    **{f"goofspiel{n}": f"goofspiel(num_cards={n},imp_info=True,points_order=descending)" for n in range(6, 14)},
}


@dataclass(frozen=True)
class PaperGame:
    """A game of the paper's experiments.

    name: the short name used on the command line and in file names.
    game: its OpenSpiel game string.
    fig3_depth: trunk depth of fig. 3 (Leduc: 7, after the deals and one round; Goofspiel-5: 2).
    sparse_root_move, sparse_depth: fig. 4's root histories and trunk depth.
    sparse_min_histories: the histories kept at fig. 4's last point.
    """

    name: str
    game: str
    fig3_depth: int
    sparse_root_move: int
    sparse_depth: int
    sparse_min_histories: int


PAPER_GAMES = {
    g.name: g
    for g in (
        PaperGame("leduc", ALIASES["leduc"], fig3_depth=7, sparse_root_move=5, sparse_depth=7, sparse_min_histories=2),
        PaperGame(
            "goofspiel5",
            ALIASES["goofspiel5"],
            fig3_depth=2,
            sparse_root_move=2,
            sparse_depth=3,
            sparse_min_histories=1,
        ),
    )
}


@dataclass(frozen=True)
class ParticleGame:
    """Fig. 4 generalised for a game the public tree cannot hold (`pvf reproduce particles --games goofspiel13`).

    root_move, depth: the particle trunk (the network is trained on particle data at `depth`).
    particles: K histories per dataset sample. trunks, max_steps: the default
        dataset size and training length (tens of minutes on one core).
    draws: the sweep's K (particle draws at the root public state; the induced
        root grows like K²: the exact LP fits up to K = 16 in Goofspiel-8 and 64
        in Goofspiel-13, beyond which rows are certified upper bounds; the particle
        tree's cap ends Goofspiel-8 at K = 64).
    The network's sizes are a model config: `configs/model/particle-fixed-width.yaml` by default.
    """

    name: str
    game: str
    root_move: int
    depth: int
    particles: int = 32
    trunks: int = 4000
    max_steps: int = 4000
    draws: tuple[int, ...] = (1, 4, 16, 64)


PARTICLE_GAMES = {
    g.name: g
    for g in (
        ParticleGame("goofspiel8", ALIASES["goofspiel8"], root_move=4, depth=5),
        ParticleGame(
            "goofspiel13", ALIASES["goofspiel13"], root_move=9, depth=10, trunks=8000, draws=(1, 4, 16, 64, 256)
        ),
    )
}


def paper_game(game: str) -> PaperGame | None:
    """The paper's settings for an OpenSpiel game string or alias; None for other games."""
    game = ALIASES.get(game, game)
    return next((g for g in PAPER_GAMES.values() if g.game == game), None)
