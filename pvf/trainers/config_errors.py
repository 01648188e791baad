"""`pvf train`'s configuration mistakes as one line naming the key and, where one is near, the valid key meant.

jsonargparse reports a bad option or config as a multi-line message (the
Union of subtypes it tried, the value's type, ...) after the whole usage
text. `summarize(message, known, configs)` reduces it to what a user acts
on:
  - an unknown option (`--data.pth`): the nearest option the command has;
  - a key a class does not accept (`lrr` in a config or `--model.init_args.lrr`):
    the nearest of the arguments pvf's classes accept;
  - a value of the wrong type (`lr: nan`), a class path that does not exist,
    a config file that is missing or is not YAML (which file, which line).
`known`: the option strings of the parser that failed (from its help text);
`configs`: the `--config` files given, to find the one that does not parse.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml


def option_strings(help_text: str) -> list[str]:
    """The `--options` a parser's help text lists."""
    return sorted(set(re.findall(r"--[A-Za-z0-9_.\-]+", help_text)))


def accepted_keys(classes: Iterable[type]) -> list[str]:
    """The constructor arguments of these classes (what their `init_args` accept)."""
    keys = set()
    for cls in classes:
        keys.update(p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "args", "kwargs"))
    return sorted(keys)


def _nearest(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _bad_yaml(configs: Sequence[str]) -> str | None:
    """'FILE: line L, column C: PROBLEM' for the first config that is not valid YAML."""
    for path in configs:
        try:
            yaml.safe_load(Path(path).read_text())
        except (OSError, UnicodeDecodeError):
            continue
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
            return f"{path} is not valid YAML ({where}{getattr(exc, 'problem', None) or exc})"
    return None


def summarize(message: str, known: Sequence[str], keys: Sequence[str], configs: Sequence[str]) -> str:
    """One line for jsonargparse's error `message` (module docstring)."""
    text = message.strip()
    if text.startswith("unrecognized arguments:"):
        given = text.split(":", 1)[1].split()
        options = [g.split("=", 1)[0] for g in given if g.startswith("--")] or given[:1]
        return f"unknown option {options[0]}{_nearest(options[0], known)} (pvf train fit --help lists them)"
    if text.startswith("Problems parsing config"):
        bad = _bad_yaml(configs)
        return bad or f"a config is not valid YAML: {' '.join(text.split(':', 1)[1].split())}"
    missing = re.search(r"File does not exist: '([^']*)'", text)
    if missing:
        return f"no config file {missing[1]}; configs/data/ and configs/model/ hold pvf's"
    parents = re.findall(r'Parser key "([^"]+)"', text)
    where = ".".join(dict.fromkeys(parents)) or "a config"
    option = re.search(r"Option '([^']+)' is not accepted", text)
    if option:
        return f"{where}: unknown key {option[1]!r}{_nearest(option[1], keys)}"
    expected = re.search(r"Expected an? (?:<class '([^']+)'>|(\S+))\.? Got value: (.+)", text)
    if expected:
        return f"{where}: expected a {expected[1] or expected[2]}, got {expected[3].strip()}"
    class_path = re.search(r"Problem with given class_path '([^']+)':\s*\n\s*(.+)", text)
    if class_path:
        return f"{where}: no class {class_path[1]} ({class_path[2].strip()}); e.g. pvf.valuefn.particle.Particle"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "invalid configuration")
    return f"{where}: {first}" if where != "a config" else first
