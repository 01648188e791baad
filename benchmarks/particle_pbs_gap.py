"""How far drawn-subgame targets are from a function of the network's inputs.

A particle sample's targets can be computed on two subgames
(`pvf.datasets.particle_tasks`, `ParticleOptions.subgame`): "drawn", rooted at
the K drawn histories only (pvf's first particle files), or "induced", the
PBS the particles induce (every history joining two of the rows'
infostates, weighted σ₁(s₁)·σ₂(s₂)·π_c; `pvf.games.induced_pbs`). The
network sees per-infostate beliefs σ_n(s) and features, which determine
the induced PBS but not which pairs were drawn.

For samples 0..N-1 of the spec (the draws of `pvf generate --particles K`)
this solves both, with the same CFR+, and prints, on the normalised
targets the nets see (÷ opponent mass): their variance, the mean squared
difference drawn − induced, and the residual of the best affine fit of
the drawn targets on the induced ones.

Run:
    .venv/bin/python benchmarks/particle_pbs_gap.py --game goofspiel8 --depth 5 --particles 32 --samples 100
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np

from pvf.datasets.particle_tasks import solve_sample
from pvf.datasets.spec import GenerationSpec, ParticleSpec


def normalised(out: dict) -> np.ndarray:
    """[m] targets ÷ the opponent's belief mass in the sample, the scale the networks train on."""
    mass = [out["belief"][out["player"] == n].sum() for n in (0, 1)]
    return out["target"] / np.where(out["player"] == 0, mass[1], mass[0])


def sample_gap(spec: GenerationSpec, sample_id: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(drawn targets [m], induced targets [m] of the same rows, distinct particles, induced-PBS histories)."""
    drawn = solve_sample(replace(spec, particles=replace(spec.particles, subgame="drawn")), sample_id)
    induced = solve_sample(replace(spec, particles=replace(spec.particles, subgame="induced")), sample_id)
    order = {}  # rows are (player, private features); the two subgames may list them in another order
    for r, (n, f) in enumerate(zip(induced["player"], induced["private"])):
        order[(int(n), f.tobytes())] = r
    rows = [order[(int(n), f.tobytes())] for n, f in zip(drawn["player"], drawn["private"])]
    return normalised(drawn), normalised(induced)[rows], drawn["stats"][0], induced["stats"][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True)
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--particles", type=int, required=True)
    parser.add_argument("--samples", type=int, default=100)
    args = parser.parse_args()
    spec = ParticleSpec(args.game, args.depth, args.samples, args.particles, cfr_iterations=100)
    gaps = [sample_gap(spec, i) for i in range(args.samples)]
    p, q = np.concatenate([g[0] for g in gaps]), np.concatenate([g[1] for g in gaps])
    fit = np.polyval(np.polyfit(q, p, 1), q)
    print(
        f"{args.game} move {args.depth}, K = {args.particles}, {args.samples} samples: distinct particles "
        f"{np.mean([g[2] for g in gaps]):.1f}, induced-PBS subgame histories "
        f"{np.mean([g[3] for g in gaps]):.0f} (means)"
    )
    print(
        f"normalised drawn targets: variance {p.var():.4g}; mean (drawn − induced)² {np.mean((p - q) ** 2):.4g} "
        f"({np.mean((p - q) ** 2) / p.var():.0%}); best affine fit residual {np.mean((p - fit) ** 2):.4g} "
        f"({np.mean((p - fit) ** 2) / p.var():.0%})"
    )


if __name__ == "__main__":
    main()
