"""pvf/experiments/summarize_fig3.py: window statistics against hand-computed ones.

And against the figures docs/results/reproduction.md quotes.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from pvf.experiments import summarize_fig3

ROOT = Path(__file__).resolve().parents[2]

FIELDS = [
    "game",
    "architecture",
    "seed",
    "step",
    "epoch",
    "train_loss",
    "val_loss",
    "trunk_exploitability",
    "trunk_exploitability_openspiel",
]
# architecture -> seed -> exploitability at steps 0, 10, 20, 30 (train_loss = exploitability / 100)
CURVES = {
    "positional": {0: [3.0, 0.5, 0.4, 0.2], 1: [3.0, 0.3, 0.6, 0.4]},
    "particle": {0: [1.0, 0.6, 0.5, 0.3], 1: [1.0, 0.1, 0.6, 0.1]},
}


@pytest.fixture
def curves_csv(tmp_path):
    path = tmp_path / "fig3-toy.csv"
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for arch, seeds in CURVES.items():
            for seed, values in seeds.items():
                for i, value in enumerate(values):
                    writer.writerow(
                        {
                            "game": "toy",
                            "architecture": arch,
                            "seed": seed,
                            "step": 10 * i,
                            "epoch": i,
                            "train_loss": value / 100,
                            "val_loss": "nan",
                            "trunk_exploitability": value,
                            "trunk_exploitability_openspiel": value / 2,
                        }
                    )
    return path


def test_windows_match_hand_computed_statistics(curves_csv):
    summary = summarize_fig3.summarize(summarize_fig3.read_curves(curves_csv), last_k=2, skip=1)
    for arch, seeds in CURVES.items():
        table = summary["architectures"][arch]
        expected = {
            "second_half": [statistics.mean(v[2:]) for v in seeds.values()],  # steps >= 30 / 2
            "last_k": [statistics.mean(v[-2:]) for v in seeds.values()],
            "last": [v[-1] for v in seeds.values()],
            "best": [min(v) for v in seeds.values()],
            "train_mse_end": [v[-1] / 100 for v in seeds.values()],
        }
        for window, values in expected.items():
            assert table[window]["mean"] == pytest.approx(statistics.mean(values), abs=1e-12)
            assert table[window]["std"] == pytest.approx(statistics.pstdev(values), abs=1e-12)
    comp = summary["comparison"]
    # second halves: positional 0.3, 0.5; particle 0.4, 0.35 -> only seed 1 lower
    assert comp["seeds_lower_second_half"] == "1 of 2"
    assert comp["second_half_difference_mean"] == pytest.approx(-0.025)
    assert comp["second_half_difference_sem"] == pytest.approx(statistics.stdev([0.1, -0.15]) / 2**0.5)
    # after the first measurement: seed 0 0.6>0.5, 0.5>0.4, 0.3>0.2; seed 1 0.1<=0.3, 0.6<=0.6, 0.1<=0.4
    assert comp["pairs_compared"] == 6 and comp["share_at_or_below"] == pytest.approx(3 / 6)
    # seed means at steps 10, 20, 30: positional 0.4, 0.5, 0.3; particle 0.35, 0.55, 0.2
    assert comp["first_step_mean_at_or_below"] == 10 and comp["step_from_which_mean_stays_at_or_below"] == 30
    assert comp["ratio"]["second_half"] == pytest.approx(0.375 / 0.4)


def test_docs_quote_the_committed_leduc_figures():
    summary = summarize_fig3.summarize(summarize_fig3.read_curves(ROOT / "docs/figures/reproduce/fig3-leduc.csv"))
    text = (ROOT / "docs" / "results" / "reproduction.md").read_text()
    for arch in ("positional", "particle"):
        half = summary["architectures"][arch]["second_half"]
        assert f"{half['mean']:.3f} ± {half['std']:.3f}" in text
    assert f"{summary['comparison']['ratio']['second_half']:.2f}" in text


def test_every_keeps_the_coarser_intervals_measurements(curves_csv):
    """--every 20 on a run measured every 10 steps: steps 0 and 20 only; the windows follow from those."""
    curves = summarize_fig3.read_curves(curves_csv, every=20)
    for arch, seeds in CURVES.items():
        for seed, values in seeds.items():
            assert list(curves[arch][seed]["step"]) == [0, 20]
            assert list(curves[arch][seed]["expl"]) == [values[0], values[2]]
    summary = summarize_fig3.summarize(curves, last_k=1, skip=0)
    assert summary["architectures"]["particle"]["last"]["mean"] == pytest.approx(statistics.mean([0.5, 0.6]))
