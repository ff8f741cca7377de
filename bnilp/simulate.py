"""Mixed discrete/continuous data from random DAGs (Andrews, Ramsey & Cooper, §6 and slides).

The seed's design, restated with every random draw made explicit:

1. **Causal order and DAG.** The variables ``X1..Xn`` get a uniformly random causal order. The
   target number of edges is ``m = round(avg_degree·n/2)`` (average degree = 2·edges/n). Candidate
   pairs (a before b in the order) are visited in uniformly random order and the edge a → b is
   added when both endpoints still have degree < ``max_degree``, until m edges exist. A target no
   graph under the cap can reach (m > ⌊n·max_degree/2⌋) is refused; a pass that gets stuck short of a
   reachable one is repeated (up to ``DAG_PASSES`` passes in all, the first that reaches m kept, else the
   fullest, with a note in the truth).
2. **Kinds.** Exactly ``round(discrete_fraction·n)`` variables, chosen uniformly, are discrete
   (the seed assigns each with probability ½; a fixed count removes that variance). A discrete
   variable has r categories, r uniform in ``categories = (lo, hi)`` inclusive (seed: 2–5).
3. **Temporary discretisation.** After a continuous variable is simulated it gets a temporary
   equal-frequency discretised copy with b bins, b uniform in ``categories`` (seed: 2–5 bins):
   cut points at the empirical j/b quantiles, j = 1..b−1. Copies are used only as parents of
   discrete children and are not returned.
4. **Variables in causal order.**
   - *Continuous child*: rows are partitioned by the configuration of its discrete parents; in
     each configuration c it is ``x = μ_c + Σ_j β_cj·f_j(x_j) + σ_c·ε``, ε ~ N(0, 1), with
     intercept μ_c and coefficients β_cj of magnitude U(0.5, 1.5) and random sign, noise variance
     σ_c² ~ U(0.5, 1.5). Linear data: f_j(x) = x. Nonlinear data (``nonlinear=True``; the seed adds
     second and third order polynomial terms): f_j(x) = standardise(a1·x + a2·x² + a3·x³) with
     a_d ~ U(−1, 1) drawn once per (child, parent) — standardising the term replaces the seed's
     square-/cube-root resampling of values that grow too large. A root is μ + σ·ε.
   - *Discrete child*: rows are partitioned by the configuration of its discrete parents and the
     discretised copies of its continuous parents; each configuration has its own distribution
     over the r categories drawn from Dirichlet(1, …, 1) (uniform on the simplex). A root has one
     such distribution. This is the seed's mechanism (``link="bins"``): the child depends on a
     continuous parent through steps.
   - *Discrete child, ``link="logistic"``* (not in the seed): with continuous parents, rows are
     partitioned by the discrete parents only; in configuration c the category probabilities are
     softmax_k(a_ck + Σ_j b_cjk·f_j(x_j)), with a_c = ln p_c, p_c ~ Dirichlet(1, …, 1) (the
     category frequencies at x = 0), b_cj0 = 0 and b_cjk (k ≥ 1) of magnitude U(0.5, 1.5) with random
     sign. A discrete child without continuous parents is drawn as above. This is the form of
     P(child | x) that the conditional Gaussian model implies (Gaussian x given the child with a
     common variance gives a softmax linear in x; Lauritzen & Wermuth 1989), so CG and MVP are
     much closer to correctly specified than under steps — not exactly: here x itself is Gaussian,
     not a mixture over the child's categories, so x given the child is only near-Gaussian.
   Every continuous variable is standardised (mean 0, population sd 1) right after it is drawn,
   so the scale never grows along long chains and the output is standardised as in the seed
   ("prior to running tests on any algorithm, the data were standardized"). A discrete variable
   whose sample shows a single category (it would be dropped as constant when loaded) has its
   parameters redrawn, up to 100 times.

The truth records the parameters drawn (the last draw where one was redrawn), on the scale of the returned
data, cell by cell (:func:`simulate`'s docstring); recording them draws nothing, so a seed gives the data it gave
before they were recorded.

Discrete columns hold the integer codes 0..r−1; with r ≤ 10 ``bnilp.data.load_data`` infers them
as discrete (integers with ≤ 10 distinct values) and the non-integer continuous columns as
continuous. The truth lists the discrete columns in ``"discrete"`` for ``--discrete`` in any case.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from bnilp.errors import InputError, LimitError, check_count, check_flag, check_seed
from bnilp.graphs import check_acyclic, to_digraph
from bnilp.memory import free_memory

COEF_RANGE = (0.5, 1.5)
NOISE_VAR_RANGE = (0.5, 1.5)
POLY_RANGE = (-1.0, 1.0)
MAX_REDRAWS = 100
#: ``bnilp simulate``'s average degree when none is given (fewer nodes: nodes − 1, the most they allow)
DEFAULT_AVG_DEGREE = 2.0
#: ``bnilp simulate``'s degree cap when none is given (``--max-degree``; Andrews et al. §6's maximum degree 5);
#: :func:`simulate` takes ``max_degree=None``, no cap, as it takes no default average degree: pass both
DEFAULT_MAX_DEGREE = 5
#: how a discrete child depends on its continuous parents: the seed's steps, or a logistic (softmax) link
LINKS = ("bins", "logistic")
DEFAULT_LINK = "bins"
#: the most categories a simulated discrete variable may have (``categories`` = (lo, hi))
MAX_CATEGORIES = 2**31 - 1


def _scale(x: np.ndarray) -> tuple[float, float]:
    """The mean and the divisor :func:`_standardise` uses (the population sd; 1 for a constant ``x``)."""
    sd = float(np.std(x))
    return float(np.mean(x)), sd if sd > 0 else 1.0


def _standardise(x: np.ndarray) -> np.ndarray:
    mean, sd = _scale(x)
    return (x - mean) / sd


def _signed(rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """Magnitudes U(COEF_RANGE) with independent random signs."""
    return rng.uniform(*COEF_RANGE, size=size) * rng.choice([-1.0, 1.0], size=size)


def _configurations(columns: list[np.ndarray], n_samples: int) -> tuple[np.ndarray, int, np.ndarray]:
    """Row-wise configuration index 0..q⁺−1 of the given integer columns (observed ones only), q⁺, and the
    configurations themselves (q⁺ × columns, in index order)."""
    if not columns:
        return np.zeros(n_samples, dtype=np.int64), 1, np.zeros((1, 0), dtype=np.int64)
    keys, inverse = np.unique(np.column_stack(columns), axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    return inverse.astype(np.int64), int(inverse.max()) + 1, keys


def _cuts(x: np.ndarray, bins: int) -> np.ndarray:
    """The cut points of :func:`_equal_frequency`: the empirical j/bins quantiles, j = 1..bins−1."""
    return np.quantile(x, np.arange(1, bins) / bins)


def _equal_frequency(x: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Equal-frequency bin codes 0..bins−1 (cuts at the empirical j/bins quantiles): code k where
    cut[k−1] ≤ x < cut[k]; and the cuts."""
    cuts = _cuts(x, bins)
    return np.searchsorted(cuts, x, side="right").astype(np.int64), cuts


