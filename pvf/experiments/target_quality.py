"""Do the best-response targets give trunks near the exact oracle? Every game, root move and depth.

For each game (Kuhn, Leduc, Liar's Dice 1×3 and imperfect-information
Goofspiel with N = 2 to 6 cards) and every root move r and depth d > r
where the trunk has a decision and a leaf:
  1. Enumerated path (`pvf.experiments.leaf_targets`): the trunk from the
     initial state (r = 0) or from the equilibrium's support at move r,
     solved with the exact oracle and with the datasets' best-response
     targets (`pvf.solvers.guarded_values`) at the leaves.
  2. Particle path (games with a public observer, root moves where a
     player acts at every history; for a game beyond the public tree's cap
     this path alone, at the root moves whose particle
     subgames the exploitability LP takes): the particle trunk of
     `pvf.experiments.particle_sweep` (K draws of one public state at move
     r by the random-trunk mix, rooted at the PBS they induce), solved with
     the oracle and with the targets on the PBS each leaf's infostates
     induce (`pvf.datasets.induced_targets`), as particle files make them.
  3. The criterion of each row: targets ≤ 1.2 × oracle, or within 0.005 of
     it where the oracle is below 0.02 (trunk exploitability, NashConv,
     100 trunk CFR+ iterations, 100 per leaf solve).
`--kind mixed` measures the best responses to mixed plans instead of the
entry-wise guard, `--kind budget` the same with their share held to a
slack budget, `--kind grouped` the budget's with the guarded plan alone
in the public states where a player has no belief, `--kind local` the
grouped mixture with its budget per public state
(`pvf.solvers.guarded_values.RESPONSE_KINDS`).
`--iterations N` solves the trunks N times instead of 100 (leaf solves
stay at 100; the criterion is step 3's at N), and `--cases-missed-in
A.csv B.csv` keeps only the cases those sweeps' rows miss: where the
misses at 100 iterations stand once the trunk solve is longer.
`--min-depth D` keeps the trunks whose leaves lie at move D or later (the
exact oracle solves an LP of the game below each leaf public state at every
trunk iteration: Goofspiel-6 to move 1 or 2 is beyond two cores).
Rows are appended to a CSV as they finish, and a rerun skips the rows the
file already holds, so an interrupted sweep continues where it stopped:

    python -m pvf.experiments.target_quality --out docs/figures/targets/target-quality.csv
    python -m pvf.experiments.target_quality --kind mixed --out docs/figures/targets/target-quality-mixed.csv
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pvf.datasets.induced_targets import induced_pbs_evaluator
from pvf.datasets.sampling import SamplingConfig
from pvf.errors import PvfError, require_files
from pvf.experiments.leaf_targets import RESPONSE_EVALUATORS, evaluate_leaf_targets, leaf_targets_trunk
from pvf.experiments.particle_sweep import DEFAULT_EXACT_HISTORIES, check_trunk, run_particle_sweep
from pvf.experiments.trunk_sweep import ORACLE, SweepEvaluator
from pvf.games.loading import LoadedGame, load_game
from pvf.games.public_tree import GameTooLarge, PublicTree, build_public_tree
from pvf.games.walk import public_observer
from pvf.module_main import run_module
from pvf.solvers.guarded_values import RESPONSE_KINDS
from pvf.solvers.sparse_trunks import sparse_setting
from pvf.solvers.trunk_solver import Trunk

GAMES = (
    "kuhn_poker",
    "leduc_poker",
    "liars_dice(dice_sides=3,numdice=1)",
    *(f"goofspiel(imp_info=True,num_cards={n},points_order=descending)" for n in range(2, 7)),
)
DRAWS = (4, 16)
SEEDS = (0, 1, 2)
RATIO = 1.2
SMALL_ORACLE, SMALL_GAP = 0.02, 0.005
COLUMNS = ("game", "path", "root_move", "depth", "draws", "seed", "oracle", "targets", "ratio", "ok", "seconds")
TRUNK_ITERATIONS = 100
EXACT_HISTORIES = DEFAULT_EXACT_HISTORIES  # particle games judged by the LP up to this size (`run_particle_sweep`)


@dataclass(frozen=True)
class Case:
    """One row's trunk: game, path ("enumerated" or "particle"), root move, depth, K, seed (K, seed 0: enumerated)."""

    game: str
    path: str
    root_move: int
    depth: int
    draws: int = 0
    seed: int = 0

    @property
    def key(self) -> tuple[str, ...]:
        return (self.game, self.path, str(self.root_move), str(self.depth), str(self.draws), str(self.seed))


