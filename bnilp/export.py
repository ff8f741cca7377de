"""A learned network out to other tools: fitted parameters, BIF, XMLBIF, JSON, pgmpy, bnlearn strings.

**Parameters** (:func:`fit_parameters`), for one DAG and the data it was learned from:

- *Discrete child* X_i with r_i states and discrete parents Π (q_i = ∏_{j∈Π} r_j configurations,
  observed or not), counts n_ijk (rows with parent configuration j and child state k),
  n_ij = Σ_k n_ijk:

  - ``ml`` (maximum likelihood): θ_ijk = n_ijk / n_ij; a configuration never observed (n_ij = 0)
    gets the uniform 1/r_i (the likelihood does not depend on it).
  - ``bayes`` (posterior mean under the BDeu-consistent Dirichlet prior, Heckerman, Geiger &
    Chickering 1995): θ_ijk = (n_ijk + α_ijk) / (n_ij + r_i·α_ijk), α_ijk = ESS / (r_i·q_i) — the
    prior BDeu scores with, so with ``--score bdeu`` it is the default, with the run's ESS.

- *Continuous child* Y with continuous parents Z (k of them) and discrete parents D (a conditional
  linear Gaussian, CG network): per configuration j of D (q = ∏ r_d, 1 without D), the least-squares
  regression Y = b_0j + Σ_m b_mj·Z_m + e, e ~ N(0, σ²_j), fitted to the n_j rows of j, with the ML
  variance σ²_j = RSS_j / n_j. A configuration with no rows has no parameters (null); one with fewer
  than k + 1 rows or collinear parents gets the minimum-norm least-squares slopes (on the centred,
  unit-length columns the fit is solved on: :func:`centred_least_squares`) and is flagged
  ``degenerate`` (σ² can be 0 there), as is an exact fit (σ² at most :data:`EXACT_FIT` of the child's mean
  square: Y a linear function of Z in those rows, to rounding). Always ML: ``method`` concerns discrete children.
- *Discrete child with a continuous parent* (possible under CG, CGd, MVP; MML allows none): not parameterised
  (``cpt`` is null and ``unparameterised`` says why) — a CPT needs discrete parents, and the scores'
  conditionals (a ratio of mixtures under CG, a logistic-type model under MVP) are not CPTs.

States keep their labels as read (strings; numeric codes as written in the file), in the data set's
order (numeric order when every label is a number, else sorted strings). Constant columns were left
out of the network by scoring; the export lists them under ``absent``.

**The fitted structure** (returned by :func:`fit_parameters`; :func:`write_json` writes it with the
arrays as nested lists — that JSON is the documented export schema)::

    {"format": "bnilp.network", "version": 1,
     "source": str, "N": int,
     "data_sha256": str,                                    # the file's SHA-256, where the data came from a file
     "rows_dropped_missing": int,                           # where drop_missing left rows out (N counts the rest)
     "parameters": {"method": "ml" | "bayes", "ess": float | None,  # method and ESS: the discrete children's CPTs
                    "continuous": "ml"},                    # where a child is continuous (always ML regressions)
     "order": [names],                                      # a topological order
     "variables": {name: {
         "type": "discrete", "states": [labels], "parents": [names],
         "configurations": [[parent labels], ...],          # q rows: product of parent states, last parent fastest
         "counts": (q, r) array, "cpt": (q, r) array,       # row j = P(child | configuration j), sums to 1
       } | {
         "type": "continuous", "parents": [names], "discrete_parents": [names], "continuous_parents": [names],
         "configurations": [[discrete parent labels], ...],
         "regressions": [{"n": int, "intercept": float | None, "coefficients": [float] | None,  # one per
                          "variance": float | None, "degenerate": bool}],                    # continuous parent
       } | {"type": "discrete", "states", "parents", "cpt": None, "unparameterised": str}},
     "absent": {name: reason},                              # constant columns and the like
     "notes": [str]}

``LearnResult.fit`` adds ``"score"`` (the name of the score the network was learned with), ``"score_description"``
(it with a penalty discount other than 1 and its structure prior, :func:`bnilp.scores.base.score_words`), ``"network"``
(``{"rank": K, "score": s, "of": n, "optimum_proven": bool, "limits": [...], "status": str, "complete": bool}``,
K = 1 for the best network, n the networks listed, ``status`` and ``complete`` the search's; with ``"limited"``, the
limits in words, where there are any, and ``"ranking"`` where the list is not complete — what K ranks the network
among — the file headers say both) and
``"model_string"`` (None, with a note, where a variable's name holds a character bnlearn's syntax reserves).

**Files.** :data:`EXPORT_FORMATS` maps file extensions to formats. BIF (:func:`bif_text`, the
classic interchange format read by pgmpy, bnlearn, GeNIe …) and XMLBIF 0.3 (:func:`xmlbif_text`)
hold discrete networks only; a network with a continuous variable is an :class:`InputError` naming
those variables (export JSON instead). In BIF, table rows are written per parent configuration
``(s_1, …, s_m) p_1, …, p_r;`` (last parent fastest); a name or label with a character outside
letters, digits and ``_ . + -`` is written with ``_`` for each such character (made unique with a
numeric suffix where two collide) and the renaming is listed in the file's header comment. XMLBIF
keeps every name as it is (XML-escaped). Every file is written atomically.

**bnlearn model strings** (:func:`model_string`, :func:`parse_model_string`): ``[A][B|A][C|A:B]``,
one bracket per node in a topological order, parents after ``|`` separated by ``:`` — what bnlearn's
``modelstring()`` prints and ``model2network()`` reads. For a CPDAG an undirected edge u — v is
written as u among v's parents *and* v among u's (bnlearn itself stores an undirected edge as the two
arcs u → v and v → u); such a string describes an equivalence class, is read back by
:func:`parse_model_string` (mutual parents = undirected), but is not a DAG for ``model2network``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

from bnilp.data import CONTINUOUS, DISCRETE, Dataset
from bnilp.errors import InputError, MissingExtraError, check_path, check_real
from bnilp.graphs import check_acyclic, topological_order
from bnilp.metrics import checked_parents
from bnilp.scorefile import atomic_write_text, check_file_name
from bnilp.scores.discrete import DEFAULT_ESS, MIN_ESS

#: parameter estimators for discrete children (see the module docstring)
PARAMETER_METHODS = ("ml", "bayes")
#: file extension → export format
EXPORT_FORMATS = {".bif": "bif", ".xmlbif": "xmlbif", ".xml": "xmlbif", ".json": "json"}
#: formats that hold discrete networks only
DISCRETE_ONLY_FORMATS = ("bif", "xmlbif")
#: the largest CPT (configurations × states) or regression table fitted for one variable
MAX_TABLE_CELLS = 10_000_000
#: JSON schema name and version of :func:`write_json`
SCHEMA = ("bnilp.network", 1)

_UNSAFE = re.compile(r"[^\w.+-]")
#: a regression whose ML variance is at most this share of the child's mean square is an exact fit up to
#: rounding (residuals of (64·machine ε)·|y|): flagged degenerate, since σ² is then 0 and the density has none
EXACT_FIT = (64 * np.finfo(float).eps) ** 2
#: characters XML 1.0 cannot hold, even escaped
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")   # lone surrogates: no UTF-8
#: a keyword and what a BIF reader takes for a number, inside a name (pgmpy's reader finds ``table 1`` in
#: ``probability ( x_table1 | y )``, ``default 2e`` in ``default2e``)
_KEYWORD_NUMBER = re.compile(r"(table|default)(?=[0-9eE.+-])")
_MODEL_NODE = re.compile(r"\[([^\[\]|]+)(?:\|([^\[\]]*))?\]")
_MODEL_FORBIDDEN = set("[]|:")


# ----------------------------------------------------------------------------------------- parameters

def default_method(score: str | None) -> str:
    """``bayes`` when the network was scored with BDeu (its prior is the BDeu Dirichlet), else ``ml``."""
    return "bayes" if score == "bdeu" else "ml"


def _check_method(method: str, ess: float | None) -> float | None:
    """The ESS the fit uses: none for ``ml``, for ``bayes`` a finite one ≥ :data:`~bnilp.scores.discrete.MIN_ESS`
    as BDeu's — below it α = ESS/(r·q) underflows to 0 and a configuration the data never show got the row
    0/0 = NaN (NaN in the BIF and XMLBIF, a traceback writing JSON: a review)."""
    if not isinstance(method, str) or method not in PARAMETER_METHODS:
        raise InputError(f"method (--parameters) must be one of {', '.join(PARAMETER_METHODS)}, got {method!r}")
    if method == "ml":
        if ess is not None:
            raise InputError(f"ess={ess!r} goes with method='bayes' only: method='ml' would ignore it")
        return None
    if ess is None:
        return DEFAULT_ESS
    ess = check_real(ess, "ess (--ess)", 0, above=True)
    if ess < MIN_ESS:
        raise InputError(f"ess (--ess) must be a finite number ≥ {MIN_ESS:g}, got {ess!r} (smaller, α/(q·r) "
                         "underflows to 0 and an unseen configuration's row is 0/0)")
    return ess


def _ordered_parents(parents: Mapping[str, Iterable[str]], dataset: Dataset) -> dict[str, list[str]]:
    """Parents of every network variable in data-column order; checks names and acyclicity."""
    out: dict[str, list[str]] = {}
    missing = [v for v in parents if v not in dataset.names]
    if missing:
        dropped = [v for v in missing if v in dataset.dropped]
        why = f" ({', '.join(dropped)} constant in this data)" if dropped else ""
        raise InputError(f"data: the network's variables {', '.join(map(repr, missing))} are not columns of the "
                         f"data{why}")
    for v, ps in parents.items():
        ps = set(ps)
        unknown = sorted(ps - set(parents))
        if unknown:
            raise InputError(f"parents: {v!r} has parents {unknown} that are not variables of the network")
        if v in ps:
            raise InputError(f"parents: {v!r} is its own parent")
        out[v] = sorted(ps, key=dataset.index)
    check_acyclic(out, "parents")
    return out


def _config_codes(dataset: Dataset, parents: list[str]) -> tuple[np.ndarray, int, list[list[str]]]:
    """Mixed-radix configuration code of every row (last parent fastest), q, and the label rows."""
    codes = np.zeros(dataset.N, dtype=np.int64)
    q = 1
    labels = []
    for p in parents:
        j = dataset.index(p)
        codes = codes * dataset.arities[j] + dataset.codes[:, j]
        q *= dataset.arities[j]
        labels.append([str(s) for s in dataset.levels[j]])
    if q > MAX_TABLE_CELLS:
        raise InputError(f"parents {parents}: {q} configurations is more than an export holds ({MAX_TABLE_CELLS})")
    return codes, q, [list(c) for c in itertools.product(*labels)]


def _fit_discrete(dataset: Dataset, child: str, parents: list[str], ess: float | None) -> dict[str, Any]:
    i = dataset.index(child)
    r = dataset.arities[i]
    entry: dict[str, Any] = {"type": DISCRETE, "states": [str(s) for s in dataset.levels[i]],
                             "parents": list(parents)}
    continuous = [p for p in parents if not dataset.is_discrete(dataset.index(p))]
    if continuous:
        entry["cpt"] = None
        entry["unparameterised"] = (f"discrete child with continuous parents ({', '.join(continuous)}): a CPT needs "
                                    "discrete parents; not parameterised")
        return entry
    codes, q, configs = _config_codes(dataset, parents)
    if q * r > MAX_TABLE_CELLS:
        raise InputError(f"{child!r}: a CPT of {q} × {r} cells is more than an export holds ({MAX_TABLE_CELLS})")
    counts = np.bincount(codes * r + dataset.codes[:, i], minlength=q * r).reshape(q, r).astype(np.int64)
    totals = counts.sum(axis=1, keepdims=True)
    if ess is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            cpt = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), 1.0 / r)
    else:
        alpha = ess / (r * q)
        cpt = (counts + alpha) / (totals + r * alpha)
    entry.update(configurations=configs, counts=counts, cpt=cpt)
    return entry


def centred_least_squares(z: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, bool]:
    """Least squares of y on [1, z] solved on centred, unit-length columns: (intercept, slopes, residuals,
    full rank).

    y − ȳ = Σ_m c_m·(z_m − z̄_m)/‖z_m − z̄_m‖ + e is the same fit as y = b_0 + Σ_m b_m·z_m + e with
    b_m = c_m/‖z_m − z̄_m‖ and b_0 = ȳ − Σ_m b_m·z̄_m (the intercept's normal equation makes the residuals
    sum to 0; the centred form of the normal equations, e.g. Seber & Lee, *Linear Regression Analysis*,
    2003), but its design's condition number no longer grows with the columns'
    offsets and scales: on [1, z] as read, a parent at 10⁷ ± 1 (a timestamp, a frequency in Hz) or at
    10⁻¹⁵ put the condition number past lstsq's cut-off, and the fit dropped the slope as collinear. A column
    constant in these rows (norm 0) stays 0 and makes the design rank-deficient; there, and with fewer
    rows than k + 1, the slopes are the minimum-norm solution on the unit-length columns.
    """
    y_mean = float(y.mean())
    if z.shape[1] == 0:
        return y_mean, np.zeros(0), y - y_mean, True
    z_mean = z.mean(axis=0)
    centred = z - z_mean
    norms = np.sqrt(np.einsum("ij,ij->j", centred, centred))
    scale = np.where(norms > 0, norms, 1.0)        # a constant column stays 0 (its slope 0)
    unit = centred / scale
    c, _, rank, _ = np.linalg.lstsq(unit, y - y_mean, rcond=None)
    slopes = np.where(norms > 0, c / scale, 0.0)
    residuals = (y - y_mean) - unit @ c
    return y_mean - float(z_mean @ slopes), slopes, residuals, bool(rank == z.shape[1])


def _fit_gaussian(dataset: Dataset, child: str, parents: list[str]) -> dict[str, Any]:
    y = dataset.values[:, dataset.index(child)]
    disc = [p for p in parents if dataset.is_discrete(dataset.index(p))]
    cont = [p for p in parents if p not in disc]
    codes, q, configs = _config_codes(dataset, disc)
    if q * (len(cont) + 2) > MAX_TABLE_CELLS:
        raise InputError(f"{child!r}: {q} regressions is more than an export holds")
    z = np.column_stack([dataset.values[:, dataset.index(p)] for p in cont]) if cont else np.empty((dataset.N, 0))
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(q + 1))
    regressions = []
    for j in range(q):
        rows = order[bounds[j]:bounds[j + 1]]
        n = int(rows.size)
        if n == 0:
            regressions.append({"n": 0, "intercept": None, "coefficients": None, "variance": None,
                                "degenerate": True})
            continue
        intercept, slopes, resid, full_rank = centred_least_squares(z[rows], y[rows])
        variance = float(resid @ resid) / n
        exact = variance <= EXACT_FIT * float(y[rows] @ y[rows]) / n     # an exact linear function, to rounding
        regressions.append({"n": n, "intercept": intercept, "coefficients": [float(b) for b in slopes],
                            "variance": variance, "degenerate": bool(not full_rank or exact)})
    return {"type": CONTINUOUS, "parents": list(parents), "discrete_parents": disc, "continuous_parents": cont,
            "configurations": configs, "regressions": regressions}


def fit_parameters(dataset: Dataset, parents: Mapping[str, Iterable[str]], method: str = "ml",
                   ess: float | None = None) -> dict[str, Any]:
    """Parameters of the DAG ``parents`` (variable → its parents; every network variable a key) from
    ``dataset``: CPTs for discrete children (``method`` ``ml`` or ``bayes`` with equivalent sample size
    ``ess``, default :data:`DEFAULT_ESS`), linear-Gaussian regressions per discrete-parent configuration
    for continuous children. Returns the structure of the module docstring.
    """
    if not isinstance(dataset, Dataset):
        raise InputError(f"dataset must be a bnilp Dataset (bnilp.data.load_data or from_dataframe makes one), got "
                         f"{type(dataset).__name__}")
    ess = _check_method(method, ess)
    ordered = _ordered_parents(checked_parents(parents, "parents"), dataset)
    if method == "bayes" and not any(dataset.is_discrete(dataset.index(v)) for v in ordered):
        raise InputError("method='bayes' (--parameters bayes) sets the discrete children's CPTs, but every variable "
                         "of the network is continuous: their regressions are maximum likelihood whatever the "
                         "method (use method='ml')")
    variables: dict[str, Any] = {}
    for v in ordered:
        if dataset.is_discrete(dataset.index(v)):
            variables[v] = _fit_discrete(dataset, v, ordered[v], ess)
        else:
            variables[v] = _fit_gaussian(dataset, v, ordered[v])
    absent = {name: "constant column (one value): left out of the network" for name in dataset.dropped}
    extra = [nm for nm in dataset.names if nm not in ordered]
    notes = [f"data columns not in the network (not exported): {', '.join(extra)}"] if extra else []
    unparam = [v for v, e in variables.items() if e.get("cpt", 0) is None]
    if unparam:
        notes.append(f"not parameterised (discrete child with continuous parents): {', '.join(unparam)}")
    gaussian = [v for v, e in variables.items() if e["type"] == CONTINUOUS]
    if method == "bayes" and gaussian:
        with_cpt = any(e.get("cpt") is not None for e in variables.values())
        notes.append("method 'bayes' concerns the discrete children's CPTs; the continuous children "
                     f"({', '.join(gaussian)}) are maximum-likelihood regressions"
                     + ("" if with_cpt else ", and no discrete child here has a CPT (each has a continuous "
                        "parent): every parameter is maximum likelihood"))
    return {
        "format": SCHEMA[0], "version": SCHEMA[1],
        "source": dataset.source, "N": dataset.N,
        **({"data_sha256": dataset.sha256} if dataset.sha256 else {}),
        **({"rows_dropped_missing": dataset.rows_dropped_missing} if dataset.rows_dropped_missing else {}),
        "parameters": {"method": method, "ess": ess, **({"continuous": "ml"} if gaussian else {})},
        "order": topological_order(ordered, dataset.names),
        "variables": {v: variables[v] for v in dataset.names if v in variables},
        "absent": absent,
        "notes": notes,
    }


# ----------------------------------------------------------------------------------------- BIF / XMLBIF

def export_format(path: str | os.PathLike[str]) -> str:
    """The format a path asks for by its extension (:data:`EXPORT_FORMATS`)."""
    check_file_name(check_path(path, "path"))
    ext = Path(os.fspath(path)).suffix.lower()
    if ext not in EXPORT_FORMATS:
        stdout = " (the format is read from the extension, so an export cannot go to standard output)" \
            if os.fspath(path) in ("-", "/dev/stdout") or os.fspath(path).startswith("/dev/fd/") else ""
        raise InputError(f"{os.fspath(path)}: unknown export format {ext or '(no extension)'!r} "
                         f"(use {', '.join(EXPORT_FORMATS)}){stdout}")
    return EXPORT_FORMATS[ext]


#: the fields the fitted structure and each type of variable entry hold (module docstring's schema)
_TOP_KEYS = ("format", "parameters", "variables")
_ENTRY_KEYS = {DISCRETE: ("type", "parents", "states", "cpt"),
               CONTINUOUS: ("type", "parents", "discrete_parents", "continuous_parents", "configurations",
                            "regressions")}


def check_fitted(fitted: object) -> None:
    """An :class:`InputError` unless ``fitted`` is what :func:`fit_parameters` returns (the schema's name in
    ``format``, ``parameters`` and a ``variables`` mapping; each variable's entry of type ``discrete`` or
    ``continuous`` with that type's keys, a discrete one's CPT a table of numbers, one row per configuration and
    one column per state, where it has one): a writer given another dict failed with a ``KeyError``, or named
    the wrong thing (``to_pgmpy`` with ``KeyError: 'type'`` on an entry without one; an entry of type 'weird'
    called continuous; a CPT 'x' a ``ValueError``: two reviews)."""
    if not (isinstance(fitted, Mapping) and fitted.get("format") == SCHEMA[0]
            and isinstance(fitted.get("variables"), Mapping) and all(k in fitted for k in _TOP_KEYS)):
        raise InputError(f"fitted must be the dict fit_parameters (or LearnResult.fit) returns, got "
                         f"{type(fitted).__name__}" + (f" with keys {sorted(map(str, fitted))[:6]}"
                                                        if isinstance(fitted, Mapping) else ""))
    for v, entry in fitted["variables"].items():
        if not isinstance(entry, Mapping) or "type" not in entry:
            raise InputError(f"fitted: the entry of variable {v!r} lacks 'type' (an entry of fit_parameters' "
                             "schema: type 'discrete' or 'continuous' and that type's fields)")
        kind = entry["type"]
        if kind not in _ENTRY_KEYS:
            raise InputError(f"fitted: the entry of variable {v!r} has type {kind!r}, not 'discrete' or "
                             "'continuous' (fit_parameters' schema)")
        need = _ENTRY_KEYS[kind] + (("configurations",) if kind == DISCRETE and entry.get("cpt") is not None else ())
        lacking = [k for k in need if k not in entry]
        if lacking:
            raise InputError(f"fitted: the entry of variable {v!r} lacks {', '.join(map(repr, lacking))} (an entry "
                             f"of fit_parameters' schema: a {kind} entry holds {', '.join(need)})")
        if kind == DISCRETE and entry["cpt"] is not None:
            try:
                cpt = np.asarray(entry["cpt"], dtype=float)
            except (TypeError, ValueError):
                cpt = None
            if cpt is None or cpt.shape != (len(entry["configurations"]), len(entry["states"])):
                raise InputError(f"fitted: the CPT of variable {v!r} must be a table of numbers, one row per "
                                 f"configuration ({len(entry['configurations'])}) and one column per state "
                                 f"({len(entry['states'])})")


def continuous_variables(fitted: Mapping[str, Any]) -> list[str]:
    """The names of ``fitted``'s variables that are not discrete, in its order (``fitted`` checked first)."""
    check_fitted(fitted)
    return [v for v, e in fitted["variables"].items() if e["type"] != DISCRETE]


