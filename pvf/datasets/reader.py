"""Reading PBS files (docs/hdf5_schema.md), with the checks a consumer needs.

`PBSDataset(path)`:
  1. opens the file read-only; a missing, truncated or non-HDF5 file is a
     PvfError;
  2. checks the root attributes: `schema` is `pvf.pbs`, `schema_version`
     is one this reader knows, every provenance attribute is present and
     `complete` is true;
  3. checks that every dataset exists with the schema's rank and that the
     lengths agree (offsets [N + 1] rising from 0 to M);
  4. checks that `game` names a game pvf can load, and the values
     (`checks.check_sample_values`: indices in range, finite beliefs in
     [0, 1], finite targets), reading the sample and row datasets once;
  5. exposes the datasets as numpy arrays, cached; a read that fails (a
     corrupted chunk) is a PvfError too, and so are non-finite features,
     found where a feature table is read (whole or by `read_range`), not
     at the open: a file larger than memory (300,000 Goofspiel-13 samples
     are 30 GB as float32 columns) opens in seconds and is read a block
     of samples at a time.
`summary()` gives what `pvf inspect` prints: provenance, samples per public
state, target statistics and the largest zero-sum residual.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from pvf.datasets import schema
from pvf.datasets.checks import check_sample_values
from pvf.errors import PvfError
from pvf.games.loading import load_game

# read_range checks these finite: the feature tables and the particle files' feature-like row columns
_CHECKED_FINITE = (
    schema.FEATURES_PUBLIC,
    *schema.FEATURES_PRIVATE,
    schema.PARTICLE_DATASETS["cf_reach"][0],
    schema.PARTICLE_DATASETS["cf_opponent"][0],
    schema.PARTICLE_DATASETS["cf_rollout"][0],
)


def _dataset(path: str) -> cached_property:
    """A lazily read, cached dataset of the file."""
    return cached_property(lambda self: self._read(path))


class PBSDataset:
    """A validated PBS file. Use as a context manager or call `close()`.

    N samples, M infostate rows, L leaf public states.

    attrs: the root attributes (provenance) as plain Python values.
    leaf_public_states: [L] int64.
    trunk, public_state: [N] int64; offset: [N + 1] int64.
    player: [M] int8; index: [M] int64; slot: [M] int32.
    belief, target, target_current: [M] float64; cf_reach: [M] float64 or None; cf_opponent: [M, Fq] float32 or None;
    cf_rollout: [M] float64 or None.
    public_features: [P, Fp] float32; private_features: per player [I_n, Fq] float32.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            raise PvfError(f"{self.path} is a directory; pass a file written by pvf generate")
        if not self.path.is_file():
            raise PvfError(f"{self.path}: no such file")
        try:
            self._file = h5py.File(self.path, "r")
        except OSError as exc:
            raise PvfError(f"{self.path}: not a readable HDF5 file ({_first_line(exc)})") from None
        try:
            self.attrs = self._check_attrs()
            self._check_datasets()
            self._check_game()
            self._check_values()
        except (OSError, TypeError, ValueError) as exc:
            self._file.close()
            raise PvfError(f"{self.path}: unreadable metadata ({_first_line(exc)}); the file is corrupted") from None
        except PvfError:
            self._file.close()
            raise

    def __enter__(self) -> PBSDataset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    @property
    def num_samples(self) -> int:
        return int(self._file[schema.SAMPLE_DATASETS["trunk"][0]].shape[0])

    @property
    def num_rows(self) -> int:
        return int(self._file[schema.ROW_DATASETS["belief"][0]].shape[0])

    def _read(self, path: str) -> np.ndarray:
        return self.read_range(path, None, None)

    def read_range(self, path: str, lo: int | None, hi: int | None) -> np.ndarray:
        """Entries [lo, hi) along the first axis of the dataset at `path` (None, None: all of it).

        Feature tables and the counterfactual reach and opponent columns are checked finite here, where they are read.
        """
        try:
            values = self._file[path][()] if lo is None and hi is None else self._file[path][lo:hi]
        except (OSError, KeyError, ValueError) as exc:
            raise PvfError(f"{self.path}: cannot read /{path} ({_first_line(exc)}); the file is corrupted") from None
        if path in _CHECKED_FINITE and not np.isfinite(values).all():
            raise PvfError(f"{self.path}: /{path} holds non-finite values; the file is corrupted")
        return values

    @property
    def private_dim(self) -> int:
        """Fq, the width of the private-feature tables."""
        return int(self._file[schema.FEATURES_PRIVATE[0]].shape[1])

    def _check_attrs(self) -> dict[str, Any]:
        raw = self._file.attrs
        found = raw.get("schema")
        if not isinstance(found, str) or found != schema.SCHEMA:
            raise PvfError(
                f"{self.path}: not a pvf PBS file (root attribute schema is {found!r}, expected {schema.SCHEMA!r})"
            )
        version = int(raw.get("schema_version", -1))
        if version not in schema.READABLE_VERSIONS:
            raise PvfError(
                f"{self.path}: schema version {version}; this pvf reads versions {list(schema.READABLE_VERSIONS)}"
            )
        missing = [k for k in schema.ATTRS if k not in raw]
        if missing:
            raise PvfError(f"{self.path}: missing root attributes {', '.join(missing)}")
        attrs = {k: schema.ATTRS[k](raw[k]) for k in schema.ATTRS}
        attrs.update({k: kind(raw.get(k, absent)) for k, (kind, absent) in schema.OPTIONAL_ATTRS.items()})
        attrs.update({k: kind(raw[k]) for k, kind in schema.PARTICLE_ATTRS.items() if k in raw})
        if not attrs["complete"]:
            raise PvfError(f"{self.path}: incomplete file (generation did not finish); rerun pvf generate")
        return attrs

    def _check_datasets(self) -> None:
        f = self._file
        expected = {schema.LEAF_PUBLIC_STATES: 1, schema.FEATURES_PUBLIC: 2}
        expected.update({p: 2 for p in schema.FEATURES_PRIVATE})
        expected.update({p: 1 for p, _ in schema.SAMPLE_DATASETS.values()})
        expected.update({p: 1 for p, _ in schema.ROW_DATASETS.values()})
        for path, ndim in expected.items():
            if not isinstance(f.get(path), h5py.Dataset) or f[path].ndim != ndim:
                raise PvfError(f"{self.path}: dataset /{path} is missing or not {ndim}-dimensional")
        N, M = self.num_samples, self.num_rows
        for path, _ in schema.SAMPLE_DATASETS.values():
            n = N + 1 if path == schema.SAMPLE_DATASETS["offset"][0] else N
            if f[path].shape[0] != n:
                raise PvfError(f"{self.path}: /{path} has {f[path].shape[0]} entries, expected {n}")
        for path, _ in schema.ROW_DATASETS.values():
            if f[path].shape[0] != M:
                raise PvfError(f"{self.path}: /{path} has {f[path].shape[0]} entries, expected {M}")
        optional = {"cf_reach": (M,), "cf_opponent": (M, self.private_dim), "cf_rollout": (M,)}
        for name, shape in optional.items():
            path = schema.PARTICLE_DATASETS[name][0]
            if path in f and (not isinstance(f[path], h5py.Dataset) or f[path].shape != shape):
                what = "one value" if len(shape) == 1 else f"{shape[1]} values"
                raise PvfError(f"{self.path}: /{path} is not {what} per row; the file is corrupted")
        if (schema.PARTICLE_DATASETS["cf_rollout"][0] in f) != ("rollout_input" in f.attrs):
            raise PvfError(f"{self.path}: /infostates/cf_rollout and the rollout_input attribute come together")
        off = self.offset
        if off[0] != 0 or off[-1] != M or np.any(np.diff(off) < 0):
            raise PvfError(f"{self.path}: /samples/offset does not rise from 0 to {M}")

    def _check_game(self) -> None:
        try:
            load_game(self.attrs["game"])
        except PvfError as exc:
            raise PvfError(f"{self.path}: root attribute game is not a game pvf can load ({exc})") from None

    def _check_values(self) -> None:
        f = self._file
        check_sample_values(
            str(self.path),
            self.trunk,
            self.public_state,
            self.offset,
            self.player,
            self.index,
            self.belief,
            self.target,
            self.target_current,
            [f[p].shape[0] for p in schema.FEATURES_PRIVATE],
            self.leaf_public_states,
        )
        if self.leaf_public_states.size and (
            self.leaf_public_states.min() < 0 or self.leaf_public_states.max() >= f[schema.FEATURES_PUBLIC].shape[0]
        ):
            raise PvfError(f"{self.path}: /{schema.LEAF_PUBLIC_STATES} holds indices outside the public-feature table")
        _ = self.public_features  # read, so checked finite at the open; the private tables where they are read

    leaf_public_states = _dataset(schema.LEAF_PUBLIC_STATES)
    trunk = _dataset(schema.SAMPLE_DATASETS["trunk"][0])
    public_state = _dataset(schema.SAMPLE_DATASETS["public_state"][0])
    offset = _dataset(schema.SAMPLE_DATASETS["offset"][0])
    player = _dataset(schema.ROW_DATASETS["player"][0])
    index = _dataset(schema.ROW_DATASETS["index"][0])
    slot = _dataset(schema.ROW_DATASETS["slot"][0])
    belief = _dataset(schema.ROW_DATASETS["belief"][0])
    target = _dataset(schema.ROW_DATASETS["target"][0])
    target_current = _dataset(schema.ROW_DATASETS["target_current"][0])
    public_features = _dataset(schema.FEATURES_PUBLIC)
    private_features = cached_property(lambda self: tuple(self._read(p) for p in schema.FEATURES_PRIVATE))

    @property
    def has_cf_reach(self) -> bool:
        return schema.PARTICLE_DATASETS["cf_reach"][0] in self._file

    @property
    def has_cf_opponent(self) -> bool:
        return schema.PARTICLE_DATASETS["cf_opponent"][0] in self._file

    @property
    def has_cf_rollout(self) -> bool:
        return schema.PARTICLE_DATASETS["cf_rollout"][0] in self._file

    @cached_property
    def cf_rollout(self) -> np.ndarray | None:
        """[M] each row's exact rollout value, targets' convention (files made with `--rollout-input`), or None."""
        return self._optional_rows("cf_rollout")

    @cached_property
    def cf_reach(self) -> np.ndarray | None:
        """[M] each row's counterfactual reach (particle files since it was added), None where the file has none."""
        return self._optional_rows("cf_reach")

    @cached_property
    def cf_opponent(self) -> np.ndarray | None:
        """[M, Fq] each row's mean opponent private features (particle files since they were added), or None."""
        return self._optional_rows("cf_opponent")

    def _optional_rows(self, name: str) -> np.ndarray | None:
        """An optional per-row particle column (shape checked at the open, finite where read); None where absent."""
        path = schema.PARTICLE_DATASETS[name][0]
        return self._read(path) if path in self._file else None

    def zero_sum_residual(self, current: bool = False) -> np.ndarray:
        """[N] Σ belief·target over each sample's infostates of both players (0 for exact zero-sum)."""
        values = self.target_current if current else self.target
        if self.num_samples == 0:
            return np.zeros(0)
        return np.add.reduceat(self.belief * values, self.offset[:-1])

    def summary(self) -> dict[str, Any]:
        """Provenance, sample counts per public state and target statistics (what `pvf inspect` prints)."""
        ps, counts = np.unique(self.public_state, return_counts=True)
        attrs = dict(self.attrs)
        for key in ("sampling", "features"):
            try:
                attrs[key] = json.loads(attrs[key])
            except json.JSONDecodeError:
                raise PvfError(f"{self.path}: root attribute {key} is not JSON; the file is corrupted") from None
        return {
            "path": str(self.path),
            "attrs": attrs,
            "num_samples": self.num_samples,
            "num_infostate_rows": self.num_rows,
            "num_trunks_present": int(len(np.unique(self.trunk))),
            "features": {
                "public": list(self.public_features.shape),
                "private": [list(p.shape) for p in self.private_features],
            },
            "samples_per_public_state": {str(int(p)): int(c) for p, c in zip(ps, counts)},
            "belief": _stats(self.belief),
            "target": _stats(self.target),
            "target_current": _stats(self.target_current),
            "max_zero_sum_residual": float(np.abs(self.zero_sum_residual()).max(initial=0.0)),
            "max_zero_sum_residual_current": float(np.abs(self.zero_sum_residual(current=True)).max(initial=0.0)),
        }


def _stats(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"mean": 0.0, "std": 0.0, "min": 0.0, "max": 0.0}
    return {
        "mean": float(values.mean()),
        "std": float(values.std()),
        "min": float(values.min()),
        "max": float(values.max()),
    }


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