def _check_link(link: str) -> None:
    if not isinstance(link, str) or link not in LINKS:
        raise InputError(f"link must be one of {', '.join(LINKS)}, got {link!r}")


#: random passes over the candidate pairs before a DAG short of its edge target under the degree cap is kept
#: (a pass adds edges greedily and can stop short of a target another order reaches; n = 5, degree 2: 37 % of
#: seeds got 4 of 5 edges in one pass)
DAG_PASSES = 50
#: bytes a candidate pair of the DAG's draw takes (a tuple in a list, and its slot in the permutation)
_PAIR_BYTES = 100


def _ordered_pairs(order: list[int]) -> list[tuple[int, int]]:
    """Every pair (a, b) with a before b in ``order``."""
    n = len(order)
    return [(order[a], order[b]) for a in range(n) for b in range(a + 1, n)]


def _random_dag(pairs: list[tuple[int, int]], n: int, n_edges: int, max_degree: int | None,
                rng: np.random.Generator) -> list[tuple[int, int]]:
    """One pass: the ``pairs`` (:func:`_ordered_pairs`) in a random order, each added while both ends have degree
    below ``max_degree``, until ``n_edges``."""
    degree = np.zeros(n, dtype=np.int64)
    edges: list[tuple[int, int]] = []
    for k in rng.permutation(len(pairs)):
        if len(edges) >= n_edges:
            break
        u, v = pairs[int(k)]
        if max_degree is not None and (degree[u] >= max_degree or degree[v] >= max_degree):
            continue
        edges.append((u, v))
        degree[u] += 1
        degree[v] += 1
    return edges


