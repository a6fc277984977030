"""From fit to measure: fitted user models under names that measure strings accept, and fit files.

``register_fitted('yandex', report)`` keeps the best fit of each family of a
[`FitReport`][irmeasures_markov.calibration.FitReport] (or one [`FamilyFit`][irmeasures_markov.calibration.FamilyFit])
under a name, and the
measures read it through their model parameter:

=============  ==========================  ==========================================
measure        spelling                    what the fit sets
=============  ==========================  ==========================================
MP, MPcont     ``model='fit:yandex'``      kernel and state space (MPcont: and the
                                           holding rates, when the fit has them and
                                           no ``rates`` is given)
M1–M4          ``dist='fit:yandex'``       the stopping distribution P(k)
PH             ``browse='fit:yandex'``     browsing model, p, q (p_rel, q_rel)
TBG            ``user='fit:yandex'``       click probabilities, half-life, summary
                                           time (those the fit has)
=============  ==========================  ==========================================

``'file:PATH'`` in place of ``'fit:NAME'`` reads a fit file written by
[`save_fit`][irmeasures_markov.calibration.save_fit] (a path relative to the working directory; the file is read
again when it changes).  A name that is not registered in this process is
looked up as the file ``NAME.json`` in the directories of the environment
variable ``IRMEASURES_MARKOV_FITS`` (separated by ``os.pathsep``; default:
the working directory), so ``MP(model='fit:yandex')`` works on the command
line after ``irmeasures-markov fit LOG -o yandex.json``.

The fit file (JSON)::

    {"format": "irmeasures_markov.fit", "version": 1,
     "log": {"description": ..., "source": ..., "n_sessions": ...},
     "fits": [FamilyFit.to_dict(), ...],
     "best": {"mp": 0, "carterette": 3, ...},
     "notes": ["what could not be fitted and why", ...],
     "diagnostics": {"mp/GL_AD_ID": {"jumps_observed": [...], ...}, ...}}

``best`` gives, per family, the index in ``fits`` of the fit that measures use;
``notes`` (optional) are the report's; ``diagnostics`` (optional) are the report's curves of each family's best
fit, so that ``load_fit(path).to_report().plot()`` draws what the report drew.

Click models (family ``"clickmodel"``) are fits too: ``best["carterette"]`` may name one that M1–M4 take
as their stopping distribution, and a file without a Carterette fit uses its best click model
(docs/user-model-framework.md, "Click models as user models").
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field

from irmeasures_markov._util._errors import InputError
from irmeasures_markov._util._registry import Registry
from irmeasures_markov.calibration import _parameters as parameters
from irmeasures_markov.calibration._fit_report import FitReport
from irmeasures_markov.calibration._parameters import is_carterette_user_model, model_name, why_not_a_user_model
from irmeasures_markov.calibration._result import FAMILIES, FamilyFit
from irmeasures_markov.calibration.click_models import ClickModelFit
from irmeasures_markov.io._content import ContentCache, digest_value

__all__ = ["register_fitted", "unregister_fitted", "registered_fits", "save_fit", "load_fit", "FitFile",
           "resolve_fit", "fit_parameters", "fit_fingerprint", "check_fit_name", "FIT_FORMAT", "FIT_VERSION",
           "FITS_ENV", "FIT_FAMILIES"]

FIT_FORMAT = "irmeasures_markov.fit"
FIT_VERSION = 1
#: directories searched for ``NAME.json`` when ``fit:NAME`` is not registered in this process
FITS_ENV = "IRMEASURES_MARKOV_FITS"
#: the families a fit file holds: the package's user models and the click models
FIT_FAMILIES = tuple(dict.fromkeys(FAMILIES + ("clickmodel",)))

#: name -> {family: FamilyFit}
_REGISTERED: dict[str, dict[str, FamilyFit]] = {}
#: name -> how many times it was registered, so cached measure parameters of a replaced fit are never used
_VERSIONS: dict[str, int] = {}
_PARAMS: dict[tuple, dict] = {}
_FINGERPRINTS: dict[tuple, str] = {}


@dataclass
class FitFile:
    """The content of a fit file: every fit, which one is best per family, the log's description, and the curves
    of the best fits (``FitReport.diagnostics``)."""

    fits: list[FamilyFit]
    best_index: dict[str, int]
    log: dict = field(default_factory=dict)
    path: str = ""
    notes: list[str] = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)

    @property
    def families(self) -> tuple[str, ...]:
        """The families with a best fit, in the order of ``FAMILIES``."""
        return tuple(f for f in FIT_FAMILIES if f in self.best_index)

    def best(self, family: str) -> FamilyFit:
        """The fit that measures use for ``family`` (``ValueError`` naming the file when it has none).

        Parameters
        ----------
        family : str
            the model family.

        Returns
        -------
        FamilyFit
            the file's best fit of ``family``.

        Raises
        ------
        ValueError
            If the file has no fit of ``family``.
        """
        if family not in self.best_index:
            where = f"{self.path}: " if self.path else ""
            raise ValueError(f"{where}no {family!r} fit (the file has: {', '.join(self.families) or 'none'})")
        return self.fits[self.best_index[family]]

    def to_dict(self) -> dict:
        """The file's JSON content (module docstring).

        Returns
        -------
        dict
            ``format``, ``version``, ``log``, ``fits``, ``best`` and, when there are any, ``notes`` and
            ``diagnostics``.
        """
        return {"format": FIT_FORMAT, "version": FIT_VERSION, "log": dict(self.log),
                "fits": [f.to_dict() for f in self.fits], "best": dict(self.best_index),
                **({"notes": list(self.notes)} if self.notes else {}),
                **({"diagnostics": dict(self.diagnostics)} if self.diagnostics else {})}

    def to_report(self) -> FitReport:
        """The fits as a [`FitReport`][irmeasures_markov.calibration.FitReport]: its table, and the plots of the
        best fits when the file keeps their diagnostics (files written since fit files keep them).

        Returns
        -------
        FitReport
            a report of the file's fits, notes, log and diagnostics.
        """
        return FitReport(self.fits, self.diagnostics, notes=self.notes, log=self.log)


def _as_fit_file(fit_or_report) -> FitFile:
    """A [`FitFile`][irmeasures_markov.calibration.FitFile] view of a FamilyFit, a FitReport (``.fits``,
    ``.best(family)``) or a FitFile."""
    if isinstance(fit_or_report, FitFile):
        return fit_or_report
    if isinstance(fit_or_report, FamilyFit) or getattr(fit_or_report, "family", None) == "clickmodel":
        f = fit_or_report
        _check_family(f)
        return FitFile([f], {f.family: 0}, {"description": getattr(f, "log_description", ""),
                                            "n_sessions": getattr(f, "n_sessions", 0)})
    fits = getattr(fit_or_report, "fits", None)
    best = getattr(fit_or_report, "best", None)
    if fits is None or not callable(best):
        raise TypeError(f"expected a FamilyFit or a FitReport (with .fits and .best(family)), "
                        f"got {type(fit_or_report).__name__}")
    fits = list(fits)
    index = {}
    for family in [f for f in FIT_FAMILIES if any(x.family == f for x in fits)]:
        try:
            chosen = best(family)
        except (KeyError, ValueError):   # a report that does not rank this family
            continue
        index[family] = next(i for i, f in enumerate(fits) if f is chosen)
    log = getattr(fit_or_report, "log", None)
    if not isinstance(log, dict):  # a report that does not describe its log: what its fits say
        log = {"description": fits[0].log_description if fits else "", "source": "",
               "n_sessions": max((f.n_sessions for f in fits), default=0)}
    notes = getattr(fit_or_report, "notes", None)
    # the plot data of the fits that measures use (what FitReport.plot draws), not of every candidate
    diagnostics = getattr(fit_or_report, "diagnostics", None)
    best_labels = {f"{family}/{getattr(fits[i], 'model', None)}" for family, i in index.items()}
    diagnostics = ({k: v for k, v in diagnostics.items() if k in best_labels} if isinstance(diagnostics, dict)
                   else {})
    return FitFile(fits, index, dict(log), notes=[str(n) for n in notes] if isinstance(notes, list) else [],
                   diagnostics=diagnostics)


def _check_family(f: FamilyFit) -> None:
    if f.family not in FIT_FAMILIES:
        raise ValueError(f"unknown family {f.family!r} of fit {model_name(f)!r}; families are {list(FIT_FAMILIES)}")


def check_fit_name(name, where: str = "register_fitted") -> str:
    """The rule for fit names, registered or looked up as ``NAME.json``: a plain word (no quotes, slashes,
    backslashes or ':', no surrounding space), so ``fit:NAME`` never reaches outside the fit directories."""
    if not isinstance(name, str) or not name or any(c in name for c in "'\"\\/:") or name != name.strip():
        raise ValueError(f"{where}: the name must be a plain word (no quotes, slashes or ':'), got {name!r}"
                         + ("" if where == "register_fitted" else "; use 'file:PATH' to read a fit file by its path"))
    return name


#: the registered fits, by the rule of fit names
FIT_REGISTRY = Registry("fit", lambda: _REGISTERED, name_rule=check_fit_name)


def register_fitted(name: str, fit_or_report: FitReport | FitFile | FamilyFit) -> str:
    """Make a fitted model usable in measure strings as ``'fit:NAME'`` (module docstring).

    ``fit_or_report``: a [`FitReport`][irmeasures_markov.calibration.FitReport] (its best fit of each family is
    registered), a [`FitFile`][irmeasures_markov.calibration.FitFile] from
    [`load_fit`][irmeasures_markov.calibration.load_fit] (likewise), or one
    [`FamilyFit`][irmeasures_markov.calibration.FamilyFit] (its family).  Families already registered
    under ``name`` and not in ``fit_or_report`` are kept; the others are
    replaced.  Returns ``name``.

    Parameters
    ----------
    name : str
        the name used in measure strings (``'fit:NAME'``).
    fit_or_report : FitReport or FitFile or FamilyFit
        the fit(s) to register.

    Returns
    -------
    str
        ``name``.

    Raises
    ------
    ValueError
        If ``name`` is not a valid registration name, or ``fit_or_report`` holds no fit.
    """
    FIT_REGISTRY.key(name)
    ff = _as_fit_file(fit_or_report)
    if not ff.best_index:
        raise ValueError("register_fitted: nothing to register (no fit)")
    _REGISTERED.setdefault(name, {}).update({family: ff.best(family) for family in ff.families})
    _VERSIONS[name] = _VERSIONS.get(name, 0) + 1
    return name


def unregister_fitted(name: str) -> None:
    """Forget the fits registered under ``name`` (KeyError if there are none).

    Parameters
    ----------
    name : str
        the name the fits were registered under.

    Raises
    ------
    KeyError
        If nothing is registered under ``name``.
    """
    FIT_REGISTRY.unregister(name)
    _VERSIONS[name] = _VERSIONS.get(name, 0) + 1


def registered_fits() -> dict[str, tuple[str, ...]]:
    """``{name: families}`` of the fits registered in this process.

    Returns
    -------
    dict of str to tuple of str
        each registered name with the families registered under it.
    """
    return {n: tuple(f for f in FIT_FAMILIES if f in e) for n, e in _REGISTERED.items()}


# ---------------------------------------------------------------------------
# Fit files
# ---------------------------------------------------------------------------

def _jsonable(x):
    """Strict JSON: numpy values as Python ones, non-finite floats as null."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
        return _jsonable(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def save_fit(path: str | os.PathLike, fit_or_report: FitReport | FitFile | FamilyFit, *,
             description: str | None = None, source: str | None = None) -> None:
    """Write a fit file (module docstring): every fit of a report, or one FamilyFit, and the log's description.

    Parameters
    ----------
    path : str or os.PathLike
    fit_or_report : FitReport, FitFile or FamilyFit
    description : str, optional
        Replace those the fits carry (say where the log came from: the file
        is how a calibrated measure is shared and cited).
    source : str, optional
        Replace those the fits carry (say where the log came from: the file
        is how a calibrated measure is shared and cited).

    Notes
    -----
    Non-finite numbers are written as ``null`` (strict JSON).
    """
    ff = _as_fit_file(fit_or_report)
    given = {k: v for k, v in (("description", description), ("source", source)) if v is not None}
    content = _jsonable(dataclasses.replace(ff, log={**ff.log, **given}).to_dict())
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(content, indent=1, allow_nan=False) + "\n")


