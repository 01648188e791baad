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
The spec records each checkpoint's SHA-256 (`ParticleOptions.solve_network`,
`target_network`), so a file says which nets made it and a rerun with
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
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.trunk_solver import Trunk
from pvf.valuefn.network import Network, load_value_function


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@dataclass(frozen=True)
class NetworkLeaves:
    """`pvf.datasets.sample_networks.LeafNetwork` of a checkpoint: its net at a trunk's leaves.

    path: the checkpoint; digest: its SHA-256 when the spec was made.
    """

    path: str
    digest: str

    def __call__(self, trunk: Trunk) -> LeafEvaluator:
        """The net at `trunk`'s leaves, in the game-root convention (beliefs and values from the game root)."""
        return _network(self.path, self.digest).evaluator(trunk, build_feature_tables(trunk.tree))


def network_leaves(path: str | Path, game: str, depth: int, option: str = "--solve-network") -> NetworkLeaves:
    """The leaves of `path`'s net, checked before any work: it exists, was trained on `game` at `depth`, and
    is not positional (a particle subgame has no enumerated slots); `option` names it in the error."""
    require_files([Path(path)])
    net = load_value_function(path, game)
    if net.meta.layout.depth != depth:
        trained = net.meta.layout.depth
        raise PvfError(f"{option} needs a net trained at depth {depth}; {path} was trained at depth {trained}")
    if net.meta.architecture == "positional":
        raise PvfError(f"{path} is a positional value function; {option} needs a particle or attention net")
    return NetworkLeaves(str(path), file_sha256(path))


@lru_cache(maxsize=2)
def _network(path: str, digest: str) -> Network:
    """The net, once per process, if its bytes are still the spec's."""
    if not Path(path).is_file() or file_sha256(path) != digest:
        raise PvfError(f"{path} is gone or changed since the dataset's spec was made; restore it or start over")
    torch.set_num_threads(1)
    return load_value_function(path)
