"""The architectures by name: "positional", "particle", "attention".

`ARCHITECTURES` maps each name (the one a checkpoint stores) to its
`Architecture` class, which carries its one-line `help`;
`architecture(name, **hyper_parameters)` builds one. The `pvf` commands
derive `--architectures`' choices and help from this mapping, and
`particle_architectures()` (those that read a PBS as a set of particles,
`ParticleEncoding`) are the ones sparse trunks can use. A new architecture
is its modules (the net in `pvf.nets`, the architecture in `pvf.valuefn`)
plus one entry here.
"""

from __future__ import annotations

import importlib
from typing import Any

from pvf.errors import PvfError
from pvf.valuefn.architecture import Architecture
from pvf.valuefn.attention import Attention
from pvf.valuefn.particle import Particle, ParticleEncoding
from pvf.valuefn.positional import Positional

ARCHITECTURES: dict[str, type[Architecture]] = {cls.name: cls for cls in (Positional, Particle, Attention)}


def architecture_class(name: str) -> type[Architecture]:
    """The `Architecture` subclass called `name`; PvfError naming the known ones otherwise."""
    if name not in ARCHITECTURES:
        raise PvfError(f"unknown value-function architecture {name!r}; choose from {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name]


def particle_architectures() -> tuple[str, ...]:
    """The registered architectures that read a PBS as a set of particles: the ones sparse (particle) trunks can use."""
    return tuple(name for name, cls in ARCHITECTURES.items() if issubclass(cls, ParticleEncoding))


def architecture(name: str, **hyper_parameters: Any) -> Architecture:
    """An architecture by name, with its data-independent hyper-parameters (defaults: the paper's)."""
    return architecture_class(name)(**hyper_parameters)


def to_class_path(arch: Architecture) -> dict[str, Any]:
    """`{"class_path": ..., "init_args": {...}}`, plain python, as a LightningCLI config writes it."""
    cls = type(arch)
    return {"class_path": f"{cls.__module__}.{cls.__qualname__}", "init_args": dict(vars(arch))}


def from_class_path(spec: dict[str, Any]) -> Architecture:
    """Inverse of `to_class_path` (e.g. a checkpoint's hyper-parameters)."""
    module, _, name = spec["class_path"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, Architecture)):
        raise PvfError(f"{spec['class_path']} is not a value-function architecture")
    return cls(**spec.get("init_args", {}))
