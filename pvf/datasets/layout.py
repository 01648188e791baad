"""The data layout of a PBS dataset file: the sizes a value network built for it depends on.

A network's input sizes depend on its data: the feature widths (Fp, Fq) and,
for the positional net, how many infostate slots each player has. The
layout is read once from the HDF5 file (docs/hdf5_schema.md) without
loading its columns, handed to the LightningModule as a plain dict (so
hyper-parameters and checkpoints stay weights-only loadable) and stored
with every checkpoint, so that a network is never used on a game or a slot
layout it was not trained for (`pvf.valuefn.architecture.Architecture.check_layout`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pvf.datasets.reader import PBSDataset
from pvf.errors import PvfError


@dataclass(frozen=True)
class DataLayout:
    """Sizes that fix a value network's inputs and outputs.

    game: OpenSpiel game string of the data.
    depth: trunk depth (OpenSpiel move number) of the data's public states.
    target: which target was trained on (`pvf.solvers.guarded_values.TARGETS`).
    public_dim: Fp, public features per public state.
    private_dim: Fq, private features per infostate.
    max_slots: (K1max, K2max), per player 1 + the largest slot in the file;
        positional slot of player 2's slot k is K1max + k.
    normalize: the net sees each player's beliefs normalised to sum 1 and
        predicts values divided by the opponent's belief mass
        (`pvf.valuefn.encoding`); False: raw reaches and values (the authors').
    particles: K of a particle dataset (`pvf generate --particles K`), 0 for an
        enumerated one: slots are then per sample, not per infostate.
    positional_inputs: for a particle dataset, the infostates of its largest
        public state (what a positional net would need per player); 0 if unknown.
    reach_feature: particle nets take each infostate's counterfactual reach
        (`pvf.solvers.counterfactual_reach`; in training the file's
        `/infostates/cf_reach`, at a trunk's leaves computed from the leaf
        histories) as one more input feature.
    opponent_feature: particle nets take each infostate's mean opponent
        private features over the histories it shares
        (`CounterfactualReach.opponent_features`; the file's
        `/infostates/cf_opponent`, at a trunk's leaves computed as the reach
        is) as Fq more input features.
    rollout_input: particle nets take each infostate's mean value of greed-β random play from its histories
        (β = rollout_input; the file's `/infostates/cf_rollout` divided by its reach, at a trunk's leaves
        computed from the leaf histories, `pvf.games.rollouts`) as one more input; None: no such input.
    p_solve: the share of the data's trunks moved towards a trunk solve's
        queries (`pvf generate --p-solve`). Provenance, as `target` is: no
        input depends on it; figures label a net's leaves by it.
    """

    game: str
    depth: int
    target: str
    public_dim: int
    private_dim: int
    max_slots: tuple[int, int]
    normalize: bool = True
    particles: int = 0
    positional_inputs: int = 0
    reach_feature: bool = False
    opponent_feature: bool = False
    p_solve: float = 0.0
    rollout_input: float | None = None

    @property
    def num_slots(self) -> int:
        """Positional slots: K1max + K2max."""
        return self.max_slots[0] + self.max_slots[1]

    def to_dict(self) -> dict[str, Any]:
        """Plain python (str, int, list) for hyper-parameters and checkpoints."""
        out = asdict(self)
        out["max_slots"] = list(self.max_slots)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataLayout:
        try:
            fields = {k: data[k] for k in ("game", "depth", "target", "public_dim", "private_dim", "max_slots")}
        except KeyError as exc:
            raise PvfError(f"data layout lacks {exc.args[0]!r}; was it written by pvf?") from None
        fields["max_slots"] = tuple(int(k) for k in fields["max_slots"])
        fields["normalize"] = bool(data.get("normalize", False))  # layouts written before the flag were raw
        fields["particles"] = int(data.get("particles", 0))
        fields["positional_inputs"] = int(data.get("positional_inputs", 0))
        fields["reach_feature"] = bool(data.get("reach_feature", False))
        fields["opponent_feature"] = bool(data.get("opponent_feature", False))
        fields["p_solve"] = float(data.get("p_solve", 0.0))  # checkpoints written before it: unknown, read as 0
        beta = data.get("rollout_input")
        fields["rollout_input"] = None if beta is None else float(beta)
        return cls(**fields)

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        target: str | None = None,
        normalize: bool = True,
        reach_feature: bool = True,
        opponent_feature: bool = True,
        rollout_feature: bool = True,
    ) -> DataLayout:
        """Read the layout of a PBS dataset file (metadata and two small columns).

        target: a name of `pvf.solvers.guarded_values.TARGETS`; None: what the file's target column holds.
        reach_feature: use the file's counterfactual reach column as an input where it has one.
        opponent_feature: use the file's mean opponent features as inputs where it has them.
        rollout_feature: use the file's rollout values (`--rollout-input`) as an input where it has them.
        """
        with PBSDataset(path) as ds:
            target = str(ds.attrs["target"]) if target is None else target
            check_target(ds, target)
            player, slot = ds.player, ds.slot
            return cls(
                game=ds.attrs["game"],
                depth=ds.attrs["depth"],
                target=target,
                public_dim=int(ds.public_features.shape[1]),
                private_dim=ds.private_dim,
                max_slots=tuple(int(slot[player == n].max(initial=-1)) + 1 for n in (0, 1)),
                normalize=normalize,
                particles=int(ds.attrs.get("particles", 0)),
                positional_inputs=int(ds.attrs.get("positional_infostates", 0)),
                reach_feature=reach_feature and ds.has_cf_reach,
                opponent_feature=opponent_feature and ds.has_cf_opponent,
                # the JSON read here, not by SamplingConfig, whose module loads the solvers: reading stays light
                p_solve=float(json.loads(str(ds.attrs["sampling"])).get("p_solve", 0.0)),
                rollout_input=float(ds.attrs["rollout_input"]) if rollout_feature and ds.has_cf_rollout else None,
            )


def check_target(ds: PBSDataset, target: str) -> str:
    """The PBSDataset attribute holding `target`'s values: "target" or "target_current".

    "current" is always `/infostates/target_current`; the others
    (`pvf.solvers.guarded_values.TARGETS`) are `/infostates/target` when the
    file's `target` attribute says it holds them.
    """
    from pvf.solvers.guarded_values import TARGETS  # here, not at the top: reading a layout stays light

    if target not in TARGETS:
        raise PvfError(f"unknown target {target!r}; choose from {', '.join(TARGETS)}")
    if target == "current":
        return "target_current"
    if ds.attrs["target"] != target:
        raise PvfError(
            f"{ds.path} holds no {target!r} targets (its target column holds {ds.attrs['target']!r}); train with "
            f"target: {ds.attrs['target']} or current, or generate with --target {target}"
        )
    return "target"
