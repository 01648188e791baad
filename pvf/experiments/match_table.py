"""Head-to-head matches of pvf agents (`pvf play`'s table for games too large to judge exactly).

For each pairing `AGENT@OPPONENT` (an agent SPEC, pvf.agents.spec; an
opponent SPEC or an OpenSpiel bot, `random`, `ismcts[:sims=N,greed=β]`, `mcts`):
  1. the games of the match, seats swapped every game, each reproducible on
     its own (`pvf.agents.matches`), every result appended to
     `<out>-games.csv` as soon as the game ends: a rerun plays only the
     games missing (resumable; a larger `--games` extends the matches).
     Runs of different pairings may share the log at once; a pairing being
     played by another process is refused (a lock per pairing beside the
     log), so no game is played twice;
  2. one row per pairing in `<out>-games.csv`, with all its games there
     (`agent, opponent, games, mean_return, ci95, seconds_per_move`;
     mean_return is the agent's mean return per game, ci95 the half-width
     of its normal 95% interval), written to `<out>` after each pairing, and
     a PNG of the mean returns with their intervals beside it. A later run
     of some pairings (more games for them) keeps the others' rows.

    python -m pvf.experiments.match_table --game goofspiel13 --out docs/figures/play/goofspiel13.csv \\
        --pairings "particles:k=16,leaves=rollout,horizon=1@random;particles:k=16,leaves=rollout,horizon=1@ismcts" \\
        --games 200
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from tqdm import tqdm

from pvf.agents.matches import GameResult, agent_bots, opponent_bots, play_games, summary
from pvf.agents.spec import parse_agent
from pvf.errors import PvfError
from pvf.games.loading import LoadedGame, load_game
from pvf.module_main import run_module
from pvf.outputs import output_lock
from pvf.results import write_csv

COLUMNS = ("agent", "opponent", "games", "mean_return", "ci95", "seconds_per_move")
GAME_COLUMNS = ("agent", "opponent", "index", "seat", "agent_return", "moves", "seconds")


def _played(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def logged(log: Path) -> dict[tuple[str, str], list[GameResult]]:
    """Every pairing's games in the log (pairings in order of first appearance, games by index)."""
    pairings: dict[tuple[str, str], dict[int, GameResult]] = {}
    for r in _played(log):
        result = GameResult(
            int(r["index"]), int(r["seat"]), float(r["agent_return"]), int(r["moves"]), float(r["seconds"])
        )
        pairings.setdefault((r["agent"], r["opponent"]), {})[result.index] = result
    return {key: [games[i] for i in sorted(games)] for key, games in pairings.items()}


def pairing_lock(log: Path, agent: str, opponent: str) -> Path:
    """What `output_lock` holds while a process plays `agent` against `opponent` into `log` (a hidden file)."""
    return log.with_name(f".{log.stem}-{hashlib.sha256(f'{agent}@{opponent}'.encode()).hexdigest()[:12]}")


def play_pairing(
    loaded: LoadedGame, agent: str, opponent: str, games: int, seed: int, log: Path, progress: bool = True
) -> list[GameResult]:
    """Games 0..games-1 of `agent` against `opponent`, those in `log` read back, the others played and appended."""

    def read_back() -> tuple[dict[int, GameResult], list[int]]:
        done = {r.index: r for r in logged(log).get((agent, opponent), [])}
        return done, [i for i in range(games) if i not in done]

    done, missing = read_back()
    if not missing:  # nothing to play: no lock taken
        return [done[i] for i in range(games)]
    lock = ExitStack()
    try:
        lock.enter_context(output_lock(pairing_lock(log, agent, opponent)))
    except PvfError:
        raise PvfError(
            f"{agent} vs {opponent} is being played into {log} by another process; wait for it, or stop it and rerun"
        ) from None
    with lock:
        done, missing = read_back()  # with what a run before the lock added
        agents = agent_bots(parse_agent(agent), loaded, seed)
        opponents = opponent_bots(opponent, loaded, seed)
        with log.open("a", newline="") as f:
            writer = csv.writer(f)
            if f.tell() == 0:
                writer.writerow(GAME_COLUMNS)
            results = play_games(loaded, agents, opponents, missing, seed)
            label = f"{agent} vs {opponent}"
            for result in tqdm(results, total=len(missing), desc=label[:60], unit="game", disable=not progress):
                writer.writerow(
                    [agent, opponent, result.index, result.seat, result.agent_return, result.moves, result.seconds]
                )
                f.flush()
                done[result.index] = result
    return [done[i] for i in range(games)]


