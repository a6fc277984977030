"""Type aliases shared by every layer (one definition each)."""
from __future__ import annotations

import os

__all__ = ["PathLike"]

#: A file path as the readers and writers take it: a ``str`` or an :class:`os.PathLike` (``pathlib.Path``).
PathLike = str | os.PathLike
