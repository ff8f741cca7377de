"""Reports of a credible set: JSON, terminal tables (rich), CSV, DOT/GraphML and pictures.

:func:`result_json` extends the solver's ``SolveResult.to_dict()`` with the MEC grouping and the
model-averaged posteriors of :mod:`bnilp.averaging` (Madigan & Raftery 1994: every number is
conditional on the credible set, "Occam's window"). Added fields (a contract, keep the names)::

    "n_mecs": int, "prior": "dags" | "mecs", "variables": [names],
    "mecs": [{"score", "ln_bf", "n_dags", "class_size", "posterior",
              "cpdag": {"directed": [[u, v], ...], "undirected": [[u, v], ...]},
              "members": [network indices]}],                       best first
    "edges": [{"from", "to", "posterior"}],                          P(u → v) > 0, descending
    "adjacency": [{"u", "v", "posterior", "undirected_posterior"}]   P(u — v) > 0, descending

With background knowledge (:mod:`bnilp.knowledge`) the report also has ``"knowledge"``
(``statements``, ``required_arrows`` [[u, v]], ``forbidden_arrows`` [[u, v, why]], the fields of
:meth:`bnilp.knowledge.Knowledge.to_dict`), each edge ``"knowledge": "required"`` where the knowledge
requires it, and each class a ``"pdag"`` (the class's DAGs that satisfy the knowledge: directed where
they all agree); ``class_size`` then counts those DAGs — null, with ``"class_size_note"`` saying why and no
``"pdag"``, where ancestor statements would mean listing a class of more than a million DAGs. Tables,
``edges.csv``, DOT files and the averaged picture mark required arrows (bold blue) and explicitly forbidden
ones (red, dashed in DOT).

``ln_bf`` = OPT − score (log Bayes factor of the optimum against the class), ``n_dags`` counts the
class members in the credible set, ``class_size`` all DAGs of the class (Markov equivalent DAGs,
counted from the CPDAG), ``undirected_posterior`` = P(u — v undirected in the CPDAG).

:func:`write_report` writes ``edges.csv``, ``mecs.csv``, ``networks.json``, ``best_cpdag.dot``,
``averaged.dot``, ``heatmap.png``, ``averaged.png`` (and ``best_network.dot``/``.graphml``); every
file goes through a temporary file in the same folder and ``os.replace``. ``networks.json`` is
strict JSON: a non-finite number (ε = ∞, an open gap) is written as null. Where the credible set is not complete
(a limit cut it short; ``--optimum-only``) the pictures' titles and ``averaged.dot``'s label say INCOMPLETE and
why, and ``edges.csv`` and ``mecs.csv`` get a column ``incomplete`` holding why on every row.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bnilp.averaging import (
    adjacency_posteriors,
    class_edge_posteriors,
    class_size_or_none,
    class_weight,
    class_weights,
    edge_arrays,
    edge_posteriors,
    tail_posteriors,
    undirected_posteriors,
    weights,
)
from bnilp.errors import InputError
from bnilp.mec import MEC, TailMass, component_memo, count_knowledge_class, group_by_mec, mec_index, network_items
from bnilp.scorefile import atomic_output, atomic_write_text, check_writable, output_set, strict_json
from bnilp.scores.base import bayes_factor, bf_text
from bnilp.terminal import lossless, plain_console

PRIOR_TEXT = {"dags": "uniform over DAGs", "mecs": "uniform over MECs"}
TOP_MECS = 20
TOP_EDGES = 20


def _variables_of(result_dict: Mapping[str, Any]) -> list[str]:
    if result_dict.get("variables"):
        return list(result_dict["variables"])
    nets = result_dict.get("networks") or []
    return list(nets[0]["parents"]) if nets else []


def summarise(result_dict: Mapping[str, Any], prior: str = "dags",
              variables: Sequence[str] | None = None, knowledge: Any = None,
              class_members: Mapping[Any, int] | None = None) -> dict[str, Any]:
    """Group ``result_dict["networks"]`` into MECs, weight them and return :func:`result_json`
    (with ``knowledge``, a class is its DAGs that satisfy it: see :attr:`bnilp.mec.MEC.knowledge`).
    ``class_members``: the credible DAGs of each class by :attr:`~bnilp.mec.MEC.key`, where they were counted and
    a cap listed only some (``prior="mecs"`` then gives each listed DAG W(M)/m(M), not its share of those listed;
    and the class's ``n_dags`` is m(M), not the members listed: a review)."""
    nets = network_items(result_dict.get("networks") or [])
    variables = list(variables) if variables is not None else _variables_of(result_dict)
    mecs = group_by_mec(nets)
    memo = component_memo(knowledge)
    for m in mecs:
        m.knowledge = knowledge
        if memo is not None:            # (a DAG listing's classes share most chain components, too)
            count_knowledge_class(m, memo)
        if class_members is not None:
            m.counted = max(len(m.members), int(class_members.get(m.key, 0)))
    scores = [s for s, _ in nets]
    ids = mec_index(mecs, len(nets)) if prior == "mecs" else None
    sizes = [m.n_dags for m in mecs] if ids is not None and class_members is not None else None
    w = weights(scores, result_dict.get("optimum"), prior, ids, sizes)
    return result_json(result_dict, mecs, w, variables, prior)


def lists_every_dag(r: Mapping[str, Any]) -> bool:
    """Whether the result ``r`` (a report) listed every DAG of each class (``list_dags``, ``--list-dags``)."""
    return bool(((r.get("provenance") or {}).get("settings") or {}).get("list_dags"))


def _uncounted_classes(r: Mapping[str, Any]) -> int:
    """The classes found past the cap that a deadline left out of the posteriors (``classes_uncounted``), where
    the posteriors are over classes (not with ``--list-dags``: they are over the DAGs listed then, and its message
    says what was counted; a review)."""
    return 0 if lists_every_dag(r) else int(r.get("classes_uncounted") or 0)


def summarise_classes(result_dict: Mapping[str, Any], mecs: Sequence[MEC], prior: str = "dags",
                      variables: Sequence[str] | None = None, tail: TailMass | None = None) -> dict[str, Any]:
    """:func:`result_json` of a class enumeration: ``result_dict["networks"]`` holds one representative per
    class and ``mecs`` (from :func:`bnilp.mec.credible_classes`, same order) their counted DAGs and edge
    shares. ``n_networks`` becomes the number of DAGs counted; ``n_representatives`` the number listed.
    ``tail`` (:func:`bnilp.mec.class_tail_mass`, variables in the order of ``variables``): the credible
    classes past the cap, which the posteriors (classes' and edges') then average over too;
    ``posterior_classes`` and ``posterior_dags`` say over how many classes and DAGs they average."""
    variables = list(variables) if variables is not None else _variables_of(result_dict)
    optimum = result_dict.get("optimum")
    w = class_weights(mecs, optimum, prior, tail)
    extra = tail_posteriors(mecs, optimum, prior, tail)[1:] if tail is not None else None
    out = result_json(result_dict, mecs, w, variables, prior, extra)
    out["n_representatives"] = len(result_dict.get("networks") or [])
    out["n_networks"] = int(sum(m.n_dags for m in mecs))
    out["posterior_classes"] = len(mecs) + (tail.classes if tail is not None else 0)
    out["posterior_dags"] = out["n_networks"] + (tail.dags if tail is not None else 0)
    return out


class _PairOrder:
    """Pairs of variables numbered in variable order (u's index · n + v's), for :func:`_edge_lists`: ``arc``
    numbers an ordered pair (u, v), ``line`` an unordered one by (first, second) in variable order, and
    ``names`` gives the pair back. From the variables' indices, O(n): dicts of all n² pairs took 3.5 GB and
    14 s at 3,000 variables for a result with no edge (a review)."""

    def __init__(self, variables: Sequence[str]):
        self.variables = list(variables)
        self.index = {v: i for i, v in enumerate(self.variables)}

    def arc(self, uv: tuple[str, str]) -> int:
        return self.index[uv[0]] * len(self.variables) + self.index[uv[1]]

    def line(self, e: Iterable[str]) -> int:
        i, j = sorted(self.index[v] for v in e)
        return i * len(self.variables) + j

    def names(self, k: int) -> tuple[str, str]:
        i, j = divmod(k, len(self.variables))
        return self.variables[i], self.variables[j]


def _edge_lists(directed: Iterable[tuple[str, str]], undirected: Iterable[Iterable[str]],
                order: _PairOrder) -> dict[str, list[list[str]]]:
    """A (C)PDAG's edges as JSON lists in variable order: ``directed`` [u, v] and ``undirected`` [u, v]
    with u before v, each list sorted by (u, v)."""
    arcs = sorted(map(order.arc, directed))
    lines = sorted(map(order.line, undirected))
    return {"directed": [list(order.names(k)) for k in arcs], "undirected": [list(order.names(k)) for k in lines]}


def cpdag_lists(cpdags: Iterable[tuple[Iterable[tuple[str, str]], Iterable[Iterable[str]]]],
                variables: Sequence[str]) -> list[dict[str, list[list[str]]]]:
    """Each CPDAG ``(directed {(u, v)}, undirected {{u, v}})`` (:func:`bnilp.mec.cpdag_edges`) as the report's
    classes hold it: ``{"directed": [[u, v], …], "undirected": [[u, v], …]}``, in ``variables``' order."""
    order = _PairOrder(variables)
    return [_edge_lists(directed, undirected, order) for directed, undirected in cpdags]


def _class_size(m: MEC) -> tuple[int | None, str | None]:
    """(the class's size — its DAGs that satisfy the knowledge, if any —, None) or, where counting it would
    mean listing more than :data:`~bnilp.mec.MAX_CLASS_LISTED` DAGs (ancestor statements are checked DAG by
    DAG), (None, why): a column of the class table must not cost the report (DAG enumeration lists the credible
    members themselves; the undirected posteriors then take the CPDAG's edges, :attr:`MEC.pdag_or_why`)."""
    size = class_size_or_none(m)
    return (None, m.pdag_or_why[1]) if size is None else (int(size), None)


def result_json(result_dict: Mapping[str, Any], mecs: Sequence[MEC], weights: Sequence[float] | np.ndarray,
                variables: Sequence[str], prior: str,
                extra: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
    """The solver dict plus ``n_mecs``, ``prior``, ``mecs``, ``edges``, ``adjacency`` (see module doc).

    ``mecs`` must come from ``group_by_mec(result_dict["networks"])`` and ``weights`` be one per
    network in that list, so that member indices and weights refer to ``result_dict["networks"]``.
    ``extra``: the terms of P(u → v) and P(u — v undirected) from classes not in ``mecs``
    (:func:`bnilp.averaging.tail_posteriors`), added to theirs.
    """
    if not isinstance(prior, str) or prior not in PRIOR_TEXT:
        raise InputError(f"prior must be one of {sorted(PRIOR_TEXT)}, not {prior!r}")
    variables = list(variables)
    order = _PairOrder(variables)
    nets = list(result_dict.get("networks") or [])
    w = np.asarray(weights, dtype=float)
    if w.size != len(nets):
        raise InputError(f"{w.size} weights for {len(nets)} networks")
    out = dict(result_dict)
    out["variables"] = variables
    out["n_mecs"] = len(mecs)
    out["prior"] = prior
    optimum = result_dict.get("optimum")
    if optimum is None and mecs:
        optimum = mecs[0].score
    out["mecs"] = []
    for m in mecs:
        directed, undirected = m.cpdag
        size, too_large = _class_size(m)
        out["mecs"].append({
            "score": float(m.score),
            "ln_bf": float(optimum - m.score),
            "n_dags": int(m.n_dags),
            "class_size": size,
            "posterior": class_weight(w, m),
            "cpdag": _edge_lists(directed, undirected, order),
            "members": [int(i) for i in m.members],
        })
        if too_large:
            out["mecs"][-1]["class_size_note"] = too_large
        elif m.knowledge is not None:    # the class under background knowledge: its PDAG
            pd_dir, pd_und = m.pdag
            out["mecs"][-1]["pdag"] = _edge_lists(pd_dir, pd_und, order)
    by_class = bool(mecs) and all(m.shares is not None for m in mecs)      # classes counted, not listed
    edges = None
    if by_class:
        d = class_edge_posteriors(mecs, [class_weight(w, m) for m in mecs], variables).to_numpy()
    else:
        edges = edge_arrays(nets, variables)
        d = edge_posteriors(nets, w, variables, edges=edges).to_numpy()
    und = undirected_posteriors(mecs, w, variables).to_numpy()
    certain = None
    if extra is not None:
        d = np.clip(d + extra[0], 0.0, 1.0)
        und = np.clip(und + extra[1], 0.0, 1.0)
    else:       # (past the cap the classes' own counts are not kept: there the sums stand as they are)
        certain = _certain_pairs(mecs, nets, variables, by_class, edges)
    out["edges"], out["adjacency"] = posterior_lists(d, variables, und, certain)
    return out


def _certain_pairs(mecs: Sequence[MEC], nets: Sequence[Any], variables: Sequence[str], by_class: bool,
                   edges: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs that every network listed holds — u → v (in every DAG of every class: a share of 1), u — v
    adjacent, u — v undirected in its class's CPDAG (PDAG under knowledge) — as boolean matrices in ``variables``'
    order: their posteriors are 1 (P = W/W), where the weighted sums, added in another order than their total,
    came to 0.9999999999999999 (a review: a required arrow; smoke — lung, adjacent in both of ASIA's classes), which
    the tables print as ">0.9999". Only the first class's pairs can be held by all; each is looked up in the other
    classes until one lacks it (a loop over every class's pairs took 61 µs a class, 9 s for a report of 150,000).
    ``edges``: the networks' :func:`~bnilp.averaging.edge_arrays`, where already made."""
    n = len(variables)
    at = {v: i for i, v in enumerate(variables)}
    out = [np.zeros((n, n), dtype=bool) for _ in range(3)]
    if not (mecs if by_class else nets):
        return tuple(out)

    def mark(which: int, a: str, b: str, symmetric: bool) -> None:
        out[which][at[a], at[b]] = True
        if symmetric:
            out[which][at[b], at[a]] = True

    first, rest = (mecs[0], mecs[1:]) if mecs else (None, ())
    for e in first.pdag_or_why[0][1] if first is not None else ():
        if all(e in m.pdag_or_why[0][1] for m in rest):
            mark(2, *e, True)
    if by_class:
        for arrow, share in first.shares.items():
            if share == 1 and all(m.shares.get(arrow) == 1 for m in rest):
                mark(0, *arrow, False)
        for c, ps in first.representative.items():
            for p in ps:
                if all(p in m.representative[c] or c in m.representative[p] for m in rest):
                    mark(1, p, c, True)
        return tuple(out)
    net, flat = edge_arrays(nets, variables) if edges is None else edges
    held = np.bincount(flat, minlength=n * n).reshape(n, n)
    return held == len(nets), held + held.T == len(nets), out[2]


def posterior_lists(d: np.ndarray, variables: Sequence[str], und: np.ndarray | None = None,
                    certain: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The JSON's ``edges`` and ``adjacency`` lists from the matrix of P(u → v) (rows u, in ``variables``' order):
    nonzero entries only, descending, ties in variable order; each adjacency with its ``undirected_posterior``
    where ``und`` (P(u — v) undirected in the class's CPDAG) is given. ``certain``: boolean matrices of the arrows,
    adjacencies and undirected edges every network holds (:func:`_certain_pairs`), whose posteriors are then 1
    exactly, not their sums' rounding."""
    a = adjacency_posteriors(pd.DataFrame(d, index=variables, columns=variables)).to_numpy()
    if certain is not None:
        d, a = d.copy(), a.copy()
        d[certain[0]], a[certain[1]] = 1.0, 1.0
        if und is not None:
            und = und.copy()
            und[certain[2]] = 1.0
    # the nonzero cells only (all n² cells as Python tuples: 2 GB at 3,000 variables; a review)
    edges = [(float(d[i, j]), i, j) for i, j in zip(*np.nonzero(d > 0), strict=True) if i != j]
    edges.sort(key=lambda t: (-t[0], t[1], t[2]))
    adj = [(float(a[i, j]), i, j) for i, j in zip(*np.nonzero(np.triu(a, 1) > 0), strict=True)]
    adj.sort(key=lambda t: (-t[0], t[1], t[2]))
    return ([{"from": variables[i], "to": variables[j], "posterior": p} for p, i, j in edges],
            [{"u": variables[i], "v": variables[j], "posterior": p}
             | ({} if und is None else {"undirected_posterior": float(und[i, j])}) for p, i, j in adj])


def report_json_text(report: Mapping[str, Any]) -> str:
    """The JSON text of a result (``--json``): one top-level field a line; a list one element a line, each
    element compact; any other value indented. It parses to the same value as ``json.dumps(report,
    indent=1)``, but the long lists go through CPython's compiled encoder (the indenting one is pure
    Python: hepatitis BF 150's report, 150,000 classes and their representatives, took 33 s that way,
    7.3 s this way)."""
    compact = json.JSONEncoder(separators=(", ", ": "))
    fields = []
    for key, value in report.items():
        if isinstance(value, list) and value:
            inner = ",\n  ".join(compact.encode(x) for x in value)
            text = f"[\n  {inner}\n ]"
        else:
            text = json.dumps(value, indent=1).replace("\n", "\n ")
        fields.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


def probability_text(p: float, digits: int = 4) -> str:
    """A posterior to ``digits`` decimals, but never a nonzero shown as 0 nor a value short of 1 shown as 1: those
    read ``<0.0001`` and ``>0.9999`` (a review: the tables list only nonzero entries, and printed P = 4.18e-6 as
    0.0000 and 0.99998940 as 1.0000)."""
    text = f"{p:.{digits}f}"
    step = 10.0 ** -digits
    if 0 < p and float(text) == 0:
        return f"<{step:.{digits}f}"
    if p < 1 and float(text) >= 1:
        return f">{1 - step:.{digits}f}"
    return text


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        return f"{x:.{digits}f}"
    return str(x)



def _probability_or_dash(p: float | None) -> str:
    return "—" if p is None else probability_text(float(p))


def _listed_name(name: str) -> str:
    """A name as the terminal's parent lists show it: as written, or quoted (``repr``) where it holds a comma, the
    arrow, the empty-set sign or spaces at either end — ``温度 ← a b, x,y`` read as three parents where there
    were two (found by a review)."""
    plain = name and name == name.strip() and not any(c in name for c in ",←∅'\"")
    return name if plain else repr(name)


def limit_reason(meta: Mapping[str, Any]) -> str:
    """What cut a score table's walk, from its sidecar ``meta`` (or a report's ``scoring``): the scoring time or
    memory limit, a deeper pass that could not run, or palim."""
    if meta.get("score_time_limit_reached"):
        return "the scoring time limit"
    if meta.get("score_memory_limit_reached"):
        return "the scoring memory limit"
    if meta.get("score_deeper_pass_refused"):
        return f"a deeper pass that could not run ({meta['score_deeper_pass_refused']})"
    return "palim"


def limits_text(r: Mapping[str, Any]) -> str:
    """The result's limits (``report["limits"]``, :attr:`bnilp.pipeline.LearnResult.limits`) in words: the panel
    said "complete yes" and "status optimal" over a run cut by its palim or scoring limit, with nothing to say
    the set is exact only for smaller parent sets. The palim's words name what cut the walk, so the scoring
    limits behind it (``score_time_limit``, ``score_memory_limit``) are not said twice."""
    limits = r.get("limits") or []
    words = {"palim": f"exact for parent sets of size ≤ {r.get('exact_for_parent_sets_up_to')} "
                      f"({limit_reason(r.get('scoring') or {})})",
             "knowledge_pruning": "the score table was pruned without the knowledge (see knowledge_note)"}
    said_by_palim = {"score_time_limit", "score_memory_limit"} if "palim" in limits else set()
    return "; ".join(words.get(limit, str(limit)) for limit in limits if limit not in said_by_palim)


def print_report(result_json: Mapping[str, Any], console: Console | None = None) -> None:
    """Print the credible-set summary, the MEC table and the edge posteriors with rich."""
    if not isinstance(result_json, Mapping):
        raise InputError(f"result_json must be a result's report (LearnResult.report), got "
                         f"{type(result_json).__name__}")
    console = console or plain_console()
    r = result_json
    eps = r.get("epsilon")
    n_nets = r.get("n_networks", len(r.get("networks") or []))
    prior = PRIOR_TEXT.get(r.get("prior", "dags"), str(r.get("prior")))
    head = Table.grid(padding=(0, 2))
    proven = r.get("status") in ("optimal", "network_limit") or (r.get("gap") == 0)
    head.add_row("OPT (best score)" if proven else "best score found", _fmt(r.get("optimum")))
    head.add_row("dual bound", _fmt(r.get("bound")))
    gap = r.get("gap")
    head.add_row("gap", "—" if gap is None else f"{100 * float(gap):.4g} %" + ("" if proven else
                 "  (optimality NOT proven)"))
    if eps is not None:
        head.add_row("ε = ln BF", _fmt(float(eps)))
        head.add_row("Bayes factor", bf_text(float(eps)) if math.isfinite(float(eps)) else "∞")
    listed = " in the listed classes" if r.get("posterior_classes", 0) > r.get("n_mecs", 0) else ""
    dags = f"{n_nets}{listed}"
    if r.get("n_dags_counted", 0) > n_nets:        # --list-dags capped: what was counted, beside what was listed
        dags += f" listed, of {'the' if r.get('n_dags_counted_exact') else 'at least'} {r['n_dags_counted']} counted"
    elif not (r.get("complete", True) or r.get("optimum_only") or listed):   # the panel said 5 where 15 were known
        dags += " listed (not every credible DAG: see below)"
    if r.get("enumerate") == "mecs" and "n_representatives" in r:
        # the CPDAG's count holds only where the table keeps every DAG of each class (``counted`` says which)
        whole = str(r.get("counted", "every DAG")).startswith("every DAG")
        dags += (" (counted from the classes' CPDAGs)" if whole else
                 " (counted by listing each class: only DAGs whose parent sets the score table holds)")
    head.add_row("credible DAGs", dags)
    # a cut list's classes are the ones found, as its DAGs are (a review: "credible MECs 2487" of 4,977)
    mecs_text = str(r.get("n_mecs", "—")) + (" listed" if listed else "" if r.get("complete", True)
                                             or r.get("optimum_only") else " found (not complete)")
    if r.get("n_mecs_counted", 0) > r.get("n_mecs", 0):     # --list-dags capped: the classes the DAGs listed lie in
        of = "the" if r.get("n_dags_counted_exact") else "at least"
        mecs_text = f"{r['n_mecs']} holding the DAGs listed, of {of} {r['n_mecs_counted']} counted"
    head.add_row("credible MECs", mecs_text)
    uncounted = _uncounted_classes(r)
    if r.get("posterior_classes", 0) > r.get("n_mecs", 0) or uncounted:
        found = "" if r.get("status") == "network_limit" else " found"
        over = (f"the best {r['posterior_classes']} of the {r['posterior_classes'] + uncounted} credible classes"
                f"{found} ({r['posterior_dags']} DAGs; {uncounted} not counted"
                f"{' in the time left' if r.get('status') in ('time_limit', 'interrupted') else ''})" if uncounted else
                f"all {r['posterior_classes']} credible classes{found} ({r['posterior_dags']} DAGs)")
        head.add_row("posteriors over", f"{over}; the best {r.get('n_mecs')} listed")
    listed_all = lists_every_dag(r)
    head.add_row("enumerated", "DAGs" if r.get("enumerate") != "mecs" else
                 "equivalence classes (every DAG listed)" if listed_all else "equivalence classes (one DAG each)")
    if r.get("optimum_only"):
        head.add_row("complete", "optimum only (tied optimal networks not listed)" if proven else
                     "NO: optimum only asked, and OPT not proven (see status)")
    else:
        head.add_row("complete", "yes" if r.get("complete", True) else "NO (truncated)")
    head.add_row("status", str(r.get("status", "—")))
    limited = limits_text(r)
    if limited:
        head.add_row("limited", limited)
    if r.get("seconds") is not None:
        head.add_row("seconds", _fmt(float(r["seconds"]), 2))
    console.print(Panel(head, title="bnilp credible set", expand=False))
    known = r.get("knowledge")
    if known:
        n_forb, n_said = len(known.get("forbidden_arrows", [])), len(known["statements"])
        tiers = " (with those the tiers imply)" if any(s.startswith("tier") for s in known["statements"]) else ""
        console.print(f"background knowledge ({n_said} statement{'s' if n_said != 1 else ''}; every number is over the "
                      f"DAGs that satisfy it): {'; '.join(known['statements'])}\n  required arrows: "
                      f"{', '.join(f'{u} → {v}' for u, v in known.get('required_arrows', [])) or 'none'}; "
                      f"forbidden arrows: {n_forb}{tiers}", highlight=False, markup=False)
        if r.get("knowledge_note"):
            console.print(r["knowledge_note"], style="yellow", markup=False)
    nets = r.get("networks") or []
    if nets:
        best = nets[0]
        lines = [f"  {_listed_name(v)} ← {', '.join(map(_listed_name, ps)) if ps else '∅'}"
                 for v, ps in best["parents"].items()]
        label = "optimal network" if proven else "best network found"
        console.print(f"{label} (score {_fmt(best['score'])}):\n" + "\n".join(lines), markup=False, highlight=False)
    counted_all = _counted_all(r)
    if counted_all:                             # count_past_cap: the list is capped, the set is not
        console.print(f"LIST CAPPED: the best {r.get('n_mecs')} of {r['posterior_classes']} credible "
                      f"classes are listed ({r.get('message') or 'network limit'}); the posteriors below cover all "
                      f"{r['posterior_classes']} ({r.get('posterior_dags')} DAGs), the class table the listed "
                      f"{r.get('n_mecs')}.", style="bold yellow", markup=False)
    elif not r.get("complete", True) and not (r.get("optimum_only") and r.get("status") == "optimal"):
        why = "; ".join(str(x) for x in (r.get("status"), r.get("message")) if x)
        console.print(f"INCOMPLETE: the credible set is truncated — not every network within "
                      f"the Bayes factor was found ({why or 'no reason given'}). Posteriors below are "
                      f"over the networks found only.", style="bold red", markup=False)
    mecs = r.get("mecs") or []
    if mecs:
        # classes counted past the cap, found or all (and those found but not counted, past a deadline)
        found = r.get("posterior_classes", 0) + _uncounted_classes(r)
        tail = found > len(mecs)
        of = (f"{len(mecs)} listed, {found} credible{'' if counted_all else ' found'}" if tail
              else str(len(mecs)))
        t = Table(title=f"Markov equivalence classes (top {min(TOP_MECS, len(mecs))} of {of})")
        size_col = "class size (with knowledge)" if known else "class size"
        for col in ("#", "score", "ln BF", "BF to best", "DAGs", size_col, "posterior"):
            t.add_column(col, justify="right")
        for k, m in enumerate(mecs[:TOP_MECS], start=1):
            t.add_row(str(k), _fmt(m["score"]), _fmt(m["ln_bf"]), bf_text(m["ln_bf"]), str(m["n_dags"]),
                      "—" if m.get("class_size") is None else str(m["class_size"]), probability_text(m["posterior"]))
        console.print(lossless(t))
    edges = r.get("edges") or []
    if edges:
        top = min(TOP_EDGES, len(edges))
        t = Table(title=f"Directed edge posteriors P(u → v) (top {top} of {len(edges)})")
        t.add_column("from")
        t.add_column("to")
        t.add_column("P(u → v)", justify="right")
        if known:
            t.add_column("knowledge")
        for e in edges[:TOP_EDGES]:
            t.add_row(Text(str(e["from"])), Text(str(e["to"])), probability_text(e["posterior"]),
                      *([Text(e.get("knowledge", ""))] if known else []))
        console.print(lossless(t))
    adj = r.get("adjacency") or []
    if adj:
        t = Table(title=f"Adjacency posteriors P(u — v) (top {min(TOP_EDGES, len(adj))} of {len(adj)})")
        t.add_column("u")
        t.add_column("v")
        t.add_column("P(u — v)", justify="right")
        t.add_column("P(undirected in PDAG)" if known else "P(undirected in CPDAG)", justify="right")
        for e in adj[:TOP_EDGES]:
            t.add_row(Text(str(e["u"])), Text(str(e["v"])), probability_text(e["posterior"]),
                      _probability_or_dash(e.get("undirected_posterior")))
        console.print(lossless(t))
    console.print(f"Note: posteriors are conditional on the credible set (Occam's window), prior: {prior}.")


def _known(r: Mapping[str, Any]) -> tuple[set[tuple[str, str]], list[tuple[str, str, str]]]:
    """(required arrows, forbidden arrows stated as such — ``forbid a -> b`` — of a report): not the ones that
    tiers, a forbidden adjacency or an ancestor relation imply (``forbidden_arrows`` lists those too)."""
    k = r.get("knowledge") or {}
    required = {(u, v) for u, v in k.get("required_arrows", [])}
    forbidden = [(u, v, why) for u, v, why in k.get("forbidden_arrows", []) if why.startswith(f"forbid {u} -> {v} (")]
    return required, forbidden


def _dot_id(name: str) -> str:
    return '"' + str(name).replace("\\", "\\\\").replace('"', '\\"') + '"'


def best_network_caveat(r: Mapping[str, Any]) -> str | None:
    """What the best network of a result (its report ``r``) may not be, or None for an optimal DAG of a problem
    without limits: the best DAG found where OPT is not proven (a time or memory limit in phase 1, an interrupt),
    and the limits of the problem it is optimal for (:func:`limits_text`: a palim, a scoring limit). The files of
    the best network (``--dot``, ``--graphml``, ``--tetrad``, the report's ``best_network.*`` and
    ``best_cpdag.dot``) say it (a review: bare graphs called the best network after a phase-1 time limit)."""
    words = []
    if r.get("optimum_proven") is False:
        words.append(f"the best network found: OPT NOT proven ({r.get('status')})")
    if _limited(r) is not None:
        words.append(f"LIMITED: {limits_text(r)}")
    return "; ".join(words) or None


def dot_text(parents: Mapping[str, Iterable[str]], undirected: Iterable[Iterable[str]] = (),
             name: str = "G", caveat: str | None = None) -> str:
    """DOT text of a network (``u -> v`` per parent) plus undirected edges drawn ``dir=none``; a ``caveat``
    (:func:`best_network_caveat`) is the graph's label."""
    lines = [f"digraph {_dot_id(name)} {{"]
    if caveat:
        lines.append(f"  label={_dot_id(caveat)}; labelloc=t;")
    lines += [f"  {_dot_id(v)};" for v in parents]
    for v, ps in parents.items():
        for p in sorted(ps):
            lines.append(f"  {_dot_id(p)} -> {_dot_id(v)};")
    for e in undirected:
        u, v = sorted(e)
        lines.append(f"  {_dot_id(u)} -> {_dot_id(v)} [dir=none];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_dot(parents: Mapping[str, Iterable[str]], path: str | os.PathLike[str], caveat: str | None = None) -> None:
    """Write one network as DOT (atomic), a ``caveat`` as its label."""
    atomic_write_text(path, dot_text(parents, caveat=caveat))


def write_graphml(parents: Mapping[str, Iterable[str]], path: str | os.PathLike[str],
                  caveat: str | None = None) -> None:
    """Write one network as GraphML (atomic). A name holding a character XML 1.0 cannot hold (a control
    character) gets a node id that spells it ``\\uXXXX`` (:func:`bnilp.export.xml_safe_names`) and keeps its
    exact name, JSON-encoded, in the node's ``name`` data; the graph's ``renamed`` data lists the changes, its
    ``caveat`` data the ``caveat`` (:func:`best_network_caveat`)."""
    from bnilp.export import xml_safe_names

    ids = xml_safe_names(parents)
    g = nx.DiGraph()
    if caveat:
        g.graph["caveat"] = caveat
    g.add_nodes_from(ids[v] for v in parents)
    renamed = {v: t for v, t in ids.items() if v != t}
    for v, t in renamed.items():
        g.nodes[t]["name"] = json.dumps(v)
    if renamed:
        g.graph["renamed"] = "; ".join(f"{json.dumps(v)} -> {json.dumps(t)}" for v, t in renamed.items())
    g.add_edges_from((ids[p], ids[v]) for v, ps in parents.items() for p in ps)
    atomic_write_text(path, "\n".join(nx.generate_graphml(g)) + "\n")


def _cpdag_dot(mec: Mapping[str, Any], variables: Sequence[str], caveat: str | None = None) -> str:
    """The best class's CPDAG (its PDAG under background knowledge)."""
    graph = mec.get("pdag") or mec["cpdag"]
    pa: dict[str, list[str]] = {v: [] for v in variables}
    for u, v in graph["directed"]:
        pa[v].append(u)
    return dot_text(pa, graph["undirected"], name="best_cpdag", caveat=caveat)


def _counted_all(r: Mapping[str, Any]) -> bool:
    """A class list capped by ``--max-networks`` whose posteriors still cover every credible class (the classes
    past the cap counted: peeling's tail, ``--count-past-cap``): the list is cut, the averages are not."""
    return r.get("status") == "network_limit" and r.get("posterior_classes", 0) > r.get("n_mecs", 0)


def _cut_short(r: Mapping[str, Any], table: bool = False) -> str | None:
    """Why the networks behind a result's posteriors are not the whole credible set (its limits, e.g.
    ``time_limit``; or only one optimal network asked for), or None where they are: the report's pictures, DOT
    and CSV files say it, as the JSON does — a review found a cut-short run's heatmap titled as a complete one's.
    A capped class list whose posteriors cover every credible class (:func:`_counted_all`) cuts only the class
    table (``table=True``)."""
    if r.get("complete", True) or (_counted_all(r) and not table):
        return None
    status = r.get("status")
    return status if status and status != "optimal" else "not every credible network listed"


def _limited(r: Mapping[str, Any]) -> str | None:
    """The limits of the problem a result's networks belong to — a palim, a scoring limit, a table pruned without
    the knowledge (``report["limits"]``) — whether or not the search listed its whole credible set; None where there
    are none. What cut the listing short is :func:`_cut_short`'s (both were one word before: a run capped by
    ``--max-networks`` under a palim was said INCOMPLETE (palim), with no word of the cap)."""
    return ", ".join(x for x in r.get("limits") or [] if x != "network_limit") or None


def _cut_short_title(r: Mapping[str, Any]) -> str:
    why = _cut_short(r)
    cut = "" if why is None else f" — INCOMPLETE ({why}): the networks found so far"
    return cut + ("" if _limited(r) is None else f" — LIMITED: {limits_text(r)}")


def _averaged_dot(edges: Sequence[Mapping[str, Any]], variables: Sequence[str],
                  r: Mapping[str, Any] | None = None) -> str:
    """Averaged graph; with knowledge: required arrows bold blue, forbidden statements red dashed
    ``tee`` arrows (not drawn for tier-implied ones), and each tier on one rank; a result cut short says so in
    the graph's label."""
    required, forbidden = _known(r or {})
    lines = ['digraph "averaged" {']
    title = _cut_short_title(r or {})
    if title:
        lines.append(f"  label={_dot_id('P(u -> v)' + title)}; labelloc=t;")
    lines += [f"  {_dot_id(v)};" for v in variables]
    for e in edges:
        p = float(e["posterior"])
        mark = ', color=blue, style=bold, xlabel="required"' if (e["from"], e["to"]) in required else ""
        lines.append(f"  {_dot_id(e['from'])} -> {_dot_id(e['to'])} [label=\"{probability_text(p, 2)}\", "
                     f"penwidth={0.5 + 4.5 * p:.2f}, weight={max(1, round(10 * p))}{mark}];")
    for u, v, _ in forbidden:
        lines.append(f'  {_dot_id(u)} -> {_dot_id(v)} [color=red, style=dashed, arrowhead=tee, constraint=false, '
                     f'label="forbidden"];')
    for tier in ((r or {}).get("knowledge") or {}).get("tiers", []):
        lines.append("  { rank=same; " + " ".join(f"{_dot_id(v)};" for v in tier) + " }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _save_figure(fig: Any, path: Path) -> None:
    """The figure as a PNG, written atomically. A character of a name that the font lacks is drawn as a box
    (the name stays readable in the JSON and the tables) without matplotlib's warning on stderr, which ``-q``
    does not silence."""
    with atomic_output(path) as tmp, warnings.catch_warnings():
        # matplotlib ≥ 3.8 says "missing from font(s) …", 3.7 "missing from current font"
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from (current )?font", category=UserWarning)
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")


def _matrix(edges: Sequence[Mapping[str, Any]], variables: Sequence[str]) -> np.ndarray:
    rank = {v: i for i, v in enumerate(variables)}
    mat = np.zeros((len(variables), len(variables)))
    for e in edges:
        mat[rank[e["from"]], rank[e["to"]]] = float(e["posterior"])
    return mat


def _plain(name: Any) -> str:
    """A variable name as matplotlib text, shown as written: ``$`` would open mathtext (and a name like
    ``$\\frac{$`` made the whole report fail); a control character, which no font has a glyph for (matplotlib
    warned on stderr), is spelled ``\\uXXXX`` as in XML outputs."""
    from bnilp.export import xml_visible

    return xml_visible(str(name)).replace("$", r"\$")


def plot_heatmap(result_json: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """PNG heat map of P(u → v): row = parent u, column = child v."""
    from matplotlib.figure import Figure

    variables = list(result_json["variables"])
    mat = _matrix(result_json.get("edges") or [], variables)
    n = max(len(variables), 1)
    size = min(max(4.0, 0.35 * n + 2.5), 24.0)
    fig = Figure(figsize=(size + 1.2, size))
    ax = fig.add_subplot()
    im = ax.imshow(mat, cmap="viridis", vmin=0.0, vmax=1.0)
    labels = [_plain(v) for v in variables]
    ax.set_xticks(range(len(variables)), labels=labels, rotation=90, fontsize=max(5, 11 - n // 8))
    ax.set_yticks(range(len(variables)), labels=labels, fontsize=max(5, 11 - n // 8))
    ax.set_xlabel("child v")
    ax.set_ylabel("parent u")
    ax.set_title(f"P(u → v) over {result_json.get('posterior_dags', result_json.get('n_networks', '?'))} credible DAGs "
                 f"({PRIOR_TEXT.get(result_json.get('prior', 'dags'), '')}){_cut_short_title(result_json)}",
                 fontsize=9)
    if n <= 15:
        for i in range(len(variables)):
            for j in range(len(variables)):
                if mat[i, j] > 0:
                    ax.text(j, i, probability_text(float(mat[i, j]), 2), ha="center", va="center", fontsize=7,
                            color="black" if mat[i, j] > 0.6 else "white")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="posterior")
    _save_figure(fig, Path(path))


def plot_averaged(result_json: Mapping[str, Any], path: str | os.PathLike[str],
                  min_posterior: float = 0.01, max_edges: int = 200) -> None:
    """PNG of the averaged graph: alpha and width of an edge ∝ P(u → v), labels for P ≥ 0.05.

    Draws the ``max_edges`` most probable edges with P(u → v) ≥ ``min_posterior`` (the title says
    how many of how many); every edge is in ``averaged.dot`` and ``edges.csv``.
    """
    from matplotlib.figure import Figure

    variables = list(result_json["variables"])
    every = result_json.get("edges") or []
    edges = sorted((e for e in every if float(e["posterior"]) >= min_posterior),
                   key=lambda e: -float(e["posterior"]))[:max_edges]
    g = nx.DiGraph()
    g.add_nodes_from(variables)
    for e in edges:
        g.add_edge(e["from"], e["to"], p=float(e["posterior"]))
    n = max(len(variables), 1)
    size = min(max(5.0, 0.45 * n + 3.0), 24.0)
    fig = Figure(figsize=(size, size))
    ax = fig.add_subplot()
    ax.set_axis_off()
    layout = nx.Graph()
    layout.add_nodes_from(variables)
    for u, v, data in g.edges(data=True):
        w = layout.get_edge_data(u, v, {"weight": 0.0})["weight"]
        layout.add_edge(u, v, weight=w + data["p"])
    pos = nx.spring_layout(layout, seed=0, weight="weight", k=2.0 / math.sqrt(n))
    node_size = 900 if n <= 20 else 500
    required, forbidden = _known(result_json)
    if forbidden:
        nx.draw_networkx_edges(nx.DiGraph([(u, v) for u, v, _ in forbidden]), pos, ax=ax, style="dashed",
                               edge_color="red", arrows=True, arrowstyle="-[", node_size=node_size, width=1.0)
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color="#dde8f5", edgecolors="#34495e", node_size=node_size)
    nx.draw_networkx_labels(g, pos, ax=ax, font_size=9 if n <= 20 else 7, labels={v: _plain(v) for v in g.nodes},
                            clip_on=False)        # a label past the axes widens the picture (bbox "tight")
    for mutual, rad in ((False, 0.0), (True, 0.15)):
        group = [(u, v, d["p"]) for u, v, d in g.edges(data=True) if g.has_edge(v, u) == mutual]
        if not group:
            continue
        nx.draw_networkx_edges(g, pos, edgelist=[(u, v) for u, v, _ in group], ax=ax,
                               width=[0.5 + 4.0 * p for *_, p in group],
                               edge_color=[(0.0, 0.3, 1.0, 1.0) if (u, v) in required
                                           else (0.1, 0.2, 0.5, 0.15 + 0.85 * p) for u, v, p in group],
                               arrows=True, arrowsize=14, node_size=node_size,
                               connectionstyle=f"arc3,rad={rad}")
        labels = {(u, v): probability_text(p, 2) for u, v, p in group if p >= 0.05}
        if labels:
            nx.draw_networkx_edge_labels(g, pos, edge_labels=labels, ax=ax, font_size=7,
                                         connectionstyle=f"arc3,rad={rad}")
    shown = "" if len(edges) == len(every) else f"; {len(edges)} of {len(every)} edges shown"
    knows = ("; required arrows bright blue, forbidden (stated) red dashed" if result_json.get("knowledge") else "")
    ax.set_title(f"Averaged network: edge width/opacity = P(u → v) "
                 f"({PRIOR_TEXT.get(result_json.get('prior', 'dags'), '')}, conditional on the credible set"
                 f"{shown}{knows}){_cut_short_title(result_json)}", fontsize=9)
    _save_figure(fig, Path(path))


def write_report(directory: str | os.PathLike[str], result_json: Mapping[str, Any],
                 networks: Sequence[Any] | None = None,
                 variables: Sequence[str] | None = None) -> dict[str, Path]:
    """Write every report file into ``directory``; returns ``{file name: path}``.

    ``networks`` (default ``result_json["networks"]``) gives the best network for
    ``best_network.dot``/``.graphml``; ``variables`` defaults to ``result_json["variables"]``.
    """
    if not isinstance(result_json, Mapping) or (variables is None and not isinstance(result_json.get("variables"),
                                                                                    list)):
        raise InputError(f"result_json must be a result's report (LearnResult.report), got "
                         f"{type(result_json).__name__}" + (" without variables (give variables=)"
                                                            if isinstance(result_json, Mapping) else ""))
    folder = Path(directory)
    check_writable(folder, folder=True)
    with output_set() as outputs:           # every file or none (and no folder made for none)
        outputs.make_folder(folder)
        written = _write_report_files(folder, result_json, networks, variables)
        _retire_others(outputs, folder, written)
        return written


def _retire_others(outputs: Any, folder: Path, written: Mapping[str, Path]) -> None:
    """The report files of :data:`REPORT_FOLDER_FILES` that this report does not write removed from ``folder`` once
    it is in place: a folder reused by ``learn`` after ``count`` (or the reverse, or by a run that found no network
    for ``best_network.*``) kept the other run's files beside the new ones, unmarked (a review)."""
    for name in REPORT_FOLDER_FILES:
        if name not in written:
            outputs.retire(folder / name)


def _write_report_files(folder: Path, result_json: Mapping[str, Any], networks: Sequence[Any] | None,
                        variables: Sequence[str] | None) -> dict[str, Path]:
    variables = list(variables) if variables is not None else list(result_json["variables"])
    missing = sorted({e[k] for e in result_json.get("edges") or [] for k in ("from", "to")} - set(variables))
    if missing:
        raise InputError(f"variables lacks {missing[0]!r}, which the report's edges name")
    r = dict(result_json)
    r["variables"] = variables
    written: dict[str, Path] = {}

    def put(name: str, text: str) -> None:
        atomic_write_text(folder / name, text)
        written[name] = folder / name

    put("edges.csv", _edges_csv(r, variables))
    mecs = r.get("mecs") or []
    classes = pd.DataFrame({
        "rank": list(range(1, len(mecs) + 1)),
        "score": [m["score"] for m in mecs],
        "ln_bf": [m["ln_bf"] for m in mecs],
        "bf": [bayes_factor(m["ln_bf"]) for m in mecs],        # empty where e^ε overflows (as JSON's null)
        "n_dags": [m["n_dags"] for m in mecs],
        "class_size": [m.get("class_size") for m in mecs],
        "posterior": [m["posterior"] for m in mecs],
        # the class as reported: under background knowledge its PDAG (its DAGs that satisfy it), as the JSON's
        # "pdag", class_size and best_cpdag.dot
        "n_directed": [len((m.get("pdag") or m["cpdag"])["directed"]) for m in mecs],
        "n_undirected": [len((m.get("pdag") or m["cpdag"])["undirected"]) for m in mecs],
    })
    put("mecs.csv", _marked(classes, r).to_csv(index=False, lineterminator="\n"))
    put("networks.json", json.dumps(strict_json(r), default=_json_default, allow_nan=False) + "\n")
    caveat = best_network_caveat(r)
    if mecs:
        put("best_cpdag.dot", _cpdag_dot(mecs[0], variables, caveat))
    nets = network_items(networks if networks is not None else r.get("networks") or [])
    if nets:
        best = max(range(len(nets)), key=lambda k: nets[k][0])
        write_dot(nets[best][1], folder / "best_network.dot", caveat)
        write_graphml(nets[best][1], folder / "best_network.graphml", caveat)
        written["best_network.dot"] = folder / "best_network.dot"
        written["best_network.graphml"] = folder / "best_network.graphml"
    _write_averaged(folder, r, variables, put, written)
    return written


def _edges_csv(r: Mapping[str, Any], variables: list[str]) -> str:
    """``edges.csv``: each pair's P(u → v), P(u — v) and P(u — v undirected), most probable first; every row marked
    where the posteriors are over the networks found only (``incomplete``) or within limits (``limited``)."""
    d = _matrix(r.get("edges") or [], variables)
    und = np.zeros_like(d)
    rank = {v: i for i, v in enumerate(variables)}
    for e in r.get("adjacency") or []:
        i, j = rank[e["u"]], rank[e["v"]]
        und[i, j] = und[j, i] = float(e.get("undirected_posterior", 0.0))
    # the JSON's adjacency (1 exactly where every network holds the pair: posterior_lists); a mapping without one
    # (an older JSON, a hand-made report) from the arrows, as before
    a = adjacency_posteriors(pd.DataFrame(d, index=variables, columns=variables)).to_numpy().copy()
    for e in r.get("adjacency") or []:
        i, j = rank[e["u"]], rank[e["v"]]
        a[i, j] = a[j, i] = float(e["posterior"])
    rows = [(variables[i], variables[j], d[i, j], a[i, j], und[i, j])
            for i in range(len(variables)) for j in range(len(variables)) if i != j and a[i, j] > 0]
    rows.sort(key=lambda t: (-t[2], -t[3], rank[t[0]], rank[t[1]]))
    frame = pd.DataFrame(rows, columns=["from", "to", "directed_posterior", "adjacency_posterior",
                                        "undirected_posterior"])
    if r.get("knowledge"):
        required, forbidden = _known(r)
        frame["knowledge"] = ["required" if (u, v) in required else "" for u, v in zip(frame["from"], frame["to"],
                                                                                          strict=True)]
    cut, limited = _cut_short(r), _limited(r)
    if cut is not None:                 # every row says so: the posteriors are over the networks found
        frame["incomplete"] = cut
    if limited is not None:             # ... or exact only within these limits (palim, knowledge_pruning, …)
        frame["limited"] = limited
    return frame.to_csv(index=False, lineterminator="\n")


def _marked(table: pd.DataFrame, r: Mapping[str, Any]) -> pd.DataFrame:
    """A class table with columns ``incomplete`` (a capped class list is cut even where the posteriors are whole)
    and ``limited``, on every row, where they apply."""
    cut, limited = _cut_short(r, table=True), _limited(r)
    if cut is not None:
        table["incomplete"] = cut
    if limited is not None:
        table["limited"] = limited
    return table


def _write_averaged(folder: Path, r: Mapping[str, Any], variables: list[str], put: Any,
                    written: dict[str, Path]) -> None:
    """``averaged.dot``, ``heatmap.png`` and ``averaged.png`` of a report's edge posteriors."""
    put("averaged.dot", _averaged_dot(r.get("edges") or [], variables, r))
    plot_heatmap(r, folder / "heatmap.png")
    written["heatmap.png"] = folder / "heatmap.png"
    plot_averaged(r, folder / "averaged.png")
    written["averaged.png"] = folder / "averaged.png"


def write_count_report(directory: str | os.PathLike[str], count_json: Mapping[str, Any]) -> dict[str, Path]:
    """``bnilp count --report DIR``: ``edges.csv``, ``averaged.dot``, ``heatmap.png`` and ``averaged.png`` from a
    count's edge posteriors (as :func:`write_report` writes them), ``groups.csv`` — its class table by groups
    (:func:`bnilp.twins.class_groups`; the smallest and largest class of each where the sizes were counted) — and
    ``count.json``, the count's JSON; every file or none. Returns ``{file name: path}``."""
    if not isinstance(count_json, Mapping) or not isinstance(count_json.get("variables"), list):
        raise InputError("count_json must be bnilp count's JSON (with its variables, since 2026-12-07), got "
                         f"{type(count_json).__name__}" + (" without variables" if isinstance(count_json, Mapping)
                                                           else ""))
    variables = list(count_json["variables"])
    missing = sorted({e[k] for e in count_json.get("edges") or [] for k in ("from", "to")} - set(variables))
    if missing:
        raise InputError(f"count_json's variables lack {missing[0]!r}, which its edges name")
    folder = Path(directory)
    check_writable(folder, folder=True)
    r = dict(count_json)
    written: dict[str, Path] = {}

    def put(name: str, text: str) -> None:
        atomic_write_text(folder / name, text)
        written[name] = folder / name

    groups = r.get("groups") or []
    table = pd.DataFrame({
        "rank": list(range(1, len(groups) + 1)),
        "score": [g["score"] for g in groups],
        "ln_bf": [g["ln_bf"] for g in groups],
        "bf": [bayes_factor(g["ln_bf"]) for g in groups],
        "n_mecs": [g["n_mecs"] for g in groups],
        "n_dags": [g["n_dags"] for g in groups],
        "smallest_class": [g["class_sizes"][0][0] if g["class_sizes"] else None for g in groups],
        "largest_class": [g["class_sizes"][-1][0] if g["class_sizes"] else None for g in groups],
        "posterior": [g["posterior"] for g in groups],
    }, dtype=object)
    with output_set() as outputs:
        outputs.make_folder(folder)
        put("edges.csv", _edges_csv(r, variables))
        put("groups.csv", _marked(table, r).to_csv(index=False, lineterminator="\n"))
        put("count.json", json.dumps(strict_json(r), default=_json_default, allow_nan=False, indent=1) + "\n")
        _write_averaged(folder, r, variables, put, written)
        _retire_others(outputs, folder, written)
    return written


#: the files :func:`write_report` may write into its directory
REPORT_FILES = ("edges.csv", "mecs.csv", "networks.json", "best_cpdag.dot", "averaged.dot", "best_network.dot",
                "best_network.graphml", "heatmap.png", "averaged.png")
#: the files :func:`write_count_report` writes into its directory
COUNT_REPORT_FILES = ("edges.csv", "groups.csv", "count.json", "averaged.dot", "heatmap.png", "averaged.png")
#: every file a report folder may hold (:func:`write_report`'s and :func:`write_count_report`'s): those a report does
#: not write are removed from its folder, so that it holds one run's report
REPORT_FOLDER_FILES = tuple(dict.fromkeys(REPORT_FILES + COUNT_REPORT_FILES))


def _json_default(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    raise TypeError(f"{type(x).__name__} is not JSON serialisable")
