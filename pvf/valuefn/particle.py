"""The particle architectures: a network over the padded, masked set of (belief, features) infostate rows.

Encoding of a PBS (shared by every particle net; `ParticleEncoding`): one
particle per infostate, player 1's first, padded to the most particles N
of a batch: `beliefs [N]`, `features [N, Fp + Fq + 2]` (public, private,
player one-hot: `pvf.valuefn.encoding.infostate_row_features`), `mask [N]`,
and the public features [Fp]. At the leaves of a trunk, the particles of
a leaf public state are its infostates that have a history in the trunk;
one gather turns the flat reaches into [B·L, N] beliefs, the features and
mask are fixed for the trunk, and one scatter puts the [B·L·N] outputs
back in leaf-infostate order. With fixed features the Deep-Sets net's
basis (its per-particle MLP, most of its arithmetic) is computed on a CPU
once per trunk solve and weights, not at every CFR+ iteration
(`_BasisCache`).

`Particle` is the Deep-Sets net (`pvf.nets.ParticleVF`, paper sec. 5.2);
`pvf.valuefn.attention.Attention` reuses the encoding with another net.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from pvf.datasets.layout import DataLayout
from pvf.errors import PvfError
from pvf.nets.deep_sets import ParticleVF
from pvf.nets.distinct_rows import every_row
from pvf.nets.stacked import StackedNets
from pvf.valuefn.architecture import Architecture, Batch, LeafEncoder, tile
from pvf.valuefn.encoding import (
    PbsRows,
    feature_dim,
    infostate_row_features,
    normalized_rows,
    positions,
    rollout_means,
)
from pvf.valuefn.leaves import TrunkLeaves


class ParticleEncoding(Architecture):
    """Base of the particle architectures: nets called as `net(beliefs, features, public, mask)`."""

    def encode_batch(self, rows: PbsRows, layout: DataLayout) -> Batch:
        """`beliefs, targets, mask: [B, N]`, `features: [B, N, F]` (`particle_feature_dim`), `public: [B, Fp]`."""
        counts, public, player = rows["counts"], rows["public"], rows["player"]
        belief, target, reach = normalized_rows(rows, layout.normalize, layout.reach_feature)
        B, N = len(counts), int(counts.max())
        sample, position = np.repeat(np.arange(B), counts), positions(counts)
        opponent = rows["cf_opponent"] if layout.opponent_feature else None
        rollout = rollout_means(rows) if layout.rollout_input is not None else None
        feats = infostate_row_features(public[sample], rows["private"], player, reach, opponent, rollout)
        features = np.zeros((B, N, feats.shape[1]), dtype=np.float32)
        features[sample, position] = feats
        dense = np.zeros((3, B, N), dtype=np.float32)  # beliefs, targets, mask
        dense[0, sample, position] = belief
        dense[1, sample, position] = target
        dense[2, sample, position] = 1.0
        return {
            "public": torch.from_numpy(public.astype(np.float32, copy=False)),
            "beliefs": torch.from_numpy(dense[0]),
            "features": torch.from_numpy(features),
            "targets": torch.from_numpy(dense[1]),
            "mask": torch.from_numpy(dense[2] > 0),
        }

    def predict(self, net: nn.Module, batch: Batch) -> tuple[Tensor, Tensor, Tensor]:
        values = net(batch["beliefs"], batch["features"], batch["public"], batch["mask"])
        return values, batch["targets"], batch["mask"]

    def check_layout(self, trained: DataLayout, other: DataLayout) -> None:
        super().check_layout(trained, other)
        if trained.reach_feature != other.reach_feature:
            raise PvfError(
                "value function takes each infostate's counterfactual reach as an input; the data has none "
                "(regenerate it with this pvf)"
                if trained.reach_feature
                else "value function was trained without the counterfactual-reach input; load the data with "
                "data.reach_feature false"
            )
        if trained.opponent_feature != other.opponent_feature:
            raise PvfError(
                "value function takes each infostate's mean opponent features as inputs; the data has none "
                "(regenerate it with this pvf)"
                if trained.opponent_feature
                else "value function was trained without the mean-opponent-features input; load the data with "
                "data.opponent_feature false"
            )

        if trained.rollout_input is None and other.rollout_input is not None:
            raise PvfError(
                "value function was trained without the rollout input; load the data with data.rollout_feature false"
            )
        if trained.rollout_input != other.rollout_input:
            has = "none" if other.rollout_input is None else f"those of greed {other.rollout_input}"
            raise PvfError(
                f"value function takes each infostate's rollout value of greed {trained.rollout_input} as an "
                f"input; the data has {has} (generate it with --rollout-input {trained.rollout_input})"
            )

    def leaf_encoder(self, leaves: TrunkLeaves, layout: DataLayout, device: Any) -> LeafEncoder:
        return _ParticleLeaves(leaves, layout, device)


@dataclass(eq=False, repr=False)
class Particle(ParticleEncoding):
    """`ParticleVF(feature_dim=Fp+Fq+2, public_dim=Fp, basis_dim=K, ...)`, Deep Sets.

    basis_dim: K, width of the context; default K1max + K2max, the positional
        net's slot count (the authors' K; Theorem 4 needs at least that).
    Paper (app. F): change basis 3 layers of width 3 × input, regression as
    the positional net (5 layers, width 5 × input). The authors' run: change
    basis 4 layers, regression 3 layers of width 3K. `output="concatenation"`
    is app. C's variant.
    norm: a LayerNorm after every hidden layer of its MLPs (`pvf.nets.mlp.build_mlp`).
    basis_skip: a linear map of each row's private features, in its player's
        block, added to its basis (`ParticleVF`, step 6).
    reach_output: the net predicts each value per unit of the infostate's
        counterfactual reach and multiplies it back (`ParticleVF`, step 7);
        needs data with the reach input (`DataLayout.reach_feature`).
    rollout_residual: the net predicts each value's difference from the
        rollout value, reach × mean rollout value (`ParticleVF`, step 8);
        needs data with the reach and rollout inputs (`DataLayout.rollout_input`).
    """

    name = "particle"
    net_class = ParticleVF

    basis_dim: int | None = None
    basis_layers: int = 3
    basis_hidden_multiplier: float = 3.0
    basis_hidden_width: int | None = None
    regression_layers: int = 5
    regression_hidden_multiplier: float = 5.0
    regression_hidden_width: int | None = None
    activation: str = "relu"
    output: str = "projection"
    reach_output: bool = False
    norm: bool = False
    basis_skip: bool = False
    rollout_residual: bool = False

    def build(self, layout: DataLayout) -> ParticleVF:
        if self.reach_output and not layout.reach_feature:
            raise PvfError(
                "reach_output needs the counterfactual-reach input, which this data has not (reach_feature false "
                "or a file without /infostates/cf_reach); drop reach_output or regenerate the data with this pvf"
            )
        if self.rollout_residual and not (layout.reach_feature and layout.rollout_input is not None):
            raise PvfError(
                "rollout_residual needs the counterfactual-reach and rollout inputs, which this data has not "
                "(a file made without --rollout-input, or reach_feature or rollout_feature false); drop "
                "rollout_residual or generate the data with --rollout-input"
            )
        return ParticleVF(
            feature_dim=particle_feature_dim(layout),
            public_dim=layout.public_dim,
            basis_dim=self.basis_dim if self.basis_dim is not None else layout.num_slots,
            basis_layers=self.basis_layers,
            basis_hidden_multiplier=self.basis_hidden_multiplier,
            basis_hidden_width=self.basis_hidden_width,
            regression_layers=self.regression_layers,
            regression_hidden_multiplier=self.regression_hidden_multiplier,
            regression_hidden_width=self.regression_hidden_width,
            activation=self.activation,
            output=self.output,
            reach_output=self.reach_output,
            norm=self.norm,
            basis_skip=self.basis_skip,
            private_dim=layout.private_dim if self.basis_skip else None,
            rollout_residual=self.rollout_residual,
        )


def particle_feature_dim(layout: DataLayout) -> int:
    """F, the width of a particle's features for data of this layout (`pvf.valuefn.encoding.feature_dim`)."""
    rollout = layout.rollout_input is not None
    return feature_dim(layout.public_dim, layout.private_dim, layout.reach_feature, layout.opponent_feature, rollout)


