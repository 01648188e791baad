"""A positional network at the leaves of a particle tree: slots from the enumerated public tree.

A positional value function has one input per infostate slot, the
infostate's position in its public state's enumeration in the full public
tree it was trained on. A particle tree (`pvf.games.particle_tree`) holds
only the infostates its particles induce, so its own enumeration skips the
others and its positions are not the network's. Where the game can still be
enumerated (small N), `enumerated_slots` finds each leaf infostate of a
trunk in the full tree by OpenSpiel information-state string and returns its
slot there; the infostates the particle tree lacks get belief 0 in their
slots, which is the PBS the particles induce. Beyond enumeration there is
no positional row: the input count it would need is reported instead
(`pvf.games.depths.positional_inputs`).
"""

from __future__ import annotations

import numpy as np

from pvf.errors import PvfError
from pvf.games.public_tree import PublicTree
from pvf.solvers.trunk_solver import Trunk


def enumerated_slots(trunk: Trunk, full: PublicTree) -> tuple[np.ndarray, np.ndarray]:
    """Per player [J_n] the slot in `full` of each of the trunk's leaf infostates (`trunk.game.leaf_infostates`)."""
    out = []
    for n in (0, 1):
        slot_of: dict[str, int] = {}
        for infos in full.public_state_infostates[n]:
            for k, i in enumerate(infos):
                key = full.infostate_strings[n][int(i)]
                if key in slot_of and slot_of[key] != k:
                    raise PvfError(f"player {n + 1}'s infostate string {key!r} names two slots of {full.game_string}")
                slot_of[key] = k
        strings = trunk.tree.infostate_strings[n]
        try:
            out.append(np.array([slot_of[strings[int(j)]] for j in trunk.game.leaf_infostates[n]], dtype=np.int64))
        except KeyError as missing:
            raise PvfError(
                f"leaf infostate {missing} of player {n + 1} is not in the enumerated tree of {full.game_string}"
            ) from None
    return out[0], out[1]
