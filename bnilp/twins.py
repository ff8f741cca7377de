"""Identical columns (*twins*): the credible set counted from a table without them, DAGs and classes.

Two identical columns a ≡ b make a credible set vast without making it interesting: a child of a may as
well be a child of b (the same counts, so the same score), and each such choice is another DAG and —
its skeleton differs — another Markov equivalence class. hailfinder500 has three such pairs: at BF 3 its
891,813,888 credible DAGs lie in 1,966,080 classes, which branch-and-cut lists one by one in 28 minutes,
yet they are the expansions of 2,016 DAGs (6 classes) of the table with one column of each pair merged.
This module counts the credible set that way. It is exact, by the two results below, and it applies only
where the table itself proves their conditions (a pair that fails them is left as it is).

**The conditions** (:func:`twin_pairs`; ``s_x(F)`` a family score, δ = ε + the solver's tie tolerance, so the
credible line is OPT − δ): for variables a, b

- (T1) every other child's families are symmetric — (c, P ∪ {b}) is in the table iff (c, P ∪ {a}) is,
  with the same score — and any family holding both twins scores more than δ below its subset without b;
- (T2) a and b have the same families without each other, with the same scores, and s_a({b}) = s_b({a});
- (T3) every other family of a scores more than δ below s_a({b}) (and so for b).

Identical columns give T1 and T2 for any score computed from counts (scores compared to
:data:`~bnilp.ilp.settings.SYMMETRY_RTOL` = 10⁻¹² relative, as the table's symmetries are: the counting kernel
can sum a family's cells in another order than its image's; so a DAG whose score lies within ~10⁻¹² relative
of the credible line can be counted with its image's, where the tie tolerance is 10⁻⁹ relative); T3 says the
twin explains the other far better than anything else, which the data decide.

**Regularity** (under T1–T3). In every DAG G with score ≥ OPT − δ exactly one twin, U, is the parent of the
other, L, and pa(L) = {U}; no other child has both. Proof: a child c with both twins would gain more than
δ by dropping b (a subset: still acyclic), so G would score above OPT. If a's family F holds b and F ≠ {b},
the family {b} (a subset) gains more than δ. If neither holds the other, one twin x is not an ancestor of
the other y (G is acyclic); giving x the family {y} keeps G acyclic and gains more than δ (T3).

**The reduction** (:func:`reduce_twins`). Let R be the table on V − {b}: a keeps its families F without b, scored
s_a(F) + s_a({b}) (the lower twin's family added, so that R's scores are the table's and the credible line, tie
tolerance included, is the same), every other child its families without b (with T1 those with b are copies of those
with a; those with both are not credible). The map φ contracting U → L into a (U's family for a, every child of U or
L a child of a) is a bijection between the regular DAGs on V and the pairs (G', expansion) with G' a DAG of R and an
expansion a choice of U ∈ {a, b} and, for each child of a in G', of U or L as its parent; no expansion has a cycle
(a cycle through L enters it from U, so it contracts to a cycle of G'), and each scores score_R(G') (T1, T2). So the
credible DAGs of the table are the expansions of the credible DAGs of R (the same ε and OPT), 2^(1 + |ch_{G'}(a)|)
of each; for several disjoint pairs, reduced one after the other, the product over the pairs.

**Classes** (:func:`expand_class`). Expansions of DAGs of one class K' of R fall in classes of their own,
distinct for distinct K' (φ maps a class into one class: contraction keeps the skeleton's adjacencies and
each collider with a twin is a class invariant). An expansion's skeleton is S' with each edge at a merged
node a_p attached to one twin — an *attachment* α_p(w) ∈ {a_p, b_p} for each neighbour w of a_p in S' —
and α is read off the expansion's skeleton, so classes with different attachments differ. The parents of a_p are
all attached to U_p (α constant on pa_{G'}(a_p); the expansion's U is then that twin, or either where a_p
has no parent — two DAGs, one covered edge apart). Colliders: every collider u' → z' ← v' of K' lifts to
one of the expansion (non-adjacent images, non-adjacent twins); a *shielded* triple of G' with a merged
node among u', v' lifts to a collider exactly when the lifted edge u'–v' misses one of the two twins that
are z's parents (u' = a_p: when α_p(z') ≠ α_p(v')). So the class of an expansion of G' with attachment α is
(K', α, D_{G'}(α)), D the set of G''s shielded triples that lift to colliders: the classes of R's class K'
are the distinct (α, D_{G'}(α)) over G' ∈ K' and the α each admits, and a class holds, for each G' that
gives it, one DAG, or two where a_p has no parent in G'.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from bnilp.errors import InputError, LimitError, UnsoundTableError, check_real
from bnilp.ilp.settings import SYMMETRY_RTOL
from bnilp.mec import count_admitted, count_dags_in_mec, cpdag_edges, dags_in_mec, directed_fractions
from bnilp.scorefile import ScoreTable, check_is_table, exact_up_to
from bnilp.scores.base import score_equivalent, tie_tolerance

#: the most orientations around the merged twins one class of the reduced table may have: each is listed to count
#: the classes it expands to
MAX_DAGS_PER_CLASS = 1_000_000
#: the most attachments varied at once for one class (2^k rows of a table of k columns): past it, not counted
MAX_VARIED_ATTACHMENTS = 22
#: the share of ``time_limit`` (what is left of it after the reduction) that the listing of R's classes may use: the
#: rest is kept for counting what it listed, so that a listing cut by the limit still gives counts (lower bounds)
LISTING_SHARE = 0.9


@dataclass(frozen=True)
class TwinPair:
    """Two identical columns that meet T1–T3: ``kept`` stands for both in the reduced table, ``dropped`` is
    removed; ``constant`` = s_kept({dropped}), the lower twin's family score in every credible DAG."""

    kept: str
    dropped: str
    constant: float