def load_fit(path: str | os.PathLike) -> FitFile:
    """Read a fit file written by [`save_fit`][irmeasures_markov.calibration.save_fit].

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    FitFile
        Every fit checked ([`FamilyFit.from_dict`][irmeasures_markov.calibration.FamilyFit.from_dict], the family's
        parameter schema).

    Raises
    ------
    FileNotFoundError
        For a missing file.
    InputError
        Naming the file (and line, for bad JSON) for one that is not a fit file.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            content = fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(2, f"no such fit file: {name}", name) from None
    return _parse_fit(name, content)


def _parse_fit(name: str, content: bytes) -> FitFile:
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name}: not a fit file (not UTF-8 text)") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}:{e.lineno}: not a fit file: not valid JSON ({e.msg}, column {e.colno})") from None
    return _fit_file_from_dict(obj, name)


_FILE_FIELDS = ("format", "version", "log", "fits", "best", "notes", "diagnostics")


def _fit_file_from_dict(obj, name: str) -> FitFile:
    if not isinstance(obj, dict) or obj.get("format") != FIT_FORMAT:
        raise InputError(f"{name}: not a fit file (expected a JSON object with \"format\": \"{FIT_FORMAT}\"; "
                         "write one with irmeasures_markov.calibration.save_fit or `irmeasures-markov fit -o`)")
    version = obj.get("version")
    if version != FIT_VERSION:
        raise InputError(f"{name}: fit file version {version!r}; this version of irmeasures_markov reads version "
                         f"{FIT_VERSION}")
    unknown = [k for k in obj if k not in _FILE_FIELDS]
    if unknown:
        raise InputError(f"{name}: unknown field {unknown[0]!r}; the fields of a fit file are "
                         f"{', '.join(_FILE_FIELDS)}")
    if not isinstance(obj.get("log", {}), dict):
        raise InputError(f"{name}: field 'log' must be an object (the log's description, source, ...)")
    if not isinstance(obj.get("notes", []), list):
        raise InputError(f"{name}: field 'notes' must be a list of strings")
    if not isinstance(obj.get("diagnostics", {}), dict):
        raise InputError(f"{name}: field 'diagnostics' must be an object (\"family/model\" -> its curves)")
    raw = obj.get("fits")
    if not isinstance(raw, list):
        raise InputError(f"{name}: \"fits\" must be a list of fits")
    fits = []
    for i, d in enumerate(raw):
        try:
            if not isinstance(d, dict):
                raise TypeError("not an object")
            d = dict(d)
            if d.get("loglik") is None:
                d["loglik"] = float("nan")  # written as null: no training likelihood
            click = d.get("family") == "clickmodel" and "name" in d and "model" not in d  # ClickModelFit.to_dict()
            f = ClickModelFit.from_dict(d) if click else FamilyFit.from_dict(d)   # params: an object (dict)
            _check_family(f)
        except (TypeError, ValueError, KeyError, IndexError) as e:
            raise InputError(f"{name}: fit {i} is not a valid fit ({e})") from None
        try:
            parameters.check_params(f)
        except ValueError as e:
            raise InputError(f"{name}: fit {i} ({f.family} {model_name(f)!r}): {e}") from None
        fits.append(f)
    best = obj.get("best")
    if not isinstance(best, dict):
        raise InputError(f"{name}: \"best\" must map each family to the index of its fit")
    for family, i in best.items():
        if family not in FIT_FAMILIES or isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(fits) \
                or not _serves(fits[i], family):
            what = f"a {family!r} fit" + (" or of a click model that is a stopping distribution (PBM; DBN, SDBN "
                                          "or CM with parameters per grade)" if family == "carterette" else "")
            raise InputError(f"{name}: \"best\": {family!r} -> {i!r} is not the index of {what}")
    return FitFile(fits, dict(best), obj.get("log", {}), name, [str(n) for n in obj.get("notes", [])],
                   obj.get("diagnostics", {}))


def _serves(fit, family: str) -> bool:
    """Whether ``fit`` can be ``family``'s fit: its own, or for M1–M4 a click model that is a distribution."""
    return fit.family == family or (family == "carterette" and is_carterette_user_model(fit))