def check_discrete(fitted_or_names: Mapping[str, Any] | Dataset, fmt: str) -> None:
    """A one-line :class:`InputError` naming the continuous variables when ``fmt`` is discrete-only."""
    if fmt not in DISCRETE_ONLY_FORMATS:
        return
    if isinstance(fitted_or_names, Dataset):
        cont = [nm for nm, k in zip(fitted_or_names.names, fitted_or_names.kinds, strict=True) if k != DISCRETE]
    else:
        cont = continuous_variables(fitted_or_names)
    if cont:
        shown = ", ".join(cont[:8]) + (f" and {len(cont) - 8} more" if len(cont) > 8 else "")
        raise InputError(f"{fmt.upper()} holds discrete networks only, but {shown} "
                         f"{'is' if len(cont) == 1 else 'are'} continuous (export .json instead)")


def check_xml_text(states: Mapping[str, Sequence[str]]) -> None:
    """A one-line :class:`InputError` for a variable name or state (``states``: name → its states) holding a
    character XML 1.0 cannot (XMLBIF): checked on the data before any work, and again on what is written."""
    for v, labels in states.items():
        for kind, text in (("variable", v), *(("state", str(s)) for s in labels)):
            bad = _XML_FORBIDDEN.search(text)
            if bad:
                of = "" if kind == "variable" else f" of the variable {v!r}"
                what = "lone surrogate" if 0xD800 <= ord(bad.group()) <= 0xDFFF else "control character"
                raise InputError(f"XMLBIF cannot hold the {what} U+{ord(bad.group()):04X} of the {kind} "
                                 f"{text!r}{of} (XML 1.0 has none; export .bif, which renames it, or .json)")


