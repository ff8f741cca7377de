"""The "4B" implied cuts (GOBNILP's convex4 family b), separated from a fractional LP point after the
cluster cuts. Plain numpy; the acyclicity handler adds what :func:`fourb_cuts` returns."""

from __future__ import annotations

import numpy as np

from bnilp.ilp import settings
from bnilp.ilp.families import _Data
from bnilp.ilp.settings import _CUT_TOL, _SUPPORT_TOL


def fourb_families(data: _Data, a: int, b: int, c: int, d: int) -> np.ndarray:
    """Support of the 4B row of (a, b, c, d): families (a, W∋b or W⊇{c,d}), (b, W∋a or W⊇{c,d}),
    (c, W∋d and W∩{a,b}≠∅), (d, W∋c and W∩{a,b}≠∅)."""
    p, ch = data.pbool, data.child
    cd = p[:, c] & p[:, d]
    ab = p[:, a] | p[:, b]
    sel = ((ch == a) & (p[:, b] | cd)) | ((ch == b) & (p[:, a] | cd)) \
        | ((ch == c) & p[:, d] & ab) | ((ch == d) & p[:, c] & ab)
    return np.flatnonzero(sel)


def fourb_cuts(data: _Data, x: np.ndarray, max_cuts: int = settings.FOURB_MAX_CUTS) -> list[tuple[int, int, int, int]]:
    """Violated 4B cuts at ``x`` (Bartlett & Cussens, AIJ 2017; GOBNILP ``convex4``): for distinct
    a, b, c, d

        x[a, W∋b ∨ W⊇{c,d}] + x[b, W∋a ∨ W⊇{c,d}] + x[c, W∋d ∧ W∩{a,b}≠∅] + x[d, W∋c ∧ W∩{a,b}≠∅] ≤ 2.

    Valid on every DAG: the c and d terms exclude each other (c ← d and d ← c), and each way of making
    both the a and the b term 1 (a ← b, b ← c, d; a ← c, d, b ← a; a, b ← c, d) closes a cycle with
    either the c or the d term. Evaluated for all quadruples at once by inclusion–exclusion over
    tensors of the support families (n⁴ entries: used only when n ≤ ``FOURB_MAX_N``).
    Returns quadruples (a < b, c < d), most violated first."""
    n = data.n
    sup = np.flatnonzero(x > _SUPPORT_TOL)
    if n < 4 or not len(sup):
        return []
    xs = x[sup]
    P = data.pbool[sup].astype(float)
    H = np.zeros((len(sup), n))
    H[np.arange(len(sup)), data.child[sup]] = xs            # H[k, i] = x_k if child(k) = i
    M1 = np.einsum("ki,ku->iu", H, P)                        # Σ_{child i} x [u∈W]
    M2 = np.einsum("ki,ku,kv->iuv", H, P, P)                 # Σ_{child i} x [u,v∈W]
    M3 = np.einsum("ki,ku,kv,kw->iuvw", H, P, P, P)          # Σ_{child i} x [u,v,w∈W]
    # A[a,b,c,d] = x[a, W∋b ∨ W⊇{c,d}] = M1[a,b] + M2[a,c,d] − M3[a,b,c,d]
    A = M1[:, :, None, None] + M2[:, None, :, :] - M3
    # C[c,d,a,b] = x[c, W∋d ∧ (a∈W ∨ b∈W)] = M2[c,d,a] + M2[c,d,b] − M3[c,d,a,b]
    C = M2[:, :, :, None] + M2[:, :, None, :] - M3
    lhs = (A + A.transpose(1, 0, 2, 3)                       # a-term + b-term, indexed [a,b,c,d]
           + C.transpose(2, 3, 0, 1) + C.transpose(2, 3, 1, 0))  # c-term [a,b,c,d] + d-term
    idx = np.arange(n)
    distinct = ((idx[:, None, None, None] < idx[None, :, None, None])
                & (idx[None, None, :, None] < idx[None, None, None, :])
                & (idx[:, None, None, None] != idx[None, None, :, None])
                & (idx[:, None, None, None] != idx[None, None, None, :])
                & (idx[None, :, None, None] != idx[None, None, :, None])
                & (idx[None, :, None, None] != idx[None, None, None, :]))
    viol = np.where(distinct, lhs - 2.0, -np.inf)
    hits = np.argwhere(viol > _CUT_TOL)
    if not len(hits):
        return []
    order = np.argsort(-viol[tuple(hits.T)])[:max_cuts]
    return [tuple(int(v) for v in hits[i]) for i in order]
