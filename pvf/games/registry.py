"""The games by short name, with what each one's name is for (`pvf.games.paper`'s tables in one view).

`GAMES` maps every short name of `ALIASES` to a `RegisteredGame`: its
OpenSpiel game string, a one-line help, and the paper's settings where it
has them (`PaperGame`: fig. 3 and fig. 4 on the public tree;
`ParticleGame`: fig. 4 beyond it). The `pvf` commands derive `--games`'
choices and help from it (`reproducible`), so a game is added in
`pvf.games.paper` alone: one `ALIASES` line for a short name, one
`PaperGame` or `ParticleGame` for an experiment. `GAMES` reads those
tables at each look-up, so it always shows them as they are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pvf.games.paper import ALIASES, PAPER_GAMES, PARTICLE_GAMES, PaperGame, ParticleGame


@dataclass(frozen=True)
class RegisteredGame:
    """A short name's game: `game` (OpenSpiel string), `paper` (fig. 3 and 4), `particle` (fig. 4 beyond the tree)."""

    name: str
    game: str
    paper: PaperGame | None = None
    particle: ParticleGame | None = None

    @property
    def help(self) -> str:
        """One line: the experiments the name takes part in, else its game string."""
        if self.paper is not None:
            return (
                f"fig. 3 trunk to move {self.paper.fig3_depth}, fig. 4 roots at move "
                f"{self.paper.sparse_root_move} and trunk to move {self.paper.sparse_depth}"
            )
        if self.particle is not None:
            return f"particle trunks: roots at move {self.particle.root_move}, trunk to move {self.particle.depth}"
        return self.game


class GameTable(Mapping[str, RegisteredGame]):
    """Every short name, in `ALIASES`' order, with its settings (a read-only view of `pvf.games.paper`)."""

    def __getitem__(self, name: str) -> RegisteredGame:
        return RegisteredGame(name, ALIASES[name], PAPER_GAMES.get(name), PARTICLE_GAMES.get(name))

    def __iter__(self) -> Iterator[str]:
        return iter(ALIASES)

    def __len__(self) -> int:
        return len(ALIASES)


GAMES = GameTable()


def reproducible(kind: str) -> dict[str, RegisteredGame]:
    """The games `pvf reproduce` runs: kind "paper" (fig. 3 and fig. 4) or "particle" (`pvf reproduce particles`)."""
    return {name: g for name, g in GAMES.items() if getattr(g, kind) is not None}


def games_help(kind: str) -> str:
    """`name (help), ...` for the games of `reproducible(kind)`: the body of a `--games` help."""
    return ", ".join(f"{name} ({g.help})" for name, g in reproducible(kind).items())
