"""Random trunk strategies and the public belief states they induce.

A trunk is the game cut at move number d (`build_sequence_game(tree,
depth_limit=d)`). One trunk strategy is a behaviour strategy of both players
at every decision infostate of the trunk. For trunk id t:
  1. Its generator is `default_rng(SeedSequence(seed, spawn_key=(t,)))`: it
     depends on the seed and the trunk id only, never on which worker or
     batch draws it.
  2. Per decision infostate (player 1's infostates, then player 2's, in the
     trunk's sequence order) one draw u ~ U(0,1) picks the kind:
       - uniform if u < p_uniform;
       - else one pure action, chosen uniformly, with probability p_pure;
       - else mixed: each action is kept with probability p_keep and given a
         U(0,1) weight; the kept weights are normalised. If no action is
         kept the infostate plays uniformly (the authors' code leaves this
         case open; uniform keeps the strategy well defined and it happens
         with probability (1 − p_keep)^k, 1% for two actions).
     The defaults (0.05, 0.1, 0.9) are the mix of the authors' code
     (docs/architecture.md, conventions): mostly random fully mixed strategies, about 10% pure
     infostates so that the data also covers beliefs with zero entries.
  3. The realization plan of each player follows top-down (one gather per
     level, batched over trunks). A leaf infostate's reach (its belief) is
     the realization weight of its parent sequence; chance reach is not part
     of the belief (the solvers' payoff matrix carries it).
  4. With `p_solve` > 0 (enumerated datasets; particle children rows:
     `pvf.datasets.particle_solve_queries`), trunk t's leaf beliefs are,
     with probability p_solve, moved towards one leaf query q_k of a trunk
     solve (`pvf.datasets.solve_queries`): b = λ·q_k + (1 − λ)·b, k uniform
     over the solve's queries, λ ~ U(0, 1), each player's realization plan
     mixed alike (a convex combination of realization plans is one, so b is
     the belief of a trunk strategy). Its draws (u, k, λ) come from trunk t's
     own second generator (spawn key (t, 1)), so the strategies of 1–3 and
     every file with p_solve = 0 are unchanged.
Each (trunk strategy, leaf public state) pair is one PBS.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np

from pvf.errors import PvfError
from pvf.solvers.sequence_form import PlayerSequences, SequenceGame
from pvf.solvers.sequence_ops import realization_plan


@dataclass(frozen=True)
class SamplingConfig:
    """The mix of random trunk strategies, per decision infostate.

    p_uniform: probability of the uniform strategy.
    p_pure: probability of one random pure action, given not uniform.
    p_keep: probability that an action keeps its U(0,1) weight in a mixed strategy.
    p_solve: probability that a trunk's beliefs are mixed with a trunk solve's query (step 4).
    """

    p_uniform: float = 0.05
    p_pure: float = 0.1
    p_keep: float = 0.9
    p_solve: float = 0.0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not 0.0 <= value <= 1.0:
                raise PvfError(f"sampling probability {name} = {value} is outside [0, 1]")

    def to_json(self) -> str:
        """The canonical JSON text stored in the file's `sampling` attribute (without p_solve where it is 0,
        as files written before it existed)."""
        fields = {k: v for k, v in asdict(self).items() if k != "p_solve" or v}
        return json.dumps({"method": "authors_mix", **fields}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SamplingConfig:
        data = json.loads(text)
        data.pop("method", None)
        return cls(**data)


def trunk_rng(seed: int, trunk_id: int) -> np.random.Generator:
    """The generator of one trunk strategy: a function of (seed, trunk id) only."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(trunk_id,)))


def _draw_player(seqs: PlayerSequences, rng: np.random.Generator, config: SamplingConfig) -> np.ndarray:
    """[S] one random behaviour strategy of one player (root rows 1)."""
    R, I = seqs.num_roots, seqs.num_infostates
    strat = np.ones(seqs.num_sequences)
    if I == 0:
        return strat
    info = seqs.seq_info[R:]  # [S - R] infostate of each decision sequence
    size = seqs.info_size.astype(np.float64)
    local = np.arange(R, seqs.num_sequences) - seqs.info_start[info]  # action position within its infostate
    kind, pick = rng.random(I), rng.random(I)
    keep, weight = rng.random(len(info)), rng.random(len(info))
    uniform = kind < config.p_uniform
    pure = ~uniform & (kind < config.p_uniform + (1.0 - config.p_uniform) * config.p_pure)
    pure_action = np.minimum(np.floor(pick * size), size - 1)
    w = np.where(keep < config.p_keep, weight, 0.0)
    total = np.add.reduceat(w, seqs.info_start - R)
    uniform |= ~pure & (total <= 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mixed = w / total[info]
    strat[R:] = np.where(
        uniform[info], 1.0 / size[info], np.where(pure[info], (local == pure_action[info]).astype(np.float64), mixed)
    )
    return strat


def sample_trunk_strategies(
    trunk: SequenceGame, trunk_ids: np.ndarray, seed: int, config: SamplingConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Random behaviour strategies of both players for the given trunk ids.

    trunk_ids: [B] trunk ids. Returns per player [S_n, B] behaviour strategies
    over the trunk's sequences (root rows 1), column b for trunk_ids[b].
    """
    cols: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    for t in np.asarray(trunk_ids, dtype=np.int64):
        rng = trunk_rng(seed, int(t))
        for n in (0, 1):
            cols[n].append(_draw_player(trunk.players[n], rng, config))
    return np.stack(cols[0], axis=1), np.stack(cols[1], axis=1)


def leaf_beliefs(trunk: SequenceGame, strategies: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each player's reach of every leaf infostate of the trunk.

    strategies: per player [S_n, B] behaviour strategies.
    Returns per player [B, J_n], columns in `trunk.leaf_infostates[n]` order
    (grouped by leaf public state, `trunk.leaf_offsets[n]`).
    """
    out = []
    for n in (0, 1):
        seqs = trunk.players[n]
        B = strategies[n].shape[1]
        x = realization_plan(seqs, strategies[n], np.ones((seqs.num_roots, B)))
        out.append(np.ascontiguousarray(x[trunk.leaf_parent[n]].T))
    return out[0], out[1]


def mix_solve_queries(
    beliefs: tuple[np.ndarray, np.ndarray],
    queries: tuple[np.ndarray, np.ndarray],
    trunk_ids: np.ndarray,
    seed: int,
    config: SamplingConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """Step 4: the trunks' leaf beliefs, those drawn for it moved towards a trunk solve's query.

    beliefs: per player [B, J_n], row b for trunk_ids[b] (`leaf_beliefs`).
    queries: per player [Q, J_n] the solve's leaf queries, same columns.
    Returns per player [B, J_n] (new arrays).
    """
    Q = len(queries[0])
    draws = np.array(
        [
            np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(int(t), 1))).random(3)
            for t in np.asarray(trunk_ids, dtype=np.int64)
        ]
    ).reshape(-1, 3)
    mixed = draws[:, 0] < config.p_solve
    query = np.minimum(np.floor(draws[:, 1] * Q), Q - 1).astype(np.int64)
    weight = np.where(mixed, draws[:, 2], 0.0)[:, None]
    return tuple(weight * q[query] + (1.0 - weight) * b for b, q in zip(beliefs, queries))  # type: ignore[return-value]
