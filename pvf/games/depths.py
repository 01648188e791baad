"""Sizes of a game at each depth (move number): what `pvf describe` prints.

For each move number d with a non-terminal public state (the candidates for
`pvf generate --depth d`), from the public tree:
  1. the public states a dataset would sample (`public_states_at_depth`),
     i.e. the PBSs per trunk strategy;
  2. per player, the augmented infostates of those public states, in total
     and at most per public state (the slots a network input needs);
  3. the non-terminal histories in those public states;
  4. whether any player acts before d. If none does, every trunk strategy
     gives the same beliefs, so all samples of a public state are one PBS
     repeated (Kuhn at move 2: one public state, 50 trunks, 50 copies).
Beyond the public tree, `positional_inputs` bounds the infostates of
imperfect-information Goofspiel's largest public state at a move by the
paper's formula (app. A, lemma 2): what a positional network would need.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from pvf.games.loading import LoadedGame
from pvf.games.public_tree import TERMINAL, PublicTree
from pvf.games.walk import child, root_node


@dataclass(frozen=True)
class DepthSizes:
    """The sizes of one move number d of a game.

    depth: d. public_states: non-terminal public states at d (samples per trunk).
    infostates: per player, augmented infostates in those public states.
    max_infostates: per player, the most in one public state.
    histories: non-terminal histories in those public states.
    decisions_before: whether a player acts at a history of a smaller move number.
    """

    depth: int
    public_states: int
    infostates: tuple[int, int]
    max_infostates: tuple[int, int]
    histories: int
    decisions_before: bool

    def warning(self) -> str | None:
        """A one-line warning if every sample at this depth is a copy of a few PBSs, else None."""
        if self.decisions_before:
            return None
        return _same_beliefs(
            self.depth, f"a dataset holds only {self.public_states} distinct PBS(s), repeated once per trunk"
        )

    def as_dict(self) -> dict:
        return {**asdict(self), "infostates": list(self.infostates), "max_infostates": list(self.max_infostates)}


def same_beliefs_warning(loaded: LoadedGame, depth: int) -> str | None:
    """`DepthSizes.warning`'s condition for move `depth`, found without the public tree: the histories of smaller
    move numbers are walked (depth first) until a player acts at one (usually within a few histories)."""
    frontier = [root_node(loaded)]
    while frontier:
        node = frontier.pop()
        state = node.state
        if node.original.move_number() >= depth or state.is_terminal():
            continue
        if state.current_player() in (0, 1):
            return None
        frontier.extend(child(node, a, loaded.simultaneous) for a, _ in state.chance_outcomes())
    return (
        _same_beliefs(depth, "each trunk's samples are the same PBSs")
        + f" (pvf describe {loaded.game_string} lists them)"
    )


def _same_beliefs(depth: int, consequence: str) -> str:
    """The warning for a move before which no player acts, with what it means for the data."""
    return (
        f"move {depth}: no player acts before it, so every trunk strategy gives the same beliefs and {consequence}; "
        "choose a later move"
    )


def depth_sizes(tree: PublicTree) -> list[DepthSizes]:
    """DepthSizes of every move number ≥ 1 that has a non-terminal public state, in order."""
    acts = (tree.player == 0) | (tree.player == 1)
    first_decision = int(tree.depth[acts].min()) if acts.any() else np.iinfo(np.int64).max
    non_terminal = tree.player != TERMINAL
    histories_per_ps = np.bincount(tree.public_state[non_terminal], minlength=tree.num_public_states)
    out = []
    for d in range(1, int(tree.depth.max()) + 1):
        ps = tree.public_states_at_depth(d)
        if len(ps) == 0:
            continue
        counts = [np.array([len(tree.public_state_infostates[n][p]) for p in ps]) for n in (0, 1)]
        out.append(
            DepthSizes(
                depth=d,
                public_states=len(ps),
                infostates=(int(counts[0].sum()), int(counts[1].sum())),
                max_infostates=(int(counts[0].max()), int(counts[1].max())),
                histories=int(histories_per_ps[ps].sum()),
                decisions_before=first_decision < d,
            )
        )
    return out


def positional_inputs(game: str, depth: int) -> int:
    """A lower bound on the infostates of the largest public state at move `depth` (0 if unknown).

    Imperfect-information Goofspiel with N cards: 2·√X(k), X(k) = N!(N−1)!/((N−k)!(N−1−k)!·2^k)
    (the paper, app. A, lemma 2). A positional value function needs an input and an output per infostate.
    """
    if not game.startswith("goofspiel(") or "imp_info=True" not in game:
        return 0
    try:
        n = int(game.split("num_cards=", 1)[1].split(",", 1)[0].split(")", 1)[0])
    except (IndexError, ValueError):
        return 0
    k = depth
    if k >= n:
        return 0
    x = math.factorial(n) * math.factorial(n - 1) / (math.factorial(n - k) * math.factorial(n - 1 - k) * 2**k)
    return int(math.ceil(2 * math.sqrt(x)))
