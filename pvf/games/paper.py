"""The paper's games and settings, in one place.

`ALIASES`: short names accepted wherever a game string is
(`pvf.games.loading.canonical_game_string`). `PAPER_GAMES`: per game of the
paper's experiments, its trunk depth in fig. 3 and its sparse setting in
fig. 4 (root move, trunk depth, and the sweep's last point: the K heaviest
histories). Depths are OpenSpiel move numbers (chance moves count).
"""

from __future__ import annotations

from dataclasses import dataclass

ALIASES = {
    "kuhn": "kuhn_poker",
    "leduc": "leduc_poker",
    "goofspiel4": "goofspiel(num_cards=4,imp_info=True,points_order=descending)",
    "goofspiel5": "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
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
        PaperGame("goofspiel5", ALIASES["goofspiel5"], fig3_depth=2, sparse_root_move=2, sparse_depth=3, sparse_min_histories=1),
    )
}


def paper_game(game: str) -> PaperGame | None:
    """The paper's settings for an OpenSpiel game string or alias; None for other games."""
    game = ALIASES.get(game, game)
    return next((g for g in PAPER_GAMES.values() if g.game == game), None)