def _member_type(net: nn.Module) -> type[nn.Module]:
    return net.member_type if isinstance(net, StackedNets) else type(net)


def _call(net: nn.Module, method: str, *args: Tensor) -> Tensor:
    """`net.method(*args)`, or every member's on its own rows for stacked nets."""
    return net.call(method, *args) if isinstance(net, StackedNets) else getattr(net, method)(*args)


class _BasisCache:
    """`ParticleVF.basis` of a trunk's fixed leaf features, kept while the change-basis weights stay the same.

    A trunk solve asks the same features at every query; only the beliefs change. The basis
    depends on nothing but the features, the problem count and the change-basis MLP's weights,
    so it is computed again when the net or the problem count differs or any of those weights
    differs *in value* from the copy taken with the last basis. Values, not version counters:
    fused Adam (pvf's optimizer) and CUDA graph replays update parameters in place without
    bumping their versions, and a cache keyed on versions once served the training callback a
    stale basis. The change-basis parameters are looked up once per net (replacing a submodule
    of a net in use needs a new evaluator); each query compares their values with numpy's
    array_equal (about 15 µs for Goofspiel-5's 130k weights, where torch.equal takes 90; the
    basis MLP costs milliseconds). CPU nets only: on a GPU the comparison would wait for the
    device at every query, and the basis is cheap there anyway.
    """

    def __init__(self) -> None:
        self.net: nn.Module | None = None
        self.params: list[Tensor] = []
        self.problems = -1
        self.weights: list[np.ndarray] = []
        self.features: Tensor | None = None
        self.basis: Tensor | None = None

    def get(self, net: nn.Module, features: Tensor, problems: int) -> tuple[Tensor, Tensor]:
        """(features [B·L, N, F], basis [B·L, N, K]): the leaves' `features` [L, N, F] tiled for B = `problems`."""
        if net is not self.net:  # the net is held, so its identity is never a recycled id
            self.net, self.params, self.basis = net, _basis_weights(net), None
        weights = [w.detach().numpy() for w in self.params]
        same = (
            self.basis is not None
            and problems == self.problems
            and all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(weights, self.weights))
        )
        if not same:
            self.features = tile(features, problems)
            self.basis = _call(net, "basis", self.features)
            self.problems, self.weights = problems, [w.copy() for w in weights]
        return self.features, self.basis


