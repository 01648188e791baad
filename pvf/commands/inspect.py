"""`pvf inspect F.h5`: what a PBS dataset file holds.

Validates the file against docs/hdf5_schema.md (structure and values:
indices in range, finite beliefs in [0, 1], finite targets) and prints its provenance,
the number of samples per public state (and for particle files K and the
options that shaped the samples), statistics of beliefs and targets
and the largest zero-sum residual |Σ b₁·v₁ + Σ b₂·v₂| over its samples (0 up to
rounding for a profile's values; best-response targets need not sum to 0).
A file that is not a complete pvf PBS file is an error (exit status 2).
"""

from __future__ import annotations

import argparse
import json

from pvf.solvers.guarded_values import RESPONSE_TARGETS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("inspect", help="validate a PBS dataset file and summarise it", description=__doc__)
    p.add_argument("file", metavar="F.h5", help="a file written by pvf generate")
    p.add_argument("--seed", type=int, default=0, help="unused (inspection is deterministic); accepted for uniformity")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pvf.datasets.reader import PBSDataset

    with PBSDataset(args.file) as ds:
        summary = ds.summary()
    if args.json:
        print(json.dumps(summary, allow_nan=False))
        return 0
    attrs = summary["attrs"]
    print(f"file                 {summary['path']}")
    for key in (
        "schema",
        "schema_version",
        "game",
        "depth",
        "num_trunks",
        "cfr_iterations",
        "solver",
        "seed",
        "target",
        "task_size",
        "pvf_version",
        "created",
    ):
        print(f"{key:<21}{attrs[key]}")
    print(f"{'sampling':<21}{json.dumps(attrs['sampling'], sort_keys=True)}")
    feats = attrs["features"]
    print(
        f"{'features':<21}public {feats['public_dim']} ({feats['public_encoder']}), private "
        f"{feats['private_dim']} ({feats['private_encoder']})"
    )
    print(
        f"samples              {summary['num_samples']:,} ({summary['num_infostate_rows']:,} infostate rows, "
        f"{summary['num_trunks_present']} trunks)"
    )
    if "particles" in attrs:  # particle files: how the samples were drawn and what their rows hold
        optional = ("subgame", "rows", "public_states", "rollout_input", "target_network", "solve_network")
        extra = "".join(f", {key} {attrs[key]}" for key in optional if key in attrs)
        print(f"{'particles':<21}K = {attrs['particles']}, max_histories {attrs['max_histories']:,}{extra}")
    counts = summary["samples_per_public_state"]
    per = sorted(set(counts.values()))
    print(f"public states        {len(counts)}, samples each: {', '.join(map(str, per))}")
    for name in ("belief", "target", "target_current"):
        s = summary[name]
        print(f"{name:<21}mean {s['mean']:.6g}  std {s['std']:.6g}  min {s['min']:.6g}  max {s['max']:.6g}")
    # best responses to the opponent's equilibrium strategy are not a profile's values: their sum need not be 0
    not_a_profile = ": best responses, need not be 0" if attrs["target"] in RESPONSE_TARGETS else ""
    print(
        f"zero-sum residual    max {summary['max_zero_sum_residual']:.3g} (target{not_a_profile}), "
        f"{summary['max_zero_sum_residual_current']:.3g} (target_current)"
    )
    return 0
