"""Heuristic cluster-cut separation from a fractional LP point (numpy, over the support families)."""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from bnilp.ilp.families import _Data
from bnilp.ilp.settings import _CUT_TOL, _SUPPORT_TOL, _THRESHOLDS


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
    xs, cs, ps = x[sup], data.child[sup], data.pbool[sup]
    pint = ps.astype(np.int32)
    is_child = cs[:, None] == np.arange(n)[None, :]          # (support, n)
    onehot = is_child * xs[:, None]
    weight = pint.T.astype(float) @ onehot                   # weight[j, i] = x-mass of arrow j -> i

    def improve(cvec: np.ndarray) -> tuple[float, np.ndarray]:
        size = int(cvec.sum())
        cnt = pint @ cvec.astype(np.int32)
        in_c = cvec[cs]
        value = float(xs[in_c & (cnt > 0)].sum()) - (size - 1)
        for _ in range(2 * n):
            add = xs @ (((cnt[:, None] + pint) > 0) & (in_c[:, None] | is_child)) - size
            add[cvec] = -np.inf
            if size > 2:
                drop = xs @ (((cnt[:, None] - pint) > 0) & (in_c[:, None] & ~is_child)) - (size - 2)
                drop[~cvec] = -np.inf
            else:
                drop = np.full(n, -np.inf)
            va, vd = int(np.argmax(add)), int(np.argmax(drop))
            if max(add[va], drop[vd]) <= value + 1e-9:
                break
            if add[va] >= drop[vd]:
                v, value, size = va, float(add[va]), size + 1
                cvec[v] = True
                cnt += pint[:, v]
            else:
                v, value, size = vd, float(drop[vd]), size - 1
                cvec[v] = False
                cnt -= pint[:, v]
            in_c = cvec[cs]
        return value, cvec

    seeds: list[np.ndarray] = []
    for thr in _THRESHOLDS:
        ncomp, labels = connected_components(csr_matrix(weight >= thr), directed=True, connection="strong")
        sizes = np.bincount(labels, minlength=ncomp)
        seeds.extend(labels == comp for comp in np.flatnonzero(sizes >= 2))
    two_way = np.minimum(weight, weight.T)
    np.fill_diagonal(two_way, 0.0)
    for i in np.flatnonzero(two_way.max(axis=1) > _SUPPORT_TOL):
        cvec = np.zeros(n, dtype=bool)
        cvec[[i, int(np.argmax(two_way[i]))]] = True
        seeds.append(cvec)
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
