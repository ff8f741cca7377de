"""Bayesian model averaging over the credible set: weights, edge and adjacency posteriors, MEC table.

With a uniform structure prior and s(G) a (approximate) log marginal likelihood (BDeu exactly;
BIC, CG, MVP, MML as approximations), the posterior of a network in the credible set
𝒞 = {G : s(G) ≥ OPT − ε} is, conditional on 𝒞 (Occam's window, Madigan & Raftery 1994),

    uniform over DAGs:  w(G) = exp(s(G) − OPT) / Σ_{H ∈ 𝒞} exp(s(H) − OPT)
    uniform over MECs:  each class M met in 𝒞 gets exp(s*(M) − OPT), s*(M) = best member score
                        (for score-equivalent scores all members share it), split equally among
                        its m(M) members present: w(G) ∝ exp(s*(M) − OPT) / m(M), normalised.

Posteriors of features f (indicator functions of a DAG) are P(f) = Σ_G w(G) f(G):

    P(u → v) = Σ_G w(G) [u ∈ Pa_G(v)]                        (directed)
    P(u — v) = P(u → v) + P(v → u)                           (adjacency; a DAG has at most one)
    P(u — v undirected in the CPDAG) = Σ_M w(M) [u — v undirected in CPDAG(M)],  w(M) = Σ_{G∈M} w(G)

Every number here is conditional on the credible set, not the posterior over all DAGs; with ε so
large that 𝒞 holds every DAG they coincide (checked by brute force in the tests).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bnilp.errors import InputError
from bnilp.mec import MEC, TailMass, mec_index

PRIORS = ("dags", "mecs")


def weights(scores: Sequence[float] | np.ndarray, optimum: float | None = None, prior: str = "dags",
            mec_ids: Sequence[int] | np.ndarray | None = None,
            class_members: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Normalised posterior weights of the credible networks (sum 1 over the set).

    ``prior="dags"``: w ∝ exp(s − OPT). ``prior="mecs"``: class k gets exp(max_{i∈k} s_i − OPT),
    shared equally by its members present; ``mec_ids[i]`` is the class of network i (classes numbered by
    first appearance of their ids, sorted). ``class_members[k]`` (optional): class k's credible members where
    more are known than listed (a cap cut the list inside the class) — each listed one then gets W(k)/m(k) as in
    the whole set, and the listed ones of a class cut short carry less than W(k).
    ``optimum`` only shifts the exponent for numerical safety (default: the best score).
    """
    s = _reals(scores, "scores")
    if s.size == 0:
        return np.zeros(0)
    if not isinstance(prior, str) or prior not in PRIORS:
        raise InputError(f"prior must be one of {PRIORS}, not {prior!r}")
    ref = float(np.max(s)) if optimum is None else max(float(optimum), float(np.max(s)))
    if prior == "dags":
        w = np.exp(s - ref)
    else:
        if mec_ids is None:
            raise InputError("prior='mecs' needs mec_ids (the class of every network)")
        ids = np.asarray(mec_ids)
        if ids.shape != s.shape:
            raise InputError(f"mec_ids has {ids.size} entries for {s.size} networks")
        if ids.size and ids.min() < 0:
            raise InputError("every network needs a class id ≥ 0")
        _, inv = np.unique(ids, return_inverse=True)
        best = np.full(inv.max() + 1, -np.inf)
        np.maximum.at(best, inv, s)
        count = np.bincount(inv)
        log_count = np.log(count)
        if class_members is not None:       # Python ints: a class may hold more than 1.8·10³⁰⁸ DAGs (a review)
            members = [int(m) for m in np.asarray(class_members, dtype=object).ravel()]
            if len(members) != count.size or any(m < c for m, c in zip(members, count.tolist(), strict=True)):
                raise InputError(f"class_members needs one count ≥ the networks listed for each of the {count.size} "
                                 "classes")
            log_count = np.array([math.log(m) for m in members])
        lw = best[inv] - log_count[inv]     # in logs, shifted by the largest: W(k)/m(k) may be below 10⁻³⁰⁸
        w = np.exp(lw - np.max(lw))
    return w / w.sum()


