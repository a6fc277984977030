"""User models calibrated from interaction logs (MP, P@H, M1-M4, TBG)."""
from .logs import ClickLog, Session
from .readers import from_dataframe, from_ir_datasets, read_log, read_wscd, to_dataframe, write_log

__all__ = ["ClickLog", "Session"]
__all__ += ["read_wscd", "read_log", "write_log", "from_dataframe", "to_dataframe", "from_ir_datasets"]
