"""The paper's experiments and pvf's own, one module per figure or experiment (the top layer).

- `trunk_report`: `pvf evaluate`, a trained net's trunk exploitability next to the exact oracle and zero.
- `sparse_sweep`, `particle_sweep`: fig. 4's sweeps, over sparse trunks (`pvf evaluate sparse`) and over
  particle trunks beyond the public tree (`pvf experiment particle-trunks`); `positional_slots` puts
  positional nets at the sweep's leaves (its targets column is `pvf.datasets.induced_targets`).
- `fig3`, `fig4`, `particles_figure`: `pvf reproduce fig3|fig4|particles`, one module per figure, end to end
  on `reproduce` (the options, the datasets and the training of the networks they share); `figures`: their
  default architectures, which the command line reads without loading torch.
- `plots`: figures 3 and 4 as PNG files.
- `linear_targets` (app. D, fig. 2) and `leaf_targets` (targets themselves at the leaves): `pvf experiment`.
- `summarize_fig3`, `partial_fig3`, `support_size`, `target_variance`: the summaries docs/results quotes,
  each run as `python -m pvf.experiments.<name>`.

Experiments use every layer below (games, solvers, datasets, nets, valuefn, trainers); nothing below
imports them. Submodules are imported explicitly (most load torch).
"""
