"""Heuristic cluster-cut separation from a fractional LP point (numpy, over the support families)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bnilp.compiled import njit
from bnilp.ilp.families import _Data
from bnilp.ilp.settings import _CUT_TOL, _SUPPORT_TOL, _THRESHOLDS


def strong_components(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray | None = None,
                      thresholds: tuple[float, ...] = (0.0,)) -> list[list[np.ndarray]]:
    """Strongly connected components with at least two vertices, as bool vectors over the ``n`` vertices, of
    each digraph {src[e] → dst[e] : weight[e] ≥ t} for t in ``thresholds`` (``weight`` None: every arc weighs 1),
    each component labelled by its smallest vertex and listed in that order.

    Kosaraju's two depth-first passes (Sharir 1981), compiled, over the arc list in sparse (CSR) form:
    O(n + arcs) a threshold. The separator runs at every node of phase 2; on its ≤ 60-vertex graphs this
    replaced repeated squaring of A ∪ I in float32 matrix products (9 % of phase 2 on hailfinder500 BF 3), and
    the dense n × n adjacency it then scanned grew as n² a call at hundreds of variables (a review: 16.8 ms a
    call at 800)."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    w = np.ones(len(src)) if weight is None else np.asarray(weight, dtype=float)
    th = np.asarray(thresholds, dtype=float)
    out_order = np.argsort(src, kind="stable")
    in_order = np.argsort(dst, kind="stable")
    labels = _component_labels(n, np.searchsorted(src[out_order], np.arange(n + 1)), dst[out_order], w[out_order],
                               np.searchsorted(dst[in_order], np.arange(n + 1)), src[in_order], w[in_order], th)
    out = []
    for t in range(len(th)):
        sizes = np.bincount(labels[t], minlength=n)
        out.append([labels[t] == c for c in np.flatnonzero(sizes >= 2)])
    return out


