"""One task of an enumerated dataset: a contiguous block of trunk ids → one shard of samples.

The task's blocks are `pvf.datasets.task_plan`'s; `pvf.datasets.tasks`
sends a spec without particles here. A task:
  1. Draws the random strategies of its trunks (one generator per trunk id)
     and propagates them to the beliefs of every leaf infostate.
  2. Solves all its PBSs (its trunks × the leaf public states) in one
     batched CFR+ call on the union of the leaf subgames (`LeafSolver`).
  3. Lays the samples out trunk-major as in docs/hdf5_schema.md: one gather
     with a fixed column permutation turns the per-player value matrices
     [B, J_n] into rows (sample by sample, player 1's infostates then
     player 2's).
Workers keep the tree, trunk and leaf subgames of the last spec they saw
(`context`), so a process builds them once however many tasks it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pvf.datasets.sampling import leaf_beliefs, mix_solve_queries, sample_trunk_strategies
from pvf.datasets.solve_queries import solve_queries
from pvf.datasets.spec import GenerationSpec
from pvf.datasets.targets import LeafSolver
from pvf.datasets.task_plan import SampleColumns, Task
from pvf.errors import PvfError
from pvf.games.public_tree import DEFAULT_MAX_HISTORIES, PublicTree, build_public_tree
from pvf.solvers.guarded_values import RESPONSE_TARGETS
from pvf.solvers.registry import DEFAULT_SOLVER
from pvf.solvers.sequence_form import SequenceGame, build_sequence_game


@dataclass(frozen=True)
class SampleLayout:
    """Where each infostate of one trunk's samples goes (the same for every trunk).

    L leaf public states, J_n leaf infostates of player n, K = J1 + J2 rows per trunk.

    public_states: [L] leaf public states in sample order.
    sizes: [L] rows of each sample (its infostates of both players).
    columns: [K] column of [values1 | values2] ([B, J1 + J2]) feeding each row.
    player, index, slot: [K] the rows' player, augmented infostate and enumeration slot.
    """

    public_states: np.ndarray
    sizes: np.ndarray
    columns: np.ndarray
    player: np.ndarray
    index: np.ndarray
    slot: np.ndarray

    @classmethod
    def of_trunk(cls, trunk: SequenceGame) -> SampleLayout:
        off, infos = trunk.leaf_offsets, trunk.leaf_infostates
        J1 = len(infos[0])
        cols, player, index, slot = [], [], [], []
        for k in range(len(trunk.leaf_public_states)):
            for n, shift in ((0, 0), (1, J1)):
                block = np.arange(off[n][k], off[n][k + 1])
                cols.append(shift + block)
                player.append(np.full(len(block), n, dtype=np.int8))
                index.append(infos[n][block])
                slot.append(np.arange(len(block), dtype=np.int32))
        sizes = np.diff(off[0]) + np.diff(off[1])
        return cls(
            public_states=trunk.leaf_public_states.astype(np.int64),
            sizes=sizes.astype(np.int64),
            columns=np.concatenate(cols),
            player=np.concatenate(player),
            index=np.concatenate(index).astype(np.int64),
            slot=np.concatenate(slot),
        )

    def structure(self, trunk_ids: np.ndarray) -> dict[str, np.ndarray]:
        """The non-value arrays of the samples of these trunks: trunk, public_state, offset, player, index, slot."""
        B = len(trunk_ids)
        return dict(
            trunk=np.repeat(np.asarray(trunk_ids, dtype=np.int64), len(self.public_states)),
            public_state=np.tile(self.public_states, B),
            offset=np.concatenate([[0], np.cumsum(np.tile(self.sizes, B))]).astype(np.int64),
            player=np.tile(self.player, B),
            index=np.tile(self.index, B),
            slot=np.tile(self.slot, B),
        )


@dataclass(frozen=True)
class ShardArrays(SampleColumns):
    """The samples of one task, laid out as the schema's datasets (offsets start at 0).

    n samples, m infostate rows.

    trunk, public_state: [n] int64.
    offset: [n + 1] int64.
    player: [m] int8; index: [m] int64; slot: [m] int32.
    belief, target, target_current: [m] float64.
    """

    trunk: np.ndarray
    public_state: np.ndarray
    offset: np.ndarray
    player: np.ndarray
    index: np.ndarray
    slot: np.ndarray
    belief: np.ndarray
    target: np.ndarray
    target_current: np.ndarray


@dataclass(frozen=True, eq=False)
class GenerationContext:
    """What every task of a spec shares: the tree, its trunk, the leaf solver and the layout."""

    tree: PublicTree
    trunk: SequenceGame
    solver: LeafSolver
    layout: SampleLayout


@lru_cache(maxsize=1)
def context(
    game: str, depth: int, cfr_iterations: int, solver: str = DEFAULT_SOLVER, max_histories: int = DEFAULT_MAX_HISTORIES
) -> GenerationContext:
    """Build (once per process) the tree, trunk and leaf solver of a spec; PvfError if the depth has no leaves."""
    tree = build_public_tree(game, max_histories=max_histories)
    max_depth = int(tree.depth.max())
    if depth > max_depth:
        raise PvfError(
            f"depth {depth} is beyond the last move of {tree.game_string} (move {max_depth}); "
            f"`pvf describe '{tree.game_string}'` lists the possible depths"
        )
    trunk = build_sequence_game(tree, depth_limit=depth)
    if not trunk.has_leaves:
        raise PvfError(
            f"{tree.game_string} has no non-terminal public state at move number {depth}; "
            f"`pvf describe '{tree.game_string}'` lists the possible depths"
        )
    leaf_solver = LeafSolver(tree, trunk.leaf_public_states, cfr_iterations, solver)
    return GenerationContext(tree, trunk, leaf_solver, SampleLayout.of_trunk(trunk))


def run_pbs_task(spec: GenerationSpec, task: Task, max_histories: int = DEFAULT_MAX_HISTORIES) -> ShardArrays:
    """All samples of the task's trunks (trunk-major, then leaf public state)."""
    ctx = context(spec.game, spec.depth, spec.cfr_iterations, spec.solver, max_histories)
    trunk, layout = ctx.trunk, ctx.layout
    ids = np.arange(task.trunk_lo, task.trunk_hi, dtype=np.int64)
    beliefs = leaf_beliefs(trunk, sample_trunk_strategies(trunk, ids, spec.seed, spec.sampling))
    if spec.sampling.p_solve > 0:
        queries = solve_queries(spec.game, spec.depth, spec.cfr_iterations, spec.target, max_histories)
        beliefs = mix_solve_queries(beliefs, queries, ids, spec.seed, spec.sampling)
    # columns in trunk.leaf_infostates order, as the beliefs
    solved = ctx.solver.solve(beliefs, response=spec.target if spec.target in RESPONSE_TARGETS else None)
    target = solved.of(spec.target)

    def rows(per_player: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return np.concatenate(per_player, axis=1)[:, layout.columns].reshape(-1)

    return ShardArrays(
        **layout.structure(ids),
        belief=rows(beliefs),
        target=rows(target),
        target_current=rows(solved.current),
    )
