"""The positional architecture: `PositionalVF` over one belief slot per infostate (paper, sec. 5.1).

Encoding of a PBS: `slot_beliefs [S]` with S = K1max + K2max, player 1's
infostate in slot k of its public state at input k, player 2's at K1max + k
(`pvf.valuefn.encoding.input_slot`); unused slots hold belief 0 and their
outputs are ignored (masked in the loss, never read at the leaves); plus
the public features [Fp]. At the leaves one gather turns the trunk's flat
reaches into [B·L, S] inputs and one gather reads the [B·L·S] outputs back
in leaf-infostate order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.nets.positional_mlp import PositionalVF
from pvf.valuefn.architecture import Architecture, Batch, LeafEncoder, tile
from pvf.valuefn.encoding import PbsRows, input_slot, normalized_rows
from pvf.valuefn.leaves import TrunkLeaves


@dataclass(eq=False, repr=False)
class Positional(Architecture):
    """`PositionalVF(public_dim=Fp, num_slots=K1max+K2max, ...)`.

    Paper (app. F): 5 layers, hidden width 5 × input; `hidden_width`
    (absolute) overrides the multiplier.
    """

    name = "positional"
    net_class = PositionalVF

    num_layers: int = 5
    hidden_multiplier: float = 5.0
    hidden_width: int | None = None
    activation: str = "relu"

    def build(self, layout: DataLayout) -> PositionalVF:
        if layout.particles:
            need = (
                f"at least {layout.positional_inputs:,} inputs"
                if layout.positional_inputs
                else "an input per infostate"
            )
            raise PvfError(
                f"the data is a particle dataset ({layout.particles} particles per sample); a positional value "
                f"function would need {need} (infostates of the largest public state at move {layout.depth}); "
                f"train the particle or attention architecture"
            )
        return PositionalVF(
            public_dim=layout.public_dim,
            num_slots=layout.num_slots,
            num_layers=self.num_layers,
            hidden_multiplier=self.hidden_multiplier,
            hidden_width=self.hidden_width,
            activation=self.activation,
        )

    def encode_batch(self, rows: PbsRows, layout: DataLayout) -> Batch:
        """`slot_beliefs, targets, mask: [B, S]`, `public: [B, Fp]`."""
        counts, player, slot = rows["counts"], rows["player"], rows["slot"]
        if (slot >= np.asarray(layout.max_slots)[player]).any():
            raise PvfError(f"an infostate slot lies outside the layout's slots {list(layout.max_slots)}")
        belief, target, _ = normalized_rows(rows, layout.normalize)
        B, S = len(counts), layout.num_slots
        sample = np.repeat(np.arange(B), counts)
        slot = input_slot(player, slot, layout.max_slots)
        slots = np.zeros((3, B, S), dtype=np.float32)  # beliefs, targets, mask
        slots[0, sample, slot] = belief
        slots[1, sample, slot] = target
        slots[2, sample, slot] = 1.0
        return {
            "public": torch.from_numpy(rows["public"].astype(np.float32, copy=False)),
            "slot_beliefs": torch.from_numpy(slots[0]),
            "targets": torch.from_numpy(slots[1]),
            "mask": torch.from_numpy(slots[2] > 0),
        }

    def predict(self, net: nn.Module, batch: Batch) -> tuple[Tensor, Tensor, Tensor]:
        return net(batch["slot_beliefs"], batch["public"]), batch["targets"], batch["mask"]

    def leaf_encoder(self, leaves: TrunkLeaves, layout: DataLayout, device: Any) -> LeafEncoder:
        return _PositionalLeaves(leaves, layout.max_slots, device)

    def check_layout(self, trained: DataLayout, other: DataLayout) -> None:
        super().check_layout(trained, other)
        if other.max_slots != trained.max_slots:
            raise PvfError(
                f"positional value function has slots {list(trained.max_slots)} per player; "
                f"the data has {list(other.max_slots)}"
            )


class _PositionalLeaves:
    """gather: [L, S] column of the flat reaches feeding each input slot (unused: the zero column).
    scatter: [J1 + J2] index of each leaf infostate's value in the flattened [L·S] output."""

    def __init__(self, leaves: TrunkLeaves, max_slots: tuple[int, int], device: Any):
        for n in (0, 1):
            if leaves.slot[n].size and leaves.slot[n].max() >= max_slots[n]:
                raise PvfError(
                    f"a leaf public state has {int(leaves.slot[n].max()) + 1} infostates of player {n + 1}; "
                    f"the positional network has {max_slots[n]} slots for them"
                )
        S = max_slots[0] + max_slots[1]
        player = np.repeat([0, 1], leaves.sizes)
        slot = input_slot(player, np.concatenate(leaves.slot), max_slots)
        block = np.concatenate(leaves.block)
        # input[l, k] = flat[gather[l, k]]; leaf infostate j's value is output[l(j) * S + slot(j)].
        self.gather = np.full((leaves.num_leaves, S), leaves.pad, dtype=np.int64)
        self.gather[block, slot] = np.arange(leaves.pad)
        self.scatter = block * S + slot
        self.device = device
        self.public = torch.from_numpy(leaves.public).to(device)

    def __call__(self, net: nn.Module, flat: np.ndarray) -> np.ndarray:
        B, (L, S) = flat.shape[0], self.gather.shape
        beliefs = torch.from_numpy(flat[:, self.gather].reshape(B * L, S).astype(np.float32)).to(self.device)
        return net(beliefs, tile(self.public, B)).reshape(B, L * S).double().cpu().numpy()[:, self.scatter]
