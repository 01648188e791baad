"""Fixed-seed fingerprint of pvf's outputs, to show that a refactoring changed no result.

    python scripts/fingerprint.py record DIR [--only NAME,...]     # run the cases into DIR, write DIR/fingerprint.json
    python scripts/fingerprint.py compare A/fingerprint.json B/fingerprint.json [--common]
    python scripts/fingerprint.py reload OLD_DIR NEW_DIR   # this checkout loads OLD_DIR's files as OLD_DIR's did

`record` runs a fixed list of `pvf` commands (solve with CFR+ and MMD,
both dataset pipelines, fig. 3 and fig. 4 for Leduc and Goofspiel-5 at a
few hundred steps, `pvf evaluate --json` for every architecture, a particle
sweep at small K, particle fig. 4 for Goofspiel-8, the appendix experiments)
and hashes what each writes: JSON printed on stdout, CSV files, every array
and attribute of every HDF5 file, every tensor of every checkpoint. Wall
times, paths and pvf's version are left out, nothing else; equal hashes
mean bit-identical numbers. `reload` evaluates and inspects the datasets
and checkpoints an earlier checkout wrote with this checkout's code and
compares with what that checkout printed for them. A full `record` takes
about 6 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

VOLATILE = (
    "second",
    "time",
    "ms_per",
    "path",
    "csv",
    "png",
    "out",
    "data",
    "checkpoint",
    "pvf_version",
    "created",
    "network",
    "policy",
    "version",
)


def _volatile(key: str) -> bool:
    return any(word in key.lower() for word in VOLATILE)


def _strip(obj):
    """JSON without wall times and paths."""
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in sorted(obj.items()) if not _volatile(k)}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _csv_digest(path: Path) -> str:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    keep = [i for i, name in enumerate(rows[0]) if not _volatile(name)] if rows else []
    return _digest(json.dumps([[row[i] for i in keep] for row in rows]).encode())


def _h5_digest(path: Path) -> str:
    import h5py
    import numpy as np

    parts = []

    def visit(name, obj):
        for key in sorted(obj.attrs):
            if not _volatile(key):
                value = obj.attrs[key]
                parts.append(
                    f"{name}@{key}={np.asarray(value).tobytes().hex() if hasattr(value, 'tobytes') else value}"
                )
        if isinstance(obj, h5py.Dataset):
            parts.append(f"{name}:{obj.dtype}:{obj.shape}:{_digest(np.ascontiguousarray(obj[()]).tobytes())}")

    with h5py.File(path, "r") as f:
        visit("/", f)
        f.visititems(visit)
    return _digest("\n".join(parts).encode())


def _ckpt_digest(path: Path) -> str:
    import torch

    state = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
    return _digest("\n".join(f"{k}:{_digest(v.numpy().tobytes())}" for k, v in sorted(state.items())).encode())


def _run(argv: list[str], cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "pvf.cli", *argv], cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"pvf {' '.join(argv)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return out.stdout


def _json_digest(stdout: str) -> str:
    return _digest(json.dumps(_strip(json.loads(stdout)), sort_keys=True).encode())


G5 = "goofspiel5"
CASES: dict[str, list[list[str]]] = {
    "solve": [
        "solve kuhn_poker --iterations 200 --json --save-policy solve/kuhn.json".split(),
        "solve leduc_poker --iterations 100 --json".split(),
        "solve leduc_poker --iterations 100 --solver mmd --json".split(),
        "solve leduc_poker --iterations 50 --solver mmd --schedule sqrt --json".split(),
        "describe leduc --json".split(),
    ],
    "generate": [
        "generate --game leduc --depth 7 --trunks 6 --out generate/leduc.h5 --json".split(),
        "generate --game leduc --depth 7 --trunks 4 --solver mmd --out generate/leduc-mmd.h5 --json".split(),
        (
            f"generate --game {G5} --depth 3 --trunks 8 --task-size 4 --particles 8 --out generate/particles.h5 --json"
        ).split(),
        (
            f"generate --game {G5} --depth 3 --trunks 6 --task-size 3 --particles 4 --rows children --out "
            "generate/children.h5 --json"
        ).split(),
        "inspect generate/particles.h5 --json".split(),
    ],
    "fig3": [
        (
            f"reproduce fig3 --games leduc,{G5} --architectures positional,particle,attention --seeds 2 "
            "--trunks 12 --max-steps 120 --eval-every 60 --out reproduce --json --no-progress"
        ).split(),
    ],
    "fig4": [
        (
            f"reproduce fig4 --games leduc,{G5} --seeds 2 --trunks 12 --max-steps 120 --fractions 1.0,0.5 "
            "--out reproduce --json --no-progress"
        ).split(),
    ],
    "evaluate": [
        (
            "evaluate --checkpoint "
            "reproduce/checkpoints/leduc-d7-t12-k100-seed0-positional-steps120-b64-ens.ckpt --json"
        ).split(),
        (
            "evaluate --checkpoint "
            "reproduce/checkpoints/leduc-d7-t12-k100-seed1-particle-steps120-b64-ens.ckpt --json --solver mmd "
            "--iterations 30"
        ).split(),
        (
            f"evaluate --checkpoint reproduce/checkpoints/{G5}-d2-t12-k100-seed0-attention-steps120-b64-ens.ckpt --json"
        ).split(),
        (
            "evaluate sparse --checkpoint "
            "reproduce/checkpoints/leduc-d7-t12-k100-seed0-particle-steps120-b64-ens.ckpt --fractions 1.0,0.3 "
            "--seeds 0,1 --out evaluate/sparse --json"
        ).split(),
    ],
    "particle-sweep": [
        (
            f"experiment particle-trunks --game {G5} --root-move 2 --depth 3 --draws 1,4 --seeds 0,1 --network "
            f"reproduce/checkpoints/{G5}-d3-t12-k100-seed0-particle-steps120-b64-ens.ckpt --targets --out "
            "sweep --json --save-policy sweep/policy.json"
        ).split(),
        (
            f"experiment particle-trunks --game {G5} --root-move 1 --depth 2 --draws 2 --seeds 0 --roots drawn "
            "--reference uniform --out sweep-drawn --json"
        ).split(),
    ],
    "particles": [
        (
            "reproduce fig4 --games goofspiel8 --seeds 1 --particle-trunks 24 --particle-steps 20 --draws 1,2 "
            "--out particles --json --no-progress"
        ).split(),
    ],
    "appendix": [
        "experiment linear --steps 40 --out linear --json".split(),
        "experiment leaf-targets --game kuhn_poker --depth 2 --json".split(),
    ],
}


def record(out: Path, only: list[str] | None) -> dict[str, str]:
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("solve", "generate", "evaluate", "sweep"):
        (out / sub).mkdir(exist_ok=True)
    done = out / "stdout.json"  # a rerun with --only adds to what earlier runs printed
    prints: dict[str, str] = json.loads(done.read_text()) if done.exists() else {}
    for name, commands in CASES.items():
        if only and name not in only:
            continue
        for i, argv in enumerate(commands):
            print(f"[{name} {i}] pvf {' '.join(argv)}", file=sys.stderr, flush=True)
            prints[f"{name}.{i}.stdout"] = _json_digest(_run(argv, out))
        done.write_text(json.dumps(prints, indent=1, sort_keys=True))
    return {**prints, **files_digest(out)}


def files_digest(out: Path) -> dict[str, str]:
    digests = {}
    for path in sorted(out.rglob("*")):
        rel = str(path.relative_to(out))
        if ".parts" in rel or "lightning_logs" in rel or path.is_dir():
            continue
        if path.suffix == ".csv":
            digests[rel] = _csv_digest(path)
        elif path.suffix == ".h5":
            digests[rel] = _h5_digest(path)
        elif path.suffix == ".ckpt":
            digests[rel] = _ckpt_digest(path)
        elif path.suffix == ".json" and path.name not in ("fingerprint.json", "stdout.json"):
            digests[rel] = _digest(json.dumps(_strip(json.loads(path.read_text())), sort_keys=True).encode())
    return digests


def compare(a: dict[str, str], b: dict[str, str], common: bool = False) -> int:
    keys = sorted(set(a) & set(b) if common else set(a) | set(b))
    bad = [k for k in keys if a.get(k) != b.get(k)]
    for k in bad:
        print(f"DIFFERS {k}: {a.get(k)} != {b.get(k)}")
    print(f"{len(keys) - len(bad)} of {len(keys)} outputs bit-identical")
    return 1 if bad else 0


def reload(old: Path, new: Path) -> dict[str, str]:
    """This checkout's `evaluate --json` of OLD's checkpoints and `inspect --json` of OLD's datasets."""
    digests = {}
    for i, argv in enumerate(CASES["evaluate"][:3]):
        argv = [a if not a.endswith(".ckpt") else str((old / a).resolve()) for a in argv]
        digests[f"evaluate.{i}.stdout"] = _json_digest(_run(argv, new))
    digests["generate.4.stdout"] = _json_digest(
        _run(["inspect", str((old / "generate/particles.h5").resolve()), "--json"], new)
    )
    return digests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("record", help="run the cases into DIR and write DIR/fingerprint.json")
    r.add_argument("dir", type=Path)
    r.add_argument("--only", help="comma-separated case names: " + ", ".join(CASES))
    c = sub.add_parser("compare", help="compare two fingerprint.json files")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--common", action="store_true", help="only the outputs both files hold (a partial record)")
    lo = sub.add_parser("reload", help="this checkout reads OLD_DIR's datasets and checkpoints as OLD_DIR's did")
    lo.add_argument("old", type=Path)
    lo.add_argument("new", type=Path)
    args = parser.parse_args()
    if args.verb == "record":
        digests = record(args.dir, args.only.split(",") if args.only else None)
        (args.dir / "fingerprint.json").write_text(json.dumps(digests, indent=1, sort_keys=True))
        print(f"{len(digests)} outputs fingerprinted in {args.dir / 'fingerprint.json'}")
        return 0
    if args.verb == "compare":
        return compare(json.loads(args.a.read_text()), json.loads(args.b.read_text()), args.common)
    args.new.mkdir(parents=True, exist_ok=True)
    before = json.loads((args.old / "stdout.json").read_text())
    after = reload(args.old, args.new)
    return compare({k: before[k] for k in after}, after)


if __name__ == "__main__":
    sys.exit(main())
