"""User models calibrated from interaction logs (MP, P@H, M1-M4, TBG)."""
from .logs import ClickLog, Session

__all__ = ["ClickLog", "Session"]