def _margin(table: ScoreTable, epsilon: float) -> float:
    """δ = ε plus the solver's tie tolerance at the largest |OPT| the table allows (Σ of each child's largest
    |score|): every DAG the solver calls credible is within δ of OPT."""
    most = math.fsum(max(abs(s) for s in fam.values()) for fam in table.families.values() if fam)
    return epsilon + float(tie_tolerance(most))


def _same(x: float | None, y: float | None) -> bool:
    """One score up to :data:`~bnilp.ilp.settings.SYMMETRY_RTOL` (the symmetries' tolerance): twins' families can
    differ in the last bits where the counting kernel sums their cells in another order."""
    return x is not None and y is not None and abs(x - y) <= SYMMETRY_RTOL * max(1.0, abs(y))


def _is_twin_pair(families: dict[str, dict[frozenset[str], float]], a: str, b: str, delta: float) -> bool:
    """T1–T3 for a, b on ``families`` (see the module)."""
    fa, fb = families[a], families[b]
    sa, sb = fa.get(frozenset({b})), fb.get(frozenset({a}))
    if not _same(sa, sb):
        return False
    own_a = {F: s for F, s in fa.items() if b not in F}
    own_b = {F: s for F, s in fb.items() if a not in F}
    if own_a.keys() != own_b.keys() or not all(_same(s, own_b[F]) for F, s in own_a.items()):
        return False
    for x, y, sx in ((a, b, sa), (b, a, sb)):
        if any(sx - s <= delta for F, s in families[x].items() if F != frozenset({y})):
            return False
    for c, fam in families.items():
        if c in (a, b):
            continue
        for F, s in fam.items():
            if a in F and b in F:
                sub = fam.get(F - {b})
                if sub is None or sub - s <= delta:
                    return False
            elif b in F or a in F:
                image = (F - {b}) | {a} if b in F else (F - {a}) | {b}
                if not _same(fam.get(image), s):
                    return False
    return True


def _without(families: dict[str, dict[frozenset[str], float]], pair: TwinPair) -> dict[str, dict]:
    """The families of the table with ``pair.dropped`` removed as a variable and as a parent."""
    b = pair.dropped
    return {c: {F: s for F, s in fam.items() if b not in F} for c, fam in families.items() if c != b}


