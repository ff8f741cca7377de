"""Symmetries of the score table in phase 2: one class per orbit searched for, the rest recorded as images.

A permutation σ of the variables is an *automorphism* of the score table when every family (i, Π, s) has
its image (σ(i), σ(Π)) in the table with the same score. Then σ maps every DAG the table admits to one
it admits with the same score (σ(G) is acyclic, its families are the images of G's, so its score is
the same sum), and Markov equivalent DAGs to Markov equivalent DAGs (σ relabels skeleton and
v-structures alike; Verma & Pearl 1990). Two identical columns X ≡ X′ give one, the transposition
(X X′): a family's counts and arities, and so BIC, BDeu and any score computed from them, are unchanged
when X and X′ trade places. hailfinder has three such pairs, lung-cancer two, soybean and bands one.
Credible classes then come in orbits of up to 2^k classes for k disjoint pairs, all with the same score.

Phase 2 (class enumeration by branch-and-cut) uses them in two parts (Margot 2010, "Symmetry in integer
linear programming", for the lex-leader principle):

- *Lex-leader rows* (:func:`lex_rows`, :func:`add_lex_rows`): for each generator σ, the adjacency indicators
  in one global order x satisfy x ≥_lex σ(x). The class of an orbit whose adjacency vector is the
  lexicographic maximum satisfies every such row (σ(x) is the vector of another class of the orbit), so
  each orbit keeps at least one class the search can find, and the search leaves out most of the others.
- *Images* (:meth:`bnilp.ilp.cons_acyclic._Acyclicity._record_images`): when a class is recorded, every
  class of its orbit (:func:`orbit`, the whole group: at most 2^k DAGs) is recorded with it and excluded
  by its own no-good. So every class of an orbit is recorded once one is found, whatever the rows left out.

A transposition is used only if the score of each family and its image agree to
:data:`~bnilp.ilp.settings.SYMMETRY_RTOL` (bit for bit on the Table 1 files; BDeu families can differ in the
last bits, the kernel summing their cells in another order). An image is recorded only if its own exact
score reaches the threshold, and phase 2's objective limit is lowered by the symmetry's
:attr:`TableSymmetry.slack` (the most a DAG's score can change under the group), so that the class of an
orbit the search can find is explored whenever a class of its orbit would be without the symmetry: the
credible classes recorded are the ones recorded without it. Only disjoint transpositions are used, at most
:data:`~bnilp.ilp.settings.SYMMETRY_MAX_PAIRS`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bnilp.ilp import settings
from bnilp.ilp.families import _Data


@dataclass(frozen=True)
class TableSymmetry:
    """Disjoint transpositions (u v) that map the score table to itself, each with its family map."""

    #: the transposed variable pairs (u < v), disjoint
    pairs: tuple[tuple[int, int], ...]
    #: per pair, family k → the family of its image (child and parents with u and v swapped)
    maps: tuple[np.ndarray, ...]
    #: a bound on |s(g(G)) − s(G)| for every DAG G and group element g: pairs · n · the largest difference
    #: between a family's score and its image's (0 where they are equal bit for bit, as on the Table 1 files)
    slack: float = 0.0

    def images(self, choice: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The other DAGs of the orbit of ``choice`` under the group the transpositions generate
        (:func:`orbit`)."""
        return orbit(choice, self.maps)


def of(data: _Data) -> TableSymmetry:
    """:func:`table_transpositions` of ``data``, computed once per data object (phase 2 builds a model per cube)."""
    sym = getattr(data, "_symmetry", None)
    if sym is None:
        sym = data._symmetry = table_transpositions(data)
    return sym


def _swap_bits(mask: int, u: int, v: int) -> int:
    """``mask`` with bits u and v exchanged."""
    if ((mask >> u) & 1) == ((mask >> v) & 1):
        return mask
    return mask ^ ((1 << u) | (1 << v))


def _family_map(data: _Data, index: dict[tuple[int, int], int], u: int, v: int) -> np.ndarray | None:
    """Family k → the family (σ(i), σ(Π)) for σ = (u v), or None when one of them is not in the table."""
    swap = np.arange(data.n)
    swap[u], swap[v] = v, u
    out = np.empty(data.K, dtype=np.int64)
    for k, (c, m) in enumerate(zip(data.child.tolist(), data.pmask, strict=True)):
        image = index.get((int(swap[c]), _swap_bits(m, u, v)))
        if image is None:
            return None
        out[k] = image
    return out