def _real(value: object, name: str) -> float:
    """``value`` as a finite ``float`` (not ``bool`` or a string), else an :class:`InputError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _validate(n_nodes: int, n_samples: int, avg_degree: float, max_degree: int | None,
              discrete_fraction: float, categories: tuple[int, int]) -> tuple[int, int]:
    n_nodes = check_count(n_nodes, "n_nodes (--nodes)", 1)
    n_samples = check_count(n_samples, "n_samples (--samples)", 3)     # 2 rows standardise to ±1: read back as discrete
    avg_degree = _real(avg_degree, "avg_degree (--avg-degree)")
    if not (0 <= avg_degree <= max(n_nodes - 1, 0)):
        raise InputError(f"avg_degree (--avg-degree) must lie in [0, nodes−1] = [0, {n_nodes - 1}], got {avg_degree}")
    if max_degree is not None:
        # None is no cap here; the command line's --max-degree 0 is that None (a review: "≥ 1" cited the flag)
        max_degree = check_count(max_degree, "max_degree (None: no cap; --max-degree 0)", 1)
    if not (0.0 <= _real(discrete_fraction, "discrete_fraction (--discrete-fraction)") <= 1.0):
        raise InputError(f"discrete_fraction (--discrete-fraction) must lie in [0, 1], got {discrete_fraction}")
    try:
        lo, hi = (check_count(c, "categories (--categories)", 0) for c in categories)
    except (TypeError, ValueError, InputError):
        raise InputError(f"categories (--categories) must be two integers lo-hi, got {categories!r}") from None
    if not 2 <= lo <= hi <= MAX_CATEGORIES:
        raise InputError(f"categories (--categories) needs 2 ≤ lo ≤ hi ≤ {MAX_CATEGORIES}, got {lo}-{hi}")
    target = int(round(avg_degree * n_nodes / 2))
    if max_degree is not None and target > n_nodes * int(max_degree) // 2:
        raise InputError(f"avg_degree (--avg-degree) {avg_degree} asks for {target} edges, more than "
                         f"{n_nodes * int(max_degree) // 2}, the most that {n_nodes} nodes of degree at most "
                         f"{int(max_degree)} (--max-degree) can have")
    _check_memory(n_samples, n_nodes, int(n_nodes) * (int(n_nodes) - 1) // 2 * _PAIR_BYTES, widest=hi)
    return lo, hi


#: bytes per row and category of a discrete child's draw (its configurations' probabilities gathered to the rows)
_CELL_ROW_BYTES = 24


def _check_memory(n_samples: int, n_nodes: int, more: int = 0, widest: int = 1, *, command_line: bool = True) -> None:
    """A :class:`LimitError` where ``n_samples`` rows of ``n_nodes`` columns (24 bytes a cell) — or of ``widest``
    categories, a discrete child's draw (:data:`_CELL_ROW_BYTES` a row and category), where that is larger — and
    ``more`` bytes would take more than half the free memory, also for sizes past a float's range (10³⁰⁰ nodes was
    an ``OverflowError``, 10³⁰ rows NumPy's "Maximum allowed dimension exceeded": a review). The message names what
    to lower: the rows, and the nodes or the categories, whichever makes a row (fewer nodes did not help a run of 3
    nodes with 2·10⁹ categories: a review) — with ``simulate``'s flags, or :func:`sample_dag`'s parameters
    (``command_line`` False)."""
    row = max(int(n_nodes) * 24, _CELL_ROW_BYTES * int(widest))
    need = int(n_samples) * row + more
    free = free_memory()
    if free is not None and need > free // 2:
        if command_line:
            rows, wide = "n_samples (--samples)", ("categories (--categories)" if row > int(n_nodes) * 24 else
                                                   "n_nodes (--nodes)")
        else:
            rows, wide = "n_samples", "categories/bins" if row > int(n_nodes) * 24 else "variables"
        raise LimitError(f"simulating {n_samples} rows of {n_nodes} nodes needs about "
                         f"{min(need, 10**300) / 2**30:.3g} GiB, more than half the {free / 2**30:.1f} GiB of free "
                         f"memory (fewer {rows}, or fewer {wide})")


def _categories(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One category per row, row i drawn from the distribution ``probs[i]`` (inverse CDF)."""
    cum = np.cumsum(probs, axis=1)
    return (rng.random(len(probs))[:, None] >= cum[:, :-1]).sum(axis=1).astype(np.int64)


