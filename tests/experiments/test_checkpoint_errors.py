"""`pvf evaluate` on what is not a usable checkpoint: one line, exit 2, nothing written.

Cases are real files made from a real checkpoint (truncated, without its
weights, with a NaN or infinite weight: a diverged run would otherwise
evaluate as the constant-zero evaluator, silently) or not checkpoints at all (a directory, random bytes, a plain torch
file). torch's own error for an unpicklable file advises retrying with
`weights_only=False`, which would run arbitrary code: pvf must never repeat it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from pvf.cli import main


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _make(case: str, source: Path, where: Path) -> Path:
    if case == "directory":
        path = where / "run"
        path.mkdir()
        return path
    path = where / f"{case}.ckpt"
    if case == "truncated":
        path.write_bytes(source.read_bytes()[:10_000])
    elif case == "random bytes":
        path.write_bytes(os.urandom(5_000))
    elif case == "no state_dict":
        checkpoint = torch.load(source, map_location="cpu", weights_only=True)
        del checkpoint["state_dict"]
        torch.save(checkpoint, path)
    elif case == "pickled object":
        torch.save({"pvf": object()}, path)  # not weights-only loadable
    elif case == "empty":
        path.write_bytes(b"")
    elif case in ("NaN weights", "infinite weights"):
        checkpoint = torch.load(source, map_location="cpu", weights_only=True)
        name = next(k for k, v in checkpoint["state_dict"].items() if k.startswith("net.") and v.is_floating_point())
        checkpoint["state_dict"][name][0] = float("nan") if case == "NaN weights" else float("inf")
        torch.save(checkpoint, path)
    return path


CASES = [
    "directory",
    "truncated",
    "random bytes",
    "no state_dict",
    "pickled object",
    "empty",
    "NaN weights",
    "infinite weights",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_checkpoints_are_one_line(case, kuhn_runs, tmp_path, capsys, monkeypatch):
    path = _make(case, Path(kuhn_runs["particle"].checkpoint), tmp_path)
    monkeypatch.chdir(tmp_path)
    before = _listing(tmp_path)
    assert main(["evaluate", "--checkpoint", str(path), "--save-policy", "p.json", "--skip-oracle"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pvf evaluate: error:"), err
    assert "weights_only" not in err[0] and "Traceback" not in err[0]
    assert _listing(tmp_path) == before
