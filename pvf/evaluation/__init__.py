"""Evaluation of trained value functions and the paper's experiments.

- `networks`: load a checkpoint (any registered architecture) and wrap it as a trunk's leaf evaluator.
- `trunk_report`: `pvf evaluate` (network vs exact oracle vs constant).
- `sparse_sweep`: `pvf evaluate sparse` (fig. 4's sweep over shares of particles).
- `training`: train one value function from Python with trunk exploitability logged.
- `reproduce`: `pvf reproduce fig3|fig4`, end to end.
- `plots`: the figures as PNG files.

The top layer of the library: it uses `pvf.trainers` and `pvf.valuefn`,
and nothing below imports it. Submodules are imported explicitly (most
load torch).
"""