def xml_text(text: str) -> str:
    """``text`` escaped for XML 1.0 element content or attributes: ``& < > "`` and a carriage return as
    ``&#13;`` (a raw one reads back as a line feed: XML parsers normalise line ends)."""
    return escape(text, {'"': "&quot;", "\r": "&#13;"})


def xml_visible(text: str) -> str:
    """``text`` with each character XML 1.0 cannot hold written as ``\\uXXXX`` (for lines that only
    describe, such as a file's header: a dropped column's name, the data file's path)."""
    return _XML_FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def xml_safe_names(names: Iterable[str]) -> dict[str, str]:
    """Names XML 1.0 can hold (GraphML node ids): each character it cannot hold written as ``\\uXXXX``,
    a clash with another name resolved by ``_2``, ``_3`` … (names that need no change keep priority)."""
    names = list(names)
    out = {nm: nm for nm in names if not _XML_FORBIDDEN.search(nm)}
    used = set(out)
    for nm in names:
        if nm in out:
            continue
        base = xml_visible(nm)
        token, k = base, 2
        while token in used:
            token, k = f"{base}_{k}", k + 1
        used.add(token)
        out[nm] = token
    return {nm: out[nm] for nm in names}


def _safe_names(names: Iterable[str]) -> dict[str, str]:
    """BIF-safe tokens for ``names``: characters outside [letters, digits, _ . + -] become ``_``; a keyword
    followed by what reads as a number (``table1``, ``xdefault-2``) gets a ``_`` between them; tokens are
    unique ignoring case (pgmpy's reader lowercases names), collisions getting ``_2``, ``_3`` … (names that
    need no change keep priority, in order)."""
    def safe(nm: str) -> bool:
        return bool(nm) and not _UNSAFE.search(nm) and not _KEYWORD_NUMBER.search(nm)

    names = list(names)
    out: dict[str, str] = {}
    used: set[str] = set()                  # lowercased
    for nm in names:
        if safe(nm) and nm.lower() not in used:
            out[nm] = nm
            used.add(nm.lower())
    for nm in names:
        if nm in out:
            continue
        base = _KEYWORD_NUMBER.sub(r"\1_", _UNSAFE.sub("_", nm) or "_")
        token, k = base, 2
        while token.lower() in used:
            token, k = f"{base}_{k}", k + 1
        used.add(token.lower())
        out[nm] = token
    return {nm: out[nm] for nm in names}


