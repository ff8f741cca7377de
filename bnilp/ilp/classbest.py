"""The best DAG of each Markov equivalence class among many listed DAGs, in compiled code.

Peeling (:class:`bnilp.ilp.dp.Peeler`) lists every credible DAG; class enumeration keeps one DAG per
class, the best (highest score, ties to the lexicographically smallest family choice). Classes are
told apart by their class words (:meth:`bnilp.ilp.families._Data.class_words`: equal iff the DAGs
are Markov equivalent, Verma & Pearl 1990). :class:`BestPerClass` folds chunks of DAGs into an
open-addressing hash table keyed on those words — each DAG one probe, compared word for word, so
the grouping is exact whatever the hash — with the classes' words, best scores and best choices in
dense arrays, in the order the classes were first met.

A long class enumeration keeps every class found (phase 2 in cubes: the coordinator's list and each worker's
no-goods), so the table can also hold no words at all (``key="class"``): on a hash match the held DAG's words
are computed again from its row (:func:`bnilp.mec._adjacency_and_colliders`, O(n²)) and compared — still
exact, and 4·n + 16 bytes a class (row, score, hash) instead of 20·n + 16, plus 16–32 bytes of slots (n ≤ 62
variables). ``key="row"`` makes each DAG its
own class (DAG enumeration).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bnilp.compiled import njit
from bnilp.mec import MASK_MAX_VARIABLES, _adjacency_and_colliders, _cpdag_masks

if TYPE_CHECKING:
    from bnilp.ilp.families import _Data

#: slots per class at least (the table doubles past half full)
_LOAD = 2
_FNV_PRIME = 1099511628211
_MIX = -49064778989728563            # 0xff51afd7ed558ccd as a signed 64-bit integer (MurmurHash3's fmix64)
#: what tells two DAGs' classes apart: their words held in the table, their words computed again from the held
#: DAG's row, or the row itself (each DAG its own class)
KEYS = ("words", "class", "row")


@njit(cache=True, nogil=True)
def _hash(words, i):
    """A 64-bit hash of ``words[i]`` (FNV-1a over the words, then MurmurHash3's final mix)."""
    h = np.int64(-3750763034362895579)             # FNV offset basis 0xcbf29ce484222325
    for j in range(words.shape[1]):
        h = (h ^ words[i, j]) * _FNV_PRIME
    h ^= (h >> 33) & 0x7FFFFFFF
    h *= _MIX
    h ^= (h >> 33) & 0x7FFFFFFF
    return h


@njit(cache=True, nogil=True)
def _better(s, row, i, best_s, best_r, k):
    """True iff DAG ``row[i]`` with score ``s`` beats the held best of class k: (−score, choice) smaller."""
    if s != best_s[k]:
        return s > best_s[k]
    for j in range(row.shape[1]):
        if row[i, j] != best_r[k, j]:
            return row[i, j] < best_r[k, j]
    return False


@njit(cache=True, nogil=True)
def _insert_slot(slots, hashes, k):
    """Put class k into the first free slot of its probe sequence (linear probing)."""
    mask = len(slots) - 1
    p = hashes[k] & mask
    while slots[p] >= 0:
        p = (p + 1) & mask
    slots[p] = k


@njit(cache=True, nogil=True)
def _rehash(slots, hashes, count):
    """Rebuild the slots of classes 0 … count − 1 after the table grew."""
    slots[:] = -1
    for k in range(count):
        _insert_slot(slots, hashes, k)


@njit(cache=True, nogil=True)
def _same(words, i, rows, keys, best_r, k, pmask, par, adj, col):
    """Whether DAG i (``words[i]``) is of held class k: its held words (``keys`` with columns) compared word for
    word, else k's words computed again from its row — the parent masks ``pmask`` of its families, or, with
    ``pmask`` empty, the rows themselves (each DAG its own class)."""
    n = best_r.shape[1]
    if keys.shape[1] > 0:
        for j in range(keys.shape[1]):
            if keys[k, j] != words[i, j]:
                return False
        return True
    if len(pmask) == 0:
        for j in range(n):
            if best_r[k, j] != rows[i, j]:
                return False
        return True
    for c in range(n):
        par[c] = pmask[best_r[k, c]]
    _adjacency_and_colliders(par, adj, col)
    for j in range(n):
        if adj[j] != words[i, j] or col[j] != words[i, n + j]:
            return False
    return True


@njit(cache=True, nogil=True)
def _fold(words, scores, rows, slots, hashes, keys, best_s, best_r, held, pmask, fresh):
    """Fold DAGs ``rows`` (class words ``words``, scores ``scores``) into the table of ``held[0]`` classes and
    set ``held[0]`` to the new count; ``fresh[i]`` set when DAG i opened a new class. Classes are told apart by
    :func:`_same` on a hash match. The caller leaves room: ``held[0] + len(rows)`` classes fit the arrays and
    half the slots."""
    count = held[0]
    mask = len(slots) - 1
    n = best_r.shape[1]
    par = np.empty(n, dtype=np.int64)
    adj = np.empty(n, dtype=np.int64)
    col = np.empty(n, dtype=np.int64)
    for i in range(len(rows)):
        h = _hash(words, i)
        p = h & mask
        fresh[i] = False
        while True:
            k = slots[p]
            if k < 0:                                   # a new class
                slots[p] = count
                hashes[count] = h
                if keys.shape[1] > 0:
                    keys[count] = words[i]
                best_s[count] = scores[i]
                best_r[count] = rows[i]
                fresh[i] = True
                count += 1
                break
            if hashes[k] == h and _same(words, i, rows, keys, best_r, k, pmask, par, adj, col):
                if _better(scores[i], rows, i, best_s, best_r, k):
                    best_s[k] = scores[i]
                    best_r[k] = rows[i]
                break
            p = (p + 1) & mask
    held[0] = count


def _as_int64_words(words: np.ndarray) -> np.ndarray:
    """Class words as int64 columns: int64 words as they are, packed bytes (n past the mask width) padded
    to whole 8-byte words and viewed as int64 — equal rows stay equal and different ones different."""
    if words.dtype == np.int64:
        return np.ascontiguousarray(words)
    b = np.ascontiguousarray(words, dtype=np.uint8)
    pad = (-b.shape[1]) % 8
    if pad:
        b = np.concatenate([b, np.zeros((len(b), pad), dtype=np.uint8)], axis=1)
    return np.ascontiguousarray(b).view(np.int64)


@dataclass
class _Arrays:
    """A table's arrays, replaced as a whole when it grows: a KeyboardInterrupt (the cubes' coordinator goes on
    draining its workers after one) lands before or after the one assignment, never inside a half-built table;
    the compiled fold cannot be interrupted and updates ``held[0]``, the class count, itself."""
    hashes: np.ndarray
    keys: np.ndarray
    best_s: np.ndarray
    best_r: np.ndarray
    slots: np.ndarray
    held: np.ndarray

    @classmethod
    def empty(cls, cap: int, n: int, nw: int) -> _Arrays:
        """Room for ``cap`` classes of ``n`` variables with ``nw`` held words each, and 2·cap slots at least."""
        slots = np.full(1 << int(_LOAD * cap - 1).bit_length(), -1, dtype=np.int64)
        return cls(np.zeros(cap, dtype=np.int64), np.zeros((cap, nw), dtype=np.int64), np.zeros(cap),
                   np.zeros((cap, n), dtype=np.int32), slots, np.zeros(1, dtype=np.int64))


#: the most bytes of rows a :class:`BestPerClass` sets aside at its first fold (it doubles as it fills)
FIRST_TABLE_BYTES = 1 << 26


class BestPerClass:
    """Per class (a row of class words), the best DAG folded in so far: the highest score, ties to the
    lexicographically smallest row of family indices — the same as sorting all DAGs by
    (class, −score, choice) and keeping each class's first. ``len`` is the number of classes.

    Parameters
    ----------
    key
        One of :data:`KEYS`: ``"words"`` holds each class's words; ``"class"`` holds none and computes a held
        DAG's words again from ``pmask`` (each family's parent mask, int64; at most
        :data:`~bnilp.mec.MASK_MAX_VARIABLES` variables) on a hash match; ``"row"``: each DAG its own class
        (``words`` not needed).
    words_of
        rows → their class words, for :meth:`add_rows` (e.g. :meth:`~bnilp.ilp.families._Data.class_words`).
    """

    def __init__(self, n_variables: int, capacity: int = 1024, key: str = "words", pmask: np.ndarray | None = None,
                 words_of: Callable[[np.ndarray], np.ndarray] | None = None):
        if key not in KEYS:
            raise ValueError(f"key must be one of {KEYS}, not {key!r}")
        if key == "class" and (pmask is None or n_variables > MASK_MAX_VARIABLES):
            raise ValueError(f"key 'class' needs pmask and at most {MASK_MAX_VARIABLES} variables")
        self.n = n_variables
        self.key = key
        self.pmask = (np.ascontiguousarray(pmask, dtype=np.int64) if key == "class" else np.zeros(0, dtype=np.int64))
        self._words_of = words_of
        self._words: int | None = None          # columns of the int64 words, fixed by the first fold
        self._a = _Arrays.empty(max(16, int(capacity)), self.n, 0)

    @property
    def count(self) -> int:
        """The number of classes held."""
        return int(self._a.held[0])

    def _grow(self, need: int, nw: int) -> None:
        old = self._a
        cap = len(old.hashes)
        held_words = nw if self.key == "words" else 0
        if self._words is None:                 # the first fold: the arrays, then the width they hold
            # (no more than FIRST_TABLE_BYTES of rows before they are needed: a class's words on 1,200 variables
            # take 270 KB, and 1,024 of them were set aside at once)
            row_bytes = 8 * held_words + 4 * self.n + 16
            cap = min(cap, max(16, FIRST_TABLE_BYTES // row_bytes))
            self._a = _Arrays.empty(max(cap, need), self.n, held_words)
            self._words = nw
            return
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        c = self.count
        new = _Arrays.empty(cap, self.n, held_words)
        for name in ("hashes", "keys", "best_s", "best_r"):
            getattr(new, name)[:c] = getattr(old, name)[:c]
        _rehash(new.slots, new.hashes, c)
        new.held[0] = c
        self._a = new

    def __len__(self) -> int:
        return self.count

    def held_rows(self) -> np.ndarray:
        """Each class's best row (family indices, one per variable), in the order the classes were opened: a
        class's row may be replaced by a better member (the same skeleton), never moved."""
        return self._a.best_r[:self.count]

    def add(self, words: np.ndarray | None, scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Fold DAGs in: ``rows[m, v]`` the family of variable v in DAG m, ``words[m]`` its class words
        (:meth:`~bnilp.ilp.families._Data.class_words`; None with ``key="row"``), ``scores[m]`` its exact
        score. Returns, per DAG, whether it opened a new class."""
        rows = np.ascontiguousarray(rows, dtype=np.int32).reshape(-1, self.n)
        fresh = np.zeros(len(rows), dtype=bool)
        if len(rows) == 0:
            return fresh
        w = _as_int64_words(rows.astype(np.int64) if self.key == "row" else words)
        if self._words is not None and w.shape[1] != self._words:
            raise ValueError(f"words: {w.shape[1]} columns, the table holds {self._words}")
        if self.key == "class" and w.shape[1] != 2 * self.n:
            raise ValueError(f"words: key 'class' compares 2·n = {2 * self.n} int64 words (adjacency and colliders "
                             f"masks), not {w.shape[1]}")
        self._grow(self.count + len(rows), w.shape[1])
        s = np.ascontiguousarray(scores, dtype=np.float64)
        a = self._a
        _fold(w, s, rows, a.slots, a.hashes, a.keys, a.best_s, a.best_r, a.held, self.pmask, fresh)
        return fresh

    def add_rows(self, rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """:meth:`add` with the class words computed here (a table made by :func:`choice_table`)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1, self.n)
        return self.add(None if self.key == "row" else self._words_of(rows), scores, rows)

    def ranked(self) -> tuple[np.ndarray, np.ndarray]:
        """Each class's best (score, row), best first: by −score, then the row lexicographically."""
        a, c = self._a, self.count
        return ranked(a.best_s[:c], a.best_r[:c])


def ranked(scores: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scores`` and ``rows`` best first: by −score, then the row lexicographically (Python's order of the
    pairs (−score, tuple(row)) for rows of one length)."""
    order = np.lexsort((*rows.T[::-1], -scores))
    return scores[order], rows[order]


def choice_table(data: _Data, classes: bool, capacity: int = 1024) -> BestPerClass:
    """The compact table of phase 2's credible choices for ``data``: one
    per class (``classes``: keyed on the class words, held as rows only up to
    :data:`~bnilp.mec.MASK_MAX_VARIABLES` variables) or per DAG; fold choices in with
    :meth:`BestPerClass.add_rows`."""
    if not classes:
        return BestPerClass(data.n, capacity, key="row")
    if data.n <= MASK_MAX_VARIABLES:
        return BestPerClass(data.n, capacity, key="class", pmask=data.pmask64(), words_of=data.class_words)
    return BestPerClass(data.n, capacity, words_of=data.class_words)


@njit(cache=True, nogil=True)
def _mcs_extensions(dpa, und):
    """Parent masks of one DAG per CPDAG (``dpa``: directed parent masks, ``und``: undirected neighbour masks):
    the undirected edges oriented from earlier to later in a maximum cardinality search (Tarjan & Yannakakis
    1984; ties to the lowest index). An MCS order of a chordal graph is the reverse of a perfect elimination
    order, so orienting along it makes no v-structure and no cycle: a consistent extension, fixed by the
    CPDAG alone (Meek 1995, Andersson, Madigan & Perlman 1997)."""
    m, n = dpa.shape
    out = np.empty((m, n), dtype=np.int64)
    weight = np.zeros(n, dtype=np.int64)
    one = np.int64(1)
    for i in range(m):
        weight[:] = 0
        seen = np.int64(0)
        for _ in range(n):
            v, best = -1, -1
            for u in range(n):
                if not (seen >> u) & one and weight[u] > best:
                    v, best = u, weight[u]
            out[i, v] = dpa[i, v] | (und[i, v] & seen)
            seen |= one << v
            for u in range(n):
                if (und[i, v] >> u) & one:
                    weight[u] += 1
    return out


@njit(cache=True, nogil=True)
def _rows_of_masks(masks, fam, fidx, fstart, rows):
    """Each DAG's family rows (``masks[i, v]`` looked up among v's sorted family masks ``fam[fstart[v]:fstart[v+1]]``,
    ``fidx`` their family indices); a DAG with a parent set the table lacks keeps ``rows[i]``. Returns the rows
    and which DAGs were replaced."""
    m, n = masks.shape
    out = rows.copy()
    found = np.zeros(m, dtype=np.bool_)
    for i in range(m):
        ok = True
        for v in range(n):
            lo, hi = fstart[v], fstart[v + 1]
            while lo < hi:
                mid = (lo + hi) // 2
                if fam[mid] < masks[i, v]:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == fstart[v + 1] or fam[lo] != masks[i, v]:
                ok = False
                break
            out[i, v] = fidx[lo]
        if not ok:
            out[i] = rows[i]
        found[i] = ok
    return out, found


def canonical_representatives(data: _Data, scores: np.ndarray, rows: np.ndarray,
                              tol: float, floor: float = -np.inf,
                              equal_within: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each class's listed DAG replaced by one fixed by the class alone (:func:`_mcs_extensions` of its CPDAG,
    :func:`bnilp.mec._cpdag_masks`), so which DAG stands for a class — and so the order of classes whose scores
    tie — no longer depends on which DAG of it the search happened to find (processes, cubes, peeling or
    branch-and-cut). A DAG is kept where the table lacks one of the fixed DAG's parent sets (a palim, knowledge)
    or where the two scores differ by more than ``equal_within`` (default ``tol``; a score that is not
    score-equivalent: the class's listed score stays the one found — a table only assumed score-equivalent is
    given the rounding slack its check allows, :func:`bnilp.pipeline.check_assumed_equivalence`, else which DAG a
    class of a 4-decimal file listed depended on the search path, a review), or where the fixed DAG falls below
    both the DAG found and ``floor`` (the credible threshold: a class is credible by its best member, and float
    noise must not take it out), or where it breaks an ancestor statement of ``data.knowledge`` (arrows and tiers
    live in the table; adjacencies hold for every member of a class) — there, under background
    knowledge, the least member that the table and the knowledge admit stands for it
    (:func:`_least_admitted_member`; a class past :data:`CANONICAL_LISTING_MAX` DAGs, or past
    :data:`CANONICAL_LISTING_BUDGET` DAGs listed, keeps the DAG found, as does a palim without knowledge).
    Returns (scores, rows) best first
    (:func:`ranked`). Up to
    :data:`~bnilp.mec.MASK_MAX_VARIABLES` variables; beyond, the rows as they are."""
    if data.n > MASK_MAX_VARIABLES or not len(rows):
        return scores, rows
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    pm = data.pmask64()[rows]
    dpa, und = _cpdag_masks(pm)
    fixed = _mcs_extensions(dpa, und)
    order = np.lexsort((data.pmask64(), data.child))            # by child, then mask
    fam = data.pmask64()[order]
    fstart = np.searchsorted(data.child[order], np.arange(data.n + 1)).astype(np.int64)
    new_rows, found = _rows_of_masks(fixed, fam, order.astype(np.int64), fstart, rows)
    new_scores = data.exact_rows(new_rows)
    within = tol if equal_within is None else max(tol, equal_within)
    use = found & (np.abs(new_scores - scores) <= within) & (new_scores >= np.minimum(scores, floor))
    known = data.knowledge
    ancestors = known is not None and bool(known.required_ancestors or known.forbidden_ancestors)
    if ancestors:
        for i in np.flatnonzero(use):           # the only statements a member of the class may break alone
            use[i] = known.allows(data.parents(tuple(new_rows[i].tolist())))
    unusable = np.flatnonzero(~use) if known is not None else []
    if len(unusable):                           # the least member the table and the knowledge admit, if small
        lookup, index = member_index(data)
        budget = CANONICAL_LISTING_BUDGET
        for i in unusable.tolist():
            least, listed = _least_admitted_member(data, rows[i], float(scores[i]), tol, lookup, index, ancestors,
                                                   floor)
            budget -= listed + CANONICAL_CLASS_COST
            if least is not None:
                new_rows[i], new_scores[i], use[i] = least[0], least[1], True
            if budget <= 0:
                break
    out_rows = np.where(use[:, None], new_rows, rows).astype(np.int32)
    return ranked(np.where(use, new_scores, scores), out_rows)


#: under background knowledge, a class whose fixed DAG the table or the knowledge rules out is listed, up to
#: this many DAGs, for its least admitted member (:func:`canonical_representatives`); a larger one keeps the DAG
#: the search found, and so do all once this many DAGs were listed in one call
CANONICAL_LISTING_MAX = 2_000
CANONICAL_LISTING_BUDGET = 1_000_000
#: what a class costs the budget besides its DAGs (its CPDAG and count: about ten DAGs' worth of listing)
CANONICAL_CLASS_COST = 10


def _admitted_members(data: _Data, row: np.ndarray, lookup: dict[tuple[int, frozenset], int],
                      index: dict[str, int], ancestors: bool) -> tuple[list[tuple[list[int], float]] | None, int]:
    """((family choice, exact score) of every member of the class of the DAG ``row`` that the table holds and the
    knowledge's ancestor statements allow (``ancestors``; arrows and tiers live in the table), DAGs listed); None
    for a class past :data:`CANONICAL_LISTING_MAX` DAGs (counted, not listed). ``lookup``: (child index, parent
    set) → family; ``index``: name → index."""
    from bnilp.mec import count_dags_in_mec, dags_in_mec

    parents = data.parents(tuple(row.tolist()))
    if count_dags_in_mec(parents) > CANONICAL_LISTING_MAX:
        return None, 0
    members: list[tuple[list[int], float]] = []
    count = 0
    for dag in dags_in_mec(parents, data.names):
        count += 1
        ks = [lookup.get((index[v], ps)) for v, ps in dag.items()]
        if any(k is None for k in ks) or (ancestors and not data.knowledge.allows(dag)):
            continue
        choice = [k for _, k in sorted(zip((index[v] for v in dag), ks, strict=True))]
        members.append((choice, data.exact(tuple(choice))))
    return members, count


def member_index(data: _Data) -> tuple[dict[tuple[int, frozenset], int], dict[str, int]]:
    """The look-ups :func:`_admitted_members` takes: (child index, parent set) → family, name → index."""
    return {(int(data.child[k]), data.sets[k]): k for k in range(data.K)}, {v: j for j, v in enumerate(data.names)}


def best_members_below(data: _Data, scores: np.ndarray, rows: np.ndarray, threshold: float,
                       index: tuple[dict, dict] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each class listed by a DAG scoring below ``threshold`` (OPT − ε − tie tolerance) re-judged by its best
    member that the table and the knowledge admit, which then stands for it (ties to the least family row).

    Invariant: a class is credible iff its best admitted member is. Branch-and-cut records a class by the first
    member it meets and excludes the whole class by its no-good, so the other members are never met; where the
    scores of a class's members differ by float noise (a nearly score-equivalent table) and OPT was raised after
    the search (phase 1's DAG a hair below the true OPT, within SCIP's tolerance), the member met can fall below
    the final threshold while another stays above it. A class past :data:`CANONICAL_LISTING_MAX` DAGs, or met once
    :data:`CANONICAL_LISTING_BUDGET` DAGs were listed in this call, keeps the DAG found. Returns (scores, rows) best
    first (:func:`ranked`). ``index``: :func:`member_index` of ``data``, where a caller keeps it between calls."""
    below = np.flatnonzero(scores < threshold)
    if not len(below) or data.n > MASK_MAX_VARIABLES:
        return scores, rows
    scores, rows = scores.copy(), rows.copy()
    lookup, index = member_index(data) if index is None else index
    known = data.knowledge
    ancestors = known is not None and bool(known.required_ancestors or known.forbidden_ancestors)
    budget = CANONICAL_LISTING_BUDGET
    for i in below.tolist():
        members, listed = _admitted_members(data, rows[i], lookup, index, ancestors)
        budget -= listed + CANONICAL_CLASS_COST
        if members:
            choice, score = min(members, key=lambda cs: (-cs[1], cs[0]))
            if score > scores[i]:
                rows[i], scores[i] = choice, score
        if budget <= 0:
            break
    return ranked(scores, rows)


def _least_admitted_member(data: _Data, row: np.ndarray, score: float, tol: float,
                           lookup: dict[tuple[int, frozenset], int], index: dict[str, int],
                           ancestors: bool, floor: float = -np.inf) -> tuple[tuple[list[int], float] | None, int]:
    """((the class member of the DAG ``row`` whose family row is least — lexicographically, variable by variable
    — among those the table holds, scoring within ``tol`` of ``score`` and not below both ``score`` and
    ``floor``, and allowed by the knowledge's ancestor statements (``ancestors``; arrows and tiers live in the
    table), its score), DAGs listed): fixed by the class, the table and the knowledge alone, whichever member the
    search found; None past :data:`CANONICAL_LISTING_MAX` (:func:`_admitted_members`)."""
    members, count = _admitted_members(data, row, lookup, index, ancestors)
    least = min(score, floor)
    fits = [(choice, exact) for choice, exact in members or () if abs(exact - score) <= tol and exact >= least]
    return (min(fits) if fits else None), count