def _basis_weights(net: nn.Module) -> list[Tensor]:
    """The change-basis MLP's parameters of a `ParticleVF` or of `StackedNets` of them (stacked: `[S, ...]`)."""
    named = net.tensors().items() if isinstance(net, StackedNets) else net.named_parameters()
    weights = [t for name, t in named if name.startswith("change_basis.")]
    if not weights:  # an empty list would keep a basis forever
        raise ValueError(f"{type(net).__name__} has no change_basis parameters to key the leaf basis on")
    return weights


class _ParticleLeaves:
    """gather: [L, N] column of the flat reaches feeding each particle (padding: the zero column).
    mask: [L, N] real particles; features: [L, N, Fp + Fq + 2], fixed for the trunk (the
    mean opponent features, the mean rollout value and the counterfactual reach, for nets that take them, are
    appended per query: `TrunkLeaves.cf_opponent`, `TrunkLeaves.rollout_means`, `TrunkLeaves.cf_reach`).
    scatter: (output index [P], flat column [P]) of the P particles."""

    def __init__(self, leaves: TrunkLeaves, layout: DataLayout, device: Any):
        L = leaves.num_leaves
        # Particles of each leaf public state: player 1's present infostates, then player 2's.
        index = np.flatnonzero(np.concatenate(leaves.present))
        block = np.concatenate(leaves.block)[index]
        order = np.argsort(block, kind="stable")
        index, block = index[order], block[order]
        counts = np.bincount(block, minlength=L)
        N = int(counts.max()) if len(counts) else 0
        position = np.arange(len(index)) - np.concatenate([[0], np.cumsum(counts)[:-1]])[block]
        self.gather = np.full((L, N), leaves.pad, dtype=np.int64)
        self.gather[block, position] = index
        player = (index >= leaves.sizes[0]).astype(np.int64)
        private = np.concatenate(leaves.private)[index]
        rows = infostate_row_features(leaves.public[block], private, player)
        feats = np.zeros((L, N, rows.shape[1]), dtype=np.float32)
        feats[block, position] = rows
        self.scatter = (block * N + position, index)
        self.leaves = leaves
        self.reach_feature, self.opponent_feature = layout.reach_feature, layout.opponent_feature
        self.rollout = None if layout.rollout_input is None else (layout.game, layout.depth, layout.rollout_input)
        self.pad = leaves.pad
        self.device = device
        self.mask = torch.from_numpy(self.gather < leaves.pad).to(device)
        self.features = torch.from_numpy(feats).to(device)
        self.public = torch.from_numpy(leaves.public).to(device)
        self.basis = _BasisCache()
        self._buffer: Tensor | None = None  # `_inputs`', for the last problem count

    def __call__(self, net: nn.Module, flat: np.ndarray) -> np.ndarray:
        B, (L, N) = flat.shape[0], self.gather.shape
        beliefs = torch.from_numpy(flat[:, self.gather].reshape(B * L, N).astype(np.float32)).to(self.device)
        public, mask = tile(self.public, B), tile(self.mask, B)
        fixed = not (self.opponent_feature or self.reach_feature or self.rollout)
        if fixed and self.device.type == "cpu" and issubclass(_member_type(net), ParticleVF):
            # the Deep-Sets basis is the same at every query until the weights change
            features, basis = self.basis.get(net, self.features, B)
            values = _call(net, "head", beliefs, basis, features, public, mask)
        else:
            # a table of distinct rows (`pvf.nets.distinct_rows`) pays only if at most half the rows are distinct,
            # and they are at least as many as the fixed features' distinct rows: where those already exceed
            # half, the net runs on every row without first hashing them (the values it would fall back to)
            with nullcontext() if 2 * self._distinct_rows <= B * L * N else every_row():
                values = net(beliefs, self._inputs(flat), public, mask)
        values = values.reshape(B, L * N).double().cpu().numpy()
        out = np.zeros((B, self.pad))
        out[:, self.scatter[1]] = values[:, self.scatter[0]]
        return out

    @cached_property
    def _distinct_rows(self) -> int:
        """The fixed features' distinct rows, a lower bound of every query's (only nets with per-query inputs ask)."""
        return len(torch.unique(self.features.reshape(-1, self.features.shape[2]), dim=0))

    def _inputs(self, flat: np.ndarray) -> Tensor:
        """[B·L, N, F] the features of B problems' particles: the trunk's fixed columns, then the per-query ones
        (mean opponent features, mean rollout value, counterfactual reach, for nets that take them).

        One buffer per problem count holds them: the fixed columns are written when it is made, the per-query
        columns at each query (a query's features are not kept past its forward pass)."""
        B, (L, N) = flat.shape[0], self.gather.shape
        columns = []
        if self.opponent_feature:
            columns.append(self.leaves.cf_opponent(flat)[:, self.gather].reshape(B * L, N, -1))
        if self.rollout:
            columns.append(self.leaves.rollout_means(flat, *self.rollout)[:, self.gather].reshape(B * L, N, 1))
        if self.reach_feature:
            columns.append(self.leaves.cf_reach(flat)[:, self.gather].reshape(B * L, N, 1))
        fixed = self.features.shape[2]
        shape = (B * L, N, fixed + sum(c.shape[2] for c in columns))
        if self._buffer is None or tuple(self._buffer.shape) != shape:
            self._buffer = torch.empty(shape, dtype=self.features.dtype, device=self.device)
            self._buffer[:, :, :fixed] = tile(self.features, B)
        start = fixed
        for column in columns:
            end = start + column.shape[2]
            self._buffer[:, :, start:end] = torch.from_numpy(column.astype(np.float32)).to(self.device)
            start = end
        return self._buffer
