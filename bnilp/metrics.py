"""Accuracy of a learned graph against the true one (Andrews, Ramsey & Cooper §6, slides).

A graph is compared as a set of *adjacencies* (unordered pairs {u, v}) and a set of *arrowheads*
(ordered pairs (u, v) meaning "an arrowhead at v on the edge u–v"): a directed edge u → v has the
single arrowhead (u, v); an undirected edge u — v (a CPDAG's reversible edge, or an averaged graph
whose orientation is undecided) has none. With L the learned and T the true graph (seed §6):

- AP  (adjacency precision) = |adj(L) ∩ adj(T)| / |adj(L)|       correct adjacencies / predicted
- AR  (adjacency recall)    = |adj(L) ∩ adj(T)| / |adj(T)|       correct adjacencies / true
- AHP (arrowhead precision) = |ah(L) ∩ ah(T)| / |ah(L)|          correct arrowheads / predicted
- AHR (arrowhead recall)    = |ah(L) ∩ ah(T)| / |{(u, v) ∈ ah(T) : {u, v} ∈ adj(L)}|
  correct arrowheads / true arrowheads *in found adjacencies* (the seed's definition);
  ``AHR_all`` divides by every true arrowhead, |ah(T)|, instead.
- skeleton F1 = 2·AP·AR / (AP + AR) = 2·TP / (2·TP + FP + FN) on adjacencies.
- SHD (structural Hamming distance) = missing + extra adjacencies + common adjacencies whose
  marks differ. Between DAGs that is missing + extra + reversed edges; between CPDAGs (Tsamardinos
  et al. 2006) a directed/undirected mismatch also counts one.

A ratio with a zero denominator is undefined and reported as NaN (``null`` in JSON).
:func:`compare_graphs` compares DAG with DAG, or (``cpdag=True``) the CPDAGs of both DAGs
(:func:`bnilp.mec.cpdag_edges`), which scores only what the data can identify.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from bnilp.errors import InputError, check_flag, listed_names
from bnilp.graphs import check_acyclic
from bnilp.inputs import read_input_text

Parents = Mapping[str, Iterable[str]]


@dataclass(frozen=True)
class MarkedGraph:
    """A graph as nodes, adjacencies {u, v} and arrowheads (u, v) = "arrowhead at v on u–v"."""

    nodes: frozenset[str]
    adjacencies: frozenset[frozenset[str]]
    arrowheads: frozenset[tuple[str, str]]


def checked_parents(parents: Parents, what: str) -> dict[str, frozenset[str]]:
    """``parents`` (each variable → a list of its parents) as frozensets, checked: a mapping whose values are
    lists of names (a string or a mapping is refused: its letters or keys are no parents — ``{"a": false}`` was
    read as the edge a → b), no parent listed twice, every parent a
    variable (a key), none its own parent; else an :class:`InputError` beginning with ``what``. A
    ``networkx.DiGraph`` (``LearnResult.best_graph()``) is read as its nodes' predecessors."""
    if isinstance(parents, nx.DiGraph) and not parents.is_multigraph():
        parents = {v: list(parents.predecessors(v)) for v in parents.nodes}
    if not isinstance(parents, Mapping):
        raise InputError(f"{what}: 'parents' must map each variable to a list of parents")
    out: dict[str, frozenset[str]] = {}
    for child, ps in parents.items():
        if isinstance(ps, (str, Mapping)) or not isinstance(ps, Iterable):
            raise InputError(f"{what}: parents of {child!r} must be a list of variable names")
        listed = [str(p) for p in ps]
        twice = next((p for i, p in enumerate(listed) if p in listed[:i]), None)
        if twice is not None:               # a hand-written file's slip: the graph would silently drop it
            raise InputError(f"{what}: {twice!r} is listed twice among the parents of {child!r}")
        out[str(child)] = frozenset(listed)
    for child, ps in out.items():
        unknown = sorted(ps - out.keys())
        if unknown:
            raise InputError(f"{what}: parent {unknown[0]!r} of {child!r} is not a variable of the graph")
        if child in ps:
            raise InputError(f"{what}: {child!r} is its own parent")
    return out


