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
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import networkx as nx
import numpy as np
from scipy.sparse import csr_matrix

from bnilp.averaging import PRIORS
from bnilp.errors import (
    InputError,
    LimitError,
    NoDagError,
    UnsoundTableError,
    check_flag,
    check_real,
    check_seconds,
    warn_at_caller,
)
from bnilp.ilp.search import SIGNAL_AFTER_SEARCH
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
    child's families read (T1). A NaN or negative ``epsilon`` (every margin comparison false: any pair passed) and a
    ``table`` that is none are an :class:`InputError`."""
    check_is_table(table)
    epsilon = check_real(epsilon, "epsilon", 0)
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
    check_is_table(table)
    if score_equivalent(table.meta) is False or knowledge is not None or count_refusal(table):
        return []
    return twin_pairs(table, epsilon)


def count_refusal(table: ScoreTable, who: str = "count_credible", what: str = "table") -> str | None:
    """Why :func:`count_credible` cannot count ``table`` (beyond its score and ε), or None; ``who`` and ``what``
    name the counter and the table as the caller knows them (``bnilp count`` and its score file)."""
    if table.knowledge is not None or table.meta.get("knowledge"):
        return (f"{who} counts without background knowledge: {what} holds some (the twins need not be "
                "exchangeable under it)")
    # a palim the walk never reached cut nothing (a sidecar always says which; a meta without the word is taken as cut)
    cut = exact_up_to(table.meta) if table.meta.get("palim_reached", True) else None
    if cut is not None:
        return (f"{who} counts whole classes: {what} is exact only for parent sets of up to "
                f"{cut} (a palim), so a credible class can hold DAGs it lacks (learn and solve "
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
    #: Σ over the classes expanded to of the share of their DAGs with u → v (:func:`_class_shares`)
    class_arrows: dict[tuple[str, str], float] = field(default_factory=dict)
    #: for each pair {u, v}: the classes expanded to whose CPDAG holds u — v undirected, and the DAGs they hold
    undirected_classes: dict[frozenset[str], float] = field(default_factory=dict)
    undirected_dags: dict[frozenset[str], float] = field(default_factory=dict)
    #: for each size (DAGs), the classes expanded to of that size (with the shares only; Σ size · classes = ``dags``;
    #: a size past 2^53 rounded, as ``arrows``)
    sizes: dict[int, int] = field(default_factory=dict)
    #: the CPDAG of the class of R expanded (:func:`bnilp.mec.cpdag_edges`' edge sets, as tuples)
    cpdag: Any = None


#: rows × profiles of one class's attachment table handled at once by :func:`_class_shares` (memory: about 40 bytes
#: each), and the most classes × arrows that vary among its DAGs summed at once (16 bytes each)
SHARE_ENTRIES = 1 << 21
SHARE_CELLS = 1 << 24


@dataclass
class _Group:
    """Profiles of one class of R with the same shielded triples and the same admitted attachments: under every
    attachment they give the same collider set, so they always fall in the same class and are summed."""

    ok: np.ndarray
    triples: frozenset
    weight: int = 0
    arrows: dict[tuple[str, str], int] = field(default_factory=dict)
    #: for each merged node: the DAGs (weighted) whose U is named by each slot (None: no parent, either twin)
    upper: dict[str, dict[tuple[str, str] | None, int]] = field(default_factory=dict)


@dataclass
class _Profiles:
    """What :func:`_class_shares` reads of one class of R: for each group of profiles (:class:`_Group`; a profile
    is a set of its DAGs G' that expand alike), its DAGs of the full table under one attachment (``weights``:
    orientations listed × the far components' factor × the 2 roles of each parentless merged node), the attachments
    it admits (``ok``, rows of the 0/1 table ``rows``), its collider mask over the triples, its DAGs' arrows counted
    (weighted as ``weights``) and, for each merged node, those DAGs by the slot whose attachment names U."""

    weights: np.ndarray
    ok: np.ndarray
    masks: np.ndarray
    arrows: list[dict[tuple[str, str], int]]
    upper: list[dict[str, dict[tuple[str, str] | None, int]]]


_PairCounts = dict[frozenset[str], float]


def _class_shares(prof: _Profiles, twins: dict[str, tuple[str, str]], rows: np.ndarray,
                  col: dict[tuple[str, str], int], lifts: np.ndarray, free: int
                  ) -> tuple[int, dict[tuple[str, str], float], _PairCounts, _PairCounts, dict[int, int]]:
    """The classes one class K' of R expands to, one by one but in arrays: each is an attachment α (a row) with
    the collider set D(α) the groups of profiles admitting α give (module docstring), and its DAGs are those groups'
    expansions under α — one for each DAG of R, the roles counted in the weights. For each class C, the share
    t_C(u → v) of its DAGs with an arrow is its groups' arrow counts over their weights, the arrow lifted by α;
    u — v is undirected in C's CPDAG iff both t_C(u → v) and t_C(v → u) are positive (the CPDAG's undirected edges
    are those C's DAGs orient both ways: Andersson, Madigan & Perlman 1997). A free attachment doubles every class,
    its edge at one twin in one copy and at the other in the other.

    Returns (the classes, free ones included; Σ_C t_C(u → v); for each pair, the classes holding it undirected;
    the DAGs those classes hold; and for each class size — its DAGs —, the classes of that size)."""
    arrows: dict[tuple[str, str], float] = {}
    sizes: dict[int, int] = {}
    und_classes: dict[frozenset[str], float] = {}
    und_dags: dict[frozenset[str], float] = {}
    copies = float(2 ** free)
    n_prof = len(prof.weights)
    pairs = sorted({tuple(sorted(a)) for counts in prof.arrows for a in counts})
    fwd = np.array([[float(counts.get(e, 0)) for e in pairs] for counts in prof.arrows]).reshape(n_prof, len(pairs))
    bwd = np.array([[float(counts.get(e[::-1], 0)) for e in pairs] for counts in prof.arrows]).reshape(
        n_prof, len(pairs))
    forward = (fwd == prof.weights[:, None]).all(axis=0)     # u → v in every DAG of every profile
    backward = (bwd == prof.weights[:, None]).all(axis=0)
    varying = [k for k in range(len(pairs)) if not (forward[k] or backward[k])]
    column = {k: j for j, k in enumerate(varying)}
    fwd_var, bwd_var = fwd[:, varying], bwd[:, varying]
    near = [k for k, (u, v) in enumerate(pairs) if k in column or u in twins or v in twins]
    step = max(1, min(SHARE_ENTRIES, SHARE_CELLS // max(1, len(varying))) // max(1, n_prof))
    classes = 0
    for r0 in range(0, len(rows), step):
        r1 = min(len(rows), r0 + step)
        ids, where, codes = [], [], []
        for p in range(n_prof):
            idx = np.flatnonzero(prof.ok[p, r0:r1])
            ids.append(np.full(len(idx), p))
            where.append(idx)
            codes.append(_codes(lifts[r0 + idx] & prof.masks[p]))
        pid, row = np.concatenate(ids), np.concatenate(where)
        code = np.concatenate(codes)
        if code.shape[1] or n_prof > 1:
            order = np.lexsort((*code.T[::-1], row))
            pid, row, code = pid[order], row[order], code[order]
        new = np.ones(len(row), dtype=bool)
        new[1:] = (row[1:] != row[:-1]) | (code[1:] != code[:-1]).any(axis=1)
        starts = np.flatnonzero(new)
        classes += len(starts)
        at = rows[r0 + row[starts]]          # each class's attachment
        # sums over each class's groups (a group gives a class at most one entry): a class × group matrix, or where
        # each class is one group, that group's own values
        members = pid if len(starts) == len(pid) else \
            csr_matrix((np.ones(len(pid)), (np.cumsum(new) - 1, pid)), shape=(len(starts), n_prof))
        summed = partial(_summed, members)
        n_c = summed(prof.weights)
        for size, times in _tally(n_c):
            sizes[size] = sizes.get(size, 0) + times * 2 ** free
        held_fwd, held_bwd = (summed(fwd_var), summed(bwd_var)) if varying else (None, None)
        if near:
            _near_edge_shares(pairs, near, column, forward, held_fwd, held_bwd, n_c, at, twins, col, copies,
                              (arrows, und_classes, und_dags))
        for m, (a, b) in twins.items():      # U → L: U the twin m's parents are attached to, either if it has none
            a_ab = 0.5 * summed(np.array([float(up[m].get(None, 0)) for up in prof.upper]))
            a_ba = a_ab.copy()
            for slot in sorted({s for up in prof.upper for s in up[m] if s is not None}):
                held = summed(np.array([float(up[m].get(slot, 0)) for up in prof.upper]))
                a_ab += np.where(at[:, col[slot]] == 0, held, 0.0)     # U named by the attachment at ``slot``
                a_ba += np.where(at[:, col[slot]] == 1, held, 0.0)
            _add(arrows, (a, b), copies * float(np.sum(a_ab / n_c)))
            _add(arrows, (b, a), copies * float(np.sum(a_ba / n_c)))
            both = (a_ab > 0) & (a_ba > 0)
            _add(und_classes, frozenset((a, b)), copies * float(np.count_nonzero(both)))
            _add(und_dags, frozenset((a, b)), copies * float(np.sum(n_c[both])))
    for k, (u, v) in enumerate(pairs):     # away from the merged nodes, one way in every DAG: every class has it
        if k not in near:
            _add(arrows, (u, v) if forward[k] else (v, u), float(classes) * copies)
    return classes * 2 ** free, arrows, und_classes, und_dags, sizes


def _near_edge_shares(pairs: list[tuple[str, str]], near: list[int], column: dict[int, int], forward: np.ndarray,
                      held_fwd: np.ndarray | None, held_bwd: np.ndarray | None, n_c: np.ndarray, at: np.ndarray,
                      twins: dict[str, tuple[str, str]], col: dict[tuple[str, str], int], copies: float,
                      into: tuple[dict, _PairCounts, _PairCounts]) -> None:
    """:func:`_class_shares` for the edges ``near`` (those at a merged node, or oriented differently in different
    DAGs of R's class): for each class (rows of ``at``, its attachment) and edge u — v, the shares t(u → v), t(v → u)
    of its DAGs and whether it is undirected, summed by the twins the attachment gives its ends
    (:func:`_end_options`: the bit of a varied slot; either twin, half each, where the slot is free) — in arrays
    over classes × edges."""
    arrows, und_classes, und_dags = into
    kn = len(near)
    t_uv, t_vu = np.empty((len(n_c), kn)), np.empty((len(n_c), kn))
    for j, k in enumerate(near):
        if k in column:
            t_uv[:, j], t_vu[:, j] = held_fwd[:, column[k]] / n_c, held_bwd[:, column[k]] / n_c
        else:                           # one way in every DAG
            t_uv[:, j], t_vu[:, j] = float(forward[k]), float(not forward[k])
    undirected = (t_uv > 0) & (t_vu > 0)
    quantities = (t_uv, t_vu, undirected, undirected * n_c[:, None])
    variant = np.zeros((len(n_c), kn), dtype=np.int8)      # bit of u's varied slot + 2 × bit of v's
    for j, k in enumerate(near):
        u, v = pairs[k]
        for end, slot, scale in ((u, (u, v), 1), (v, (v, u), 2)):
            if end in twins and slot in col:
                variant[:, j] += scale * at[:, col[slot]]
    sums = {val: [(q * hit).sum(axis=0) for q in quantities]
            for val in np.unique(variant) for hit in [variant == val]}
    for j, k in enumerate(near):
        u, v = pairs[k]
        for x, bx, wx in _end_options(u, v, twins, col):
            for y, by, wy in _end_options(v, u, twins, col):
                got = sums.get(bx + 2 * by)
                if got is None:
                    continue
                w = wx * wy * copies
                _add(arrows, (x, y), w * float(got[0][j]))
                _add(arrows, (y, x), w * float(got[1][j]))
                _add(und_classes, frozenset((x, y)), w * float(got[2][j]))
                _add(und_dags, frozenset((x, y)), w * float(got[3][j]))


def _end_options(x: str, y: str, twins: dict[str, tuple[str, str]], col: dict[tuple[str, str], int]
                 ) -> list[tuple[str, int, float]]:
    """Where the end x of an edge x — y of R lies in the classes expanded to, as (name, the attachment bit that
    puts it there, weight): x itself; the twin its attachment α(x, y) names (0: the kept twin, 1: the dropped one)
    where the slot is varied; either twin in half the classes where it is free (the bit is then not varied: 0)."""
    if x not in twins:
        return [(x, 0, 1.0)]
    if (x, y) not in col:
        return [(twins[x][0], 0, 0.5), (twins[x][1], 0, 0.5)]
    return [(twins[x][0], 0, 1.0), (twins[x][1], 1, 1.0)]


def _tally(values: np.ndarray) -> list[tuple[int, int]]:
    """(value, times) of an array of whole numbers held as floats (exact below 2^53, rounded above as the arrow counts
    are); a short array by a Counter, a long one sorted (np.unique costs ~20 µs however short: 3 % of parkinsons BF
    150's count, 67,032 classes of a few rows)."""
    if len(values) <= 64:
        return [(int(v), k) for v, k in Counter(values.tolist()).items()]
    found, times = np.unique(values, return_counts=True)
    return [(int(v), int(k)) for v, k in zip(found.tolist(), times.tolist(), strict=True)]


def _summed(members: Any, values: np.ndarray) -> np.ndarray:
    """``values`` (one row a group) summed over each class's groups: ``members`` a class × group 0/1 matrix, or the
    group of each class where each class is one group."""
    return values[members] if isinstance(members, np.ndarray) else members @ values


def _add(into: dict, key: Any, value: float) -> None:
    if value:
        into[key] = into.get(key, 0.0) + value


def expand_class(representative: dict[str, frozenset[str]], pairs: list[TwinPair], cpdag: Any = None,
                 shares: bool = True, line: tuple[ScoreTable, float] | None = None) -> ClassExpansion:
    """Count the classes (and DAGs) of the full table whose DAGs contract to the class of ``representative``
    (a DAG of R): the distinct (α, D_{G'}(α)) over its DAGs G' and the attachments α each admits (module).

    Attachments of neighbours that no DAG of the class has as a parent of a merged node and no shielded triple
    mentions are free (a factor 2 each); the others are varied together, as the rows of a 0/1 table. Each arrow's
    count: an arrow at a merged node lifts to either twin in half the expansions, the twins' own arrow goes either
    way in half, and the arrows of chain components away from the merged nodes by their shares. ``cpdag``: the
    class's CPDAG edge sets, where the caller has them. ``shares``: also each expanded class's own arrow shares and
    undirected edges (:func:`_class_shares`, for the posteriors of :func:`class_posteriors`; the rows of the table
    are then grouped into classes one by one, in arrays, where without them only their number is needed).
    ``line`` = (R, the credible line): on a table only taken to be score-equivalent (no record vouches it), every
    orientation expanded must score above the line — on a rounded file a class's DAGs can straddle it, and the
    classes built of the orientations below it, none of whose DAGs is credible, were counted (a review: 36 classes
    where class enumeration and a brute force find 24): an :class:`InputError` then, not a miscount."""
    cpdag = cpdag_edges(representative) if cpdag is None else cpdag
    merged = {p.kept for p in pairs}
    neighbours = {m: sorted({w for w, ps in representative.items() if m in ps} | set(representative[m]))
                  for m in merged}
    twins = {p.kept: (p.kept, p.dropped) for p in pairs}
    orientations, factor, far_shares = _local_orientations(representative, [{m, *neighbours[m]} for m in merged],
                                                           cpdag)
    profiles: dict[Any, int] = {}
    profile_arrows: dict[Any, dict[tuple[str, str], float]] = {}
    edges: dict[tuple[str, str], float] = {}
    far_pairs = {frozenset(arrow) for arrow in far_shares}
    total = 0       # Σ over the orientations listed of their expansions (each also stands for ``factor`` DAGs)
    for g in orientations:
        if line is not None:
            _check_above_line(g, *line)
        key = _profile(g, merged)
        profiles[key] = profiles.get(key, 0) + factor
        own = profile_arrows.setdefault(key, {})
        e = expansions(g, pairs)
        total += e
        for v, ps in g.items():         # an arrow at a merged node lifts to either twin, each in half the expansions
            for u in ps:
                if frozenset((u, v)) in far_pairs:
                    continue
                own[(u, v)] = own.get((u, v), 0) + factor
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
    groups: dict[tuple[frozenset, bytes], _Group] = {}     # profiles that always meet in one class, summed
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
        if not shares:
            admitted[triples] = admitted.get(triples, np.zeros(len(rows), dtype=bool)) | ok
            continue
        group = groups.setdefault((triples, np.packbits(ok).tobytes()), _Group(ok, triples))
        group.weight += n * roles
        for arrow, c in profile_arrows[(pas, triples)].items():
            group.arrows[arrow] = group.arrows.get(arrow, 0) + c * roles
        for m, ps in zip(sorted(merged), pas, strict=True):
            slot = (m, min(ps)) if ps else None
            group.upper.setdefault(m, {})[slot] = group.upper.get(m, {}).get(slot, 0) + n * roles
    if not shares:      # only their number: the distinct collider sets (with the shares, the classes grouped)
        return ClassExpansion(_distinct_keys(admitted, lifts, bit) * 2 ** free, dags, edges, count_dags_in_mec(cpdag),
                              cpdag=_compact(cpdag))
    masks = np.zeros((len(groups), len(all_triples)), dtype=bool)
    for i, group in enumerate(groups.values()):
        masks[i, [bit[t] for t in group.triples]] = True
    prof = _Profiles(np.array([float(g.weight) for g in groups.values()]),
                     np.array([g.ok for g in groups.values()]).reshape(len(groups), len(rows)), masks,
                     [g.arrows for g in groups.values()], [g.upper for g in groups.values()])
    classes, class_arrows, und_classes, und_dags, sizes = _class_shares(prof, twins, rows, col, lifts, free)
    for arrow, share in far_shares.items():    # a far component keeps its orientations in every class expanded to
        _add(class_arrows, arrow, share * classes)
    for pair in far_pairs:                     # so its edges stay undirected there
        _add(und_classes, pair, float(classes))
        _add(und_dags, pair, float(dags))
    return ClassExpansion(classes, dags, edges, count_dags_in_mec(cpdag), class_arrows, und_classes, und_dags, sizes,
                          _compact(cpdag))


def _check_above_line(dag: dict[str, frozenset[str]], reduced: ScoreTable, line: float) -> None:
    """:func:`expand_class`'s check that an orientation of a credible class is credible itself."""
    score = math.fsum(reduced.families[v][ps] for v, ps in dag.items())
    if score < line:
        raise InputError(f"count_credible (bnilp count): a class of the merged table straddles the credible line — "
                         f"one of its DAGs scores {score:.12g}, below OPT − ε = {line:.12g}, while its best is "
                         "credible: the table is score-equivalent only to within its rounding, and the classes near "
                         "the line depend on how each DAG is judged; count by DAG enumeration "
                         "(solve_table(enumerate_by='dags'), bnilp solve --enumerate dags)")


def _compact(cpdag: Any) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, ...], ...]]:
    """A CPDAG's edge sets kept as tuples of names, which Python's cyclic collector stops tracking: kept as sets for
    each of parkinsons BF 150's 67,032 classes they cost its collections 11 s (93.5 → 104.7 s)."""
    directed, undirected = cpdag
    return tuple(directed), tuple(tuple(e) for e in undirected)


