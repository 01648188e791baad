"""The nets a particle spec's samples depend on: at the leaves of its query solves and of its target solves.

A spec records each net by a digest (`ParticleOptions.solve_network`,
`target_network`, a checkpoint's SHA-256); the driver carries the nets
themselves to the workers (`pvf.valuefn.network_leaves.NetworkLeaves`),
and `check_networks` refuses, before any work, nets other than the ones the
spec records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from pvf.datasets.spec import GenerationSpec
from pvf.errors import PvfError
from pvf.solvers.interface import LeafEvaluator
from pvf.solvers.trunk_solver import Trunk


class LeafNetwork(Protocol):
    """A net at a trunk's leaves: hashable and picklable (it travels to the workers).

    digest: what the spec records of it, e.g. a checkpoint's SHA-256.
    """

    digest: str

    def __call__(self, trunk: Trunk) -> LeafEvaluator:
        """The evaluator at `trunk`'s leaves in the game-root convention (beliefs and values from the game root)."""
        ...


@dataclass(frozen=True)
class SampleNetworks:
    """query: the net at the leaves of the `--p-solve` query solves (`--solve-network`), None: the data's targets;
    targets: the net at the leaves of the children rows' target solves (`--target-network`), None: to the end."""

    query: LeafNetwork | None = None
    targets: LeafNetwork | None = None


NO_NETWORKS = SampleNetworks()


def check_networks(spec: GenerationSpec, networks: SampleNetworks) -> None:
    """PvfError unless `networks` are the ones the spec records (none where it records none)."""
    p = spec.particles
    recorded = ("", "") if p is None else (p.solve_network, p.target_network)
    given = (networks.query, networks.targets)
    options = (
        ("--solve-network", "query solves", "--p-solve > 0 and --rows children"),
        ("--target-network", "target solves", "--rows children"),
    )
    for digest, net, (option, solves, needs) in zip(recorded, given, options):
        if digest == ("" if net is None else net.digest):
            continue
        if not digest:
            raise PvfError(f"{option} needs {needs} (it sets the {solves}' leaves)")
        raise PvfError(
            f"this dataset's {solves} have a network with SHA-256 {digest[:12]}… at their leaves"
            f"{'' if net is None else f', not {net.digest[:12]}…'}; pass that checkpoint as {option}"
        )
