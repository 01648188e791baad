"""Where values sit in an unsorted array: sort once (argsort), then answer each batch of queries by binary search.

`Positions(values)(queries)` returns, for every query, the index of the
equal entry of `values` (the values distinct, every query present; the
result is unchecked). The solvers use it to map infostate or
(infostate, action) codes to their positions in a game's arrays.
"""

from __future__ import annotations

import numpy as np


class Positions:
    """positions = Positions(values); positions(queries) [Q] with values[positions(queries)] == queries.

    values: [V] distinct, in any order; queries: [Q], each among the values.
    """

    def __init__(self, values: np.ndarray):
        values = np.asarray(values)
        self.order = np.argsort(values, kind="stable")
        self.sorted = values[self.order]

    def __call__(self, queries: np.ndarray) -> np.ndarray:
        return self.order[np.searchsorted(self.sorted, queries)]