def twin_pairs(table: ScoreTable, epsilon: float) -> list[TwinPair]:
    """Disjoint pairs of variables meeting T1–T3 at ``epsilon`` (ln BF), each checked on the table with the
    pairs before it already reduced (so that the reductions compose), in the table's variable order.

    Candidates are the pairs whose singleton families {b} of a and {a} of b are in the table (one pass over the
    families); the twins' own families are compared first, and only a pair that passes T2 and T3 has every other
    child's families read (T1)."""
    delta = _margin(table, epsilon)
    families = table.families          # read only: each merged pair gives a new dict (_without)
    order = {v: i for i, v in enumerate(table.variables)}
    candidates = sorted((order[a], order[b], a, b) for a, fam in families.items() for F in fam if len(F) == 1
                        for b in F if order.get(b, -1) > order[a])
    pairs: list[TwinPair] = []
    used: set[str] = set()
    for _, _, a, b in candidates:
        if a in used or b in used:
            continue
        if _is_twin_pair(families, a, b, delta):
            pair = TwinPair(a, b, families[a][frozenset({b})])
            pairs.append(pair)
            used |= {a, b}
            families = _without(families, pair)
    return pairs


def mergeable_pairs(table: ScoreTable, epsilon: float, knowledge: Any = None) -> list[TwinPair]:
    """The twin pairs :func:`count_credible` would merge on ``table`` at ``epsilon`` (:func:`twin_pairs`), or none
    where it would refuse the table: a score that is not score-equivalent, background knowledge (``knowledge`` or
    the table's own), a table exact only up to a palim. For telling a user who lists such a set class by class that
    it can be counted without listing it."""
    if score_equivalent(table.meta) is False or knowledge is not None or _refusal(table):
        return []
    return twin_pairs(table, epsilon)


def _refusal(table: ScoreTable) -> str | None:
    """Why :func:`count_credible` cannot count ``table`` (beyond its score and ε), or None."""
    if table.knowledge is not None or table.meta.get("knowledge"):
        return ("count_credible counts without background knowledge: table holds some (the twins need not be "
                "exchangeable under it)")
    if exact_up_to(table.meta) is not None:
        return (f"count_credible counts whole classes: table is exact only for parent sets of up to "
                f"{exact_up_to(table.meta)} (a palim), so a credible class can hold DAGs it lacks (learn and solve "
                "count the DAGs a table admits)")
    return None


def reduce_twins(table: ScoreTable, pairs: list[TwinPair]) -> ScoreTable:
    """The table R on the variables without each pair's ``dropped`` twin (see the module): the credible DAGs
    of ``table`` at ε are the expansions of those of R at the same ε. Each kept twin's families carry its
    pair's ``constant`` (the lower twin's family, in every credible DAG), so that a DAG of R scores what its
    expansions score and R's OPT is the table's: the credible line, tie tolerance included, is the same."""
    families = {c: dict(fam) for c, fam in table.families.items()}
    for pair in pairs:
        families = _without(families, pair)
        families[pair.kept] = {F: s + pair.constant for F, s in families[pair.kept].items()}
    dropped = {p.dropped for p in pairs}
    meta = dict(table.meta)
    meta["twins"] = [[p.kept, p.dropped] for p in pairs]
    return ScoreTable([v for v in table.variables if v not in dropped], families, meta)


def expansions(parents: dict[str, frozenset[str]], pairs: list[TwinPair]) -> int:
    """The number of DAGs of the full table that a DAG of the reduced table stands for: Π 2^(1 + |ch(kept)|)."""
    children = {p.kept: 0 for p in pairs}
    for ps in parents.values():
        for x in ps:
            if x in children:
                children[x] += 1
    return math.prod(2 ** (1 + k) for k in children.values())


