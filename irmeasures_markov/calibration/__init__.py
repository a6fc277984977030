"""User models calibrated from interaction logs (MP, P@H, M1-M4, TBG).

``fit(train, test=...)`` fits every candidate user model of each family by
maximum likelihood and returns a :class:`FitReport` (docs/calibration.md).
"""
from .logs import ClickLog, Session
from .report import FitReport, fit
from .result import FAMILIES, FamilyFit

__all__ = ["ClickLog", "Session", "FamilyFit", "FAMILIES", "FitReport", "fit"]