def class_weights(mecs: Sequence[MEC], optimum: float | None = None, prior: str = "dags",
                  tail: TailMass | None = None) -> np.ndarray:
    """Normalised weights of whole classes whose DAGs were counted, not listed (``MEC.counted``).

    ``dags``: W(M) ∝ m(M)·exp(s(M) − OPT), m(M) the admitted DAGs of M (each has M's score);
    ``mecs``: W(M) ∝ exp(s(M) − OPT). Inside a class every DAG has weight W(M)/m(M) under both priors,
    so these equal the per-DAG weights of :func:`weights` summed over a class listed in full. With
    ``tail`` (the credible classes past the cap, :func:`bnilp.mec.class_tail_mass`) the weights are
    normalised over those too, and sum to less than 1 by the tail's share (:func:`tail_posteriors`)."""
    w, total, _ = _class_mass(mecs, optimum, prior, tail)
    return w / total if total > 0 else w


def tail_posteriors(mecs: Sequence[MEC], optimum: float | None, prior: str,
                    tail: TailMass) -> tuple[float, np.ndarray, np.ndarray]:
    """The tail's share of the posterior mass and its terms of P(u → v) and P(u — v undirected in the
    CPDAG) (matrices in the tail's variable order), normalised as :func:`class_weights` with ``tail``."""
    _, total, tail_w = _class_mass(mecs, optimum, prior, tail)
    if tail.mass == 0 or total == 0:
        return 0.0, np.zeros_like(tail.directed), np.zeros_like(tail.undirected)
    scale = tail_w / tail.mass / total
    return tail_w / total, tail.directed * scale, tail.undirected * scale


def _class_mass(mecs: Sequence[MEC], optimum: float | None, prior: str,
                tail: TailMass | None) -> tuple[np.ndarray, float, float]:
    """Unnormalised class weights relative to exp(ref), ref = max(OPT, the largest ln weight of a class), their
    total with the tail's, and the tail's own (0 without one). In logs, ln W(M) = s(M) + ln m(M) under the DAG
    prior: a class of more than 1.8·10³⁰⁸ DAGs (hundreds of variables in undirected components) overflowed
    ``float(m(M))`` (a review: 400 triangles, 6⁴⁰⁰ DAGs)."""
    if not isinstance(prior, str) or prior not in PRIORS:
        raise InputError(f"prior must be one of {PRIORS}, not {prior!r}")
    lw = np.array([m.score for m in mecs], dtype=float)
    if not mecs and tail is None:
        return np.zeros(0), 0.0, 0.0
    if prior == "dags" and mecs:
        lw = lw + np.array([math.log(m.n_dags) if m.n_dags > 0 else -math.inf for m in mecs])
    refs = [float(np.max(lw))] if mecs else []
    refs += [float(x) for x in (optimum, tail.ref if tail is not None else None) if x is not None]
    ref = max(refs)
    w = np.exp(lw - ref)
    tail_w = tail.at(ref) if tail is not None else 0.0
    return w, float(w.sum()) + tail_w, tail_w


def class_edge_posteriors(mecs: Sequence[MEC], class_w: Sequence[float] | np.ndarray,
                          variables: Sequence[str]) -> pd.DataFrame:
    """P(u → v) = Σ_M W(M)·P_M(u → v), P_M the share of M's DAGs with u → v (``MEC.shares``)."""
    n = len(variables)
    at = {v: i for i, v in enumerate(variables)}     # (a dict of all n² pairs was 1.4 s at 3,000 variables)
    pairs: list[int] = []
    terms: list[float] = []
    for m, wm in zip(mecs, np.asarray(class_w, dtype=float).tolist(), strict=True):
        if m.shares is None:
            raise InputError("class_edge_posteriors needs MEC.shares (see bnilp.mec.credible_classes)")
        pairs.extend(at[u] * n + at[v] for u, v in m.shares)
        terms.extend(wm * p for p in m.shares.values())
    mat = np.bincount(np.asarray(pairs, dtype=np.int64), weights=np.asarray(terms, dtype=float),
                      minlength=n * n).reshape(n, n)
    return pd.DataFrame(np.clip(mat, 0.0, 1.0), index=list(variables), columns=list(variables))


def mec_weights(mecs: Sequence[MEC], scores: Sequence[float] | np.ndarray, optimum: float | None = None,
                prior: str = "dags") -> np.ndarray:
    """Per-network weights given the MEC grouping (convenience around :func:`weights`)."""
    ids = mec_index(mecs, len(scores)) if prior == "mecs" else None
    return weights(scores, optimum, prior, ids)