def short_label(spec: str) -> str:
    """A SPEC as the figure labels it: each checkpoint by its file name, not its path."""
    return re.sub(r"[^,=+@:]*/([^/,=+@:]+\.ckpt)", r"\1", spec)


def wrapped(spec: str, width: int = 48) -> str:
    """A SPEC's label on lines of at most about `width` characters, broken after its commas."""
    lines = [""]
    for part in short_label(spec).split(","):
        piece = part if not lines[-1] else "," + part
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines[-1] += ","
            lines.append(part)
        else:
            lines[-1] += piece
    return "\n".join(lines)


def plot_matches(rows: Sequence[dict], path: Path, game: str) -> None:
    """Mean return per pairing with its 95% interval (horizontal bars)."""
    labels = [f"{wrapped(r['agent'])}\nvs {wrapped(r['opponent'])}" for r in rows]
    spans = np.array([max(1.0, (label.count("\n") + 1) / 2) for label in labels])  # a row per two label lines
    y = np.cumsum(spans) - spans / 2
    fig = Figure(figsize=(8, 1.2 + 0.5 * spans.sum()), layout="constrained")
    ax = fig.subplots()
    ax.errorbar([r["mean_return"] for r in rows], y, xerr=[r["ci95"] for r in rows], fmt="o", capsize=4)
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_ylim(spans.sum(), 0)  # the first pairing on top
    ax.set_xlabel("agent's mean return per game (95% interval)")
    games = sorted({int(r["games"]) for r in rows})
    fig.suptitle(  # over the whole figure: the labels make the axes narrow
        f"{game}:\n{'–'.join(map(str, games[:: max(len(games) - 1, 1)]))} games per pairing, seats swapped", fontsize=9
    )
    fig.savefig(path, dpi=120)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", required=True, help="OpenSpiel game string or alias")
    parser.add_argument("--pairings", required=True, help="AGENT@OPPONENT pairs separated by ';'")
    parser.add_argument("--games", type=int, default=100, help="games per pairing, seats swapped (default 100)")
    parser.add_argument("--out", required=True, help="the summary CSV; <out>-games.csv and the PNG go beside it")
    parser.add_argument("--seed", type=int, default=0, help="the matches' seed (default 0)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    pairings = [p.strip().rpartition("@") for p in args.pairings.split(";") if p.strip()]
    if not pairings or any(not a or not o for a, _, o in pairings):
        raise PvfError("--pairings takes AGENT@OPPONENT pairs separated by ';'")
    if args.games < 2:
        raise PvfError("--games must be at least 2 (one game per seat)")
    loaded = load_game(args.game)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.with_name(out.stem + "-games.csv")
    for agent, _, opponent in pairings:
        results = play_pairing(loaded, agent, opponent, args.games, args.seed, log, not args.no_progress)
        figures = summary(results)
        print(
            f"{agent} vs {opponent}: {figures['mean_return']:+.3f} ± {figures['ci95']:.3f} ({figures['games']} games)"
        )
        figures_of = {pair: summary(results) for pair, results in logged(log).items()}
        rows = [{"agent": a, "opponent": o, **{k: f[k] for k in COLUMNS[2:]}} for (a, o), f in figures_of.items()]
        write_csv(rows, out)
        plot_matches(rows, out.with_suffix(".png"), loaded.game_string)
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.match_table")