def _profile(g: dict[str, frozenset[str]], merged: set[str]) -> tuple[tuple[frozenset[str], ...], frozenset]:
    """What decides a DAG G' of R's classes on the full table: each merged node's parents and its shielded
    triples (u', z', v') with a merged node among u', v', each with the attachment inequalities under which
    it lifts to a collider (module docstring: u' = a_p gives α_p(z') ≠ α_p(v'))."""
    triples = []
    for z, ps in g.items():
        ordered = sorted(ps)
        for i, u in enumerate(ordered):
            for v in ordered[i + 1:]:
                if not (u in merged or v in merged) or not (u in g[v] or v in g[u]):
                    continue
                literals = []
                if u in merged:
                    literals.append(((u, z), (u, v)))
                if v in merged:
                    literals.append(((v, z), (v, u)))
                triples.append((u, z, v, tuple(literals)))
    return tuple(g[m] for m in sorted(merged)), frozenset(triples)


def _codes(bits: np.ndarray) -> np.ndarray:
    """Each row of a 0/1 matrix as int64 words (62 bits a word): equal rows, equal words."""
    words = [bits[:, i:i + 62].astype(np.int64) @ (np.int64(1) << np.arange(min(62, bits.shape[1] - i), dtype=np.int64))
             for i in range(0, bits.shape[1], 62)]
    return np.stack(words, axis=1) if words else np.zeros((len(bits), 0), dtype=np.int64)


def _local_orientations(representative: dict[str, frozenset[str]], closed: list[set[str]], cpdag: Any
                        ) -> tuple[Iterator[dict[str, frozenset[str]]], int, dict[tuple[str, str], float]]:
    """The DAGs of the class up to the orientation of its chain components that have no undirected edge inside
    a merged node's closed neighbourhood (``closed``); the number of DAGs each stands for (those components'
    orientations); and P(u → v) over them for each edge of those components. A profile reads only edges inside
    the neighbourhoods, and a class's DAGs are the products of its components' orientations (Andersson, Madigan &
    Perlman 1997), so the others are fixed to one and counted."""
    directed, undirected = cpdag
    graph = nx.Graph(tuple(e) for e in undirected)
    fixed, kept, far, factor = set(directed), set(), set(), 1
    for comp in nx.connected_components(graph):
        edges = {frozenset(e) for e in graph.subgraph(comp).edges}
        if any(e <= c for e in edges for c in closed):
            kept |= edges
            continue
        far |= edges
        factor *= count_dags_in_mec((set(), edges))
        one = next(dags_in_mec((set(), edges)))
        fixed |= {(u, v) for v, ps in one.items() for u in ps}
    listed = count_dags_in_mec((fixed, kept))
    if listed > MAX_DAGS_PER_CLASS:
        raise LimitError(f"a class of the reduced table has {listed} orientations around its merged twins, more "
                         f"than MAX_DAGS_PER_CLASS ({MAX_DAGS_PER_CLASS}); its expansions are not counted")
    shares = directed_fractions((set(), far)) if far else {}
    return dags_in_mec((fixed, kept), nodes=list(representative)), factor, shares


#: compare the triple sets' D(α) pairwise while (sets × attachments) stays below this (memory: 8 bytes a word
#: each); past it, sort the admitted (α, D) rows instead
PAIRWISE_ENTRIES = 1 << 24


def _distinct_keys(admitted: dict[frozenset, np.ndarray], lifts: np.ndarray, bit: dict[Any, int]) -> int:
    """Σ over attachments α of the number of distinct D(α) among the triple sets that admit α (``admitted``: set →
    0/1 vector over the rows of α; ``lifts``: which triples lift to colliders under each α). DAGs with the same
    shielded triples give the same D(α), so the sets, not the DAGs, are compared."""
    masks = {}
    for triples in admitted:
        mask = np.zeros(lifts.shape[1], dtype=bool)
        mask[[bit[t] for t in triples]] = True
        masks[triples] = mask
    if len(admitted) * len(lifts) <= PAIRWISE_ENTRIES:   # each set's α new unless an earlier set gives its D(α)
        seen: list[tuple[np.ndarray, np.ndarray]] = []
        distinct = 0
        for triples, ok in admitted.items():
            code = _codes(lifts & masks[triples])
            new = ok.copy()
            for ok_before, code_before in seen:
                new &= ~(ok_before & (code_before == code).all(axis=1))
            distinct += int(new.sum())
            seen.append((ok, code))
        return distinct
    rows = []
    for triples, ok in admitted.items():
        idx = np.flatnonzero(ok)
        rows.append(np.concatenate([idx[:, None], _codes(lifts[idx] & masks[triples])], axis=1))
    return len(np.unique(np.concatenate(rows), axis=0)) if rows else 0