# ---------------------------------------------------------------------------
# Resolution of 'fit:NAME' / 'file:PATH'
# ---------------------------------------------------------------------------

#: fit files read, keyed by the digest of their bytes
_FILES = ContentCache(_parse_fit, maxsize=32)


def _file(path: str) -> tuple[tuple, FitFile]:
    """The fit file at ``path`` as it is now, with a token naming its content (the digest of its bytes)."""
    try:
        digest, ff = _FILES.get(path)
    except (FileNotFoundError, IsADirectoryError):
        raise FileNotFoundError(2, f"no such fit file: {path}", path) from None
    return ("file", digest), ff


def _lookup(spec: str, where: str) -> tuple[tuple, object]:
    """``(token, source)``: the registered entry ``{family: fit}`` or the
    [`FitFile`][irmeasures_markov.calibration.FitFile] a spec names."""
    kind, _, rest = spec.partition(":")
    if kind.lower() == "file":
        return _file(rest)
    name = check_fit_name(rest, where)
    if name in _REGISTERED:
        return ("fit", name, _VERSIONS.get(name, 0)), _REGISTERED[name]
    env = os.environ.get(FITS_ENV)
    dirs = [d for d in env.split(os.pathsep) if d] if env else [os.getcwd()]
    for d in dirs:
        candidate = os.path.join(d, name + ".json")
        if os.path.isfile(candidate):
            return _file(candidate)
    registered = sorted(_REGISTERED)
    raise ValueError(f"{where}: no fit is registered under {name!r} (registered: {registered or 'none'}) and there "
                     f"is no {name}.json in {dirs} (${FITS_ENV}); register one with "
                     f"irmeasures_markov.calibration.register_fitted({name!r}, fit), or write {name}.json with "
                     f"save_fit or `irmeasures-markov fit LOG -o {name}.json`, or use 'file:PATH'")