def _num(x: float) -> str:
    return repr(float(x))


def _header(fitted: Mapping[str, Any]) -> list[str]:
    """Lines saying what the file holds (without comment markers)."""
    from bnilp import __version__

    par = fitted["parameters"]
    how = f"{par['method']}" + (f" (BDeu-consistent Dirichlet, ESS {par['ess']:g})" if par["method"] == "bayes"
                                else " (maximum likelihood)")
    dropped = fitted.get("rows_dropped_missing")
    left_out = f"; {dropped} rows with a missing value left out" if dropped else ""
    lines = [f"written by bnilp {__version__} from {fitted.get('source', '?')} (N = {fitted.get('N', '?')}{left_out})"]
    if fitted.get("data_sha256"):
        lines.append(f"data SHA-256 {fitted['data_sha256']}")
    net = fitted.get("network")
    if net:
        lines.append(f"network {net['rank']} of {net['of']} (score {net['score']!r}, "
                     f"{fitted.get('score_description') or fitted.get('score') or 'unnamed score'})"
                     + ("" if net.get("optimum_proven", True) else "; OPT not proven: the best network found"))
        if net.get("ranking"):
            lines.append(net["ranking"])
        if net.get("limited"):
            lines.append(f"limited: {net['limited']}")
    lines.append(f"parameters: {how}")
    if fitted.get("absent"):
        lines.append("absent (not in the network): " + ", ".join(f"{k} ({v})" for k, v in fitted["absent"].items()))
    return lines


