"""User models calibrated from interaction logs (MP, P@H, M1-M4, TBG).

``fit(train, test=...)`` fits every candidate user model of each family by
maximum likelihood and returns a [`FitReport`][irmeasures_markov.calibration.FitReport] (docs/calibration.md).
"""
from irmeasures_markov.calibration._click_metrics import click_metrics
from irmeasures_markov.calibration._fit_report import FitReport
from irmeasures_markov.calibration._logs import ClickLog, Session
from irmeasures_markov.calibration._ph import simulate_ph
from irmeasures_markov.calibration._registry import (
            FitFile,
            load_fit,
            register_fitted,
            registered_fits,
            save_fit,
            unregister_fitted,
)
from irmeasures_markov.calibration._report import fit
from irmeasures_markov.calibration._result import FAMILIES, FamilyFit
from irmeasures_markov.calibration.readers import (
            from_dataframe,
            from_ir_datasets,
            read_log,
            read_wscd,
            to_dataframe,
            write_log,
)

__all__ = ["ClickLog", "Session", "FamilyFit", "FAMILIES", "FitReport", "fit"]
__all__ += ["read_wscd", "read_log", "write_log", "from_dataframe", "to_dataframe", "from_ir_datasets",
            "register_fitted", "unregister_fitted", "registered_fits", "save_fit", "load_fit", "FitFile"]
__all__ += ["click_metrics", "simulate_ph"]
