"""pvf: particle value functions for depth-limited solving of imperfect-information games.

The public API (`pvf.api`, imported on first use so that `import pvf` stays
light and torch-free):

- `pvf.solve(game, iterations)`: a whole game by CFR+ → `Solution`
  (NashConv, value, policy);
- `pvf.build_trunk(game, depth)` and `pvf.solve_trunk(trunk, evaluator)`:
  depth-limited CFR+ and its exact trunk exploitability, with
  `pvf.ExactEvaluator(trunk)`, `pvf.ConstantEvaluator()` or a network;
- `pvf.generate_dataset(game, depth, trunks, out)`: PBS dataset (HDF5);
- `pvf.train_value_function(data, architecture, checkpoint, ...)` and
  `pvf.load_value_function(path)`: networks (torch).

docs/example.py runs them all; docs/architecture.md maps the packages.
"""

from __future__ import annotations

from pvf.errors import PvfError
from pvf.exports import lazy_attributes

__version__ = "0.1.0"

API_NAMES = (
    "ConstantEvaluator",
    "ExactEvaluator",
    "Solution",
    "build_trunk",
    "generate_dataset",
    "load_value_function",
    "solve",
    "solve_trunk",
    "train_value_function",
)

__all__ = ["PvfError", "__version__", *API_NAMES]


__getattr__ = lazy_attributes(__name__, dict.fromkeys(API_NAMES, "pvf.api"))