def bif_text(fitted: Mapping[str, Any]) -> str:
    """The fitted discrete network in the classic BIF format (see the module docstring)."""
    check_discrete(fitted, "bif")
    variables = fitted["variables"]
    vname = _safe_names(variables)
    snames = {v: _safe_names(e["states"]) for v, e in variables.items()}
    lines = ["// " + " ".join(ln.splitlines()) for ln in _header(fitted)]     # a name's line break ends no comment
    renamed = [f"variable {json.dumps(v)} -> {t}" for v, t in vname.items() if v != t]
    renamed += [f"state {json.dumps(s)} of {vname[v]} -> {t}" for v, m in snames.items() for s, t in m.items()
                if s != t]
    if renamed:
        lines.append("// names made safe for BIF: " + "; ".join(renamed))
    lines += ["network bnilp {", "}"]
    for v, e in variables.items():
        states = ", ".join(snames[v][s] for s in e["states"])
        lines += [f"variable {vname[v]} {{", f"  type discrete [ {len(e['states'])} ] {{ {states} }};", "}"]
    for v in fitted["order"]:
        e = variables[v]
        cpt = np.asarray(e["cpt"], dtype=float)
        if not e["parents"]:
            lines += [f"probability ( {vname[v]} ) {{", "  table " + ", ".join(map(_num, cpt[0])) + ";", "}"]
            continue
        given = ", ".join(vname[p] for p in e["parents"])
        lines.append(f"probability ( {vname[v]} | {given} ) {{")
        for config, row in zip(e["configurations"], cpt, strict=True):
            labels = ", ".join(snames[p][s] for p, s in zip(e["parents"], config, strict=True))
            lines.append(f"  ({labels}) " + ", ".join(map(_num, row)) + ";")
        lines.append("}")
    return "\n".join(lines) + "\n"


