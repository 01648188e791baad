"""Lightning's warnings that say nothing a pvf user can act on, ignored inside pvf's training entry points.

- ``overridden `on_before_batch_transfer` ...``: `ValueFunctionModule` encodes PBS rows into tensors there
  on purpose (`pvf.trainers.module`, step 1), and Lightning warns about any such override.
- ``isinstance(treespec, LeafSpec)` is deprecated``: Lightning's own use of a torch API that
  torch 2.10+ deprecates, raised once per process on the first training step.

Call `ignore_lightning_warnings()` inside a `warnings.catch_warnings()` block, so the filters end with it.
"""

from __future__ import annotations

import warnings


def ignore_lightning_warnings() -> None:
    """Add ignore filters for the warnings above to the current warnings filters."""
    warnings.filterwarnings("ignore", message=".*overridden `on_before_batch_transfer`.*")
    warnings.filterwarnings("ignore", message=".*LeafSpec.*is deprecated", category=FutureWarning)
