"""The fit log's Python side: loaded inside the sandbox as ``sitecustomize`` before the script.

It records every model the script fits with statsmodels, linearmodels, pyfixest or rdrobust as
one JSON line ``{"function", "terms": [{"term", "estimate", "std_error"}], "nobs", "vcov"}``
(``vcov``: how the standard errors were computed, in the package's words) written to a pipe the
harness reads (the descriptor is named by ``CAUSALVERIFY_FITLOG_FD``). It changes
nothing the script computes or prints:

- the hooks are installed when the estimation module is imported (a ``sys.meta_path`` finder
  patches the module right after it executes), so a script that fits nothing pays nothing;
- the variables that point here (``CAUSALVERIFY_FITLOG_FD``, ``PYTHONPATH``) and this folder's
  entry in ``sys.path`` are removed before the script starts;
- a fit called inside another hooked fit is not logged again (only the outermost call);
- every failure of the hook is swallowed: the script's own exceptions pass through unchanged.

It also loads the output-provenance hook (:mod:`causalverify.sandbox._output_py`), which notes
which line of the script wrote each piece of stdout, into the same pipe.

This file runs as untrusted code's neighbour: the harness treats whatever reaches the pipe as
untrusted data (see :mod:`causalverify.sandbox.fitlog`). It imports only the standard library at
start-up and must stay importable without the rest of CausalVerify.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import types
from typing import Any

_FD_VAR = "CAUSALVERIFY_FITLOG_FD"
_MAX_ENTRIES = 2000
_MAX_TERMS = 200
_MAX_TEXT = 200
_FD: int | None = None
_STATE = {"depth": 0, "written": 0}
_FIT_FUNCTIONS = {"feols", "fepois", "feglm"}


def _number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _is_dummy(term: str) -> bool:
    """A fixed-effect dummy of a factor (``factor(unit)12``, ``C(unit)[T.12]``): not logged."""
    return term.startswith(("factor(", "as.factor(", "C(")) and not term.endswith(")")


def _terms(
    names: list[Any], estimates: list[Any], errors: list[Any] | None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        term = str(name)
        if _is_dummy(term):
            continue
        se = _number(errors[i]) if errors is not None and i < len(errors) else None
        out.append({"term": term, "estimate": _number(estimates[i]), "std_error": se})
        if len(out) >= _MAX_TERMS:
            break
    return out


def _as_list(values: Any) -> list[Any]:
    tolist = getattr(values, "tolist", None)
    if callable(tolist):
        out = tolist()
        return list(out) if isinstance(out, list) else [out]
    return list(values)


def _names(values: Any, model: Any) -> list[Any]:
    index = getattr(values, "index", None)
    if index is not None:
        return [str(v) for v in index]
    names = getattr(model, "exog_names", None)
    if names is not None and len(names) == len(values):
        return list(names)
    return [f"x{i}" for i in range(len(values))]


def _flat(values: Any) -> list[Any]:
    """A 1-D list from a Series, an array or a one-column frame."""
    if getattr(values, "ndim", 1) == 2:
        values = values.iloc[:, 0] if hasattr(values, "iloc") else values[:, 0]
    return _as_list(values)


def _errors(get: Any) -> list[Any] | None:
    """The standard errors ``get()`` returns, flattened; None when they cannot be computed."""
    try:
        return _flat(get())
    except Exception:
        return None


def _text(value: Any) -> str | None:
    """A short description for the log (None when empty)."""
    if value is None:
        return None
    text = " ".join(str(value).split())[:_MAX_TEXT]
    return text or None


def _cov_type(res: Any, se_attr: str) -> str | None:
    """statsmodels' ``cov_type``; linearmodels' covariance estimator and its debiasing."""
    if se_attr == "bse":
        return _text(getattr(res, "cov_type", None))
    kind = getattr(res, "cov_type", None) or getattr(res, "_cov_type", None)
    config = getattr(res, "cov_config", None)
    if isinstance(config, dict) and isinstance(config.get("debiased"), bool):
        return _text(f"{kind}; debiased={config['debiased']}")
    return _text(kind)


def _params_entry(function: str, res: Any, se_attr: str) -> dict[str, Any] | None:
    """A statsmodels (``bse``) or linearmodels (``std_errors``) result."""
    params = getattr(res, "params", None)
    if params is None:
        return None
    model = getattr(res, "model", None)
    entry: dict[str, Any] = {
        "function": function,
        "terms": _terms(
            _names(params, model), _flat(params), _errors(lambda: getattr(res, se_attr))
        ),
        "nobs": _number(getattr(res, "nobs", None)),
        "vcov": _cov_type(res, se_attr),
    }
    endog = getattr(getattr(model, "endog", None), "cols", None)  # linearmodels' IV models
    if se_attr == "std_errors" and endog:
        entry["iv"] = True
        entry["endogenous"] = [str(c) for c in endog]
    return entry


def _pyfixest_entries(function: str, res: Any) -> list[dict[str, Any]]:
    models = getattr(res, "all_fitted_models", None)
    fits = list(models.values()) if isinstance(models, dict) else [res]
    out: list[dict[str, Any]] = []
    for fit in fits:
        coef = fit.coef()
        entry: dict[str, Any] = {
            "function": function,
            "terms": _terms(_names(coef, None), _flat(coef), _errors(fit.se)),
            "nobs": _number(getattr(fit, "_N", None)),
            "vcov": _pyfixest_vcov(fit),
        }
        if getattr(fit, "_is_iv", False):
            entry["iv"] = True
            fml = getattr(fit, "_fml", None)
            stages = [p for p in fml.split("|")[1:] if "~" in p] if isinstance(fml, str) else []
            if stages:
                entry["endogenous"] = [t.strip() for t in stages[-1].split("~")[0].split("+")]
        out.append(entry)
    return out


def _pyfixest_vcov(fit: Any) -> str | None:
    """``iid``, ``hetero``, ``HC1``..``HC3``, ``CRV1``/``CRV3`` with its cluster variables."""
    detail = getattr(fit, "_vcov_type_detail", None) or getattr(fit, "_vcov_type", None)
    clusters = getattr(fit, "_clustervar", None)
    if detail and isinstance(clusters, (list, tuple)) and clusters:
        return _text(f"{detail} by {'+'.join(str(c) for c in clusters)}")
    return _text(detail)


def _rdrobust_entry(function: str, res: Any) -> dict[str, Any] | None:
    coef, se = getattr(res, "coef", None), getattr(res, "se", None)
    if coef is None:
        return None
    n = getattr(res, "N", None)
    nobs = sum(_number(v) or 0.0 for v in n) if isinstance(n, (list, tuple)) else _number(n)
    errors = _flat(se) if se is not None else None
    return {
        "function": function,
        "terms": _terms(_names(coef, None), _flat(coef), errors),
        "nobs": nobs,
        "rd": True,
        # rdmodel reads "Fuzzy RD estimates ..." for rdrobust(..., fuzzy=d)
        "fuzzy": "fuzzy" in str(getattr(res, "rdmodel", "")).lower(),
        "vcov": _text(f"vce={res.vce}") if getattr(res, "vce", None) else None,
    }


def _entries(function: str, res: Any) -> list[dict[str, Any]]:
    top = function.split(".", 1)[0]
    if top == "pyfixest":
        return _pyfixest_entries(function, res)
    if top == "rdrobust":
        one = _rdrobust_entry(function, res)
    elif top == "linearmodels":
        one = _params_entry(function, res, "std_errors")
    else:
        one = _params_entry(function, res, "bse")
    return [one] if one is not None else []


def _log(function: str, res: Any) -> None:
    if _FD is None or _STATE["written"] >= _MAX_ENTRIES:
        return
    try:
        import json
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            entries = _entries(function, res)
        for entry in entries:
            if _STATE["written"] >= _MAX_ENTRIES:
                return
            _STATE["written"] += 1
            line = json.dumps(entry, separators=(",", ":"), allow_nan=False) + "\n"
            os.write(_FD, line.encode("utf-8"))
    except Exception:  # the log is best effort; the script must never notice it
        return


def _hooked(fn: Any, label: Any) -> Any:
    """``fn`` with its outermost calls logged; ``label(args)`` names the function."""
    if getattr(fn, "__causalverify_fitlog__", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _STATE["depth"] += 1
        try:
            result = fn(*args, **kwargs)
        finally:
            _STATE["depth"] -= 1
        if _STATE["depth"] == 0:
            _log(label(args), result)
        return result

    wrapper.__causalverify_fitlog__ = True  # type: ignore[attr-defined]
    return wrapper


def _method_label(top: str) -> Any:
    def label(args: Any) -> str:
        return f"{top}.{type(args[0]).__name__}" if args else top

    return label


def _patch_classes(module: Any, top: str, base_module: str | None) -> None:
    for obj in list(vars(module).values()):
        if not isinstance(obj, type) or obj.__module__ != module.__name__:
            continue
        if not isinstance(vars(obj).get("fit"), types.FunctionType):
            continue
        if base_module is not None and not any(k.__module__ == base_module for k in obj.__mro__):
            continue
        obj.fit = _hooked(vars(obj)["fit"], _method_label(top))  # type: ignore[attr-defined]


def _patch_functions(module: Any, names: set[str], prefix: str) -> None:
    for name in names:
        fn = vars(module).get(name)
        if callable(fn) and getattr(fn, "__module__", None) == module.__name__:
            setattr(module, name, _hooked(fn, lambda _args, n=name: f"{prefix}.{n}"))


def _patch(module: Any) -> None:
    name = module.__name__
    top = name.split(".", 1)[0]
    try:
        if top == "statsmodels":
            _patch_classes(module, "statsmodels", "statsmodels.base.model")
        elif top == "linearmodels" and name.split(".")[1:2] in (["iv"], ["panel"]):
            _patch_classes(module, "linearmodels", None)
        elif top == "pyfixest":
            _patch_functions(module, _FIT_FUNCTIONS, "pyfixest")
        elif name == "rdrobust.rdrobust":
            _patch_functions(module, {"rdrobust"}, "rdrobust")
    except Exception:
        return


_TOPS = ("statsmodels", "linearmodels", "pyfixest", "rdrobust")


class _Finder:
    """Patches estimation modules right after they execute; finds nothing itself."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name.split(".", 1)[0] not in _TOPS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        execute = getattr(loader, "exec_module", None)
        if execute is None:
            return spec

        def exec_module(module: Any) -> None:
            execute(module)
            _patch(module)

        try:
            # this module's own loader object only (loaders are made per module)
            setattr(loader, "exec_module", exec_module)  # noqa: B010
        except (AttributeError, TypeError):
            return spec
        return spec


def _install() -> None:
    global _FD
    raw = os.environ.pop(_FD_VAR, None)
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get("PYTHONPATH")
    if path is not None:
        rest = [p for p in path.split(os.pathsep) if p and os.path.abspath(p) != here]
        if rest:
            os.environ["PYTHONPATH"] = os.pathsep.join(rest)
        else:
            os.environ.pop("PYTHONPATH")
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if raw is None or not raw.isdigit():
        return
    _FD = int(raw)
    sys.meta_path.insert(0, _Finder())
    _install_output(here, _FD)


def _install_output(here: str, fd: int) -> None:
    """Load the output-provenance hook placed beside this file (``causalverify_output``)."""
    try:
        import importlib.util

        name = "causalverify_output"
        spec = importlib.util.spec_from_file_location(name, os.path.join(here, f"{name}.py"))
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module  # the warm interpreter installs it again for each cell
        module.install(fd)
    except Exception:
        return


_install()
