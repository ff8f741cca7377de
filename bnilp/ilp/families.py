"""The family variables flattened into arrays (:class:`_Data`) and the rows written over them:
cluster constraints and the no-good that excludes a whole Markov equivalence class."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bnilp.compiled import njit
from bnilp.errors import LimitError
from bnilp.ilp import settings
from bnilp.ilp.result import Parents
from bnilp.mec import MASK_MAX_VARIABLES, _adjacency_and_colliders
from bnilp.scorefile import ScoreTable
from bnilp.scores.base import score_equivalent


def check_kcluster(cvec: np.ndarray, k: int) -> None:
    """Refuse a k-cluster cut outside 1 ≤ k < |C| (``cvec``: C's members as a bool vector): with |C| < k its
    row would read 0 ≤ |C| − k < 0 and cut off every DAG."""
    if not 1 <= k < int(cvec.sum()):
        raise ValueError(f"a k-cluster cut needs 1 <= k < |C|, not k={k} with |C|={int(cvec.sum())}")


#: from this many bytes of ``_Data.pbool`` (K × n) on, its allocation is checked against the free memory first
DENSE_CHECK_BYTES = 1 << 26


def _check_dense_room(k: int, n: int) -> None:
    """A :class:`~bnilp.errors.LimitError` (exit 3, ``limited``) where the family arrays' dense K × n matrix
    (``_Data.pbool``, a byte a cell) would take more than half the free memory: the out-of-memory killer would end
    the run with no message (a review: 0.95 GB at 10⁶ families of 1,000 variables, 3 GB at 3,000)."""
    need = k * n
    if need < DENSE_CHECK_BYTES:
        return
    from bnilp.memory import free_memory

    free = free_memory()
    if free is not None and need > free // 2:
        raise LimitError(f"memory_limit: the score table's {k} families of {n} variables take about "
                         f"{need / 2**30:.3g} GiB as the search's dense family × variable matrix, more than half the "
                         f"{free / 2**30:.1f} GiB of free memory (fewer families: a lower BF or a palim when scoring)")


class _Data:
    """Flattened families. Family k: child ``child[k]``, parents ``pbool[k]`` (bool row over
    variables), exact score ``score[k]``, shifted objective ``obj[k] = score[k] − best[child]``.
    Families of one child are contiguous (``start[i]:start[i+1]``) and sorted best first."""

    def __init__(self, table: ScoreTable, check_room: bool = True):
        self.names = list(table.variables)
        self.knowledge = table.knowledge          # rows the family filter cannot say (ilp.knowledge_rows)
        #: whether the table's record says its score is score-equivalent (None: it says nothing)
        self.score_equivalent = score_equivalent(table.meta)
        self.n = n = len(self.names)
        index = {v: i for i, v in enumerate(self.names)}
        child, sets, scores, start = [], [], [], [0]
        for i, v in enumerate(self.names):
            for ps, s in table.sorted_family(v):
                child.append(i)
                sets.append(ps)
                scores.append(float(s))
            start.append(len(child))
        self.K = len(child)
        self.child = np.asarray(child, dtype=np.intp)
        self.sets: list[frozenset[str]] = sets
        self.score = np.asarray(scores, dtype=float)
        self.start = np.asarray(start, dtype=np.intp)
        #: whether building :attr:`pbool` asks the free memory first (a restriction of a table that passed is
        #: smaller: not asked again)
        self._check_room = check_room
        self._pbool: np.ndarray | None = None
        members = [sorted(index[p] for p in ps) for ps in sets]
        lens = np.fromiter((len(m) for m in members), dtype=np.int64, count=self.K)
        idx = np.fromiter((i for m in members for i in m), dtype=np.int64, count=int(lens.sum()))
        self.pmask = [sum(1 << i for i in m) for m in members]
        self._pmask64: np.ndarray | None = None
        #: each family's parents as (start, indices): family k's are indices[start[k]:start[k + 1]], increasing
        self._parent_csr = (np.concatenate(([0], np.cumsum(lens))).astype(np.int64), idx)
        self.child_names = [self.names[c] for c in child]       # family k's child, as a Python list
        self.best = np.array([self.score[start[i]] if start[i + 1] > start[i] else -math.inf
                              for i in range(n)])
        self.offset = math.fsum(self.best) if n else 0.0
        self.obj = self.score - self.best[self.child] if self.K else np.zeros(0)
        self._finite = bool(np.isfinite(self.score).all())

    @property
    def pbool(self) -> np.ndarray:
        """pbool[k, j]: variable j is a parent in family k (K × n, a byte a cell): :meth:`dense_parents`."""
        return self.dense_parents()

    def dense_parents(self) -> np.ndarray:
        """:attr:`pbool`, built on first use — the forests (:mod:`bnilp.ilp.forests`) never use it: 0.8 GB at 3,000
        variables of 272,150 families. Past half the free memory a :class:`~bnilp.errors.LimitError` instead
        (:func:`_check_dense_room`)."""
        if self._pbool is None:
            if self._check_room:
                _check_dense_room(self.K, self.n)
            start, idx = self._parent_csr
            dense = np.zeros((self.K, self.n), dtype=bool)
            dense[np.repeat(np.arange(self.K), np.diff(start)), idx] = True
            self._pbool = dense
        return self._pbool

    def family_sizes(self) -> np.ndarray:
        """|Π| of every family (int64), from the sparse rows."""
        return np.diff(self._parent_csr[0])

    def restricted(self, keep: np.ndarray) -> tuple[_Data, np.ndarray]:
        """The families with ``keep[k]`` (same variables, knowledge and order), and each old family's
        index among them (−1 where removed). A variable keeps its best remaining family as ``best``."""
        fams: dict[str, dict[frozenset[str], float]] = {v: {} for v in self.names}
        for k in np.flatnonzero(keep):
            fams[self.names[self.child[k]]][self.sets[k]] = float(self.score[k])
        sub = _Data(ScoreTable(list(self.names), fams, knowledge=self.knowledge), check_room=False)
        sub.score_equivalent = self.score_equivalent
        new_index = np.where(keep, np.cumsum(keep) - 1, -1)
        assert all(sub.sets[new_index[k]] == self.sets[k] for k in np.flatnonzero(keep))
        return sub, new_index

    def class_words(self, rows: np.ndarray) -> np.ndarray:
        """One row per DAG, equal iff the DAGs are Markov equivalent (Verma & Pearl 1990: same skeleton and
        v-structures). ``rows[m, v]`` is the family of variable v in DAG m. The row is each node's
        adjacency mask and, per child c, the mask V_c of its parents that have a non-adjacent co-parent:
        given the skeleton, c's v-structures are exactly the non-adjacent pairs inside V_c (a pair of
        non-adjacent parents of c puts both in V_c; two members of V_c are parents of c), and V_c is
        determined by them — so equal rows ⇔ same skeleton and v-structures. Compiled, O(n·|Pa|) a DAG;
        past :data:`~bnilp.mec.MASK_MAX_VARIABLES` (masks in int64) the packed matrices of
        :meth:`_class_words_packed`."""
        if self.n > MASK_MAX_VARIABLES:
            return self._class_words_packed(rows)
        return _class_words(np.ascontiguousarray(rows, dtype=np.int64).reshape(len(rows), self.n), self.pmask64())

    def pmask64(self) -> np.ndarray:
        """Each family's parent mask as int64 (at most :data:`~bnilp.mec.MASK_MAX_VARIABLES` variables)."""
        if self._pmask64 is None:
            self._pmask64 = np.array(self.pmask, dtype=np.int64)
        return self._pmask64

    def candidate_parents(self) -> np.ndarray:
        """cand[i, j]: some family of variable i has j among its parents (n × n)."""
        cand = np.zeros((self.n, self.n), dtype=bool)
        for i in range(self.n):
            if self.start[i + 1] > self.start[i]:
                cand[i] = self.pbool[self.start[i]:self.start[i + 1]].any(axis=0)
        return cand

    def _class_words_packed(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`class_words` as packed bits (uint8), for any number of variables: the adjacency matrix's upper
        triangle, then per child c the mask V_c of its parents that have a non-adjacent co-parent — the words'
        invariant, n(n−1)/2 + n² bits and O(Σ_c |Pa_c|²) work a DAG (:func:`_packed_class_words`). It held every
        triple (c, a, b) with a → c ← b unshielded: n³/2 bits, and an n³ temporary a DAG — 206 GiB for the
        first 1,024 classes of a 1,200-variable table (a review)."""
        start, idx = self.parent_csr()
        rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1, self.n)
        return _packed_class_words(rows, start, idx, self.n)

    def parent_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Each family's parents as (start, indices), int64: family k's are ``indices[start[k]:start[k + 1]]``,
        increasing (the rows of ``pbool`` in sparse form, built with it)."""
        return self._parent_csr

    def arcs(self, fams: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The arrows of the families ``fams`` as (parent, child, position in ``fams``), one entry an arrow, in
        the order of ``fams`` and, within a family, of its parents: O(Σ |Π|), not the K × n of ``pbool``."""
        start, idx = self.parent_csr()
        fams = np.asarray(fams, dtype=np.int64)
        lens = start[fams + 1] - start[fams]
        pos = np.repeat(np.arange(len(fams)), lens)
        offs = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
        return idx[start[fams][pos] + offs], self.child[fams][pos].astype(np.int64), pos

    def exact(self, choice: tuple[int, ...]) -> float:
        """The DAG's score Σ_i score(i, Π_i), correctly rounded (``math.fsum``: the same in any order)."""
        return math.fsum(self.score[list(choice)].tolist()) if len(choice) else 0.0

    def exact_rows(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`exact` of every DAG ``rows[m]`` (family indices), compiled: bit for bit ``math.fsum``."""
        if len(rows) == 0 or not self._finite:
            return np.array([math.fsum(self.score[r]) for r in rows])
        return _fsum_rows(self.score, np.ascontiguousarray(rows, dtype=np.int64))

    def parents(self, choice: tuple[int, ...]) -> Parents:
        names = self.child_names
        return {names[k]: self.sets[k] for k in choice}

    def mec_row(self, choice: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, float]:
        """The no-good that excludes the whole Markov equivalence class of the DAG ``choice``.

        With adj_e = Σ_{Π∋u} x(v,Π) + Σ_{Π∋v} x(u,Π) (0/1 on DAGs: the 2-cluster rows) and
        col_(a,c,b) = Σ_{Π⊇{a,b}} x(c,Π), a DAG is in the class of M iff it has M's skeleton E and,
        on M's unshielded triples U, colliders exactly at M's v-structures V (Verma & Pearl 1990):

            Σ_{e∈E} (1 − adj_e) + Σ_{e∉E} adj_e + Σ_{t∈V} (1 − col_t) + Σ_{t∈U∖V} col_t ≥ 1

        excludes exactly the class (every term is 0 or 1 on a DAG, all are 0 only inside it) —
        GOBNILP's kbestMEC row written in the family variables. Family (c, Π) gets the coefficient
        |Π| − 2·|Π ∩ E(c)| + p(Π ∩ E(c)) − 2·p(Π ∩ Pa_M(c)), p(S) = the pairs of S non-adjacent in M.
        Returns (family indices, coefficients, right-hand side 1 − |E| − |V|)."""
        n = self.n
        pa = np.zeros((n, n), dtype=bool)               # pa[c, u]: u → c in M
        for k in choice:
            pa[self.child[k]] = self.pbool[k]
        adj = pa | pa.T
        nonadj = ~adj
        np.fill_diagonal(nonadj, False)
        p = self.pbool.astype(np.int64)
        inn = (self.pbool & adj[self.child]).astype(np.int64)      # Π ∩ neighbours of c in M
        inpa = (self.pbool & pa[self.child]).astype(np.int64)      # Π ∩ parents of c in M
        na = nonadj.astype(np.int64)
        pairs_nbrs = ((inn @ na) * inn).sum(axis=1) // 2
        pairs_pa = ((inpa @ na) * inpa).sum(axis=1) // 2
        coef = p.sum(axis=1) - 2 * inn.sum(axis=1) + pairs_nbrs - 2 * pairs_pa
        n_edges = int(adj.sum()) // 2
        n_vstructs = int(sum(((pa[c].astype(np.int64) @ na) * pa[c]).sum() // 2 for c in range(n)))
        fams = np.flatnonzero(coef)
        return fams, coef[fams].astype(float), float(1 - n_edges - n_vstructs)

    def class_indicators(self) -> tuple[dict[tuple[int, int], np.ndarray], dict[tuple[int, int, int], np.ndarray]]:
        """Families behind each adjacency indicator adj_{u,v} (u < v) and each collider indicator
        col_(a,c,b) = Σ_{Π⊇{a,b}} x(c,Π) (a < b) that some family can switch on."""
        pairs: dict[tuple[int, int], list[int]] = {}
        triples: dict[tuple[int, int, int], list[int]] = {}
        for k in range(self.K):
            c = int(self.child[k])
            ps = np.flatnonzero(self.pbool[k]).tolist()
            for u in ps:
                pairs.setdefault((min(u, c), max(u, c)), []).append(k)
            for i, a in enumerate(ps):
                for b in ps[i + 1:]:
                    triples.setdefault((a, c, b), []).append(k)
        return ({p: np.asarray(f, dtype=np.intp) for p, f in pairs.items()},
                {t: np.asarray(f, dtype=np.intp) for t, f in triples.items()})

    def mec_row_indicators(self, choice: tuple[int, ...], pairs: Any, triples: Any
                           ) -> tuple[list[tuple[str, Any]], float]:
        """:meth:`mec_row` over the indicators of :meth:`class_indicators`: [(("adj", p) | ("col", t), coef)] and
        the right-hand side — O(candidate pairs + triples) nonzeros instead of one per family."""
        n = self.n
        pa = np.zeros((n, n), dtype=bool)
        for k in choice:
            pa[self.child[k]] = self.pbool[k]
        adj = pa | pa.T
        terms: list[tuple[Any, float]] = [(("adj", p), -1.0 if adj[p] else 1.0) for p in pairs]
        n_edges = int(adj.sum()) // 2
        n_v = 0
        for c in range(n):
            nbrs = np.flatnonzero(adj[c]).tolist()
            for i, a in enumerate(nbrs):
                for b in nbrs[i + 1:]:
                    if adj[a, b]:
                        continue
                    if pa[c, a] and pa[c, b]:
                        terms.append((("col", (a, c, b)), -1.0))
                        n_v += 1
                    elif (a, c, b) in triples:
                        terms.append((("col", (a, c, b)), 1.0))
        return terms, float(1 - n_edges - n_v)

    def indicator_positions(self, pairs: Any, triples: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """The positions of :meth:`class_indicators`' keys in their order (pairs, then triples) for
        :meth:`mec_row_positions`: (the pairs as an array of (u, v), a dense n×n×n table of each triple's
        position, −1 where a triple has no indicator). None past :data:`~bnilp.mec.MASK_MAX_VARIABLES`
        variables (the table's n³ entries; :meth:`mec_row_indicators` serves there)."""
        n = self.n
        if n > MASK_MAX_VARIABLES:
            return None
        pair_list = np.array(list(pairs), dtype=np.int64).reshape(len(pairs), 2)
        triple_pos = np.full((n, n, n), -1, dtype=np.int64)
        for i, (a, c, b) in enumerate(triples, start=len(pairs)):
            triple_pos[a, c, b] = i
        return pair_list, triple_pos

    def mec_row_positions(self, choice: tuple[int, ...], positions: tuple[np.ndarray, np.ndarray]
                          ) -> tuple[np.ndarray, np.ndarray, float]:
        """:meth:`mec_row_indicators` compiled, over positions (:meth:`indicator_positions`) instead of keys:
        (positions, coefficients, right-hand side), the same terms in the same order."""
        pair_list, triple_pos = positions
        pos, coef, rhs = _mec_row_terms(np.asarray(choice, dtype=np.int64), self.child, self.pbool,
                                        pair_list, triple_pos)
        return pos, coef, float(rhs)

    def cluster_families(self, cvec: np.ndarray) -> np.ndarray:
        """Indices of families whose child is in C and whose parents meet C."""
        sel = cvec[self.child] & self.pbool[:, cvec].any(axis=1)
        return np.flatnonzero(sel)

    def cluster_row(self, cvec: np.ndarray, k: int = 1) -> tuple[np.ndarray, float | None, float | None]:
        """The sparser of the two equivalent forms of C's k-cluster constraint (equivalent given the
        convexity rows Σ_W x(v,W) = 1): ``Σ_{i∈C} Σ_{|Π∩C|≥k} x ≤ |C| − k`` or ``Σ_{i∈C} Σ_{|Π∩C|<k} x ≥ k``
        (k = 1: the cluster cut; see :func:`bnilp.ilp.sepa_cluster.kcluster_cuts` for k ≥ 2).
        Returns (family indices, lhs, rhs) with ``None`` for an infinite side. Needs 1 ≤ k < |C| (with
        |C| < k the row would read 0 ≤ |C| − k < 0 and cut off every DAG)."""
        check_kcluster(cvec, k)
        # C's members' families only (contiguous by child): over all K families, the model's 2-cluster rows
        # cost K · pairs — 8.7 of 15 s at 1,000 variables and 10^5 families (a review)
        fams = np.concatenate([np.arange(self.start[c], self.start[c + 1]) for c in np.flatnonzero(cvec)])
        meets = self.pbool[fams][:, cvec].sum(axis=1) >= k
        n_meets = int(meets.sum())
        if len(fams) > n_meets and 2 * n_meets > len(fams):
            return fams[~meets], float(k), None
        return fams[meets], None, float(cvec.sum() - k)

    def set_packing_clusters(self, max_rows: int = settings.SET_PACKING_MAX_ROWS) -> list[tuple[int, ...]]:
        """Clusters C (|C| ≥ 3, sorted tuples) in which every member v has a candidate parent set
        W ⊇ C ∖ {v}: each gives the implied set-packing row (GOBNILP ``set_packing_cuts.c``)

            Σ_{v∈C} Σ_{W ⊇ C∖{v}} x(v, W) ≤ 1

        valid because two members u, v with u ∈ Pa(v) and v ∈ Pa(u) would form a 2-cycle, so in a DAG
        at most one member has all the others as parents. Clusters are grown from pairs in increasing
        vertex order while the property holds; at most ``max_rows`` (largest first is not attempted)."""
        n = self.n
        maximal: list[list[int]] = []
        for v in range(n):
            masks = sorted(set(self.pmask[self.start[v]:self.start[v + 1]]), key=lambda m: -bin(m).count("1"))
            keep: list[int] = []
            for m in masks:
                if not any(m & k == m for k in keep):
                    keep.append(m)
            maximal.append(keep)

        def covered(v: int, mask: int) -> bool:
            return any(mask & k == mask for k in maximal[v])

        out: list[tuple[int, ...]] = []

        def grow(members: list[int], mask: int) -> None:
            for w in range(members[-1] + 1, n):
                if len(out) >= max_rows:
                    return
                if not covered(w, mask):
                    continue
                wbit = 1 << w
                if all(covered(v, (mask | wbit) & ~(1 << v)) for v in members):
                    new = members + [w]
                    if len(new) >= 3:
                        out.append(tuple(new))
                    grow(new, mask | wbit)

        for u in range(n):
            grow([u], 1 << u)
        return out

    def set_packing_families(self, cluster: tuple[int, ...]) -> np.ndarray:
        """Families (v, W) with v ∈ C and W ⊇ C ∖ {v}: the support of C's set-packing row."""
        cvec = np.zeros(self.n, dtype=bool)
        cvec[list(cluster)] = True
        need = cvec[None, :] & (np.arange(self.n)[None, :] != self.child[:, None])
        ok = cvec[self.child] & ~(need & ~self.pbool).any(axis=1)
        return np.flatnonzero(ok)


@njit(cache=True, nogil=True)
def _class_words(rows, pmask):
    """words[m] = (adj_0 … adj_{n−1}, V_0 … V_{n−1}) of DAG m (see :meth:`_Data.class_words`)."""
    m, n = rows.shape
    words = np.zeros((m, 2 * n), dtype=np.int64)
    par = np.empty(n, dtype=np.int64)
    for i in range(m):
        for c in range(n):
            par[c] = pmask[rows[i, c]]
        _adjacency_and_colliders(par, words[i, :n], words[i, n:])
    return words


@njit(cache=True, nogil=True)
def _packed_class_words(rows, pstart, pidx, n):
    """Packed class words of DAGs ``rows`` (family indices; family k's parents ``pidx[pstart[k]:pstart[k + 1]]``):
    bit a·n − a(a+1)/2 + (b − a − 1) for each edge a — b (a < b), then bit n(n−1)/2 + c·n + u for each parent u of
    c that has a co-parent not adjacent to it (:meth:`_Data.class_words`' V_c; equal bits ⇔ the same skeleton and
    v-structures, Verma & Pearl 1990). Big-endian bits in each byte, as ``np.packbits``."""
    m = rows.shape[0]
    tri = n * (n - 1) // 2
    out = np.zeros((m, (tri + n * n + 7) // 8), dtype=np.uint8)
    adj = np.zeros((n, n), dtype=np.bool_)
    for i in range(m):
        for c in range(n):
            k = rows[i, c]
            for j in range(pstart[k], pstart[k + 1]):
                u = pidx[j]
                adj[c, u] = True
                adj[u, c] = True
                a, b = (u, c) if u < c else (c, u)
                bit = a * n - a * (a + 1) // 2 + (b - a - 1)
                out[i, bit >> 3] |= np.uint8(128 >> (bit & 7))
        for c in range(n):
            k = rows[i, c]
            lo, hi = pstart[k], pstart[k + 1]
            for j in range(lo, hi):
                for jj in range(j + 1, hi):
                    u, w = pidx[j], pidx[jj]
                    if not adj[u, w]:
                        for x in (u, w):
                            bit = tri + c * n + x
                            out[i, bit >> 3] |= np.uint8(128 >> (bit & 7))
        for c in range(n):                      # the adjacency back to empty: only what was set
            k = rows[i, c]
            for j in range(pstart[k], pstart[k + 1]):
                adj[c, pidx[j]] = False
                adj[pidx[j], c] = False
    return out


@njit(cache=True, nogil=True)
def _mec_row_terms(choice, child, pbool, pair_list, triple_pos):
    """The terms of :meth:`_Data.mec_row_indicators` for the DAG ``choice``: every candidate pair's adjacency
    indicator (−1 if adjacent in the DAG, else +1), then, per child c and pair a < b of its non-adjacent
    neighbours, the collider indicator of (a, c, b): −1 at a v-structure, +1 where a family could make one.
    Returns (positions, coefficients, 1 − |edges| − |v-structures|)."""
    n = pbool.shape[1]
    pa = np.zeros((n, n), dtype=np.bool_)
    for k in choice:
        pa[child[k]] = pbool[k]
    adj = pa | pa.T
    n_pairs = len(pair_list)
    bound = n_pairs
    for c in range(n):
        d = 0
        for w in range(n):
            d += adj[c, w]
        bound += d * (d - 1) // 2
    pos = np.empty(bound, dtype=np.int64)
    coef = np.empty(bound)
    m = 0
    for i in range(n_pairs):
        pos[m] = i
        coef[m] = -1.0 if adj[pair_list[i, 0], pair_list[i, 1]] else 1.0
        m += 1
    n_edges = 0
    for c in range(n):
        for w in range(c + 1, n):
            n_edges += adj[c, w]
    n_v = 0
    nbrs = np.empty(n, dtype=np.int64)
    for c in range(n):
        d = 0
        for w in range(n):
            if adj[c, w]:
                nbrs[d] = w
                d += 1
        for i in range(d):
            a = nbrs[i]
            for j in range(i + 1, d):
                b = nbrs[j]
                if adj[a, b]:
                    continue
                t = triple_pos[a, c, b]
                if pa[c, a] and pa[c, b]:
                    if t < 0:
                        raise ValueError("a v-structure of the DAG has no collider indicator")
                    pos[m] = t
                    coef[m] = -1.0
                    m += 1
                    n_v += 1
                elif t >= 0:
                    pos[m] = t
                    coef[m] = 1.0
                    m += 1
    return pos[:m], coef[:m], 1 - n_edges - n_v


@njit(cache=True, nogil=True)
def _fsum_rows(score, rows):
    """out[m] = math.fsum(score[rows[m]]) for finite scores, bit for bit: Shewchuk's (1997) exact partials
    and CPython's final half-even correction across partials (Modules/mathmodule.c, math_fsum)."""
    m, n = rows.shape
    out = np.empty(m)
    p = np.empty(n + 1)
    for r in range(m):
        k = 0
        for t in range(n):
            x = score[rows[r, t]]
            i = 0
            for j in range(k):
                y = p[j]
                if abs(x) < abs(y):
                    x, y = y, x
                hi = x + y
                lo = y - (hi - x)
                if lo != 0.0:
                    p[i] = lo
                    i += 1
                x = hi
            k = i
            if x != 0.0:
                p[k] = x
                k += 1
        hi = 0.0
        lo = 0.0
        if k > 0:
            k -= 1
            hi = p[k]
            while k > 0:
                x = hi
                k -= 1
                y = p[k]
                hi = x + y
                lo = y - (hi - x)
                if lo != 0.0:
                    break
            if k > 0 and ((lo < 0.0 and p[k - 1] < 0.0) or (lo > 0.0 and p[k - 1] > 0.0)):
                y = lo * 2.0
                x = hi + y
                if y == x - hi:
                    hi = x
        out[r] = hi
    return out