def row_key(row: dict[str, str]) -> tuple[str, ...]:
    """A CSV row's case, as `Case.key` gives it."""
    return tuple(row[c] for c in COLUMNS[:6])


def within(oracle: float, targets: float) -> bool:
    """Step 3's criterion."""
    return targets <= RATIO * oracle or (oracle < SMALL_ORACLE and targets - oracle <= SMALL_GAP)


def trunks(tree: PublicTree) -> Iterator[tuple[int, int, Trunk]]:
    """(root move, depth, trunk) of every trunk with a decision and a leaf, from the initial state or a later move.

    A root move none of whose histories the equilibrium reaches has no trunk. The equilibrium's support
    at a root move is computed once for all its depths.
    """
    last = int(tree.depth.max())
    for root_move in range(last):
        support = None
        if root_move > 0:
            try:
                support = sparse_setting(tree, root_move, root_move + 1)
            except PvfError:
                continue
        for depth in range(root_move + 1, last + 1):
            trunk = leaf_targets_trunk(tree, depth, root_move, support)
            if trunk.game.has_leaves and any(m.any() for m in trunk.masks):
                yield root_move, depth, trunk


def particle_pairs(loaded: LoadedGame) -> Iterator[tuple[int, int]]:
    """(root move, depth) of the particle trunks of a game beyond the public tree, Goofspiel's last move aside."""
    last = loaded.original.max_game_length() - 2  # the last round is forced: no leaf at the last move
    for root_move in range(last):
        for depth in range(root_move + 1, last + 1):
            try:
                check_trunk(loaded, root_move, depth, DEFAULT_EXACT_HISTORIES)
            except PvfError:
                continue
            yield root_move, depth


def cases(
    game: str, tree: PublicTree | None, loaded: LoadedGame, draws: Sequence[int], seeds: Sequence[int]
) -> Iterator[tuple[Case, Trunk | None]]:
    """Every case of one game (steps 1–2), with its trunk on the enumerated path; tree None: beyond the cap."""
    pairs = []
    for root_move, depth, trunk in trunks(tree) if tree is not None else ():
        pairs.append((root_move, depth))
        yield Case(game, "enumerated", root_move, depth), trunk
    if public_observer(loaded) is None:
        return
    for root_move, depth in pairs if tree is not None else particle_pairs(loaded):
        if tree is not None and (tree.player[tree.depth == root_move] < 0).any():  # particles: where a player acts
            continue
        for k in draws:
            for seed in seeds:
                yield Case(game, "particle", root_move, depth, k, seed), None


def particle_targets(loaded: LoadedGame, kind: str) -> SweepEvaluator:
    """Step 2's targets of `kind` (`RESPONSE_KINDS`) at a particle trunk's leaves: the induced PBSs, 100 CFR+
    iterations each, in a net's game-root convention."""
    response = RESPONSE_KINDS[kind]
    return SweepEvaluator(
        lambda setting: lambda trunk: induced_pbs_evaluator(loaded, trunk, 100, "best_response", kind=response),
        game_root=True,
    )


def measure(
    case: Case, trunk: Trunk | None, loaded: LoadedGame, kind: str = "guarded", iterations: int = TRUNK_ITERATIONS
) -> tuple[float, float] | None:
    """(oracle, targets) trunk exploitability of one case after `iterations` of trunk CFR+, the targets of `kind`
    (`RESPONSE_KINDS`); None for a particle case whose restricted game is beyond the exploitability LP
    (`EXACT_HISTORIES`: the sweep has no oracle there, only bounds)."""
    if trunk is not None:
        rows = evaluate_leaf_targets(trunk, iterations=iterations, evaluators=("exact", RESPONSE_EVALUATORS[kind]))
        return rows[0]["trunk_exploitability"], rows[1]["trunk_exploitability"]
    rows = run_particle_sweep(
        loaded,
        case.root_move,
        case.depth,
        [case.draws],
        [case.seed],
        {"oracle": ORACLE, "targets": particle_targets(loaded, kind)},
        reference=SamplingConfig(),
        iterations=iterations,
        exact_up_to=EXACT_HISTORIES,
    )
    found = {r.evaluator: r.exploitability for r in rows}
    return (found["oracle"], found["targets"]) if "oracle" in found else None


