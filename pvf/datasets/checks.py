"""Value checks of PBS samples, vectorised: what the schema's shapes cannot say.

`check_sample_values` is run by the reader on every file it opens, by
`pvf inspect`, and by the generator on every shard it computes or resumes:
  1. player is 0 or 1, and each row's infostate index lies in [0, I_player)
     (I_n = rows of /features/private/n);
  2. each sample's public state is one of the file's leaf public states;
  3. beliefs are finite and in [0, 1]; both targets are finite.
The first failure is a PvfError naming the source and the first bad sample
(its number, trunk and public state), so a corrupted file never reaches
training.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pvf.errors import PvfError


def check_sample_values(
    source: str,
    trunk: np.ndarray,
    public_state: np.ndarray,
    offset: np.ndarray,
    player: np.ndarray,
    index: np.ndarray,
    belief: np.ndarray,
    target: np.ndarray,
    target_current: np.ndarray,
    num_infostates: Sequence[int],
    leaf_public_states: np.ndarray,
) -> None:
    """PvfError naming `source` and the first bad sample, if any row or sample value is out of range.

    trunk, public_state: [N]; offset: [N + 1] rising from 0 to M;
    player, index, belief, target, target_current: [M].
    """

    def fail_row(bad: np.ndarray, what: str) -> None:
        row = int(np.flatnonzero(bad)[0])
        fail_sample(int(np.searchsorted(offset, row, side="right")) - 1, f"infostate row {row}: {what}")

    def fail_sample(k: int, what: str) -> None:
        raise PvfError(
            f"{source}: sample {k} (trunk {int(trunk[k])}, public state {int(public_state[k])}) has {what}; "
            f"the data is corrupted, regenerate it"
        )

    bad = (player != 0) & (player != 1)
    if bad.any():
        fail_row(bad, f"player {int(player[np.flatnonzero(bad)[0]])} (expected 0 or 1)")
    limit = np.where(player == 0, num_infostates[0], num_infostates[1])
    bad = (index < 0) | (index >= limit)
    if bad.any():
        r = np.flatnonzero(bad)[0]
        fail_row(bad, f"infostate index {int(index[r])} outside [0, {int(limit[r])})")
    bad = ~np.isin(public_state, leaf_public_states)
    if bad.any():
        fail_sample(int(np.flatnonzero(bad)[0]), "a public state that is not a leaf public state of the file")
    for name, values in (("belief", belief), ("target", target), ("target_current", target_current)):
        bad = ~np.isfinite(values)
        if bad.any():
            fail_row(bad, f"{name} {values[np.flatnonzero(bad)[0]]}")
    bad = (belief < 0) | (belief > 1)
    if bad.any():
        fail_row(bad, f"belief {belief[np.flatnonzero(bad)[0]]} outside [0, 1]")