@dataclass
class ClassExpansion:
    """The classes of the full table that one class of R expands to: their number and their DAGs, and for each
    arrow u → v the number of those DAGs that hold it (a float: exact up to rounding where it passes 2^53)."""

    classes: int
    dags: int
    arrows: dict[tuple[str, str], float] = field(default_factory=dict)
    #: the DAGs of the class of R expanded
    size: int = 0


def expand_class(representative: dict[str, frozenset[str]], pairs: list[TwinPair], cpdag: Any = None
                 ) -> ClassExpansion:
    """Count the classes (and DAGs) of the full table whose DAGs contract to the class of ``representative``
    (a DAG of R): the distinct (α, D_{G'}(α)) over its DAGs G' and the attachments α each admits (module).

    Attachments of neighbours that no DAG of the class has as a parent of a merged node and no shielded triple
    mentions are free (a factor 2 each); the others are varied together, as the rows of a 0/1 table. Each arrow's
    count: an arrow at a merged node lifts to either twin in half the expansions, the twins' own arrow goes either
    way in half, and the arrows of chain components away from the merged nodes by their shares. ``cpdag``: the
    class's CPDAG edge sets, where the caller has them."""
    cpdag = cpdag_edges(representative) if cpdag is None else cpdag
    merged = {p.kept for p in pairs}
    neighbours = {m: sorted({w for w, ps in representative.items() if m in ps} | set(representative[m]))
                  for m in merged}
    twins = {p.kept: (p.kept, p.dropped) for p in pairs}
    orientations, factor, far_shares = _local_orientations(representative, [{m, *neighbours[m]} for m in merged],
                                                           cpdag)
    profiles: dict[Any, int] = {}
    edges: dict[tuple[str, str], float] = {}
    far_pairs = {frozenset(arrow) for arrow in far_shares}
    total = 0       # Σ over the orientations listed of their expansions (each also stands for ``factor`` DAGs)
    for g in orientations:
        key = _profile(g, merged)
        profiles[key] = profiles.get(key, 0) + factor
        e = expansions(g, pairs)
        total += e
        for v, ps in g.items():         # an arrow at a merged node lifts to either twin, each in half the expansions
            for u in ps:
                if frozenset((u, v)) in far_pairs:
                    continue
                xs, ys = twins.get(u, (u,)), twins.get(v, (v,))
                for x in xs:
                    for y in ys:
                        edges[(x, y)] = edges.get((x, y), 0.0) + factor * e / (len(xs) * len(ys))
        for a, b in twins.values():     # the twins' own arrow: U → L, either way in half the expansions
            edges[(a, b)] = edges.get((a, b), 0.0) + factor * e / 2
            edges[(b, a)] = edges.get((b, a), 0.0) + factor * e / 2
    for arrow, share in far_shares.items():
        edges[arrow] = edges.get(arrow, 0.0) + factor * total * share
    slots = [(m, w) for m in sorted(merged) for w in neighbours[m]]
    varied: set[tuple[str, str]] = set()
    for (pas, triples) in profiles:
        for m, ps in zip(sorted(merged), pas, strict=True):
            varied |= {(m, w) for w in ps}
        for *_, literals in triples:
            for s1, s2 in literals:
                varied |= {s1, s2}
    free = len(slots) - len(varied)
    order = sorted(varied)
    if len(order) > MAX_VARIED_ATTACHMENTS:
        raise LimitError(f"a class of the reduced table varies {len(order)} attachments together, more than "
                         f"MAX_VARIED_ATTACHMENTS ({MAX_VARIED_ATTACHMENTS}); its expansions are not counted")
    col = {s: i for i, s in enumerate(order)}
    rows = ((np.arange(2 ** len(order))[:, None] >> np.arange(len(order))) & 1).astype(np.int8)
    all_triples = sorted({t for _, ts in profiles for t in ts})
    bit = {t: i for i, t in enumerate(all_triples)}
    lifts = np.zeros((len(rows), len(all_triples)), dtype=bool)
    for t, i in bit.items():
        for s1, s2 in t[3]:
            lifts[:, i] |= rows[:, col[s1]] != rows[:, col[s2]]
    admitted: dict[frozenset, np.ndarray] = {}
    dags = 0
    for (pas, triples), n in profiles.items():
        ok = np.ones(len(rows), dtype=bool)
        roles = 1
        for m, ps in zip(sorted(merged), pas, strict=True):
            cols = [col[(m, w)] for w in sorted(ps)]
            if cols:
                ok &= (rows[:, cols] == rows[:, cols[:1]]).all(axis=1)
            else:
                roles *= 2
        dags += n * roles * int(ok.sum()) * 2 ** free
        admitted[triples] = admitted.get(triples, np.zeros(len(rows), dtype=bool)) | ok
    distinct = _distinct_keys(admitted, lifts, bit)
    return ClassExpansion(distinct * 2 ** free, dags, edges, count_dags_in_mec(cpdag))


