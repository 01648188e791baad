"""The validation MSE of predicting the training mean: the yardstick for a value net's validation loss.

    python -m pvf.experiments.target_variance FILE.h5 [--val-fraction 0.1] [--split-seed 0] [--target average]

Splits the file's samples as `PbsDataModule` does (`split_by_trunk`, the
configs' defaults), normalises targets as the nets see them
(`normalized_rows`: divided by the opponent's belief mass per sample) and
prints the mean squared error on validation rows of the constant that
minimises it on training rows (the training mean). A validation loss near
this figure means the net learned nothing that generalises. It also prints
the share of the validation variance that lies within a PBS and player
(targets minus their PBS-and-player mean): what a net must get from which
infostate a row is, beyond the PBS as a whole.
"""

from __future__ import annotations

import argparse

import numpy as np

from pvf.datasets.reader import PBSDataset
from pvf.trainers.data import split_by_trunk
from pvf.valuefn.encoding import normalized_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--split-seed", type=int, default=0)
    parser.add_argument("--target", choices=("average", "current"), default="average")
    args = parser.parse_args()
    with PBSDataset(args.path) as ds:
        counts = np.diff(ds.offset)
        rows = {
            "belief": ds.belief,
            "player": ds.player,
            "counts": counts,
            "target": ds.target if args.target == "average" else ds.target_current,
        }
        _, target, _ = normalized_rows(rows, normalize=True)
        train, val = split_by_trunk(ds.trunk, args.val_fraction, args.split_seed)
    sample = np.repeat(np.arange(len(counts)), counts)
    is_val = np.isin(sample, val)
    mean = target[~is_val].mean()
    group = 2 * sample + rows["player"]
    group_mean = np.bincount(group, weights=target) / np.maximum(np.bincount(group), 1)
    within = np.mean((target - group_mean[group])[is_val] ** 2)
    print(
        f"{args.path}: {len(train)} training / {len(val)} validation samples; "
        f"validation MSE of the training mean {np.mean((target[is_val] - mean) ** 2):.5g} "
        f"(validation variance {target[is_val].var():.5g}, of which within a PBS and player "
        f"{within / target[is_val].var():.0%})"
    )


if __name__ == "__main__":
    main()