@njit(cache=True, nogil=True)
def _component_labels(n, out_start, out_to, out_w, in_start, in_from, in_w, thresholds):
    """labels[t, v] = the smallest vertex of v's strongly connected component in the graph of the arcs of
    weight ≥ thresholds[t] (Kosaraju: finish order by depth-first search on the graph, then depth-first search
    on the reverse graph in reverse finish order; each second-pass tree is a component). The graph is given
    twice in CSR form: arcs out of v are ``out_to[out_start[v]:out_start[v + 1]]``, into v ``in_from[...]``."""
    g = len(thresholds)
    labels = np.empty((g, n), dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    members = np.empty(n, dtype=np.int64)
    seen = np.empty(n, dtype=np.bool_)
    for t in range(g):
        th = thresholds[t]
        seen[:] = False
        done = 0
        for root in range(n):                   # pass 1: vertices in order of finishing
            if seen[root]:
                continue
            seen[root] = True
            top = 0
            stack[0] = root
            nxt[root] = out_start[root]
            while top >= 0:
                v = stack[top]
                e = nxt[v]
                end = out_start[v + 1]
                while e < end and (seen[out_to[e]] or out_w[e] < th):
                    e += 1
                if e < end:
                    nxt[v] = e + 1
                    w = out_to[e]
                    seen[w] = True
                    nxt[w] = out_start[w]
                    top += 1
                    stack[top] = w
                else:
                    nxt[v] = end
                    order[done] = v
                    done += 1
                    top -= 1
        seen[:] = False
        for r in range(n - 1, -1, -1):          # pass 2: the reverse graph, latest finisher first
            root = order[r]
            if seen[root]:
                continue
            seen[root] = True
            top = 0
            stack[0] = root
            size = 0
            smallest = root
            while top >= 0:
                v = stack[top]
                top -= 1
                members[size] = v
                size += 1
                if v < smallest:
                    smallest = v
                for e in range(in_start[v], in_start[v + 1]):
                    w = in_from[e]
                    if not seen[w] and in_w[e] >= th:
                        seen[w] = True
                        top += 1
                        stack[top] = w
            for i in range(size):
                labels[t, members[i]] = smallest
    return labels


def _arc_weights(data: _Data, x: np.ndarray, sup: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The x-mass of each arrow j → i of the support families, Σ_{k ∈ sup: child i, j ∈ Π_k} x_k, as
    (j, i, mass), one entry a distinct arrow, sorted by (j, i)."""
    src, dst, pos = data.arcs(sup)
    keys, inverse = np.unique(src * data.n + dst, return_inverse=True)
    return keys // data.n, keys % data.n, np.bincount(inverse, weights=x[sup][pos], minlength=len(keys))


def _pair_seeds(n: int, src: np.ndarray, dst: np.ndarray, mass: np.ndarray) -> list[np.ndarray]:
    """For each variable i (increasing) with a two-way arrow mass min(w(i → j), w(j → i)) above the support
    tolerance, the pair {i, j} of its heaviest (ties: the smallest j). ``(src, dst)`` sorted, distinct."""
    keys = src * n + dst
    back = np.searchsorted(keys, dst * n + src)
    found = (back < len(keys)) & (keys[np.minimum(back, len(keys) - 1)] == dst * n + src)
    two = np.where(found, np.minimum(mass, mass[np.minimum(back, len(keys) - 1)]), 0.0)
    keep = two > _SUPPORT_TOL
    i, j, two = src[keep], dst[keep], two[keep]
    order = np.lexsort((j, -two, i))
    first = order[np.r_[True, i[order][1:] != i[order][:-1]]] if len(order) else order
    seeds = []
    for a, b in zip(i[first].tolist(), j[first].tolist(), strict=True):
        cvec = np.zeros(n, dtype=bool)
        cvec[[a, b]] = True
        seeds.append(cvec)
    return seeds


def _separate(data: _Data, x: np.ndarray, max_cuts: int = 50) -> list[np.ndarray]:
    """Violated cluster cuts (bool vectors over variables) for the fractional point ``x``.

    Seeds: the SCCs of the arrow-weight digraph at several thresholds and, for every variable,
    the pair with its heaviest two-way arrow weight. Each seed is improved by a best-move local
    search (add or drop one variable) on the violation ``Σ_{i∈C} Σ_{Π∩C≠∅} x − (|C| − 1)``,
    vectorised over the support families of ``x``. The arrow weights are a sparse arc list, O(Σ |Π|) over
    the support: a dense n × n matrix of them grew about n^2.3 a call (0.65 / 3.0 / 16.8 ms at 200 / 400 /
    800 variables, 61 % of phase 2 at 800; a review)."""
    n = data.n
    sup = np.flatnonzero(x > _SUPPORT_TOL)
    if not len(sup) or n < 2:
        return []
    src, dst, mass = _arc_weights(data, x, sup)
    seeds: list[np.ndarray] = [c for comps in strong_components(n, src, dst, mass, _THRESHOLDS) for c in comps]
    seeds += _pair_seeds(n, src, dst, mass)
    return _improve_seeds(data, x, sup, seeds, 1, max_cuts)


def kcluster_cuts(data: _Data, x: np.ndarray, k: int = 2, max_cuts: int = 50) -> list[np.ndarray]:
    """Violated k-cluster cuts (bool vectors over variables) for the point ``x``, k ≥ 2.

    The k-cluster inequality, for a cluster C and 1 ≤ k < |C| (k = 1: the cluster constraint of Jaakkola,
    Sontag, Globerson & Meila, AISTATS 2010)

        Σ_{v∈C} Σ_{W : |W∩C| ≥ k} x(v, W) ≤ |C| − k

    holds for every DAG: in a topological order of C's members the i-th has at most i − 1 parents in C, so
    the first k have fewer than k. With |C| = 3, k = 2 it is the triangle row "at most one of three has the
    other two as parents" (GOBNILP's set-packing row on three members). The cluster cuts alone leave a gap
    these close: on the Table 1 score files the root LP with every violated cluster cut (found exactly by
    the sub-IP) stays 5.7 nats above OPT on bands BF 20 and 8.4 on alarm BF 150, and 2-cluster cuts bring it
    to 1.6 and 0 (``benchmarks/root_gap.py``).

    Seeds: the triples {v, a, b} of a support family of v with a, b ∈ W, the 4·n most violated (or
    nearest to it), each improved by the add-or-drop local search on the k-cluster violation."""
    n = data.n
    sup = np.flatnonzero(x > _SUPPORT_TOL)
    if n < k + 1 or not len(sup):
        return []
    wide = sup[data.pbool[sup].sum(axis=1) >= 2]
    if not len(wide):
        return []
    triples = _family_triples(data.child[wide], data.pbool[wide])
    cvecs = np.zeros((len(triples), n), dtype=bool)
    np.put_along_axis(cvecs, triples, True, axis=1)
    meets = data.pbool[sup].astype(np.int32) @ cvecs.T.astype(np.int32)       # (support, triples)
    counts = cvecs[:, data.child[sup]].T & (meets >= 2)                      # family counts in triple
    value = x[sup] @ counts - 1.0
    order = np.argsort(-value, kind="stable")[:4 * n]
    seeds = [cvecs[t] for t in order if value[t] > -0.5]
    return _improve_seeds(data, x, sup, seeds, k, max_cuts)


def _family_triples(child: np.ndarray, pbool: np.ndarray) -> np.ndarray:
    """The distinct sorted triples {c, a, b} with a < b both parents in a family (child c, parents row)."""
    out = []
    for c, row in zip(child.tolist(), pbool, strict=True):
        par = np.flatnonzero(row)
        a, b = np.triu_indices(len(par), 1)
        t = np.empty((len(a), 3), dtype=np.int64)
        t[:, 0], t[:, 1], t[:, 2] = c, par[a], par[b]
        out.append(t)
    return np.unique(np.sort(np.concatenate(out), axis=1), axis=0)


@dataclass(frozen=True)
class _SupportArrows:
    """The support families of a point (values ``xs``, children ``cs``) and their arrows: arrow e is
    par[e] → the child of support family pos[e], of mass ``x_arc[e] = xs[pos[e]]``."""
    xs: np.ndarray
    cs: np.ndarray
    par: np.ndarray
    pos: np.ndarray
    x_arc: np.ndarray
    n: int

    @classmethod
    def of(cls, data: _Data, x: np.ndarray, sup: np.ndarray) -> _SupportArrows:
        par, _, pos = data.arcs(sup)
        return cls(x[sup], data.child[sup], par, pos, x[sup][pos], data.n)


def _move_values(arrows: _SupportArrows, cvec: np.ndarray, cnt: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k-cluster violation after adding each v ∉ C and after dropping each v ∈ C (−inf elsewhere, and for
    every drop while |C| ≤ k + 1), from sums over the support's arrows: O(n + Σ |Π|) a move (a dense
    support × n product was O(n · support) a move, 10 % of phase 2 at 400 variables).

    With c_f = |Π_f ∩ C| (``cnt``) and f ∈ C when f's child is, adding v ∉ C gives
        Σ_{f∈C, c_f≥k} x_f + Σ_{f∈C, c_f=k−1, v∈Π_f} x_f + Σ_{f: child v, c_f≥k} x_f − (|C| + 1 − k)
    (v is no parent in its own families), and dropping v ∈ C gives
        Σ_{f∈C, c_f≥k} x_f − Σ_{f∈C, c_f≥k+1, child v} x_f − Σ_{f∈C, c_f=k, v∈Π_f or child v} x_f − (|C| − 1 − k)
    (a family of C keeps |Π ∩ C| ≥ k when it had k + 1, or k and v ∉ Π; it leaves C with its child)."""
    a, n, size = arrows, arrows.n, int(cvec.sum())
    in_c = cvec[a.cs]
    kept = float(a.xs[in_c & (cnt >= k)].sum())
    add = (kept - (size + 1 - k)
           + np.bincount(a.par, weights=np.where((in_c & (cnt == k - 1))[a.pos], a.x_arc, 0.0), minlength=n)
           + np.bincount(a.cs, weights=np.where(~in_c & (cnt >= k), a.xs, 0.0), minlength=n))
    add[cvec] = -np.inf
    if size <= k + 1:
        return add, np.full(n, -np.inf)
    edge = in_c & (cnt == k)
    drop = (kept - (size - 1 - k)
            - np.bincount(a.cs, weights=np.where(in_c & (cnt >= k + 1), a.xs, 0.0), minlength=n)
            - np.bincount(a.par, weights=np.where(edge[a.pos], a.x_arc, 0.0), minlength=n)
            - np.bincount(a.cs, weights=np.where(edge, a.xs, 0.0), minlength=n))
    drop[~cvec] = -np.inf
    return add, drop


def _improve_seeds(data: _Data, x: np.ndarray, sup: np.ndarray, seeds: list[np.ndarray], k: int,
                   max_cuts: int) -> list[np.ndarray]:
    """Each distinct seed improved by a best-move local search (add or drop one variable) on the
    k-cluster violation ``Σ_{i∈C} Σ_{|Π∩C|≥k} x − (|C| − k)``, vectorised over the support families;
    the distinct violated results, most violated first, at most ``max_cuts`` (moves valued by
    :func:`_move_values`)."""
    n = data.n
    arrows = _SupportArrows.of(data, x, sup)
    by_parent = np.argsort(arrows.par, kind="stable")
    # the support families with v among their parents: fams[first[v]:first[v + 1]]
    fams, first = arrows.pos[by_parent], np.searchsorted(arrows.par[by_parent], np.arange(n + 1))

    def improve(cvec: np.ndarray) -> tuple[float, np.ndarray]:
        size = int(cvec.sum())
        cnt = np.bincount(arrows.pos, weights=cvec[arrows.par], minlength=len(sup)).astype(np.int64)
        in_c = cvec[arrows.cs]
        # the inequality needs |C| > k; a smaller seed (a triple, for k ≥ 3) only grows until it has k + 1
        value = float(arrows.xs[in_c & (cnt >= k)].sum()) - (size - k) if size > k else -np.inf
        for _ in range(2 * n):
            add, drop = _move_values(arrows, cvec, cnt, k)
            va, vd = int(np.argmax(add)), int(np.argmax(drop))
            if max(add[va], drop[vd]) <= value + 1e-9:
                break
            if add[va] >= drop[vd]:
                v, value, size = va, float(add[va]) if size + 1 > k else -np.inf, size + 1
                cvec[v] = True
                cnt[fams[first[v]:first[v + 1]]] += 1
            else:
                v, value, size = vd, float(drop[vd]), size - 1
                cvec[v] = False
                cnt[fams[first[v]:first[v + 1]]] -= 1
        return value, cvec

    seen: set[bytes] = set()
    found: dict[bytes, tuple[float, np.ndarray]] = {}
    for cvec in seeds:
        key = cvec.tobytes()
        if key in seen:
            continue
        seen.add(key)
        value, cvec = improve(cvec.copy())
        if value > _CUT_TOL:
            found.setdefault(cvec.tobytes(), (value, cvec))
    cuts = sorted(found.values(), key=lambda vc: -vc[0])
    return [c for _, c in cuts[:max_cuts]]