def expand_classes(representatives: list[dict[str, frozenset[str]]], pairs: list[TwinPair],
                   deadline: float | None = None, reduced: ScoreTable | None = None
                   ) -> tuple[list[ClassExpansion], str | None]:
    """:func:`expand_class` of R's classes in turn, and why it stopped short (or None): between two classes once
    ``time.perf_counter()`` is past ``deadline`` (``"time_limit"``), or at a class past :data:`MAX_DAGS_PER_CLASS`
    or :data:`MAX_VARIED_ATTACHMENTS` (the limit's message). With ``reduced`` (R), each class is first checked to
    be whole in it (every DAG's parent sets in the table, as sound pruning keeps them): a class that is not is a
    loud :class:`~bnilp.errors.UnsoundTableError`, since its expansions would count DAGs the table cannot have."""
    out: list[ClassExpansion] = []
    for number, parents in enumerate(representatives, 1):
        if deadline is not None and time.perf_counter() > deadline:
            return out, "time_limit"
        cpdag = cpdag_edges(parents)
        if reduced is not None:
            admitted, exact = count_admitted(cpdag, reduced.families, reduced.variables)
            size = count_dags_in_mec(cpdag)
            if not exact or admitted != size:
                raise UnsoundTableError(f"class {number} of the merged table has {size} DAGs but the table admits "
                                        f"{'fewer' if not exact else admitted}: a parent set a credible DAG needs is "
                                        "missing (unsound pruning, or scores edited or made elsewhere)")
        try:
            out.append(expand_class(parents, pairs, cpdag))
        except LimitError as exc:
            return out, str(exc)
    return out, None


def arrow_posteriors(scores: list[float], expanded: list[ClassExpansion]) -> dict[tuple[str, str], float]:
    """P(u → v) over the DAGs the classes expand to, each weighted by exp(score − best) (the uniform prior over DAGs;
    every DAG of a class has its class's score): Σ_K w_K·#(K's DAGs with u → v) / Σ_K w_K·#(K's DAGs)."""
    if not expanded:
        return {}
    best = max(scores[:len(expanded)])
    weights = [math.exp(s - best) for s in scores[:len(expanded)]]
    total = math.fsum(w * e.dags for w, e in zip(weights, expanded, strict=True))
    arrows: dict[tuple[str, str], float] = {}
    for w, e in zip(weights, expanded, strict=True):
        for arrow, n in e.arrows.items():
            arrows[arrow] = arrows.get(arrow, 0.0) + w * n
    return {arrow: min(1.0, x / total) for arrow, x in arrows.items()}


