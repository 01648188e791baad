"""Small self-contained experiments from the paper's appendices."""

from pvf.experiments.linear_targets import VARIANTS, plot_curves, run_linear_targets, curve_rows

__all__ = ["VARIANTS", "plot_curves", "run_linear_targets", "curve_rows"]