def resolve_fit(spec: str, family: str, where: str = "") -> tuple[tuple, FamilyFit]:
    """``(token, fit)``: the ``family`` fit named by ``'fit:NAME'`` or ``'file:PATH'``.

    ``token`` identifies this fit until it is registered again or its file
    changes (for caches).  ``where`` (e.g. ``"MP: model='fit:yandex'"``)
    starts error messages.
    """
    where = where or spec
    token, source = _lookup(spec, where)
    if isinstance(source, FitFile):
        entry = {f: source.best(f) for f in source.families}
        what, it = f"the fit file {source.path} has", "it has"
    else:
        entry = source
        what, it = f"the fits registered under {spec.partition(':')[2]!r} have", "they have"
    if family in entry:
        return token + (family,), entry[family]
    click = entry.get("clickmodel")
    if click is not None and _serves(click, family):
        return token + ("clickmodel",), click
    has = ", ".join(f for f in FIT_FAMILIES if f in entry) or "none"
    why = "" if click is None else why_not_a_user_model(
        click, family, source.fits if isinstance(source, FitFile) else ())
    raise ValueError(f"{where}: {what} no {family!r} fit ({it}: {has}){why}")


def fit_parameters(spec: str, family: str, where: str = "") -> tuple[tuple, dict]:
    """``(token, measure parameters)`` of the ``family`` fit a spec names (``FamilyFit.measure_parameters()``,
    cached per token)."""
    token, fit = resolve_fit(spec, family, where)

    def make():
        try:
            return parameters.measure_parameters(fit)
        except (TypeError, ValueError, KeyError) as e:
            raise ValueError(f"{where or spec}: the {family} fit {model_name(fit)!r} cannot be used as a measure: "
                             f"{e}") from None
    return token, _cached(_PARAMS, token, make)


def _cached(store: dict, token: tuple, make):
    """``make()`` once per token (the store is emptied past 256 entries)."""
    value = store.get(token)
    if value is None:
        value = make()
        if len(store) > 256:
            store.clear()
        store[token] = value
    return value


def fit_fingerprint(spec: str, family: str, where: str = "") -> str:
    """Digest of the content of the ``family`` fit a spec names (every field of the fit, not its name or
    path): results stored for a measure using it are reused only while the fit is the same."""
    token, fit = resolve_fit(spec, family, where)
    return _cached(_FINGERPRINTS, token, lambda: digest_value(fit.to_dict()))