def xmlbif_text(fitted: Mapping[str, Any]) -> str:
    """The fitted discrete network in XMLBIF 0.3 (Cozman's interchange format): per DEFINITION the
    TABLE lists P(child | configuration) for each parent configuration in turn, last GIVEN fastest."""
    check_discrete(fitted, "xmlbif")
    variables = fitted["variables"]
    check_xml_text({v: e["states"] for v, e in variables.items()})
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           "<!-- XMLBIF 0.3 (http://www.cs.cmu.edu/~fgcozman/Research/InterchangeFormat/) -->",
           '<BIF VERSION="0.3">', "<NETWORK>", "<NAME>bnilp</NAME>"]
    out += [f"<PROPERTY>{xml_text(xml_visible('bnilp = ' + ln))}</PROPERTY>" for ln in _header(fitted)]
    for v, e in variables.items():
        out += ['<VARIABLE TYPE="nature">', f"  <NAME>{xml_text(v)}</NAME>"]
        out += [f"  <OUTCOME>{xml_text(s)}</OUTCOME>" for s in e["states"]]
        out.append("</VARIABLE>")
    for v in fitted["order"]:
        e = variables[v]
        out += ["<DEFINITION>", f"  <FOR>{xml_text(v)}</FOR>"]
        out += [f"  <GIVEN>{xml_text(p)}</GIVEN>" for p in e["parents"]]
        cpt = np.asarray(e["cpt"], dtype=float)
        out += ["  <TABLE>" + " ".join(map(_num, cpt.ravel())) + "</TABLE>", "</DEFINITION>"]
    out += ["</NETWORK>", "</BIF>"]
    return "\n".join(out) + "\n"


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _pretty(x: Any, level: int = 0) -> str:
    """JSON with objects and lists of containers indented, lists of numbers/strings on one line."""
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(x, dict) and x:
        items = (f"{inner}{json.dumps(k)}: {_pretty(v, level + 1)}" for k, v in x.items())
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(x, list) and any(isinstance(v, dict | list) for v in x):
        return "[\n" + ",\n".join(inner + _pretty(v, level + 1) for v in x) + f"\n{pad}]"
    return json.dumps(x, allow_nan=False)


