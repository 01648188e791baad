"""How far particle-file targets are from a function of the network's inputs.

A particle sample's targets (`pvf.datasets.particle_tasks`) are CFR+ values
of the particle subgame: rooted at the K drawn histories only. The network
sees per-infostate beliefs σ_n(s) and features, i.e. the PBS whose subgame
holds every history joining two of the rows' infostates, weighted
σ₁(s₁)·σ₂(s₂)·π_c. Where the particles do not cover those joined histories,
the targets depend on which pairs were drawn, which no input shows.

For samples 0..N-1 of the spec (same draws as `pvf generate --particles K`),
this rebuilds each sample (games without chance moves: Goofspiel), enumerates the joined histories of its rows (both
players' own moves merged, kept where OpenSpiel gives both infostate
strings), solves that product PBS with the same CFR+ and prints, on the
normalised targets the nets see (÷ opponent mass): their variance, the mean
squared difference particle − product target, and the residual of the best
affine fit of the particle targets on the product ones.

Run:
    .venv/bin/python benchmarks/particle_pbs_gap.py --game goofspiel8 --depth 5 --particles 32 --samples 100
"""

from __future__ import annotations

import argparse

import numpy as np

from pvf.datasets import particle_tasks as pt
from pvf.datasets.lazy_strategy import LazyTrunkStrategy
from pvf.datasets.particle_sampling import play_to_depth, sample_particles
from pvf.datasets.particle_spec import ParticleSpec
from pvf.games.particle_tree import build_particle_tree, find_histories
from pvf.games.public_tree import PublicTree
from pvf.solvers.cfr_plus import cfr_plus
from pvf.solvers.sequence_form import build_sequence_game


def own_moves(tree: PublicTree, player: int, infostate: int) -> tuple[dict[int, int], int]:
    """({tree level: action} of `player`'s moves on a history of the infostate, the history's length)."""
    node = int(tree.infostate_history[player][infostate])
    moves, length = {}, int(tree.level[node])
    while tree.parent[node] >= 0:
        if tree.player[tree.parent[node]] == player:
            moves[int(tree.level[node]) - 1] = int(tree.action[node])
        node = int(tree.parent[node])
    return moves, length


def sample_gap(spec: ParticleSpec, sample_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(particle targets [m], product-PBS targets [m], player [m], distinct particles, joined histories)."""
    loaded, _ = pt.checked_game(spec.game)
    strategy = LazyTrunkStrategy(spec.seed, sample_id, spec.sampling)
    rng = np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(sample_id,)))
    history = play_to_depth(loaded, strategy, spec.depth, rng)
    sample = sample_particles(loaded, strategy, history, spec.particles, rng)
    while len(sample.particles) == 0:
        sample = sample_particles(loaded, strategy, history, spec.particles, rng)
    tree = build_particle_tree(loaded, sample.particles, max_histories=spec.max_histories)
    roots = find_histories(tree, sample.particles)
    infos = [build_sequence_game(tree, root_histories=roots).players[n].root_infostates for n in (0, 1)]
    strings = [[tree.infostate_strings[n][i] for i in infos[n]] for n in (0, 1)]
    out = pt.solve_sample(spec, sample_id)  # the file's rows, in the same order as infos
    belief = [out["belief"][out["player"] == n] for n in (0, 1)]
    joined, weights = [], []
    for a, i in enumerate(infos[0]):
        m1, length = own_moves(tree, 0, i)
        for b, j in enumerate(infos[1]):
            m2, _ = own_moves(tree, 1, j)
            if set(m1) & set(m2) or len(m1) + len(m2) != length:
                continue
            path, state = [(m1 | m2)[level] for level in range(length)], loaded.sequential.new_initial_state()
            for action in path:
                if action not in state.legal_actions():
                    break
                state.apply_action(action)
            else:
                if state.information_state_string(0) == strings[0][a] and state.information_state_string(1) == strings[1][b]:
                    joined.append(path)
                    weights.append(belief[0][a] * belief[1][b] * tree.chance_reach[roots[0]])
    full = build_particle_tree(loaded, joined, max_histories=spec.max_histories)
    game = build_sequence_game(full, root_histories=find_histories(full, joined), root_weights=np.array(weights))
    result = cfr_plus(game, spec.cfr_iterations)
    product = []
    for n in (0, 1):
        value = dict(zip([full.infostate_strings[n][i] for i in game.players[n].root_infostates], result.root_values[n][0]))
        product.append(np.array([value[s] for s in strings[n]]) / belief[n])
    normalise = np.where(out["player"] == 0, belief[1].sum(), belief[0].sum())
    return out["target"] / normalise, np.concatenate(product) / normalise, out["player"], len(sample.particles), len(joined)


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
    print(f"{args.game} move {args.depth}, K = {args.particles}, {args.samples} samples: "
          f"distinct particles {np.mean([g[3] for g in gaps]):.1f}, joined histories {np.mean([g[4] for g in gaps]):.1f} (means)")
    print(f"normalised targets: variance {p.var():.4g}; mean (particle − product)² {np.mean((p - q) ** 2):.4g} "
          f"({np.mean((p - q) ** 2) / p.var():.0%}); best affine fit residual {np.mean((p - fit) ** 2):.4g} ({np.mean((p - fit) ** 2) / p.var():.0%})")


if __name__ == "__main__":
    main()
