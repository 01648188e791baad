"""Strategies at the edges: tabular policies keyed by OpenSpiel infostate strings.

Inside pvf a strategy is a behaviour array over a player's sequences. It
leaves (and enters) as `{information_state_string: {action: probability}}`
keyed exactly by OpenSpiel's `information_state_string` of the sequential
game, so that OpenSpiel can load and check it. JSON files store the same
mapping with actions as string keys.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.sequence_form import SequenceGame

TabularPolicy = dict[str, dict[int, float]]


def to_tabular(
    game: SequenceGame,
    strategies: tuple[np.ndarray, np.ndarray],
    infostates: tuple[np.ndarray, np.ndarray] | None = None,
) -> TabularPolicy:
    """Policy of both players' decision infostates from behaviour strategies [S_n].

    infostates: per player, the decision-infostate positions (into
    `game.players[n].infostates`) to include; all by default.
    """
    policy: TabularPolicy = {}
    for n in (0, 1):
        seqs = game.players[n]
        strat = np.asarray(strategies[n], dtype=np.float64)
        names = game.tree.infostate_strings[n]
        chosen = range(seqs.num_infostates) if infostates is None else infostates[n]
        for k in chosen:
            lo, size = seqs.info_start[k], seqs.info_size[k]
            acts = seqs.seq_action[lo : lo + size]
            policy[names[seqs.infostates[k]]] = {int(a): float(p) for a, p in zip(acts, strat[lo : lo + size])}
    return policy


def from_tabular(
    game: SequenceGame, policy: TabularPolicy, default_uniform: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Behaviour strategies [S_n] per player from a tabular policy.

    Infostates missing from the policy are uniform if `default_uniform`, else an error.
    """
    out = []
    for n in (0, 1):
        seqs = game.players[n]
        strat = np.ones(seqs.num_sequences)
        names = game.tree.infostate_strings[n]
        for k in range(seqs.num_infostates):
            lo, size = seqs.info_start[k], seqs.info_size[k]
            name = names[seqs.infostates[k]]
            probs = policy.get(name)
            if probs is None:
                if not default_uniform:
                    raise PvfError(
                        f"policy has no entry for infostate {name!r}; give every decision infostate a distribution"
                    )
                strat[lo : lo + size] = 1.0 / size
                continue
            acts = seqs.seq_action[lo : lo + size]
            row = np.array([float(probs.get(int(a), 0.0)) for a in acts])
            total = row.sum()
            if not np.all(np.isfinite(row)) or np.any(row < 0) or abs(total - 1.0) > 1e-6:
                raise PvfError(f"policy at infostate {name!r} is not a probability distribution over {list(acts)}")
            strat[lo : lo + size] = row / total
        out.append(strat)
    return out[0], out[1]


def save_policy(policy: TabularPolicy, path: str | os.PathLike) -> None:
    """Write the policy as JSON, atomically (temporary file, then rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w") as f:
            json.dump({k: {str(a): p for a, p in v.items()} for k, v in policy.items()}, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def load_policy(path: str | os.PathLike) -> TabularPolicy:
    """Read a JSON policy written by `save_policy` (or by hand in the same format)."""
    try:
        with open(path) as f:
            raw = json.load(f)
        return {k: {int(a): float(p) for a, p in v.items()} for k, v in raw.items()}
    except (OSError, ValueError, AttributeError) as exc:
        raise PvfError(
            f"cannot read policy file {str(path)!r} ({exc}); expected JSON {{infostate: {{action: prob}}}}"
        ) from None


def to_openspiel(policy: TabularPolicy):
    """A `pyspiel.TabularPolicy` of the policy, for `pyspiel.nash_conv`."""
    import pyspiel

    return pyspiel.TabularPolicy({k: [(a, p) for a, p in v.items()] for k, v in policy.items()})
