"""A two-player common-payoff game as one team's tree, in flat arrays, under three information maps.

pvf's other game modules build *public trees* of two-player zero-sum games
(`pvf.games.public_tree`): public states, per-player infostates, ranges. A
common-payoff team game (Trade Comm, Tiny Bridge, Cooperative Matching
Pennies) fits none of that: both players maximise the same payoff, so the
pair is one player, and what that team player may condition a decision on
is the question progressive hiding asks (Heymann & Lanctot, AAMAS 2025,
docs/results/progressive-hiding.md). This module is therefore separate,
small and used only by `pvf.solvers.progressive_hiding`.

Building a `TeamTree`:
  1. The OpenSpiel game is walked once, breadth-first (every node after its
     parent); chance nodes keep their outcome probabilities, terminal nodes
     player 0's return (both players' returns are checked equal).
  2. At every decision node the information map ("key") of each map in
     `MAPS` is read (the paper's section 6.1):
       - "original": (player, OpenSpiel's information-state string): the
         real information structure X, what a policy must be a function of;
       - "cheated": the original key and every chance outcome so far: private
         information revealed, the partner's hidden moves still hidden (the
         team need not have perfect recall);
       - "recall": (player, the whole history): everything revealed and
         remembered, so the team has perfect recall (in Trade Comm this is
         the paper's X^PR).
     Each map's keys are numbered in order of appearance (`keys[m] [D]`).
  3. Children are stored padded (`children [N, C]`, -1 past the legal
     actions) with the probability of the edge into each child where chance
     picks it (`chance_prob [N]`, 1 elsewhere); legal actions are numbered
     locally 0..A-1 in OpenSpiel's order, the same in every history of an
     original infostate.

Cooperative Matching Pennies (the paper's fig. 2) is not among OpenSpiel's
games; `COOPERATIVE_MATCHING_PENNIES` is it as an EFG text loaded with
`pyspiel.load_efg_game`. So is Trade Comm with m messages and n items, the
paper's (m, n) (its fig. 1 right is (3, 2)): OpenSpiel's
`trade_comm(num_items=n)` offers as many utterances as items, so
`trade_comm_efg(m, n)` writes the game out as OpenSpiel plays it, one chance
node dealing both items (outcome s1 n + s2, probability 1/n^2), then the two
messages (m1, m2), then the two trade requests (give, receive) numbered
give n + receive, paying 1 when player 0 asks (s1, s2) and player 1 (s2, s1).
Its EFG information sets are the paper's section 6.1 X: s1; (s2, m1);
(s1, m1, m2); (s2, m1, m2). The name "trade_comm_mn(messages=m,items=n)"
loads it; for m = n it is OpenSpiel's tree, node for node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyspiel

from pvf.errors import PvfError

MAPS = ("original", "cheated", "recall")

# Nature draws SAME or DIFFERENT (1/2 each); Alice sees it and plays H or T; Bob sees only Alice's coin
# and plays H, T or Pass. A guess pays 1 if right (SAME: Bob matches Alice's coin; DIFFERENT: he does not),
# 0 if wrong; Pass pays 0.75 whatever happened: better than any guess while Alice's coin says nothing.
PASS_PAYOFF = 0.75


def _cmp_efg() -> str:
    lines = ['EFG 2 R "Cooperative Matching Pennies" { "Alice" "Bob" }', 'c "" 1 "" { "SAME" 0.5 "DIFFERENT" 0.5 } 0']
    outcome = 1
    for state, same in ((1, True), (2, False)):
        lines.append(f'p "" 1 {state} "" {{ "H" "T" }} 0')
        for bob_infoset, alice in ((1, "H"), (2, "T")):
            lines.append(f'p "" 2 {bob_infoset} "" {{ "H" "T" "P" }} 0')
            for bob in ("H", "T"):
                right = (bob == alice) == same
                lines.append(f't "" {outcome} "" {{ {float(right)}, {float(right)} }}')
                outcome += 1
            lines.append(f't "" {outcome} "" {{ {PASS_PAYOFF}, {PASS_PAYOFF} }}')
            outcome += 1
    return "\n".join(lines) + "\n"


COOPERATIVE_MATCHING_PENNIES = _cmp_efg()
TRADE_COMM_MN = re.compile(r"trade_comm_mn\(messages=(\d+),items=(\d+)\)")


def trade_comm_efg(messages: int, items: int) -> str:
    """Trade Comm with `messages` utterances and `items` items as an EFG text (module docstring)."""
    if messages < 1 or items < 1:
        raise PvfError(f"Trade Comm needs at least 1 message and 1 item, got {messages} and {items}")
    m, n = messages, items
    deal = " ".join(f'"{s1}:{s2}" {1 / n**2!r}' for s1 in range(n) for s2 in range(n))
    utter = "{ " + " ".join(f'"u{k}"' for k in range(m)) + " }"
    trade = "{ " + " ".join(f'"t{give}:{get}"' for give in range(n) for get in range(n)) + " }"
    lines = [f'EFG 2 R "Trade Comm (m, n) = ({m}, {n})" {{ "Alice" "Bob" }}', f'c "" 1 "" {{ {deal} }} 0']
    outcome = 1
    for s1 in range(n):
        for s2 in range(n):
            lines.append(f'p "" 1 {1 + s1} "" {utter} 0')
            for m1 in range(m):
                lines.append(f'p "" 2 {1 + s2 * m + m1} "" {utter} 0')
                for m2 in range(m):
                    lines.append(f'p "" 1 {1 + n + (s1 * m + m1) * m + m2} "" {trade} 0')
                    for t1 in range(n * n):
                        lines.append(f'p "" 2 {1 + n * m + (s2 * m + m1) * m + m2} "" {trade} 0')
                        for t2 in range(n * n):
                            won = float(t1 == s1 * n + s2 and t2 == s2 * n + s1)
                            lines.append(f't "" {outcome} "" {{ {won}, {won} }}')
                            outcome += 1
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class TeamTree:
    """A common-payoff game's tree, nodes in breadth-first order (N nodes, D decision nodes, W = most actions).

    depth: [N] distance from the root.  parent: [N] parent node (-1 at the root).
    children: [N, C] child node per local action or chance outcome (-1 past the last, everywhere at terminals).
    chance_prob: [N] probability of the edge into the node if chance chose it, else 1.
    value: [N] the common payoff at terminal nodes, 0 elsewhere.
    decisions: [D] node index of each decision node.  actions: [D] its number of legal actions.
    player: [D] who acts there (0 or 1).
    keys: map name -> [D] the decision node's key number under that information map.
    key_counts: map name -> number of distinct keys.
    chance_reach: [D] probability of chance's moves on the way to each decision node.
    """

    game: str
    depth: np.ndarray
    parent: np.ndarray
    children: np.ndarray
    chance_prob: np.ndarray
    value: np.ndarray
    decisions: np.ndarray
    actions: np.ndarray
    player: np.ndarray
    keys: dict[str, np.ndarray]
    key_counts: dict[str, int]
    chance_reach: np.ndarray

    @property
    def width(self) -> int:
        """W: the most legal actions at a decision node (chance nodes may have more children)."""
        return int(self.actions.max())


def load_team_game(game: str) -> pyspiel.Game:
    """An OpenSpiel game string, "cmp" for Cooperative Matching Pennies or "trade_comm_mn(messages=m,items=n)";
    refuses anything but 2 players."""
    trade_comm = TRADE_COMM_MN.fullmatch(game)
    if game == "cmp":
        loaded = pyspiel.load_efg_game(COOPERATIVE_MATCHING_PENNIES)
    elif trade_comm:
        loaded = pyspiel.load_efg_game(trade_comm_efg(int(trade_comm[1]), int(trade_comm[2])))
    else:
        loaded = pyspiel.load_game(game)
    kind = loaded.get_type()
    if loaded.num_players() != 2 or kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise PvfError(f"{game} is not a two-player turn-based game")
    return loaded


def build_team_tree(game: str, max_nodes: int = 2_000_000) -> TeamTree:
    """Enumerate `game` (steps 1-3 of the module docstring); a PvfError if the payoff is not common."""
    loaded = load_team_game(game)
    frontier = [(loaded.new_initial_state(), -1, 1.0, (), 1.0)]
    depth, parent, chance_prob, value = [], [], [], []
    child_lists: list[list[int]] = []
    decisions, actions, player, chance_reach = [], [], [], []
    raw_keys: dict[str, list] = {m: [] for m in MAPS}
    level = 0
    while frontier:
        next_frontier = []
        for state, up, prob, seen, reach in frontier:
            node = len(depth)
            if node >= max_nodes:
                raise PvfError(f"{game} has more than {max_nodes:,} nodes: too large to enumerate")
            depth.append(level)
            parent.append(up)
            chance_prob.append(prob)
            child_lists.append([])
            if up >= 0:
                child_lists[up].append(node)
            if state.is_terminal():
                returns = state.returns()
                if abs(returns[0] - returns[1]) > 1e-12:
                    raise PvfError(f"{game} is not common-payoff: returns {returns} at {state.history()}")
                value.append(returns[0])
                continue
            value.append(0.0)
            if state.is_chance_node():
                for action, p in state.chance_outcomes():
                    next_frontier.append((state.child(action), node, p, (*seen, action), reach * p))
                continue
            who = state.current_player()
            info = state.information_state_string(who)
            raw_keys["original"].append((who, info))
            raw_keys["cheated"].append((who, info, seen))
            raw_keys["recall"].append((who, tuple(state.history())))
            legal = state.legal_actions()
            decisions.append(node)
            actions.append(len(legal))
            player.append(who)
            chance_reach.append(reach)
            for action in legal:
                next_frontier.append((state.child(action), node, 1.0, seen, reach))
        frontier = next_frontier
        level += 1
    width = max(len(c) for c in child_lists)
    children = np.full((len(depth), width), -1, dtype=np.int64)
    for node, kids in enumerate(child_lists):
        children[node, : len(kids)] = kids
    keys, counts = {}, {}
    for name, raw in raw_keys.items():
        numbers: dict = {}
        keys[name] = np.array([numbers.setdefault(k, len(numbers)) for k in raw], dtype=np.int64)
        counts[name] = len(numbers)
    actions_arr = np.array(actions, dtype=np.int64)
    return TeamTree(
        game=game,
        depth=np.array(depth, dtype=np.int64),
        parent=np.array(parent, dtype=np.int64),
        children=children,
        chance_prob=np.array(chance_prob),
        value=np.array(value),
        decisions=np.array(decisions, dtype=np.int64),
        actions=actions_arr,
        player=np.array(player, dtype=np.int64),
        keys=keys,
        key_counts=counts,
        chance_reach=np.array(chance_reach),
    )