def _terms(columns: dict[int, np.ndarray], cont_pa: list[int], nonlinear: bool,
           rng: np.random.Generator) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """f_j(x_j) of every continuous parent: x_j, or a standardised random cubic when ``nonlinear``; and each
    f_j as the truth's ``parameters`` record it (:func:`_term_record`)."""
    terms = [columns[p] for p in cont_pa]
    if not nonlinear:
        return terms, [{"form": "x"} for _ in terms]
    made, records = [], []
    for t in terms:
        a = rng.uniform(*POLY_RANGE, size=3)                   # a[0]·x³ + a[1]·x² + a[2]·x (np.polyval's order)
        raw = np.polyval(np.r_[a, 0.0], t)
        mean, sd = _scale(raw)
        made.append(_standardise(raw))
        records.append({"form": "cubic", "coefficients": [float(a[2]), float(a[1]), float(a[0])],
                        "mean": mean, "scale": sd})
    return made, records


def _discrete_child(config: np.ndarray, q: int, terms: list[np.ndarray], r: int, link: str,
                    rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One draw of a discrete child over its row configurations ``config`` (0..q−1): a Dirichlet table
    per configuration, or with ``link="logistic"`` and continuous ``terms`` the softmax link (step 4); and
    the parameters drawn (``probabilities`` q × r, or ``intercepts`` q × r and ``slopes`` q × terms × r)."""
    if link == "logistic" and terms:
        intercept = np.log(rng.dirichlet(np.ones(r), size=q))                     # (q, r)
        slope = _signed(rng, (q, len(terms), r))
        slope[:, :, 0] = 0.0
        logits = intercept[config]
        for j, t in enumerate(terms):
            logits = logits + slope[config, j, :] * t[:, None]
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        return _categories(probs / probs.sum(axis=1, keepdims=True), rng), {"intercepts": intercept, "slopes": slope}
    table = rng.dirichlet(np.ones(r), size=q)
    return _categories(table[config], rng), {"probabilities": table}


def _sample_columns(order: list[int], parents: list[list[int]], is_discrete: np.ndarray, arity: dict[int, int],
                    bins: dict[int, int], N: int, nonlinear: bool, rng: np.random.Generator, names: list[str],
                    notes: list[str], link: str = DEFAULT_LINK,
                    parameters: dict[str, Any] | None = None) -> dict[int, np.ndarray]:
    """Step 4 of the module docstring: every variable in causal ``order`` given its ``parents``. With a dict
    ``parameters``, each variable's drawn parameters go into it (:func:`simulate`'s ``truth["parameters"]``);
    recording draws nothing, so the data are the same either way."""
    columns: dict[int, np.ndarray] = {}
    binned: dict[int, np.ndarray] = {}
    for v in order:
        pa = parents[v]
        disc_pa = [p for p in pa if is_discrete[p]]
        cont_pa = [p for p in pa if not is_discrete[p]]
        if is_discrete[v]:
            terms, forms = _terms(columns, cont_pa, nonlinear, rng) if link == "logistic" else ([], [])
            # the softmax link partitions by the discrete parents only; the steps by the bins too
            steps = [] if terms else [binned[p] for p in cont_pa]
            given = disc_pa + ([] if terms else cont_pa)
            config, q, keys = _configurations([columns[p] for p in disc_pa] + steps, N)
            for _ in range(MAX_REDRAWS):
                x, drawn = _discrete_child(config, q, terms, arity[v], link, rng)
                if np.unique(x).size > 1:
                    break
            else:
                notes.append(f"{names[v]} shows a single category after {MAX_REDRAWS} draws")
            columns[v] = x
            if parameters is not None:
                parameters[names[v]] = _discrete_record(names, given, keys, cont_pa if terms else [], forms, drawn,
                                                        arity[v])
        else:
            config, q, keys = _configurations([columns[p] for p in disc_pa], N)
            terms, forms = _terms(columns, cont_pa, nonlinear, rng)
            mu = _signed(rng, q)
            beta = _signed(rng, (q, len(cont_pa)))
            sigma = np.sqrt(rng.uniform(*NOISE_VAR_RANGE, size=q))
            x = mu[config] + sigma[config] * rng.standard_normal(N)
            for j, t in enumerate(terms):
                x += beta[config, j] * t
            columns[v] = _standardise(x)
            binned[v], cuts = _equal_frequency(columns[v], bins[v])
            if parameters is not None:
                mean, sd = _scale(x)
                cells = [{"given": _given(names, disc_pa, keys[c]), "intercept": float((mu[c] - mean) / sd),
                          "coefficients": {names[p]: float(beta[c, j] / sd) for j, p in enumerate(cont_pa)},
                          "sd": float(sigma[c] / sd)} for c in range(q)]
                parameters[names[v]] = {"kind": "continuous", "discrete_parents": [names[p] for p in disc_pa],
                                        "continuous_parents": _term_records(names, cont_pa, forms),
                                        "cells": cells, "bin_cuts": [float(c) for c in cuts]}
    return columns


def _given(names: list[str], parents: list[int], key: np.ndarray) -> dict[str, int]:
    """A cell's parent configuration: parent name → code (a discrete parent's, or a continuous one's bin)."""
    return {names[p]: int(c) for p, c in zip(parents, key, strict=True)}


