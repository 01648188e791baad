"""Where a value net's validation error lives: its squared error by belief, player and public state.

    python -m pvf.experiments.row_errors FILE.h5 A.ckpt [B.ckpt ...] [--split-seed 0] [--pbs 20000] [--json]

For each checkpoint (all trained on FILE; any architecture):
  1. the validation PBSs of seed `--split-seed` (`split_by_trunk` with the
     validation share of configs/train.yaml, as training split them: an
     ensemble member's seed is its split seed; the first `--pbs` of them), encoded and predicted as in training, targets
     normalised as the nets see them;
  2. the mean squared error over all rows, over rows of zero and of
     positive belief, per player, and per public state;
  3. against the first checkpoint, each group's error as a ratio (B's over
     A's), and the ratios' range and median over the public states.
It also reports whether any PBS holds two rows with the same input features
(which no set network could tell apart).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError, require_files
from pvf.module_main import run_module
from pvf.trainers.configs import training_defaults
from pvf.trainers.data import PbsTorchDataset, split_by_trunk
from pvf.valuefn.architecture import Batch
from pvf.valuefn.encoding import PbsRows, normalized_rows
from pvf.valuefn.network import Network, load_value_function

CHUNK = 2000


def validation_predictions(
    data: Path, net: Network, split_seed: int, pbs: int, val_fraction: float
) -> Iterator[tuple[np.ndarray, PbsRows, Batch, torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Step 1: the net on the first `pbs` validation PBSs of `data` (split `split_seed`), `CHUNK` at a time:
    (their PBS ids in the file [C], their rows, the encoded batch, values, targets, mask [C, N])."""
    with PBSDataset(data) as ds:
        trunk = ds.trunk
    _, val = split_by_trunk(trunk, val_fraction, split_seed)
    val = val[:pbs]
    dataset = PbsTorchDataset(data, val, net.meta.layout.target)
    for lo in range(0, len(val), CHUNK):
        hi = min(lo + CHUNK, len(val))
        rows = dataset.__getitems__(list(range(lo, hi)))
        batch = net.meta.encoding.encode_batch(rows, net.meta.layout)
        with torch.no_grad():
            values, targets, mask = net.meta.encoding.predict(net.net, batch)
        yield val[lo:hi], rows, batch, values, targets, mask


def row_errors(data: Path, checkpoint: Path, split_seed: int, pbs: int, val_fraction: float) -> dict[str, Any]:
    """Steps 1–2 for one checkpoint: squared errors [rows] and each row's belief, player and public state."""
    net = load_value_function(checkpoint)
    with PBSDataset(data) as ds:
        public_state = ds.public_state
    errors, belief, player, state = [], [], [], []
    repeated: int | None = None  # only set networks read rows as features
    for ids, rows, batch, values, targets, mask in validation_predictions(data, net, split_seed, pbs, val_fraction):
        errors.append(((values - targets) ** 2)[mask].numpy())
        b, _, _ = normalized_rows(rows, net.meta.layout.normalize)
        sample = np.repeat(np.arange(len(rows["counts"])), rows["counts"])
        belief.append(b)
        player.append(rows["player"])
        state.append(public_state[ids[sample]])
        if "features" in batch:
            repeated = repeated or 0
            for features, keep in zip(batch["features"].numpy(), batch["mask"].numpy()):
                repeated += len(np.unique(features[keep], axis=0)) < int(keep.sum())
    return {
        "error": np.concatenate(errors),
        "belief": np.concatenate(belief),
        "player": np.concatenate(player),
        "state": np.concatenate(state),
        "pbs_with_repeated_rows": repeated,
    }


def groups(rows: dict[str, Any]) -> dict[str, float]:
    """Step 2: mean squared error per group."""
    e, b, p = rows["error"], rows["belief"], rows["player"]
    return {
        "all": float(e.mean()),
        "zero belief": float(e[b == 0].mean()) if np.any(b == 0) else float("nan"),
        "positive belief": float(e[b > 0].mean()),
        "player 1": float(e[p == 0].mean()),
        "player 2": float(e[p == 1].mean()),
    }


def per_state(rows: dict[str, Any]) -> dict[int, float]:
    """Step 2: mean squared error per public state."""
    states, index = np.unique(rows["state"], return_inverse=True)
    means = np.bincount(index, weights=rows["error"]) / np.bincount(index)
    return dict(zip(states.tolist(), means.tolist()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the PBS file the checkpoints were trained on")
    parser.add_argument("checkpoints", type=Path, nargs="+", help="the first is the reference of the ratios")
    parser.add_argument("--split-seed", type=int, default=0, help="the training seed whose validation split is read")
    parser.add_argument("--pbs", type=int, default=20000, help="validation PBSs read (default 20000)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    require_files([args.data, *args.checkpoints])
    if args.pbs < 1:
        raise PvfError("--pbs must be positive")
    share = training_defaults().val_fraction
    rows = [row_errors(args.data, c, args.split_seed, args.pbs, share) for c in args.checkpoints]
    reference, reference_states = groups(rows[0]), per_state(rows[0])
    report = []
    for path, r in zip(args.checkpoints, rows):
        mine, states = groups(r), per_state(r)
        ratios = np.array([states[s] / reference_states[s] for s in states])
        report.append(
            {
                "checkpoint": str(path),
                "rows": len(r["error"]),
                "mse": mine,
                "ratio": {k: mine[k] / reference[k] for k in mine},
                "public_states": len(states),
                "state_ratio": {
                    "min": float(ratios.min()),
                    "median": float(np.median(ratios)),
                    "max": float(ratios.max()),
                },
                "pbs_with_repeated_rows": r["pbs_with_repeated_rows"],
            }
        )
    if args.json:
        print(json.dumps({"data": str(args.data), "split_seed": args.split_seed, "checkpoints": report}))
        return 0
    for item in report:
        print(f"{item['checkpoint']}: {item['rows']} rows, {item['public_states']} public states")
        for name, value in item["mse"].items():
            print(f"  {name:16s} MSE {value:.3e}  (× {item['ratio'][name]:.2f} the first checkpoint's)")
        s = item["state_ratio"]
        print(f"  per public state × {s['min']:.2f} to {s['max']:.2f} (median {s['median']:.2f})")
        if item["pbs_with_repeated_rows"] is not None:
            print(f"  PBSs with two rows of the same features: {item['pbs_with_repeated_rows']}")
    return 0


if __name__ == "__main__":
    run_module(main, "python -m pvf.experiments.row_errors")