@dataclass
class TwinCount:
    """:func:`count_credible`'s result: the credible DAGs and classes of the full table, counted from R."""

    pairs: list[TwinPair]
    dags: int
    classes: int
    complete: bool
    status: str
    reduced_dags: int
    reduced_classes: int
    #: the reduced table's classes whose expansions are counted (all of them unless a limit came first)
    expanded: int
    #: OPT (None where phase 1 did not prove it: nothing is then counted)
    optimum: float | None
    #: what cut the count short, if anything
    message: str
    #: P(u → v) under the uniform prior over DAGs, over the DAGs counted (:func:`arrow_posteriors`)
    arrows: dict[tuple[str, str], float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def count_credible(table: ScoreTable, epsilon: float, *, time_limit: float | None = None,
                   max_networks: int = 1_000_000, jobs: int = 1,
                   progress: Callable[[dict], None] | None = None) -> TwinCount:
    """Count the DAGs and Markov equivalence classes with score ≥ OPT − ε of a table with twins, by listing the
    classes of the reduced table R (:func:`reduce_twins`) and counting what each expands to
    (:func:`expand_class`). Without a twin pair meeting T1–T3 this is class enumeration of the table itself.

    ``complete`` is True only when R's class list is complete and every class of it expanded; otherwise the
    counts are those of the classes expanded (lower bounds) and ``status`` says why the work stopped
    (``time_limit`` covers the listing and the expansions: the listing may use :data:`LISTING_SHARE` of what is left
    of it after the reduction, so that classes it listed before a cut are still counted, and the counting stops
    between classes once the limit is past).
    For score-equivalent scores only (as class enumeration: ``table``'s sidecar must not say its score is not;
    a table with background knowledge is refused — the knowledge can tell the twins apart). ``progress``: the
    search's progress callback while R's classes are listed (:func:`bnilp.ilp.solve`'s)."""
    from bnilp.ilp import solve
    from bnilp.pipeline import check_table_epsilon, enumeration_unit

    check_is_table(table)
    epsilon = check_real(epsilon, "epsilon", 0)
    enumeration_unit(table, "mecs")
    check_table_epsilon(table, epsilon)
    refusal = _refusal(table)
    if refusal:
        raise InputError(refusal)
    start = time.perf_counter()
    pairs = twin_pairs(table, epsilon)
    reduced = reduce_twins(table, pairs)
    t_reduce = time.perf_counter()
    listing = None if time_limit is None else max(time_limit - (t_reduce - start), 1e-3) * LISTING_SHARE
    result = solve(reduced, epsilon, time_limit=listing, max_networks=max_networks, enumerate_by="mecs", jobs=jobs,
                   progress=progress)
    t_solve = time.perf_counter()
    status, complete, message = result.status, result.complete, "" if result.complete else result.message
    if not result.optimum_proven:       # the one network listed is the best found, not known to be credible
        listed: list[dict[str, frozenset[str]]] = []
        message = f"OPT not proven ({result.status}): nothing counted"
    else:
        listed = [net.parents for net in result.networks]
    done, short = expand_classes(listed, pairs, None if time_limit is None else start + time_limit, reduced)
    dags, classes, expanded = sum(e.dags for e in done), sum(e.classes for e in done), len(done)
    arrows = arrow_posteriors([net.score for net in result.networks], done)
    if listed and not result.complete and short is None:
        message = f"{result.message}: the {len(listed)} classes listed are counted"
    if short == "time_limit":
        status, complete, message = short, False, f"time limit: {expanded} of the {len(listed)} classes listed counted"
    elif short is not None:
        status, complete, message = "count_limit", False, short
    reduced_dags = sum(e.size for e in done) + sum(count_dags_in_mec(p) for p in listed[len(done):])
    return TwinCount(pairs, dags, classes, complete, status, reduced_dags, len(listed),
                     expanded, result.optimum if result.optimum_proven else None, message, arrows,
                     {"reduce": t_reduce - start, "solve": t_solve - t_reduce,
                      "expand": time.perf_counter() - t_solve})