def _term_records(names: list[str], cont_pa: list[int], forms: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {names[p]: form for p, form in zip(cont_pa, forms, strict=True)}


def _discrete_record(names: list[str], given: list[int], keys: np.ndarray, cont_pa: list[int],
                     forms: list[dict[str, Any]], drawn: dict[str, np.ndarray], r: int) -> dict[str, Any]:
    """A discrete child's entry of ``truth["parameters"]``: a distribution per observed cell of ``given``
    (discrete parents' codes, and with the steps the continuous parents' bins), or under the logistic link
    intercepts and slopes per cell of the discrete parents, f_j of each continuous parent in ``forms``."""
    record: dict[str, Any] = {"kind": "discrete", "categories": r}
    if "probabilities" in drawn:
        record["given"] = [names[p] for p in given]
        record["cells"] = [{"given": _given(names, given, keys[c]), "probabilities": [float(x) for x in row]}
                           for c, row in enumerate(drawn["probabilities"])]
        return record
    record["discrete_parents"] = [names[p] for p in given]
    record["continuous_parents"] = _term_records(names, cont_pa, forms)
    record["cells"] = [{"given": _given(names, given, keys[c]),
                        "intercepts": [float(x) for x in drawn["intercepts"][c]],
                        "slopes": {names[p]: [float(x) for x in drawn["slopes"][c, j]] for j, p in enumerate(cont_pa)}}
                       for c in range(len(keys))]
    return record


def simulate(
    n_nodes: int,
    n_samples: int,
    avg_degree: float,
    max_degree: int | None = None,
    discrete_fraction: float = 0.5,
    categories: tuple[int, int] = (2, 5),
    nonlinear: bool = False,
    seed: int | None = None,
    link: str = DEFAULT_LINK,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Simulate mixed data from a random DAG (module docstring: every draw and its range).

    Returns ``(data, truth)``: ``data`` has columns ``X1..Xn`` (discrete: int64 codes 0..r−1;
    continuous: float64, mean 0, sd 1); ``truth`` is plain JSON-ready data with ``parents``
    (variable → sorted parent names, every variable present), ``kinds``, ``discrete`` (names),
    ``categories`` (discrete variable → r drawn; the sample may show fewer states), ``bins``
    (continuous variable → temporary bins), ``order`` (causal order), ``n_edges``, ``settings``
    (the arguments, with the seed actually used), ``parameters`` (below) and ``notes``. The same arguments with the same
    integer seed give identical output. ``max_degree``: None, no cap (the command line's ``--max-degree`` is
    :data:`DEFAULT_MAX_DEGREE` unless given: pass it for the same graphs). ``link`` (:data:`LINKS`) is how a
    discrete child depends on
    its continuous parents: ``"bins"`` (the seed's steps, through the temporary bins) or
    ``"logistic"`` (a softmax link, the form the conditional Gaussian model implies).

    ``truth["parameters"]`` holds every variable's drawn parameters on the scale of the returned data (each
    continuous column standardised: the draw's intercepts, coefficients and noise sd divided by its sd, the
    intercepts less its mean), one *cell* per configuration of the parents that the sample shows:

    - continuous: ``discrete_parents``, ``continuous_parents`` (name → f: ``{"form": "x"}``, or ``{"form":
      "cubic", "coefficients": [c1, c2, c3], "mean": m, "scale": s}`` for f(x) = (c1·x + c2·x² + c3·x³ − m)/s),
      ``cells`` of ``{"given": {discrete parent: code}, "intercept", "coefficients": {parent: β}, "sd"}``: in
      that cell the column is intercept + Σ β·f(parent) + sd·ε, ε ~ N(0, 1); and ``bin_cuts``, its temporary
      bins' cut points (bin k holds cut[k−1] ≤ x < cut[k]);
    - discrete, steps (``link="bins"``, or no continuous parent): ``given`` (the parents the cells are over) and
      ``cells`` of ``{"given": {parent: code, or a continuous parent's bin}, "probabilities": [p_0 … p_{r−1}]}``;
    - discrete, ``link="logistic"`` with continuous parents: ``discrete_parents``, ``continuous_parents`` (as
      above) and ``cells`` of ``{"given": {discrete parent: code}, "intercepts": [a_k], "slopes": {parent:
      [b_k]}}``: P(category k) = softmax_k(a_k + Σ b_k·f(parent)).
    """
    lo, hi = _validate(n_nodes, n_samples, avg_degree, max_degree, discrete_fraction, categories)
    nonlinear = check_flag(nonlinear, "nonlinear (--nonlinear)")
    _check_link(link)
    n, N = int(n_nodes), int(n_samples)
    seed = check_seed(seed, "seed (--seed)")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    names = [f"X{i + 1}" for i in range(n)]
    notes: list[str] = []

    order = [int(v) for v in rng.permutation(n)]
    target = int(round(avg_degree * n / 2))
    cap = None if max_degree is None else int(max_degree)
    pairs = _ordered_pairs(order)
    edges = _random_dag(pairs, n, target, cap, rng)
    passes = 1
    while len(edges) < target and passes < DAG_PASSES:    # a pass can get stuck short of a reachable target
        again = _random_dag(pairs, n, target, cap, rng)
        passes += 1
        edges = again if len(again) > len(edges) else edges
    if len(edges) < target:
        notes.append(f"{passes} random passes under the degree cap {max_degree} placed at most {len(edges)} of the "
                     f"{target} edges")
    parents: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        parents[v].append(u)
    for ps in parents:
        ps.sort()

    n_discrete = int(round(discrete_fraction * n))
    is_discrete = np.zeros(n, dtype=bool)
    is_discrete[rng.choice(n, size=n_discrete, replace=False)] = True
    arity = {int(i): int(rng.integers(lo, hi + 1)) for i in np.flatnonzero(is_discrete)}
    bins = {int(i): int(rng.integers(lo, hi + 1)) for i in np.flatnonzero(~is_discrete)}

    drawn: dict[str, Any] = {}
    columns = _sample_columns(order, parents, is_discrete, arity, bins, N, nonlinear, rng, names, notes, link, drawn)
    data = pd.DataFrame({names[i]: columns[i] for i in range(n)})
    truth: dict[str, Any] = {
        "parents": {names[i]: [names[p] for p in parents[i]] for i in range(n)},
        "kinds": {names[i]: "discrete" if is_discrete[i] else "continuous" for i in range(n)},
        "discrete": [names[i] for i in range(n) if is_discrete[i]],
        "categories": {names[i]: arity[i] for i in sorted(arity)},
        "bins": {names[i]: bins[i] for i in sorted(bins)},
        "order": [names[i] for i in order],
        "n_edges": len(edges),
        "settings": {
            "n_nodes": n, "n_samples": N, "avg_degree": float(avg_degree),
            "max_degree": None if max_degree is None else int(max_degree),
            "discrete_fraction": float(discrete_fraction), "categories": [lo, hi],
            "nonlinear": bool(nonlinear), "seed": int(seed), "link": link,
        },
        "parameters": {names[i]: drawn[names[i]] for i in range(n)},
        "notes": notes,
        "generator": "bnilp.simulate (Andrews, Ramsey & Cooper §6)",
    }
    return data, truth


def sample_dag(
    parents: dict[str, list[str]],
    kinds: dict[str, str],
    n_samples: int,
    *,
    categories: dict[str, int] | None = None,
    bins: int | dict[str, int] = 3,
    nonlinear: bool = False,
    seed: int | None = None,
    link: str = DEFAULT_LINK,
) -> pd.DataFrame:
    """Data from a *given* DAG with the parameter draws of :func:`simulate` (step 4 of the module docstring).

    ``parents`` maps every variable to its parents (the DAG), ``kinds`` every variable to ``discrete``
    or ``continuous``; ``categories`` gives each discrete variable's r (default 3) and ``bins`` the
    temporary bins of each continuous variable (one number for all, default 3; used by
    ``link="bins"``); ``link`` as in :func:`simulate`. Columns come out in the order of ``parents``.
    Used for the CI-test calibration nulls (``benchmarks/citest_calibration.py``).
    """
    _check_link(link)
    nonlinear = check_flag(nonlinear, "nonlinear")
    if not isinstance(parents, dict) or not isinstance(kinds, dict):
        raise InputError("parents and kinds must be dicts keyed by variable name")
    for v, ps in parents.items():
        if isinstance(ps, (str, bytes, dict)) or not isinstance(ps, (list, tuple, set, frozenset)):
            raise InputError(f"parents: {v!r} maps to {ps!r}; each variable maps to a list of parent names")
        twice = sorted({p for p in ps if list(ps).count(p) > 1}, key=str)
        if twice:       # as `bnilp compare` refuses it: two coefficients for one arc would sum, out of their range
            raise InputError(f"parents: {twice[0]!r} is listed twice among the parents of {v!r}")
    names = list(parents)
    if not names:
        raise InputError("parents: no variable (the DAG needs at least one)")
    index = {v: i for i, v in enumerate(names)}
    unknown = sorted({p for ps in parents.values() for p in ps} - set(index)) + sorted(set(names) - set(kinds))
    if unknown:
        raise InputError(f"parents/kinds: variable {unknown[0]!r} is not described")
    extra = sorted(set(kinds) - set(index), key=str)
    if extra:                   # a typo among the names would leave the variable meant with its default (a review)
        raise InputError(f"kinds: {extra[0]!r} is no variable of parents")
    n_samples = check_count(n_samples, "n_samples", 3)     # 2 rows standardise to ±1: read back as discrete
    _check_memory(n_samples, len(names), command_line=False)
    if not isinstance(bins, dict):
        bins = check_count(bins, "bins", 0)
    if categories is not None and not isinstance(categories, dict):
        raise InputError(f"categories must be a dict of discrete variable → number of categories, got {categories!r}")
    for what, given, kind in (("categories", categories or {}, "discrete"),
                              ("bins", bins if isinstance(bins, dict) else {}, "continuous")):
        for v, r in given.items():
            check_count(r, f"{what}[{v!r}]", 0)
            if v not in index or kinds.get(v) != kind:   # ignored, the variable meant left at 3 (a review)
                raise InputError(f"{what}[{v!r}]: {'no variable of parents' if v not in index else 'not ' + kind}; "
                                 f"{what} are given for {kind} variables")
    check_acyclic(parents, "parents")
    graph = to_digraph(parents, nodes=names)
    order = [index[v] for v in nx.lexicographical_topological_sort(graph, key=index.__getitem__)]
    bad = [v for v in names if kinds[v] not in ("discrete", "continuous")]
    if bad:
        raise InputError(f"kinds: {bad[0]!r} is {kinds[bad[0]]!r}; each kind is 'discrete' or 'continuous'")
    is_discrete = np.array([kinds[v] == "discrete" for v in names])
    cats = categories or {}
    arity = {index[v]: int(cats.get(v, 3)) for v in names if kinds[v] == "discrete"}
    nbins = {index[v]: int(bins if isinstance(bins, numbers.Integral) else bins.get(v, 3))
             for v in names if kinds[v] != "discrete"}
    few = [names[i] for i, r in (*arity.items(), *nbins.items()) if r < 2]
    if few:
        raise InputError(f"categories/bins: {few[0]!r} needs at least 2 (a single category is a constant column)")
    many = [names[i] for i, r in (*arity.items(), *nbins.items()) if r > MAX_CATEGORIES]
    if many:
        raise InputError(f"categories/bins: {many[0]!r} asks for more than {MAX_CATEGORIES}")
    widest = max((*arity.values(), *nbins.values()), default=1)
    _check_memory(n_samples, len(names), widest=widest, command_line=False)     # 2³¹ categories: 48 GiB a row
    pa = [sorted(index[p] for p in parents[v]) for v in names]
    rng = np.random.default_rng(check_seed(seed))
    columns = _sample_columns(order, pa, is_discrete, arity, nbins, int(n_samples), nonlinear, rng, names, [], link)
    return pd.DataFrame({v: columns[index[v]] for v in names})
