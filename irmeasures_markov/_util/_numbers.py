"""How every table this package prints spells a number (text, Markdown, LaTeX, CSV, TSV)."""
from __future__ import annotations

__all__ = ["SIGNIFICANT", "format_number"]

#: digits kept when no number of decimals is asked for: every decimal with this many digits survives a round trip
#: through a float64, so the digits beyond it are only the noise of the arithmetic (0.7019999999999998 -> 0.702)
SIGNIFICANT = 15


def format_number(x: float, places: int | None) -> str:
    """``x`` with ``places`` decimals; -1: every digit (``repr``); None: the shortest ``repr`` of ``x`` rounded to
    `SIGNIFICANT` significant digits.  Non-finite values are spelled as Python spells them (nan, inf, -inf)."""
    x = float(x)
    if places is None:
        return repr(float(f"{x:.{SIGNIFICANT}g}"))
    return repr(x) if places < 0 else f"{x:.{places}f}"
