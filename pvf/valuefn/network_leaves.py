"""A particle value net at the leaves of the solves a particle dataset's samples depend on.

Two solves of `pvf generate --particles K --rows children` can take a net
at their leaves (`pvf.datasets.sample_networks.SampleNetworks`):
  - `--solve-network CKPT`, with `--p-solve P`: the sparse trunk solves
    whose leaf queries a share P of the samples take
    (`pvf.datasets.particle_solve_queries`, step 2), so the samples'
    beliefs are the ones the net's own trunk asks about (one round of
    ReBeL's loop: data where the net is used);
  - `--target-network CKPT`: each sample's target solve, which then stops
    one move below the rows (`pvf.datasets.particle_children`,
    bootstrapped targets: ReBeL's recursion, a net for move D + 1 making
    the data for move D).
Either takes an ensemble, `A.ckpt+B.ckpt`: the mean of its members' values
at the leaves. The spec records each checkpoint's SHA-256
(`ParticleOptions.solve_network`, `target_network`; an ensemble's joined by
"+"), so a file says which nets made it and a rerun with
other bytes is refused; each worker loads a net once, checks the bytes it
loaded, and runs it on one thread (workers are one per core).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from pvf.errors import PvfError, require_files
from pvf.games.features import build_feature_tables
from pvf.solvers.evaluators import mean_of
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.trunk_solver import Trunk
from pvf.valuefn.network import Network, load_value_function


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@dataclass(frozen=True)
class NetworkLeaves:
    """`pvf.datasets.sample_networks.LeafNetwork` of one checkpoint or an ensemble: the mean of their values at
    a trunk's leaves (`MeanEvaluator`, as the particle agent's `leaves=A.ckpt+B.ckpt`).

    paths: the checkpoints; digests: their SHA-256s when the spec was made.
    """

    paths: tuple[str, ...]
    digests: tuple[str, ...]

    @property
    def digest(self) -> str:
        """What the spec records: the SHA-256, or the members' joined by '+' in the order given."""
        return "+".join(self.digests)

    def __call__(self, trunk: Trunk) -> LeafEvaluator:
        """The net (or the mean of the nets) at `trunk`'s leaves, in the game-root convention (beliefs and values
        from the game root)."""
        nets = [_network(p, d) for p, d in zip(self.paths, self.digests)]  # checked before any work
        features = build_feature_tables(trunk.tree)
        return mean_of([net.evaluator(trunk, features) for net in nets])


def network_leaves(path: str | Path, game: str, depth: int, option: str = "--solve-network") -> NetworkLeaves:
    """The leaves of `path`'s net (`A.ckpt+B.ckpt`: the mean of several), checked before any work: each exists,
    was trained on `game` at `depth`, and is not positional (a particle subgame has no enumerated slots);
    `option` names it in the error."""
    paths = [Path(p) for p in str(path).split("+")]
    require_files(paths)
    for member in paths:
        net = load_value_function(member, game)
        if net.meta.layout.depth != depth:
            trained = net.meta.layout.depth
            raise PvfError(f"{option} needs a net trained at depth {depth}; {member} was trained at depth {trained}")
        if net.meta.architecture == "positional":
            raise PvfError(f"{member} is a positional value function; {option} needs a particle or attention net")
    return NetworkLeaves(tuple(str(p) for p in paths), tuple(file_sha256(p) for p in paths))


@lru_cache(maxsize=8)  # a query net and a target ensemble, with room
def _network(path: str, digest: str) -> Network:
    """The net, once per process, if its bytes are still the spec's."""
    if not Path(path).is_file() or file_sha256(path) != digest:
        raise PvfError(f"{path} is gone or changed since the dataset's spec was made; restore it or start over")
    torch.set_num_threads(1)
    return load_value_function(path)
