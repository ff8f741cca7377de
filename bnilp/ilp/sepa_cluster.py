"""Heuristic cluster-cut separation from a fractional LP point (numpy, over the support families)."""

from __future__ import annotations

import numpy as np
from numba import njit

from bnilp.ilp.families import _Data
from bnilp.ilp.settings import _CUT_TOL, _SUPPORT_TOL, _THRESHOLDS


def strong_components(adj: np.ndarray) -> list[list[np.ndarray]]:
    """Strongly connected components with at least two vertices, as bool vectors, of each digraph of
    the stack ``adj`` (g, n, n) (``adj[t, j, i]``: arc j → i), each component labelled by its smallest
    vertex and listed in that order.

    Kosaraju's two depth-first passes (Sharir 1981), compiled, O(g·n²) on the adjacency matrices: on the
    ≤ 60-vertex graphs of a separation call (the separator runs at every node of phase 2) this replaced
    repeated squaring of A ∪ I in float32 matrix products, which was 9 % of phase 2 on hailfinder500 BF 3."""
    g, n, _ = adj.shape
    labels = _component_labels(np.ascontiguousarray(adj, dtype=np.bool_))
    out = []
    for t in range(g):
        sizes = np.bincount(labels[t], minlength=n)
        out.append([labels[t] == c for c in np.flatnonzero(sizes >= 2)])
    return out


@njit(cache=True, nogil=True)
def _component_labels(adj):
    """labels[t, v] = the smallest vertex of v's strongly connected component in graph t (Kosaraju: finish
    order by depth-first search on the graph, then depth-first search on the reverse graph in reverse finish
    order; each second-pass tree is a component)."""
    g, n, _ = adj.shape
    labels = np.empty((g, n), dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    members = np.empty(n, dtype=np.int64)
    seen = np.empty(n, dtype=np.bool_)
    for t in range(g):
        a = adj[t]
        seen[:] = False
        done = 0
        for root in range(n):                   # pass 1: vertices in order of finishing
            if seen[root]:
                continue
            seen[root] = True
            top = 0
            stack[0] = root
            nxt[root] = 0
            while top >= 0:
                v = stack[top]
                w = nxt[v]
                while w < n and (seen[w] or not a[v, w]):
                    w += 1
                nxt[v] = w + 1
                if w < n:
                    seen[w] = True
                    nxt[w] = 0
                    top += 1
                    stack[top] = w
                else:
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
                for w in range(n):
                    if not seen[w] and a[w, v]:
                        seen[w] = True
                        top += 1
                        stack[top] = w
            for i in range(size):
                labels[t, members[i]] = smallest
    return labels


def _separate(data: _Data, x: np.ndarray, max_cuts: int = 50) -> list[np.ndarray]:
    """Violated cluster cuts (bool vectors over variables) for the fractional point ``x``.

    Seeds: the SCCs of the arrow-weight digraph at several thresholds and, for every variable,
    the pair with its heaviest two-way arrow weight. Each seed is improved by a best-move local
    search (add or drop one variable) on the violation ``Σ_{i∈C} Σ_{Π∩C≠∅} x − (|C| − 1)``,
    vectorised over the support families of ``x``."""
    n = data.n
    sup = np.flatnonzero(x > _SUPPORT_TOL)
    if not len(sup) or n < 2:
        return []
    xs, ps = x[sup], data.pbool[sup]
    # weight[j, i] = x-mass of arrow j -> i
    weight = ps.T.astype(float) @ ((data.child[sup][:, None] == np.arange(n)[None, :]) * xs[:, None])
    seeds: list[np.ndarray] = [c for comps in strong_components(weight[None] >= np.asarray(_THRESHOLDS)[:, None, None])
                               for c in comps]
    two_way = np.minimum(weight, weight.T)
    np.fill_diagonal(two_way, 0.0)
    for i in np.flatnonzero(two_way.max(axis=1) > _SUPPORT_TOL):
        cvec = np.zeros(n, dtype=bool)
        cvec[[i, int(np.argmax(two_way[i]))]] = True
        seeds.append(cvec)
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


def _improve_seeds(data: _Data, x: np.ndarray, sup: np.ndarray, seeds: list[np.ndarray], k: int,
                   max_cuts: int) -> list[np.ndarray]:
    """Each distinct seed improved by a best-move local search (add or drop one variable) on the
    k-cluster violation ``Σ_{i∈C} Σ_{|Π∩C|≥k} x − (|C| − k)``, vectorised over the support families;
    the distinct violated results, most violated first, at most ``max_cuts``."""
    n = data.n
    xs, cs = x[sup], data.child[sup]
    pint = data.pbool[sup].astype(np.int32)
    is_child = cs[:, None] == np.arange(n)[None, :]          # (support, n)

    def improve(cvec: np.ndarray) -> tuple[float, np.ndarray]:
        size = int(cvec.sum())
        cnt = pint @ cvec.astype(np.int32)
        in_c = cvec[cs]
        # the inequality needs |C| > k; a smaller seed (a triple, for k ≥ 3) only grows until it has k + 1
        value = float(xs[in_c & (cnt >= k)].sum()) - (size - k) if size > k else -np.inf
        for _ in range(2 * n):
            add = xs @ (((cnt[:, None] + pint) >= k) & (in_c[:, None] | is_child)) - (size + 1 - k)
            add[cvec] = -np.inf
            if size > k + 1:
                drop = xs @ (((cnt[:, None] - pint) >= k) & (in_c[:, None] & ~is_child)) - (size - 1 - k)
                drop[~cvec] = -np.inf
            else:
                drop = np.full(n, -np.inf)
            va, vd = int(np.argmax(add)), int(np.argmax(drop))
            if max(add[va], drop[vd]) <= value + 1e-9:
                break
            if add[va] >= drop[vd]:
                v, value, size = va, float(add[va]) if size + 1 > k else -np.inf, size + 1
                cvec[v] = True
                cnt += pint[:, v]
            else:
                v, value, size = vd, float(drop[vd]), size - 1
                cvec[v] = False
                cnt -= pint[:, v]
            in_c = cvec[cs]
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