def dag_graph(parents: Parents, what: str = "graph") -> MarkedGraph:
    """Every edge p → c of the parent map with its arrowhead at c; a cycle is an :class:`InputError`."""
    pa = checked_parents(parents, what)
    directed = {(p, c) for c, ps in pa.items() for p in ps}
    both = {frozenset(e) for e in directed if (e[1], e[0]) in directed}
    if both:
        u, v = sorted(next(iter(both)))
        raise InputError(f"{what}: {u!r} and {v!r} are each other's parents")
    check_acyclic(pa, what, "the metrics compare DAGs")
    return MarkedGraph(frozenset(pa), frozenset(frozenset(e) for e in directed), frozenset(directed))


def cpdag_graph(parents: Parents, what: str = "graph") -> MarkedGraph:
    """The CPDAG of a DAG: compelled edges keep their arrowhead, reversible ones have none."""
    from bnilp.mec import cpdag_edges

    pa = checked_parents(parents, what)
    check_acyclic(pa, what, "a CPDAG needs a DAG")
    directed, undirected = cpdag_edges(pa)
    adj = {frozenset(e) for e in directed} | set(undirected)
    return MarkedGraph(frozenset(pa), frozenset(adj), frozenset(directed))


def _ratio(num: int, den: int) -> float:
    return num / den if den else math.nan


def compare_marked(learned: MarkedGraph, true: MarkedGraph) -> dict[str, Any]:
    """AP, AR, AHP, AHR, AHR_all, skeleton F1, SHD and the counts behind them (module docstring)."""
    if learned.nodes != true.nodes:
        only_l = sorted(learned.nodes - true.nodes)
        only_t = sorted(true.nodes - learned.nodes)
        parts = []
        if only_l:
            parts.append(f"only in the learned graph: {listed_names(only_l, 5)}")
        if only_t:
            parts.append(f"only in the true graph: {listed_names(only_t, 5)}")
        raise InputError("the learned and true graphs have different variables (" + "; ".join(parts) + ")")
    common = learned.adjacencies & true.adjacencies
    tp, fp, fn = len(common), len(learned.adjacencies - common), len(true.adjacencies - common)
    ah_correct = len(learned.arrowheads & true.arrowheads)
    ah_true_found = sum(1 for u, v in true.arrowheads if frozenset((u, v)) in learned.adjacencies)

    def marks(g: MarkedGraph, e: frozenset[str]) -> frozenset[tuple[str, str]]:
        u, v = tuple(e)
        return frozenset(a for a in ((u, v), (v, u)) if a in g.arrowheads)

    mismatched = reversed_ = 0
    for e in common:
        ml, mt = marks(learned, e), marks(true, e)
        if ml != mt:
            mismatched += 1
            if len(ml) == 1 and len(mt) == 1:
                reversed_ += 1
    ap, ar = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return {
        "AP": ap,
        "AR": ar,
        "AHP": _ratio(ah_correct, len(learned.arrowheads)),
        "AHR": _ratio(ah_correct, ah_true_found),
        "AHR_all": _ratio(ah_correct, len(true.arrowheads)),
        "skeleton_F1": _ratio(2 * tp, 2 * tp + fp + fn),
        "SHD": fn + fp + mismatched,
        "adjacencies": {"true_positive": tp, "false_positive": fp, "false_negative": fn},
        "arrowheads": {"correct": ah_correct, "predicted": len(learned.arrowheads),
                       "true": len(true.arrowheads), "true_in_found_adjacencies": ah_true_found},
        "missing": fn,
        "extra": fp,
        "reversed": reversed_,
        "mark_mismatch": mismatched,
        "n_variables": len(true.nodes),
        "n_learned_adjacencies": len(learned.adjacencies),
        "n_true_adjacencies": len(true.adjacencies),
    }


def compare_graphs(learned_parents: Parents, true_parents: Parents, *, cpdag: bool = False) -> dict[str, Any]:
    """Compare a learned DAG with the true DAG (both as ``{variable: [parents]}``, every variable a
    key, or as ``networkx.DiGraph`` — what ``LearnResult.best_graph()`` returns). ``cpdag=True`` compares their
    CPDAGs instead. Returns :func:`compare_marked`'s dict with
    ``"mode"`` (``"dag"`` or ``"cpdag"``) added."""
    build = cpdag_graph if check_flag(cpdag, "cpdag") else dag_graph
    out = compare_marked(build(learned_parents, "learned graph"), build(true_parents, "true graph"))
    out["mode"] = "cpdag" if cpdag else "dag"
    return out