def json_text(fitted: Mapping[str, Any]) -> str:
    """The fitted network as strict JSON (the schema of the module docstring)."""
    check_fitted(fitted)
    return _pretty(_jsonable(dict(fitted))) + "\n"


def write_bif(fitted: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write :func:`bif_text` atomically."""
    atomic_write_text(path, bif_text(fitted))


def write_xmlbif(fitted: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write :func:`xmlbif_text` atomically."""
    atomic_write_text(path, xmlbif_text(fitted))


def write_json(fitted: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write :func:`json_text` atomically."""
    atomic_write_text(path, json_text(fitted))


WRITERS = {"bif": write_bif, "xmlbif": write_xmlbif, "json": write_json}


def write_export(fitted: Mapping[str, Any], path: str | os.PathLike[str]) -> str:
    """Write ``fitted`` in the format of ``path``'s extension; returns the format."""
    fmt = export_format(path)
    WRITERS[fmt](fitted, path)
    return fmt


# ----------------------------------------------------------------------------------------- pgmpy

def to_pgmpy(fitted: Mapping[str, Any]) -> Any:
    """A discrete network as a ``pgmpy.models.DiscreteBayesianNetwork`` with one ``TabularCPD`` per variable (state
    names = the labels; CPD columns = parent configurations, last parent fastest, as pgmpy orders them); a network
    of continuous variables only as a ``pgmpy.models.LinearGaussianBayesianNetwork`` with one ``LinearGaussianCPD``
    per variable, Y = b_0 + Σ_m b_m·Z_m + N(0, σ²) with the ML fit's intercept, coefficients and σ = √(RSS/n)
    (a linear Gaussian network's joint is N(μ, Σ), Shachter & Kenley 1989, which pgmpy's ``to_joint_gaussian``
    forms). A network with both kinds has no pgmpy model (pgmpy has no conditional Gaussian network): an
    :class:`InputError`. Needs the optional extra ``bnilp[pgmpy]``."""
    cont = continuous_variables(fitted)
    mixed = len(cont) not in (0, len(fitted["variables"]))
    if mixed:
        raise InputError(f"to_pgmpy builds a discrete or a linear-Gaussian network, but {', '.join(cont)} "
                         f"{'is' if len(cont) == 1 else 'are'} continuous and the rest discrete (pgmpy has no "
                         "conditional Gaussian network; export .json holds it)")
    try:
        from pgmpy.factors.continuous import LinearGaussianCPD
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.models import DiscreteBayesianNetwork, LinearGaussianBayesianNetwork
    except ImportError:
        raise MissingExtraError("to_pgmpy", "pgmpy") from None
    variables = fitted["variables"]

    def gaussian(v: str, e: Mapping[str, Any]) -> Any:
        (reg,) = e["regressions"]               # no discrete parent: one regression
        return LinearGaussianCPD(v, [reg["intercept"], *reg["coefficients"]], math.sqrt(reg["variance"]),
                                 list(e["continuous_parents"]))

    def tabular(v: str, e: Mapping[str, Any]) -> Any:
        names = {v: list(e["states"]), **{p: list(variables[p]["states"]) for p in e["parents"]}}
        return TabularCPD(v, len(e["states"]), np.asarray(e["cpt"], dtype=float).T,
                          evidence=list(e["parents"]) or None,
                          evidence_card=[len(variables[p]["states"]) for p in e["parents"]] or None,
                          state_names=names)

    degenerate = [v for v in cont if variables[v]["regressions"][0]["degenerate"]]
    if degenerate:
        raise InputError(f"to_pgmpy: the regression of {', '.join(degenerate)} is degenerate (σ² ≈ 0: an exact linear "
                         "fit, or no more rows than coefficients), and a LinearGaussianCPD with σ = 0 has no density "
                         "(pgmpy's joint would be singular); the JSON export keeps it, marked 'degenerate'")
    model, cpd = (LinearGaussianBayesianNetwork(), gaussian) if cont else (DiscreteBayesianNetwork(), tabular)
    model.add_nodes_from(variables)
    model.add_edges_from((p, v) for v, e in variables.items() for p in e["parents"])
    model.add_cpds(*(cpd(v, e) for v, e in variables.items()))
    return model


# ----------------------------------------------------------------------------------------- model strings

def model_string(parents: Mapping[str, Iterable[str]], order: Iterable[str] | None = None) -> str:
    """bnlearn's model string ``[A][B|A][C|A:B]``: nodes in a topological order (ties by ``order``,
    default the keys' order), parents in that order too. Mutual parents (u among v's and v among
    u's) stand for an undirected CPDAG edge (module docstring). Every parent must be a variable (a key) and
    none its own parent (:func:`bnilp.metrics.checked_parents`); the directed part must be acyclic."""
    parents = checked_parents(parents, "parents")
    bad = [v for v in parents if not v or _MODEL_FORBIDDEN & set(v)]
    if bad:
        raise InputError(f"model string: variable names may not contain [ ] | : (or be empty): {bad}")
    if order is not None:           # a string was read as its letters, an unknown name ignored (a review)
        order = _names(order, "order")
        unknown = [v for v in order if v not in parents]
        if unknown:
            raise InputError(f"order names {unknown[0]!r}, which is not a variable of parents")
    nodes = topological_order(parents, order)
    rank = {v: i for i, v in enumerate(nodes)}
    parts = []
    for v in nodes:
        ps = sorted(parents[v], key=lambda p: rank[p])
        parts.append(f"[{v}|{':'.join(ps)}]" if ps else f"[{v}]")
    return "".join(parts)


def cpdag_parents(variables: Iterable[str], directed: Iterable[Iterable[str]],
                  undirected: Iterable[Iterable[str]]) -> dict[str, frozenset[str]]:
    """The parent map of a CPDAG for :func:`model_string`: u → v makes u a parent of v; u — v makes
    each a parent of the other. An edge naming a variable not in ``variables``, or a loop, is an
    :class:`InputError`."""
    out: dict[str, set[str]] = {v: set() for v in _names(variables, "variables")}
    arrows: set[tuple[str, str]] = set()
    for what, edges in (("directed", directed), ("undirected", undirected)):
        if isinstance(edges, (str, bytes)) or not isinstance(edges, Iterable):
            raise InputError(f"{what} must be a list of (u, v) pairs, got {edges!r}")
        for edge in edges:
            if isinstance(edge, (str, bytes)) or not isinstance(edge, Iterable) or len(edge := tuple(edge)) != 2:
                raise InputError(f"{what}: an edge is a pair (u, v), got {edge!r}")
            u, v = edge
            if u not in out or v not in out or u == v:
                why = "is a loop" if u == v else "names a variable not in variables"
                raise InputError(f"{what}: the edge ({u!r}, {v!r}) {why}")
            if what == "directed":     # u → v and v → u would read as the undirected edge u — v (a review)
                if (v, u) in arrows:
                    raise InputError(f"directed: both {u!r} → {v!r} and {v!r} → {u!r}; an edge either way is "
                                     "undirected")
                arrows.add((u, v))
            out[v].add(u)
            if what == "undirected":
                out[u].add(v)
    return {v: frozenset(ps) for v, ps in out.items()}


def _names(value: object, name: str) -> list[str]:
    """``value`` as a list of variable names (a list, tuple … of strings; one string is no list of names)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InputError(f"{name} must be a list of variable names, got {value!r}")
    names = list(value)
    if not all(isinstance(v, str) for v in names):
        raise InputError(f"{name} must be a list of variable names, got {names!r}")
    return names


def parse_model_string(text: str) -> dict[str, frozenset[str]]:
    """Parse a bnlearn model string into variable → parents (every node a key, in string order).
    Mutual parents are an undirected edge (CPDAG strings); whitespace between brackets is ignored. A node
    among its own parents, or a directed cycle (``[a|b][b|c][c|a]``: neither a DAG nor a CPDAG), is an
    :class:`InputError`."""
    if not isinstance(text, str):
        raise InputError(f"text must be a model string (str), got {type(text).__name__}")
    out: dict[str, frozenset[str]] = {}
    pos = 0
    stripped = text.strip()
    while pos < len(stripped):
        if stripped[pos].isspace():
            pos += 1
            continue
        m = _MODEL_NODE.match(stripped, pos)
        if m is None:
            raise InputError(f"model string: cannot parse at character {pos + 1}: {stripped[pos:pos + 20]!r}")
        node = m.group(1)
        if ":" in node:                     # model_string never writes it: [a:b] is no node
            raise InputError(f"model string: node {node!r} at character {pos + 1} holds ':' (parents follow '|')")
        if node in out:
            raise InputError(f"model string: node {node!r} appears twice")
        ps = m.group(2).split(":") if m.group(2) is not None else []
        if m.group(2) is not None and not any(ps):
            raise InputError(f"model string: node {node!r} has '|' but no parents")
        if "" in ps:
            raise InputError(f"model string: node {node!r} has an empty parent name ({m.group(0)!r})")
        twice = next((p for i, p in enumerate(ps) if p in ps[:i]), None)
        if twice is not None:
            raise InputError(f"model string: {twice!r} is listed twice among the parents of {node!r}")
        out[node] = frozenset(ps)
        pos = m.end()
    if not out:
        raise InputError("model string: no node (a model string is '[a][b|a]…')")
    undeclared = sorted({p for ps in out.values() for p in ps} - set(out))
    if undeclared:
        raise InputError(f"model string: parents {undeclared} have no node of their own")
    loop = next((v for v, ps in out.items() if v in ps), None)
    if loop is not None:
        raise InputError(f"model string: node {loop!r} is among its own parents")
    try:
        topological_order(out)
    except InputError as exc:
        raise InputError(f"model string: {exc}") from None
    return out
