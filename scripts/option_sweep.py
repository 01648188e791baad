"""Every option of every `pvf` subcommand with hostile values: each run ends in a result or in one line.

    python scripts/option_sweep.py --checkpoint KUHN.ckpt --data LEDUC.h5 [--timeout 20] [--only generate] [--json]

The options come from the `pvf` parser itself (every subcommand and
sub-subcommand; `pvf train` from Lightning's `--help`). Each numeric option
gets the smallest and the largest value a user could type, zero, a
negative, NaN, infinity and a word; each text option the empty string, a
word and a number. A case passes if the command
  - exits 0 (the value was fine), or
  - exits 2 with exactly one line on stderr and no traceback, and leaves its
    empty working directory empty, or
  - is still working after `--timeout` seconds (the value was accepted and
    work had begun: the command is then stopped with SIGTERM and must exit
    143 with one line, leaving no half-written file),
and fails otherwise (a traceback, another exit status, several lines, files
left behind by a refusal). It prints the count of cases tried and each
failure. KUHN.ckpt: any net trained on Kuhn at move 3; LEDUC.h5: any Leduc
file at move 7 (`pvf generate --game leduc --depth 7 --trunks 4 --out LEDUC.h5`).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# smallest, largest, zero, negative, NaN, infinite, wrong type
INTEGERS = [str(-(2**63) - 1), str(2**63), "0", "-1", "nan", "inf", "abc"]
FLOATS = ["-1e308", "1e308", "0", "-1", "nan", "inf", "abc"]
TEXTS = ["", "abc", "-1"]
# The smallest valid invocation of each subcommand; the option under test is set in it (or appended).
BASES = {
    tuple(line.split()[:words]): line.split()
    for words, line in (
        (1, "solve kuhn_poker --iterations 5"),
        (1, "describe kuhn_poker"),
        (1, "generate --game kuhn_poker --depth 3 --trunks 2 --out d.h5"),
        (1, "inspect MISSING.h5"),
        (1, "evaluate --checkpoint CKPT --iterations 5 --skip-oracle"),
        (
            2,
            "evaluate sparse --checkpoint CKPT --root-move 2 --fractions 1.0 --equilibrium-iterations 20 "
            "--iterations 5 --out sp",
        ),
        (2, "reproduce fig3 --games leduc --seeds 1 --trunks 2 --max-steps 2 --eval-every 2 --out r"),
        (2, "reproduce fig4 --games leduc --seeds 1 --trunks 2 --max-steps 2 --fractions 1.0 --out r"),
        (
            2,
            "reproduce particles --games goofspiel8 --seeds 1 --particle-trunks 4 --particle-steps 2 --draws 1 --out r",
        ),
        (2, "experiment linear --steps 3 --out lin"),
        (2, "experiment leaf-targets --game kuhn_poker --depth 2"),
        (
            2,
            "experiment particle-trunks --game goofspiel5 --root-move 2 --depth 3 --draws 1 --seeds 0 --no-oracle "
            "--out o",
        ),
        (
            2,
            "train fit --config CONFIGS/data/leduc.yaml --config CONFIGS/model/particle.yaml --data.path DATA "
            "--trainer.max_steps 2",
        ),
    )
}
TRAIN_OPTIONS = [
    "--trainer.max_steps",
    "--data.batch_size",
    "--data.val_fraction",
    "--model.init_args.lr",
    "--seed_everything",
    "--run-dir",
    "--data.path",
    "--data.target",
]
SKIP = {"--help", "--version", "--json", "--progress", "--no-progress", "--print_config"}


def options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(subcommand path, option, takes a value, its type) for every option of every (sub-)subcommand."""
    for action in parser._actions:  # argparse offers no public walk of its parser tree
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from options(sub, (*path, name))
        elif action.option_strings and path in BASES:
            flag = max(action.option_strings, key=len)
            if flag in SKIP or action.help == argparse.SUPPRESS:
                continue
            takes = action.nargs != 0
            yield path, flag, takes, action.type


def with_option(base: list[str], flag: str, value: str | None) -> list[str]:
    args = list(base)
    if flag in args:
        i = args.index(flag)
        if value is None:
            return args
        args[i + 1] = value
        return args
    return [*args, flag] + ([] if value is None else [value])


def run_case(args: list[str], timeout: float, env: dict) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pvf.cli", *args],
            cwd=tmp,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            _, err = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=120)
            timed_out = True
        lines = [line for line in err.splitlines() if line.strip() and "Warning" not in line and "warn(" not in line]
        left = sorted(str(p.relative_to(tmp)) for p in Path(tmp).rglob("*"))
        if "Traceback" in err:
            return False, f"traceback: {err.strip().splitlines()[-1][:200]}"
        if timed_out:
            half = [p for p in left if p.endswith((".tmp", ".part"))]
            ok = proc.returncode in (143, -signal.SIGTERM) and not half  # -15: stopped while still starting up
            return ok, f"accepted, work begun; SIGTERM -> {proc.returncode}" + (f", left {half}" if half else "")
        if proc.returncode == 0:
            return True, "ran"
        if proc.returncode == 2:
            ok = len(lines) == 1 and not left
            return ok, lines[0][:160] if ok else f"{len(lines)} lines, left {left}: {' | '.join(lines)[:200]}"
        return False, f"exit {proc.returncode}: {' | '.join(lines)[-200:]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a running case counts as accepted")
    parser.add_argument("--only", help="comma-separated subcommands")
    parser.add_argument("--checkpoint", required=True, help="a small trained checkpoint (Kuhn, move 3)")
    parser.add_argument("--data", required=True, help="a small Leduc dataset at move 7 for pvf train")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from pvf.cli import build_parser

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    cases = []
    values = {int: INTEGERS, float: FLOATS}
    for path, flag, takes, kind in options(build_parser()):
        if args.only and path[0] not in args.only.split(","):
            continue
        for value in values.get(kind, TEXTS) if takes else [None]:
            cases.append((path, flag, value))
    if not args.only or "train" in args.only.split(","):
        cases += [(("train", "fit"), flag, v) for flag in TRAIN_OPTIONS for v in FLOATS]

    def one(case):
        path, flag, value = case
        argv = [
            a.replace("CKPT", args.checkpoint).replace("DATA", args.data).replace("CONFIGS", str(root / "configs"))
            for a in with_option(BASES[path], flag, value)
        ]
        ok, what = run_case(argv, args.timeout, env)
        print(f"{'ok  ' if ok else 'FAIL'} pvf {' '.join(path)} {flag} {value!r}: {what}", file=sys.stderr, flush=True)
        return {"command": " ".join(path), "option": flag, "value": value, "ok": ok, "outcome": what}

    with ThreadPoolExecutor(args.jobs) as pool:  # each case is its own process
        results = list(pool.map(one, cases))
    failures = [r for r in results if not r["ok"]]
    summary = {"cases": len(results), "failures": len(failures), "failed": failures}
    print(json.dumps(summary) if args.json else f"{len(results)} cases tried, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