def expand_classes(representatives: list[dict[str, frozenset[str]]], pairs: list[TwinPair],
                   deadline: float | None = None, reduced: ScoreTable | None = None, shares: bool = True,
                   line: float | None = None) -> tuple[list[ClassExpansion], str | None]:
    """:func:`expand_class` of R's classes in turn, and why it stopped short (or None): between two classes once
    ``time.perf_counter()`` is past ``deadline`` (``"time_limit"``), or at a class past :data:`MAX_DAGS_PER_CLASS`
    or :data:`MAX_VARIED_ATTACHMENTS` (the limit's message). With ``reduced`` (R), each class is first checked to
    be whole in it (every DAG's parent sets in the table, as sound pruning keeps them): a class that is not is a
    loud :class:`~bnilp.errors.UnsoundTableError`, since its expansions would count DAGs the table cannot have;
    with ``line`` too (the credible line, where R is only taken to be score-equivalent), every orientation expanded
    is checked to be above it (:func:`expand_class`)."""
    out: list[ClassExpansion] = []
    for number, parents in enumerate(representatives, 1):
        if deadline is not None and time.perf_counter() > deadline:
            return out, "time_limit"
        cpdag = cpdag_edges(parents)
        if reduced is not None:
            admitted, exact = count_admitted(cpdag, reduced.families, reduced.variables)
            size = count_dags_in_mec(cpdag)
            if not exact or admitted != size:
                # (the same words whether or not a pair was merged: "merged table" blamed a merge that was none)
                merged = "of the merged table " if pairs else ""
                raise UnsoundTableError(f"class {number} {merged}has {size} DAGs but the table admits "
                                        f"{'fewer' if not exact else admitted}: a parent set some of them need is "
                                        "missing — the table was scored under background knowledge (its sidecar, "
                                        "which would say so, is gone), pruned unsoundly, or edited or made "
                                        "elsewhere; counting whole classes needs every DAG of a class (solve "
                                        "--enumerate mecs counts the DAGs a table admits)")
        try:
            out.append(expand_class(parents, pairs, cpdag, shares,
                                    None if reduced is None or line is None else (reduced, line)))
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