def run(
    games: Sequence[str],
    out: Path,
    draws: Sequence[int] = DRAWS,
    seeds: Sequence[int] = SEEDS,
    kind: str = "guarded",
    iterations: int = TRUNK_ITERATIONS,
    only: set[tuple[str, ...]] | None = None,
    min_depth: int = 1,
) -> int:
    """Append every missing case's row to `out`; the number of rows that miss the criterion (`kind`, `iterations`:
    `measure`'s). only: the case keys to measure (`missed_in`), None: all; min_depth: only trunks whose leaves
    lie at this move or later."""
    done: set[tuple[str, ...]] = set()
    if out.exists():
        with out.open() as f:
            done = {row_key(r) for r in csv.DictReader(f)}
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="") as f:
            csv.writer(f).writerow(COLUMNS)
    misses = 0
    for game in games:
        loaded = load_game(game)
        try:
            tree = build_public_tree(loaded)
        except GameTooLarge:
            tree = None
        for case, trunk in cases(game, tree, loaded, draws, seeds):
            if case.key in done or (only is not None and case.key not in only) or case.depth < min_depth:
                continue
            start = time.perf_counter()
            measured = measure(case, trunk, loaded, kind, iterations)
            if measured is None:
                print(" ".join(case.key), f"not judged: beyond the exploitability LP ({EXACT_HISTORIES:,} histories)")
                continue
            oracle, targets = measured
            ok = within(oracle, targets)
            misses += not ok
            row = [*case.key, f"{oracle:.6g}", f"{targets:.6g}", f"{targets / oracle:.4g}" if oracle > 0 else "inf"]
            row += [str(int(ok)), f"{time.perf_counter() - start:.1f}"]
            with out.open("a", newline="") as f:
                csv.writer(f).writerow(row)
            print(" ".join(row), flush=True)
    return misses


def missed_in(paths: Sequence[Path]) -> set[tuple[str, ...]]:
    """The case keys of the rows of sweeps' CSVs that miss the criterion (in any of them)."""
    keys = set()
    for path in paths:
        with path.open() as f:
            keys |= {row_key(r) for r in csv.DictReader(f) if r["ok"] == "0"}
    return keys


def summarize(path: Path) -> list[dict[str, str]]:
    """Per game and path: rows, rows within the criterion, the largest ratio targets / oracle and where."""
    with path.open() as f:
        rows = list(csv.DictReader(f))
    out = []
    for key in dict.fromkeys((r["game"], r["path"]) for r in rows):
        mine = [r for r in rows if (r["game"], r["path"]) == key]
        worst = max(mine, key=lambda r: float(r["ratio"]))
        out.append(
            {
                "game": key[0],
                "path": key[1],
                "rows": str(len(mine)),
                "within": str(sum(int(r["ok"]) for r in mine)),
                "largest_ratio": worst["ratio"],
                "at": f"root {worst['root_move']}, depth {worst['depth']}, oracle {worst['oracle']}",
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="|".join(GAMES), help="'|'-separated OpenSpiel game strings (default: all)")
    parser.add_argument("--out", default="runs/target-quality.csv", help="the CSV to append rows to")
    parser.add_argument("--summary", action="store_true", help="only print the summary of the rows --out holds")
    parser.add_argument(
        "--kind",
        choices=tuple(RESPONSE_KINDS),
        default="guarded",
        help="the targets: guarded (the datasets' default), mixed, budget, grouped, local",
    )
    parser.add_argument("--iterations", type=int, default=TRUNK_ITERATIONS, help="trunk CFR+ iterations (default 100)")
    parser.add_argument(
        "--cases-missed-in", nargs="+", metavar="CSV", help="only the cases these sweeps' CSVs mark as missed (in any)"
    )
    parser.add_argument(
        "--min-depth",
        type=int,
        default=1,
        help="only trunks whose leaves lie at this move or later (default 1: all); the exact oracle's LPs grow "
        "with the moves below the leaves",
    )
    args = parser.parse_args(argv)
    if args.iterations < 1:
        raise PvfError(f"--iterations must be at least 1, got {args.iterations}")
    if args.min_depth < 1:
        raise PvfError(f"--min-depth must be at least 1, got {args.min_depth}")
    only = None
    if args.cases_missed_in is not None:
        paths = [Path(p) for p in args.cases_missed_in]
        require_files(paths)
        only = missed_in(paths)
    if not args.summary:
        games = args.games.split("|")
        misses = run(
            games, Path(args.out), kind=args.kind, iterations=args.iterations, only=only, min_depth=args.min_depth
        )
        print(f"{misses} rows miss the criterion")
    for row in summarize(Path(args.out)):
        print(" | ".join(row.values()))
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.target_quality")