def _reals(values: Any, where: str) -> np.ndarray:
    """``values`` as a 1-D float array of finite real numbers, else an :class:`InputError` naming ``where`` (a review:
    ``weights(None)`` was a scalar NaN, strings were parsed, NaN scores gave NaN weights)."""
    arr = np.asarray(values)            # (an empty list is a float array: no networks, no weights)
    if isinstance(values, (str, bytes)) or arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iuf"):
        raise InputError(f"{where} must be a sequence of real numbers, got {type(values).__name__}")
    arr = arr.astype(float)
    if not np.isfinite(arr).all():
        raise InputError(f"{where}: {arr[~np.isfinite(arr)][0]} is not a finite number")
    return arr


def _parent_maps(networks: Iterable[Any]) -> Iterator[Mapping[str, Iterable[str]]]:
    """The parent map of each network, without copying (tuples, dicts or ``.parents`` objects)."""
    for net in networks:
        if isinstance(net, tuple):
            yield net[1]
        elif isinstance(net, Mapping):
            yield net["parents"]
        else:
            yield net.parents


def edge_arrays(networks: Iterable[Any], variables: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(network index, flat pair index parent·n + child) of every edge of every network."""
    index = {v: i for i, v in enumerate(variables)}
    n = len(variables)
    nets: list[int] = []
    pairs: list[int] = []
    for k, pa in enumerate(_parent_maps(networks)):
        before = len(pairs)
        for c, ps in pa.items():
            base = index[c] if c in index else _unknown(k, c)
            pairs.extend((index[p] if p in index else _unknown(k, p)) * n + base for p in ps)
        nets.extend([k] * (len(pairs) - before))
    return np.asarray(nets, dtype=np.int64), np.asarray(pairs, dtype=np.int64)


def _unknown(k: int, name: object) -> int:
    raise InputError(f"networks: network {k + 1} names {name!r}, which is not one of variables")


def edge_posteriors(networks: Iterable[Any], weights: Sequence[float] | np.ndarray,
                    variables: Sequence[str], edges: tuple[np.ndarray, np.ndarray] | None = None) -> pd.DataFrame:
    """P(u → v) = Σ_G w(G)·[u → v ∈ G] as a square DataFrame: row = parent u, column = child v (diagonal 0).

    ``networks``: ``(score, parents)`` tuples, objects with ``.score``/``.parents`` or dicts. ``weights``: one
    per network, each ≥ 0, summing to at most 1 (:func:`weights`; less where a class was cut short) — else an
    :class:`InputError`, as are a string ``variables`` and a network naming a variable not in it. ``edges``: the
    networks' :func:`edge_arrays`, where the caller has made them.
    """
    if isinstance(variables, (str, bytes)):
        raise InputError(f"variables must be a sequence of names, not a string ({variables!r})")
    networks = list(networks)
    w = _reals(weights, "weights")
    if w.size != len(networks):
        raise InputError(f"{len(networks)} networks but {w.size} weights")
    if w.size and (w.min() < 0 or w.sum() > 1 + 1e-9):
        raise InputError(f"weights must be ≥ 0 and sum to at most 1 (posterior weights), got min {w.min():g}, sum "
                         f"{w.sum():.12g}")
    n = len(variables)
    net, flat = edge_arrays(networks, variables) if edges is None else edges
    mat = np.bincount(flat, weights=w[net], minlength=n * n).reshape(n, n)
    mat = np.clip(mat, 0.0, 1.0)
    return pd.DataFrame(mat, index=list(variables), columns=list(variables))


def adjacency_posteriors(directed: pd.DataFrame) -> pd.DataFrame:
    """P(u — v) = P(u → v) + P(v → u) (symmetric), from :func:`edge_posteriors`."""
    mat = directed.to_numpy()
    return pd.DataFrame(np.clip(mat + mat.T, 0.0, 1.0), index=directed.index, columns=directed.columns)


def class_weight(w: np.ndarray, mec: MEC) -> float:
    """The weight of a class: the sum of its member networks' weights ``w`` (one member: its weight, bit for
    bit, without a NumPy reduction — the class report sums 10^5–10^6 of them)."""
    members = mec.members
    return float(w[members[0]]) if len(members) == 1 else float(w[members].sum())


def undirected_posteriors(mecs: Sequence[MEC], weights: Sequence[float] | np.ndarray,
                          variables: Sequence[str]) -> pd.DataFrame:
    """P(u — v undirected in the CPDAG) (symmetric): class weights summed over classes. Under
    background knowledge a class's PDAG (:attr:`bnilp.mec.MEC.pdag`) stands for its CPDAG (the CPDAG where the
    class is too large to apply ancestor statements to, :attr:`bnilp.mec.MEC.pdag_or_why`)."""
    w = np.asarray(weights, dtype=float)
    index = {v: i for i, v in enumerate(variables)}
    n = len(variables)
    pairs: list[int] = []
    terms: list[float] = []
    for m in mecs:
        wm = class_weight(w, m)
        und = m.pdag_or_why[0][1]
        if wm == 0.0 or not und:
            continue
        for e in und:
            a, b = (index[x] for x in e)
            pairs += (a * n + b, b * n + a)
        terms.extend([wm] * (2 * len(und)))
    mat = np.bincount(np.asarray(pairs, dtype=np.int64), weights=np.asarray(terms, dtype=float),
                      minlength=n * n).reshape(n, n)
    return pd.DataFrame(np.clip(mat, 0.0, 1.0), index=list(variables), columns=list(variables))


def edge_table(directed: pd.DataFrame, undirected: pd.DataFrame | None = None) -> pd.DataFrame:
    """Long form: ``from, to, directed_posterior, adjacency_posterior`` (+ ``undirected_posterior``)
    for every ordered pair with adjacency > 0, sorted by directed then adjacency posterior.
    """
    adj = adjacency_posteriors(directed)
    names = list(directed.index)
    n = len(names)
    u, v = np.nonzero((adj.to_numpy() > 0) & ~np.eye(n, dtype=bool))
    df = pd.DataFrame({
        "from": [names[i] for i in u],
        "to": [names[j] for j in v],
        "directed_posterior": directed.to_numpy()[u, v],
        "adjacency_posterior": adj.to_numpy()[u, v],
    })
    if undirected is not None:
        df["undirected_posterior"] = undirected.to_numpy()[u, v]
    df = df.sort_values(["directed_posterior", "adjacency_posterior", "from", "to"],
                        ascending=[False, False, True, True], kind="mergesort")
    return df.reset_index(drop=True)


def mec_table(mecs: Sequence[MEC], weights: Sequence[float] | np.ndarray, optimum: float | None = None,
              class_size: bool = False) -> pd.DataFrame:
    """One row per class, best first: ``score, ln_bf, bf, n_dags, posterior`` (+ ``class_size``).

    ``ln_bf`` = OPT − score ≥ 0 is the log Bayes factor of the best network against the class,
    ``bf`` = exp(ln_bf); ``n_dags`` counts the members present, ``posterior`` sums their weights.
    ``class_size=True`` adds the number of DAGs in the whole class (from the CPDAG).
    """
    w = np.asarray(weights, dtype=float)
    scores = np.array([m.score for m in mecs], dtype=float)
    if optimum is not None:
        opt = float(optimum)
    else:
        opt = float(scores.max()) if scores.size else 0.0
    ln_bf = opt - scores
    df = pd.DataFrame({
        "score": scores,
        "ln_bf": ln_bf,
        "bf": np.exp(ln_bf),
        "n_dags": _counts([m.n_dags for m in mecs]),
        "posterior": np.array([class_weight(w, m) for m in mecs], dtype=float),
    })
    if class_size:
        df["class_size"] = _counts([class_size_or_none(m) for m in mecs])
    return df


def class_size_or_none(m: MEC) -> int | None:
    """The class's size, or None where ancestor statements would mean listing more than
    :data:`~bnilp.mec.MAX_CLASS_LISTED` of its DAGs (the report's ``class_size_note`` says so)."""
    try:
        return m.class_size
    except InputError:
        return None


def _counts(values: Sequence[int | None]) -> np.ndarray:
    """DAG counts as int64, or as Python ints (dtype object) where one passes 2^63 − 1 (a class of five complete
    8-node components holds 8!^5 ≈ 1.07e23 DAGs) or is unknown (None)."""
    fits = all(v is not None and v < 2**63 for v in values)
    return np.array(values, dtype=np.int64 if fits else object)
