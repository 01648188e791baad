"""pvf: particle value functions for depth-limited solving of imperfect-information games."""

from pvf.errors import PvfError

__version__ = "0.1.0"

__all__ = ["PvfError", "__version__"]
