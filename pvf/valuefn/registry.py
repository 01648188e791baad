"""The architectures by name: "positional", "particle", "attention".

`ARCHITECTURES` maps each name (the one a checkpoint stores) to its
`Architecture` class, imported on first use: the `pvf` commands derive
`--architectures`' choices and help from its entries without loading torch.
`make_architecture(name, **hyper_parameters)` builds one;
`particle_architectures()` (those that read a PBS as a set of infostate
rows, `ParticleEncoding`) are the ones sparse trunks can use. A new
architecture is its modules (the net in `pvf.nets`, the architecture in
`pvf.valuefn`) plus one `ArchitectureEntry` here.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pvf.errors import PvfError

if TYPE_CHECKING:
    from pvf.valuefn.architecture import Architecture


@dataclass(frozen=True)
class ArchitectureEntry:
    """A registered architecture, described without importing it (its module loads torch).

    target: "module:Class" of its `Architecture` subclass.
    help: one line, what `--architectures` lists.
    reads_sets: it reads a PBS as a set of infostate rows (`ParticleEncoding`), so sparse trunks can use it.
    """

    target: str
    help: str
    reads_sets: bool

    def load(self) -> type[Architecture]:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)


class Architectures(MutableMapping):
    """name -> `Architecture` class, each imported on first use; `help` and `reads_sets` need no import.

    An entry is an `ArchitectureEntry` or (registered at run time, e.g. by a test) the class itself.
    """

    def __init__(self, entries: dict[str, ArchitectureEntry]) -> None:
        self._entries: dict[str, ArchitectureEntry | type[Architecture]] = dict(entries)

    def __getitem__(self, name: str) -> type[Architecture]:
        entry = self._entries[name]
        return entry.load() if isinstance(entry, ArchitectureEntry) else entry

    def __setitem__(self, name: str, cls: type[Architecture]) -> None:
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def help(self, name: str) -> str:
        """The one-line help of `name` (a class registered at run time: its docstring's first line)."""
        entry = self._entries[name]
        if isinstance(entry, ArchitectureEntry):
            return entry.help
        return entry.__doc__.strip().splitlines()[0] if entry.__doc__ and entry.__doc__.strip() else name

    def reads_sets(self, name: str) -> bool:
        entry = self._entries[name]
        if isinstance(entry, ArchitectureEntry):
            return entry.reads_sets
        from pvf.valuefn.particle import ParticleEncoding

        return issubclass(entry, ParticleEncoding)


ARCHITECTURES = Architectures(
    {
        "positional": ArchitectureEntry(
            "pvf.valuefn.positional:Positional",
            "an MLP over a fixed slot per infostate of the public state (paper, app. F)",
            False,
        ),
        "particle": ArchitectureEntry(
            "pvf.valuefn.particle:Particle",
            "Deep Sets over the infostate rows: a change basis per row, summed, then a regression (paper, app. F)",
            True,
        ),
        "attention": ArchitectureEntry(
            "pvf.valuefn.attention:Attention", "a set transformer over the infostate rows (self-attention blocks)", True
        ),
    }
)


def architecture_class(name: str) -> type[Architecture]:
    """The `Architecture` subclass called `name`; PvfError naming the known ones otherwise."""
    if name not in ARCHITECTURES:
        raise PvfError(f"unknown value-function architecture {name!r}; choose from {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name]


def particle_architectures() -> tuple[str, ...]:
    """The registered architectures that read a PBS as a set of infostate rows: the ones sparse trunks can use."""
    return tuple(name for name in ARCHITECTURES if ARCHITECTURES.reads_sets(name))


def make_architecture(name: str, **hyper_parameters: Any) -> Architecture:
    """An architecture by name, with its data-independent hyper-parameters (defaults: the paper's)."""
    return architecture_class(name)(**hyper_parameters)


def to_class_path(arch: Architecture) -> dict[str, Any]:
    """`{"class_path": ..., "init_args": {...}}`, plain python, as a LightningCLI config writes it."""
    cls = type(arch)
    return {"class_path": f"{cls.__module__}.{cls.__qualname__}", "init_args": dict(vars(arch))}


def from_class_path(spec: dict[str, Any]) -> Architecture:
    """Inverse of `to_class_path` (e.g. a checkpoint's hyper-parameters)."""
    module, _, name = spec["class_path"].rpartition(".")
    from pvf.valuefn.architecture import Architecture

    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, Architecture)):
        raise PvfError(f"{spec['class_path']} is not a value-function architecture")
    return cls(**spec.get("init_args", {}))