#: rounding allowed when posteriors are compared with a threshold T, relative to T (THRESHOLD_TOL · T)
THRESHOLD_TOL = 1e-9


def thresholded_graph(edges: Iterable[Mapping[str, Any]], nodes: Iterable[str], threshold: float,
                      what: str = "edges") -> MarkedGraph:
    """The posterior-averaged graph of ``[{"from", "to", "posterior"}, ...]``.

    The adjacency {u, v} is present when p(u → v) + p(v → u) ≥ ``threshold``; it is directed
    u → v when moreover p(u → v) ≥ threshold > p(v → u), and undirected (no arrowhead) otherwise. The
    comparisons allow :data:`THRESHOLD_TOL` · threshold of rounding (0.7 + 0.2 is 0.8999999999999999 in floating
    point); relative, so that a threshold of 1e-10 is not read as 0 (an absolute 1e-9 was; a review).
    """
    if not (math.isfinite(threshold) and 0 < threshold <= 1):
        raise InputError(f"threshold (--edges-threshold) must lie in (0, 1], got {threshold}")
    node_set = frozenset(str(v) for v in nodes)
    post: dict[tuple[str, str], float] = {}
    for k, e in enumerate(edges):
        try:
            u, v, p = str(e["from"]), str(e["to"]), e["posterior"]
        except (KeyError, TypeError):
            raise InputError(f"{what}: entry {k} needs 'from', 'to' and a numeric 'posterior'") from None
        if isinstance(p, bool) or not isinstance(p, numbers.Real):     # "0.8" and true were read as numbers
            raise InputError(f"{what}: entry {k} needs a numeric 'posterior', got {p!r}")
        p = float(p)
        if u == v:
            raise InputError(f"{what}: entry {k} is an edge from {u!r} to itself")
        for x in (u, v):
            if x not in node_set:
                raise InputError(f"{what}: entry {k} names {x!r}, which is not a variable of the result")
        if not (0.0 <= p <= 1.0 + 1e-9):
            raise InputError(f"{what}: entry {k} has posterior {p} outside [0, 1]")
        if (u, v) in post:
            raise InputError(f"{what}: entry {k} repeats the edge {u} → {v}")
        post[(u, v)] = p
    for (u, v), p in post.items():          # one DAG holds at most one of u → v, v → u
        if u < v and p + post.get((v, u), 0.0) > 1.0 + 1e-9:
            raise InputError(f"{what}: the posteriors of {u} → {v} and {v} → {u} add up to "
                             f"{p + post[(v, u)]:.6g}, more than 1")
    adj, heads = set(), set()
    reached = threshold * (1.0 - THRESHOLD_TOL)
    for (u, v), p in post.items():
        back = post.get((v, u), 0.0)
        if p + back >= reached:
            adj.add(frozenset((u, v)))
            if p >= reached and back < reached:
                heads.add((u, v))
    return MarkedGraph(node_set, frozenset(adj), frozenset(heads))


def read_json(path: str | Path, what: str) -> Any:
    """A JSON file, with every failure as an :class:`InputError` naming the file."""
    return _json_of(_read_text(path, what), path)