def table_transpositions(data: _Data, max_pairs: int | None = None, rtol: float | None = None) -> TableSymmetry:
    """Disjoint transpositions (u v) of the variables, at most ``max_pairs`` (default
    :data:`~bnilp.ilp.settings.SYMMETRY_MAX_PAIRS`), each mapping every family (i, Π, s) of the table to a
    family (σ(i), σ(Π)) of the table with a score within ``rtol``·max(1, |s|) of s (default
    :data:`~bnilp.ilp.settings.SYMMETRY_RTOL`: a family and its image have the same counts, but the scoring
    kernel may sum their cells in another order). Pairs are taken in order (u, then v) and a pair meeting a
    variable already paired is skipped. A pair is checked family by family only when the sorted scores of u's
    and v's families agree (necessary, and cheap)."""
    max_pairs = settings.SYMMETRY_MAX_PAIRS if max_pairs is None else max_pairs
    rtol = settings.SYMMETRY_RTOL if rtol is None else rtol
    n, start, score = data.n, data.start, data.score
    per_child = [np.sort(score[start[i]:start[i + 1]]) for i in range(n)]
    index = {(int(c), m): k for k, (c, m) in enumerate(zip(data.child.tolist(), data.pmask, strict=True))}
    pairs: list[tuple[int, int]] = []
    maps: list[np.ndarray] = []
    used: set[int] = set()
    worst = 0.0
    for u in range(n):
        for v in range(u + 1, n):
            if (len(pairs) >= max_pairs or u in used or v in used or len(per_child[u]) != len(per_child[v])
                    or _differ(per_child[u], per_child[v], rtol)):
                continue
            fmap = _family_map(data, index, u, v)
            if fmap is not None and not _differ(score[fmap], score, rtol):
                pairs.append((u, v))
                maps.append(fmap)
                used.update((u, v))
                worst = max(worst, float(np.max(np.abs(score[fmap] - score), initial=0.0)))
    return TableSymmetry(tuple(pairs), tuple(maps), len(pairs) * n * worst)


def _differ(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    return bool(np.any(np.abs(a - b) > rtol * np.maximum(1.0, np.abs(b))))


def orbit(choice: tuple[int, ...], maps: tuple[np.ndarray, ...]) -> list[tuple[int, ...]]:
    """The DAGs reached from ``choice`` (a family per variable, in family order) by the family maps, itself
    excluded: its orbit under the group they generate (2^k DAGs at most for k commuting involutions). An
    image's families are sorted, which puts them in variable order again (families are numbered child by
    child)."""
    seen = {choice}
    todo = [choice]
    while todo:
        c = np.asarray(todo.pop(), dtype=np.int64)
        for fmap in maps:
            image = tuple(sorted(fmap[c].tolist()))
            if image not in seen:
                seen.add(image)
                todo.append(image)
    seen.discard(choice)
    return sorted(seen)


def lex_rows(pairs: Any, u: int, v: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The lex-leader order for σ = (u v), u < v, over the adjacency indicators ``pairs`` (keys (a, b),
    a < b): the couples (adj{u, y}, adj{v, y}) for every y ∉ {u, v} with an indicator, sorted by the key of
    adj{u, y}. In the global order of the keys, adj{u, y} comes before adj{v, y} (u < v), and σ exchanges
    exactly these couples, so x ≥_lex σ(x) in that global order reads: at the first couple whose two
    indicators differ, adj{u, y} = 1. One global order for every generator is what makes the rows of
    several generators keep each orbit's lexicographic maximum together."""
    out = []
    for y in sorted({a for p in pairs for a in p} - {u, v}):
        pu, pv = (min(u, y), max(u, y)), (min(v, y), max(v, y))
        if pu in pairs or pv in pairs:
            out.append((pu, pv))
    return sorted(out)


def add_lex_rows(model: Any, indicators: dict, sym: TableSymmetry, pairs: Any) -> int:
    """Add x ≥_lex σ(x) for each transposition of ``sym`` to ``model`` over the adjacency indicator variables
    (``indicators[("adj", key)]``; a missing one is 0), with continuous e_1..e_m: e_t = 1 iff the couples
    before t are equal. Rows: e_1 = 1, a_t − b_t ≥ e_t − 1, e_{t+1} ≤ e_t, e_{t+1} ≤ 1 − a_t + b_t and
    e_{t+1} ≥ 2e_t − 1 − a_t + b_t — at integral a, b these force e (e_t = 1: a_t ≥ b_t, and e_{t+1} = 1
    iff a_t = b_t; e_t = 0: e_{t+1} = 0, the last row vacuous) and forbid a_t < b_t after an equal prefix,
    and bound propagation on them fixes b_t = 0 (or a_t = 1) as soon as a branch fixes the couples before.
    Returns the number of rows."""
    def ind(key: tuple[int, int]) -> Any:
        return indicators.get(("adj", key), 0.0)

    rows = 0
    for g, (u, v) in enumerate(sym.pairs):
        couples = lex_rows(pairs, u, v)
        e = [model.addVar(name=f"lex{g}_{t}", vtype="C", lb=0.0, ub=1.0, obj=0.0) for t in range(len(couples) + 1)]
        model.addCons(e[0] == 1, name=f"lex{g}_start")
        rows += 1
        for t, (ka, kb) in enumerate(couples):
            a, b = ind(ka), ind(kb)
            model.addCons(a - b >= e[t] - 1, name=f"lex{g}_{t}_order")
            model.addCons(e[t + 1] <= e[t], name=f"lex{g}_{t}_down")
            model.addCons(e[t + 1] <= 1 - a + b, name=f"lex{g}_{t}_ends")
            model.addCons(e[t + 1] >= 2 * e[t] - 1 - a + b, name=f"lex{g}_{t}_holds")
            rows += 4
    return rows