def class_posteriors(scores: list[float], expanded: list[ClassExpansion], prior: str
                     ) -> tuple[dict[tuple[str, str], float], dict[frozenset[str], float]]:
    """(P(u → v), P(u — v undirected in the CPDAG)) over the classes the reduced table's classes expand to, each
    class weighted by exp(score − best) (its DAGs', all of one score: Verma & Pearl 1990) under ``prior`` "mecs" —
    the uniform prior over classes, a class's weight shared equally by its DAGs — or by that times its DAGs under
    "dags" (the report's two priors, ``averaging.md``): P(u → v) = Σ_C w_C t_C(u → v) / Σ_C w_C with t_C the share
    of C's DAGs with the arrow (so Σ_K w_K·Σ_{C of K} t_C over R's classes K), and P(u — v undirected) the weighted
    share of classes whose CPDAG has the edge undirected. Under "dags" the arrows are :func:`arrow_posteriors`'."""
    if prior not in PRIORS:
        raise InputError(f"prior must be one of {PRIORS}, not {prior!r}")
    if not expanded:
        return {}, {}
    best = max(scores[:len(expanded)])
    weights = [math.exp(s - best) for s in scores[:len(expanded)]]
    size = (lambda e: e.dags) if prior == "dags" else (lambda e: e.classes)
    total = math.fsum(w * size(e) for w, e in zip(weights, expanded, strict=True))
    arrows: dict[tuple[str, str], float] = {}
    undirected: dict[frozenset[str], float] = {}
    for w, e in zip(weights, expanded, strict=True):
        if prior == "mecs":
            for arrow, x in e.class_arrows.items():
                arrows[arrow] = arrows.get(arrow, 0.0) + w * x
        for pair, x in (e.undirected_dags if prior == "dags" else e.undirected_classes).items():
            undirected[pair] = undirected.get(pair, 0.0) + w * x
    if prior == "dags":
        arrows = arrow_posteriors(scores, expanded)
    else:
        arrows = {arrow: min(1.0, x / total) for arrow, x in arrows.items()}
    return arrows, {pair: min(1.0, x / total) for pair, x in undirected.items()}


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
    #: (P(u → v), P(u — v undirected in the CPDAG)) under each prior of :data:`bnilp.averaging.PRIORS`, over the
    #: classes counted (:func:`class_posteriors`); empty where ``count_credible(posteriors=False)``
    posteriors: dict[str, tuple[dict[tuple[str, str], float], dict[frozenset[str], float]]] = field(
        default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    #: the reduced table's classes expanded, best first (:func:`expand_class`), and their scores
    expansions: list[ClassExpansion] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    #: a SIGINT/SIGTERM came once the listing had nothing left to stop (the message says so; ``stats``'s
    #: ``signal_after_search`` of :class:`bnilp.ilp.SolveResult`)
    signal_after_search: bool = False


def certain_pairs(counted: TwinCount, variables: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arrows u → v, adjacencies u — v and edges u — v undirected in the class's CPDAG that every DAG counted
    holds (every class of every group of positive weight: its arrow counts equal its DAGs, its undirected-edge
    counts its classes), as boolean matrices in ``variables``' order: their posteriors are 1 exactly, under either
    prior (a DAG count below 2^53 is exact), where the weighted sums came to 0.9999999999999999 (a review)."""
    n = len(variables)
    at = {v: i for i, v in enumerate(variables)}
    arrows, adjacent, undirected = (np.zeros((n, n), dtype=np.int64) for _ in range(3))
    done = counted.expansions
    best = max(counted.scores[:len(done)], default=0.0)
    held = [e for s, e in zip(counted.scores, done, strict=False) if math.exp(s - best) > 0 and e.dags > 0]
    for e in held:
        for (u, v), k in e.arrows.items():
            arrows[at[u], at[v]] += k == e.dags
        for (u, v) in {tuple(sorted(arrow, key=at.__getitem__)) for arrow in e.arrows}:
            if e.arrows.get((u, v), 0) + e.arrows.get((v, u), 0) == e.dags:
                adjacent[at[u], at[v]] += 1
                adjacent[at[v], at[u]] += 1
        for pair, k in e.undirected_classes.items():
            if k == e.classes:
                a, b = (at[x] for x in pair)
                undirected[a, b] += 1
                undirected[b, a] += 1
    units = len(held)
    if units == 0:
        return tuple(np.zeros((n, n), dtype=bool) for _ in range(3))
    return arrows == units, adjacent == units, undirected == units


def class_groups(counted: TwinCount, prior: str = "dags") -> list[dict[str, Any]]:
    """The credible classes of the full table grouped by the class K of the reduced table R they contract to (one
    group per class of R expanded, best first; module docstring: distinct K give disjoint groups), each group as
    ``{"score", "ln_bf", "n_mecs", "n_dags", "class_sizes", "posterior"}``: its classes' score (all of K's, T1–T2),
    OPT − score, its classes and DAGs, ``[[size, classes of that size], …]`` by size (from the class shares of
    :func:`expand_class`; empty where ``count_credible(posteriors=False)``), and the sum of its classes' posteriors
    under ``prior`` — w_K·(K's DAGs) / Σ_K' w_K'·(K''s DAGs) under "dags", w_K·(K's classes) / Σ … under "mecs",
    w_K = exp(score_K − OPT) (the report's classes' ``posterior``, summed over the group).

    The class table of a set counted rather than listed: hailfinder500 BF 20's 13,107,200 classes are 42 groups."""
    if not isinstance(counted, TwinCount):
        raise InputError(f"counted must be what count_credible returns (a TwinCount), got {type(counted).__name__}")
    if prior not in PRIORS:
        raise InputError(f"prior must be one of {PRIORS}, not {prior!r}")
    done = counted.expansions
    if not done:
        return []
    best = max(counted.scores[:len(done)])
    size = (lambda e: e.dags) if prior == "dags" else (lambda e: e.classes)
    mass = [math.exp(s - best) * size(e) for s, e in zip(counted.scores, done, strict=False)]
    total = math.fsum(mass)
    # OPT's own class is OPT within rounding (the merged table adds each pair's constant to a family: 9e-13 apart,
    # which the best group showed as ln BF 9.09e-13, BF 1.00000000000091 — a review): its ln BF is 0
    far = counted.optimum is not None and abs(counted.optimum - best) > float(tie_tolerance(counted.optimum))
    optimum = counted.optimum if far else best
    return [{"score": float(s), "ln_bf": float(optimum - s), "n_mecs": int(e.classes), "n_dags": int(e.dags),
             "class_sizes": [[k, e.sizes[k]] for k in sorted(e.sizes)], "posterior": m / total}
            for s, e, m in zip(counted.scores, done, mass, strict=False)]


def _listed_dags(classes: list[dict[str, frozenset[str]]], deadline: float | None) -> int:
    """The DAGs of R's classes listed but not expanded, counted from their CPDAGs until ``deadline`` (a count cut by
    the time limit stops there: its figures are lower bounds anyway, and 100,000 classes took 8 s past a 1-s limit,
    a review)."""
    total = 0
    for parents in classes:
        if deadline is not None and time.perf_counter() > deadline:
            break
        total += count_dags_in_mec(parents)
    return total


def count_credible(table: ScoreTable, epsilon: float, *, time_limit: float | None = None,
                   max_networks: int = 1_000_000, jobs: int = 1,
                   progress: Callable[[dict], None] | None = None, posteriors: bool = True) -> TwinCount:
    """Count the DAGs and Markov equivalence classes with score ≥ OPT − ε of a table with twins, by listing the
    classes of the reduced table R (:func:`reduce_twins`) and counting what each expands to
    (:func:`expand_class`). Without a twin pair meeting T1–T3 this is class enumeration of the table itself.

    ``complete`` is True only when R's class list is complete and every class of it expanded; otherwise the
    counts are those of the classes expanded (lower bounds) and ``status`` says why the work stopped
    (``time_limit`` covers the listing and the expansions: the listing may use :data:`LISTING_SHARE` of what is left
    of it after the reduction, so that classes it listed before a cut are still counted, and the counting stops
    between classes once the limit is past — or, where the listing overran the whole limit, once it has had
    1 − LISTING_SHARE of it).
    For score-equivalent scores only (as class enumeration: ``table``'s sidecar must not say its score is not;
    a table with background knowledge is refused — the knowledge can tell the twins apart). ``progress``: the
    search's progress callback while R's classes are listed (:func:`bnilp.ilp.solve`'s). ``posteriors``: the edge
    posteriors under both priors (:func:`class_posteriors`; the arrows under the prior over DAGs are always given) —
    about twice the counting time where R has many small classes (parkinsons BF 150)."""
    from bnilp.ilp import solve
    from bnilp.pipeline import (
        NO_DAG,
        check_assumed_equivalence,
        check_table_epsilon,
        enumeration_unit,
        equivalence_vouched,
        unknown_pruning_note,
    )

    check_is_table(table)
    epsilon = check_real(epsilon, "epsilon", 0)
    # checked here, before the arithmetic on them (a review: "3" was a TypeError, −1 a limit of a millisecond)
    time_limit = check_seconds(time_limit, "time_limit (--time-limit)")
    posteriors = bool(check_flag(posteriors, "posteriors"))
    enumeration_unit(table, "mecs")
    check_table_epsilon(table, epsilon)
    refusal = count_refusal(table)
    if refusal:
        raise InputError(refusal)
    unknown = unknown_pruning_note(table, epsilon)
    if unknown:                                       # as solve_table warns (bnilp count prints its own line)
        warn_at_caller(unknown)
    start = time.perf_counter()
    pairs = twin_pairs(table, epsilon)
    reduced = reduce_twins(table, pairs)
    t_reduce = time.perf_counter()
    listing = None if time_limit is None else max(time_limit - (t_reduce - start), 1e-3) * LISTING_SHARE
    result = solve(reduced, epsilon, time_limit=listing, max_networks=max_networks, enumerate_by="mecs", jobs=jobs,
                   progress=progress)
    t_solve = time.perf_counter()
    if result.status == "infeasible":     # no result to count (a review: exit 3 and a JSON of 0 DAGs, "OPT not proven")
        raise NoDagError(f"table: {NO_DAG}")
    if not equivalence_vouched(table.meta) and result.optimum_proven:
        # assumed, as class enumeration assumes it: checked the same way (a review: an MVP file without a sidecar
        # counted 28 DAGs in 7 classes, exit 0, where 7 DAGs are credible)
        check_assumed_equivalence(reduced, result, needs="count_credible (bnilp count)",
                                  instead="DAG enumeration (solve_table(enumerate_by='dags'), "
                                          "bnilp solve --enumerate dags)")
    after = bool((result.stats or {}).get("signal_after_search"))
    status, complete, message = result.status, result.complete, "" if result.complete else result.message
    if not result.optimum_proven:       # the one network listed is the best found, not known to be credible
        listed: list[dict[str, frozenset[str]]] = []
        message = f"OPT not proven ({result.status}): nothing counted"
    else:
        listed = [net.parents for net in result.networks]
    # the counting keeps its share of the limit even where the listing overran its own (solve's start-up on a limit
    # of a fraction of a second left nothing to count 4 classes listed in 7 ms: a review)
    deadline = None if time_limit is None else max(start + time_limit, t_solve + (1 - LISTING_SHARE) * time_limit)
    # a table only taken to be score-equivalent: each orientation expanded is checked to be credible (rounded files)
    line = None if equivalence_vouched(table.meta) or not listed else \
        result.optimum - epsilon - float(tie_tolerance(result.optimum))
    done, short = expand_classes(listed, pairs, deadline, reduced, posteriors, line)
    dags, classes, expanded = sum(e.dags for e in done), sum(e.classes for e in done), len(done)
    scores = [net.score for net in result.networks]
    arrows = arrow_posteriors(scores, done)
    shares = {prior: class_posteriors(scores, done, prior) for prior in PRIORS} if posteriors else {}
    if listed and not result.complete and short is None:
        # the listing's words count the merged table's classes and DAGs: said as such beside the full counts (a
        # review: "the best 1 of 2 credible classes, which hold 6 DAGs" next to "credible DAGs ≥ 80, classes ≥ 16")
        merged = "in the table with twins merged: " if pairs else ""
        message = f"{merged}{result.message}: the {len(listed)} classes listed are counted"
    if short == "time_limit":
        status, complete, message = short, False, f"time limit: {expanded} of the {len(listed)} classes listed counted"
    elif short is not None:
        status, complete, message = "count_limit", False, short
    if after and SIGNAL_AFTER_SEARCH not in message:
        # said, not dropped (a review: count exited 0 with nothing of the Ctrl-C), and kept beside a limit the
        # counting meets after it
        message = "; ".join(filter(None, (message, SIGNAL_AFTER_SEARCH)))
    reduced_dags = sum(e.size for e in done) + _listed_dags(listed[len(done):], deadline)
    return TwinCount(pairs, dags, classes, complete, status, reduced_dags, len(listed),
                     expanded, result.optimum if result.optimum_proven else None, message, arrows, shares,
                     {"reduce": t_reduce - start, "solve": t_solve - t_reduce,
                      "expand": time.perf_counter() - t_solve}, done, scores[:len(done)], after)