def _read_text(path: str | Path, what: str) -> str:
    """A text file's contents, a missing or unreadable one an :class:`InputError` naming it and ``what`` it is; a
    UTF-8 byte-order mark (Windows editors write one) is not part of it, as for the data and knowledge files."""
    try:
        return read_input_text(path, "utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from None


def _json_of(text: str, path: str | Path) -> Any:
    """``text`` (read from ``path``) as JSON, each failure an :class:`InputError` naming the place."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:           # e.g. an integer past Python's 4,300-digit conversion limit
        raise InputError(f"{path}: not usable JSON ({exc})") from None
    except RecursionError:              # arrays or objects nested ~1,000 deep
        raise InputError(f"{path}: not usable JSON (nested too deeply)") from None


#: the first line of a graph in Tetrad's text format (``GraphSaveLoadUtils``' text graphs, the truth graphs of
#: Tetrad's simulations)
TETRAD_HEADER = "Graph Nodes:"
#: an edge line of Tetrad's text format: ``7. X1 --> X2`` (any words after the second node — Tetrad's edge
#: properties — are left aside)
_TETRAD_EDGE = re.compile(r"\s*\d+\.\s*(\S+)\s+(\S{3})\s+(\S+)(\s.*)?")


def is_tetrad_graph(text: str) -> bool:
    """Whether ``text`` is a graph in Tetrad's text format: a line ``Graph Nodes:`` in a text that is no JSON (whose
    first character is ``{`` or ``[``); lines before it — what causal-cmd writes above a graph — are left aside,
    as Tetrad's reader leaves them."""
    body = text.lstrip("\ufeff").lstrip()
    if body[:1] in ("{", "["):
        return False
    return any(line.strip() == TETRAD_HEADER for line in body.splitlines())


def parse_tetrad_graph(text: str, where: str) -> tuple[list[str], set[tuple[str, str]], set[frozenset[str]]]:
    """A graph in Tetrad's text format (``Graph Nodes:``, a line of names separated by ``;`` — or ``,`` in older
    files —, ``Graph Edges:``, then numbered edges ``1. X1 --> X2``; a later section such as ``Graph
    Attributes:`` ends the edges; lines before ``Graph Nodes:`` are left aside) → (nodes in order, directed edges
    (u, v), undirected edges {u, v}). A node written ``(L)`` (latent) or ``[S]`` (selection) is named ``L``, ``S``.
    ``-->`` and ``<--`` are directed, ``---`` undirected (a CPDAG's reversible edge), ``...`` (null endpoints: a
    bootstrap's "no edge") no edge; bidirected and circle marks (``<->``, ``o->``, ``o-o``: PAGs, ADMGs) are no
    DAG's nor CPDAG's and are an :class:`InputError`, as is an unknown node, a self-loop, a pair given two edges,
    or a line that is no edge — each naming ``where:line``."""
    lines = text.lstrip("\ufeff").splitlines()
    pos = next((i for i, line in enumerate(lines) if line.strip() == TETRAD_HEADER), None)
    if pos is None:
        raise InputError(f"{where}: no {TETRAD_HEADER!r} line (a graph in Tetrad's text format)")
    rest = [(i + 1, line) for i, line in enumerate(lines) if i > pos and line.strip()]
    if not rest:
        raise InputError(f"{where}:{pos + 1}: {TETRAD_HEADER} is followed by no line of node names")
    at, names = rest[0]
    nodes = [_tetrad_name(n) for n in re.split(r"[;,]", names) if n.strip()]
    if len(set(nodes)) != len(nodes):
        twice = next(n for n in nodes if nodes.count(n) > 1)
        raise InputError(f"{where}:{at}: node {twice!r} is listed twice")
    if len(rest) < 2 or rest[1][1].strip() != "Graph Edges:":
        line_no = rest[1][0] if len(rest) > 1 else at
        raise InputError(f"{where}:{line_no}: expected 'Graph Edges:' after the line of node names")
    known, seen = set(nodes), set()
    directed: set[tuple[str, str]] = set()
    undirected: set[frozenset[str]] = set()
    for line_no, line in rest[2:]:
        match = _TETRAD_EDGE.fullmatch(line)
        if match is None:
            if line.strip().endswith(":"):      # the next section (attributes, triples): the edges are over
                break
            raise InputError(f"{where}:{line_no}: expected an edge 'N. A --> B', found {line.strip()!r}")
        a, mark, b = match.group(1), match.group(2), match.group(3)
        if mark == "...":                        # null endpoints: a bootstrap graph's "[no edge]"
            continue
        for name in (a, b):
            if name not in known:
                raise InputError(f"{where}:{line_no}: node {name!r} is not in the {TETRAD_HEADER} line")
        if a == b:
            raise InputError(f"{where}:{line_no}: an edge from {a!r} to itself")
        pair = frozenset((a, b))
        if pair in seen:
            raise InputError(f"{where}:{line_no}: a second edge between {a!r} and {b!r}")
        seen.add(pair)
        if mark == "-->":
            directed.add((a, b))
        elif mark == "<--":
            directed.add((b, a))
        elif mark == "---":
            undirected.add(pair)
        else:
            raise InputError(f"{where}:{line_no}: edge mark {mark!r}: only directed (-->) and undirected (---) "
                             "edges are read (a DAG or a CPDAG; bidirected and circle marks belong to ADMGs and PAGs)")
    return nodes, directed, undirected


#: a node name Tetrad's text format holds: no space, no separator of its node list, not marked latent or selection
_TETRAD_NAME = re.compile(r"[^\s;,]+")


def check_tetrad_names(names: Iterable[str], where: str = "names") -> None:
    """An :class:`InputError` naming the first of ``names`` that Tetrad's text format cannot hold — it has no
    quoting: a space or line break ends a name in an edge line, ``;`` and ``,`` separate the node list, a name in
    ``(…)`` or ``[…]`` reads as a latent or selection node, and one ending in ``:`` as a section's header (causal-learn
    reads a line whose second word is ``Nodes:`` as the node list's) — or an empty one."""
    for name in names:
        if not _TETRAD_NAME.fullmatch(name) or name[0] + name[-1] in ("()", "[]") or name.endswith(":"):
            raise InputError(f"{where}: variable {name!r} cannot be written in Tetrad's text format (it has no "
                             "quoting: a name with a space, ';' or ',', one in (…) or […] — a latent or selection "
                             "node —, or one ending in ':' — a section's header to line-based readers such as "
                             "causal-learn's — reads back as something else); rename the column")


def tetrad_graph_text(parents: Mapping[str, Iterable[str]], undirected: Iterable[Iterable[str]] = (),
                      caveat: str | None = None) -> str:
    """A graph in Tetrad's text format, as Tetrad writes its graphs and :func:`parse_tetrad_graph` reads them:
    ``Graph Nodes:``, the names in the order of ``parents`` joined by ``;``, a blank line, ``Graph Edges:`` and one
    numbered line per edge — ``1. u --> v`` for each parent u of v, ``u --- v`` for each undirected pair (a CPDAG's
    reversible edge) — sorted by the names (Tetrad writes them in its graph's order; its graph20_1.txt, sorted,
    comes back byte for byte), then a blank line; a ``caveat`` (:func:`bnilp.report.best_network_caveat`) follows in
    a ``Graph Attributes:`` section, as Tetrad writes a graph's score there. Names Tetrad's format cannot hold are
    an :class:`InputError` (:func:`check_tetrad_names`), as are parents or undirected edges that are not pairs of
    its variables."""
    parents = checked_parents(parents, "parents")
    if not parents:
        raise InputError("parents: a graph with no variables (Tetrad's text format needs a node)")
    check_tetrad_names(parents, "parents")
    mutual = next(((p, v) for v, ps in parents.items() for p in ps if v in parents[p]), None)
    if mutual is not None:
        raise InputError(f"parents: {mutual[0]!r} and {mutual[1]!r} are each other's parents (one edge a pair)")
    given = [e if isinstance(e, str) else tuple(sorted(map(str, e))) for e in undirected]
    arrows = {frozenset((p, v)) for v, ps in parents.items() for p in ps}
    seen: set[tuple[str, ...]] = set()
    for e in given:
        if (isinstance(e, str) or len(e) != 2 or e[0] == e[1] or not set(e) <= parents.keys()
                or frozenset(e) in arrows or e in seen):
            raise InputError(f"undirected: {e!r} is not a pair of two of the graph's variables with no other edge "
                             "between them")
        seen.add(e)
    pairs = sorted(seen)
    edges = sorted((p, "-->", v) for v, ps in parents.items() for p in ps)
    edges += [(u, "---", v) for u, v in pairs]
    names = list(parents)
    lines = [TETRAD_HEADER, ";".join(names), "", "Graph Edges:"]
    lines += [f"{k}. {u} {mark} {v}" for k, (u, mark, v) in enumerate(edges, start=1)]
    if caveat:
        lines += ["", "Graph Attributes:", f"bnilp: {caveat}"]
    return "\n".join(lines) + "\n\n"


def _tetrad_name(text: str) -> str:
    """A node's name in Tetrad's list of nodes: ``(L)`` (a latent) and ``[S]`` (a selection variable) are ``L`` and
    ``S``, as Tetrad's reader takes them."""
    name = text.strip()
    if len(name) > 2 and (name[0], name[-1]) in (("(", ")"), ("[", "]")):
        return name[1:-1]
    return name


def read_graph_or_json(path: str | Path, what: str) -> Any:
    """A result or truth JSON (:func:`read_json`), or a graph in Tetrad's text format (:func:`is_tetrad_graph`),
    returned as ``{"parents": …}`` where every edge is directed and as ``{"parents": …, "undirected": [[u, v],
    …]}`` (the parents of the directed edges alone) where some are not (a CPDAG, e.g. Tetrad's fGES output)."""
    text = _read_text(path, what)      # once: a pipe (<(…)) gives its text to one read only
    if not is_tetrad_graph(text):
        return _json_of(text, path)
    nodes, directed, undirected = parse_tetrad_graph(text, str(path))
    parents: dict[str, list[str]] = {v: [] for v in nodes}
    for u, v in sorted(directed):
        parents[v].append(u)
    obj: dict[str, Any] = {"parents": parents}
    if undirected:
        obj["undirected"] = sorted(sorted(pair) for pair in undirected)
    return obj


def pattern_graph(obj: Mapping[str, Any], where: str) -> MarkedGraph:
    """A graph given with undirected edges (:func:`read_graph_or_json`) as it stands: its directed edges keep their
    arrowheads, its undirected ones have none — a CPDAG to compare with others (``--cpdag``); its directed part
    must be acyclic."""
    pa = checked_parents(obj.get("parents"), where)
    check_acyclic(pa, where, "a CPDAG's directed edges hold no cycle")
    directed = {(p, c) for c, ps in pa.items() for p in ps}
    undirected = checked_undirected(obj["undirected"], pa.keys(), where)
    clash = undirected & {frozenset(e) for e in directed}
    if clash:
        u, v = sorted(next(iter(clash)))
        raise InputError(f"{where}: {u!r} and {v!r} are joined by a directed and an undirected edge")
    return MarkedGraph(frozenset(pa), frozenset({frozenset(e) for e in directed} | undirected), frozenset(directed))


def checked_undirected(edges: Any, nodes: Iterable[str], what: str) -> set[frozenset[str]]:
    """A graph's ``undirected`` edges — a list of [u, v] pairs of two of its ``nodes`` — as a set of pairs,
    checked as :func:`checked_parents` checks ``parents`` (a review: ``null`` was a traceback, ``[["a", "zz"]]`` an
    extra adjacency to a node the graph lacks, ``"ab"`` two one-node "edges", all compared with exit 0)."""
    if isinstance(edges, (str, Mapping)) or not isinstance(edges, Iterable):
        raise InputError(f"{what}: 'undirected' must be a list of [u, v] pairs of variables")
    known, out = set(nodes), set()
    for k, e in enumerate(edges):
        if isinstance(e, (str, Mapping)) or not isinstance(e, Iterable) or len(pair := [str(x) for x in e]) != 2:
            raise InputError(f"{what}: undirected edge {k} must be a pair [u, v] of variables, got {e!r}")
        unknown = [x for x in pair if x not in known]
        if unknown:
            raise InputError(f"{what}: undirected edge {k} names {unknown[0]!r}, which is not a variable of the graph")
        if pair[0] == pair[1]:
            raise InputError(f"{what}: undirected edge {k} joins {pair[0]!r} to itself")
        if frozenset(pair) in out:
            raise InputError(f"{what}: undirected edge {k} repeats {pair[0]!r} — {pair[1]!r}")
        out.add(frozenset(pair))
    return out


def parents_of_result(obj: Any, where: str) -> dict[str, list[str]]:
    """``parents`` of a truth / learned result: top-level ``"parents"``, else ``networks[0]``."""
    if isinstance(obj, Mapping):
        if "parents" in obj:
            parents = obj["parents"]
        elif isinstance(obj.get("networks"), list) and obj["networks"] \
                and isinstance(obj["networks"][0], Mapping) and "parents" in obj["networks"][0]:
            parents = obj["networks"][0]["parents"]
        else:
            raise InputError(f"{where}: no 'parents' object (nor 'networks'[0].parents)")
    else:
        raise InputError(f"{where}: expected a JSON object with 'parents'")
    checked = checked_parents(parents, where)
    return {c: sorted(ps) for c, ps in checked.items()}
