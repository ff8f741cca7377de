"""Search by proxy: greedy structure search on a Gaussian-process approximation of the score.

Source: B. Yackley, B. Anderson and T. Lane, *Bayesian network search by proxy* (2011), the seed
``shared/seeds/yackley-anderson-lane-search-by-proxy.txt`` (its formulas are OCR-damaged; what
follows is re-derived), and C. E. Rasmussen and C. K. I. Williams, *Gaussian Processes for Machine
Learning* (MIT Press 2006), eqs. 2.25–2.26 (predictive mean), 5.8–5.9 (log marginal likelihood and
its gradient).

Graphs as bit strings. A graph over n variables is the vector b(g) ∈ {0,1}^{n(n−1)} of its edge
indicators [e_ij ∈ g], i ≠ j, in row-major order of (i, j) (edge i→j: i is a parent of j;
:func:`edge_pairs`). The training graphs g_1..g_m form the rows of B ∈ {0,1}^{m×n(n−1)}.

Kernel (the seed's §5.2–5.3). k(g, g') = Σ_{i≠j} w_ij [e_ij ∈ g][e_ij ∈ g'] = b(g) W b(g')ᵀ with
W = diag(w), w_ij > 0: the summed weight of the edges two graphs share. With noise σ²,

    K = B W Bᵀ + σ² I,        k* = B W b(g*)ᵀ.

Regression (R&W eqs. 2.25–2.26 with an explicit mean function m(g) = μ + β|g|, |g| the number of
edges; β = 0 is the seed's constant mean, ``edge_slope=False``). With s the exact training scores
and α = K⁻¹ (s − m(B)) (one Cholesky factorisation), the proxy is the predictive mean

    ŝ(g*) = m(g*) + k*ᵀ α = μ + Σ_ij c_ij [e_ij ∈ g*],    c = w ⊙ (Bᵀ α) + β.

Why the slope: with n(n−1) edges and far fewer samples, and every random training graph holding
about the same number of edges, a constant mean cannot tell "edges cost on average" from the
intercept; β carries that average per-edge effect and is what an edge never seen in training is
predicted to contribute. The empty graph is always a training graph, which pins μ near its score.
(Measured on alarm1000/BIC: β comes out near 0 — a random edge there is about neutral on
average, so the slope does not rescue the proxy; see "Known limit".)

It is *linear* in the edge indicators, so adding edge i→j changes the proxy by +c_ij, deleting it
by −c_ij, reversing it by c_ji − c_ij: the proxy hill climber costs O(1) per move.

Hyperparameters (R&W eqs. 5.8–5.9). θ = (ln w, ln σ², μ, β), logs for positivity; the scores are
standardised for the fit (everything is reported back in score units). With y = s − m(B),

    ln p(s | B, θ) = −½ yᵀ K⁻¹ y − ½ ln |K| − (n_s/2) ln 2π        (n_s training graphs),
    ∂ ln p / ∂θ_k  = ½ tr((α αᵀ − K⁻¹) ∂K/∂θ_k),     ∂ ln p / ∂μ = 1ᵀ α,   ∂ ln p / ∂β = |B|ᵀ α
(|B| the row sums of B).

Since ∂K/∂ln w_ij = w_ij b_ij b_ijᵀ (b_ij: column ij of B) and ∂K/∂ln σ² = σ² I, with
A = α αᵀ − K⁻¹ the whole weight gradient is one product: ½ w ⊙ diag(Bᵀ A B) = ½ w ⊙ Σ_rows (B ⊙ A B),
and ∂ ln p/∂ ln σ² = ½ σ² tr A. The maximiser is L-BFGS-B (scipy) on −ln p. Edges that occur in no
training graph do not enter K and get c_ij = β, so they are left out of the fit.

Training graphs (:func:`random_dag`): a uniformly random topological order, then every pair that is
forward in that order becomes an edge independently with probability p = min(1, 2r/(n−1)), so the
expected in-degree averaged over the variables is r (``expected_parents``, default 0.25: sparse
graphs, on which a decomposable score is nearly linear in the edges); a variable given more than
``max_parents`` parents keeps a uniformly random subset of that size; pairs the score forbids
(``LocalScore.allowed_parent``) are never edges. Duplicates are redrawn.

Search (the seed's §5.4–5.5). Greedy hill climbing: at every step the best of all single-edge
additions, deletions and reversals that keep the graph acyclic (a move that would close a cycle is
rejected and the next best is tried) and respect ``max_parents``; stop when no move improves.
:func:`greedy_search` runs it on exact local scores from the empty graph (the seed's comparison;
local scores cached by (child, parent set), only the changed families rescored after a move).
:func:`proxy_search`, round 0, runs it on ŝ from the empty graph and scores only its end point
exactly. That climb gives no variable more than one parent: the proxy is linear in the edges, which
is exact in form for graphs of in-degree ≤ 1 (the score is decomposable), while BIC/BDeu penalties
grow exponentially with the in-degree — an uncapped climb on ŝ piles parents onto every variable
(the seed saw its proxy climb to "impossible" scores too). Option ``kappa`` = κ > 0 climbs instead
on Σ (c_ij − κ·sd(c_ij)) [e_ij ∈ g], sd from the weight-space posterior of the coefficients
(c − β ~ N(W Bᵀα, W − W Bᵀ K⁻¹ B W), R&W §2.1.2, diagonal).

Refinement (the seed's future work, §7: "sample more points in its vicinity to retrain the
approximator … down to the limit of our vicinity simply being all one-step changes"; ``refine``
rounds). A network g₀ is carried from round to round, starting at the empty graph. Each round
(1) scores exactly the single-edge moves from g₀ that the proxy rates best among those not known
yet (4/5 of ``refine_samples``) and a few drawn uniformly from the rest (1/5); a move is *known*
when the local scores of the families it changes are cached — from training graphs, earlier rounds
or climbs — and known moves cost nothing; (2) refits the GP to the vicinity of g₀
(:func:`vicinity_posterior`: same kernel and weights, the previous proxy as mean function, every
known move of g₀ as data, so the proxy interpolates them); (3) climbs from g₀ over known moves
only, whose changes are exact, at most ``radius`` moves (default 1: the proxy picks which moves to
score, exact scores pick which move to make — greedy's path, with fewer local scores when the proxy
ranks well). The rounds stop when every move from g₀ is known and none improves: g₀ is then an
exact local optimum, the same guarantee greedy search gives (``local_optimum`` in the result). The
result is the best network scored exactly. ``polish`` finishes with exact hill climbing from it.

Measured (``benchmarks/proxy.py``, alarm1000/BIC, 37 variables): round 0 alone ends 40–60 % below
greedy's score with 100 samples; with refinement the proxy network is within 1 % of greedy's (often
the same network) and computes about as many local scores as greedy (2,800–3,200 against 2,932).
The proxy pays off only where an exact score is expensive and greedy's every-move scan dominates.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
from scipy import sparse
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import minimize
from scipy.sparse import linalg as splinalg
from threadpoolctl import threadpool_limits

from bnilp.errors import InputError, LimitError, check_callback, check_count, check_flag, check_real, check_seed
from bnilp.graphs import check_acyclic, parent_lists, to_digraph
from bnilp.memory import free_memory
from bnilp.scores.base import LocalScore, check_score, tie_tolerance

Progress = Callable[[str], None]

#: refinement rounds at most, by default (they stop earlier at a local optimum)
DEFAULT_REFINE = 1000
#: the search's defaults, one place for the API and ``bnilp proxy-search``: training DAGs scored exactly
#: (``samples``, ``--samples``), their mean in-degree (``expected_parents``, ``--expected-in-degree``), the
#: hyperparameter fit's L-BFGS-B iterations (``maxiter``, ``--fit-iterations``) and the lower-confidence-bound
#: weight (``kappa``, ``--kappa``)
DEFAULT_SAMPLES = 100
DEFAULT_EXPECTED_IN_DEGREE = 0.25
DEFAULT_MAXITER = 200
DEFAULT_KAPPA = 0.0

_LOG_W_BOUNDS = (math.log(1e-8), math.log(1e4))
_LOG_NOISE_BOUNDS = (math.log(1e-6), math.log(10.0))
_MEAN_BOUNDS = (-100.0, 100.0)
_SLOPE_BOUNDS = (-10.0, 10.0)


# ----------------------------------------------------------------------------------------------
# graphs as bit strings


def edge_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(sources, targets) of the n(n−1) possible edges i→j, i ≠ j, in row-major order."""
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    return src, dst


def graph_bits(adj: np.ndarray) -> np.ndarray:
    """b(g): the edge indicators of adjacency matrix ``adj`` (adj[i, j] ⇔ i→j) as a float vector."""
    adj = np.asarray(adj, dtype=bool)
    src, dst = edge_pairs(adj.shape[0])
    return adj[src, dst].astype(np.float64)


def is_dag(adj: np.ndarray) -> bool:
    """Whether adjacency matrix ``adj`` has no directed cycle (Kahn's algorithm)."""
    adj = np.asarray(adj, dtype=bool)
    indeg = adj.sum(axis=0)
    ready = list(np.flatnonzero(indeg == 0))
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        for v in np.flatnonzero(adj[u]):
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    return seen == adj.shape[0]


def _reaches(adj: np.ndarray, src: int, dst: int) -> bool:
    """Whether a directed path src ⇝ dst exists (src == dst counts)."""
    if src == dst:
        return True
    seen = np.zeros(adj.shape[0], dtype=bool)
    seen[src] = True
    stack = [src]
    while stack:
        nxt = np.flatnonzero(adj[stack.pop()] & ~seen)
        if nxt.size:
            if (nxt == dst).any():
                return True
            seen[nxt] = True
            stack.extend(nxt.tolist())
    return False


def labelled_dags(n: int) -> int:
    """The number of DAGs on n labelled nodes (Robinson 1973): a(n) = Σ_{k=1..n} (−1)^{k+1}·C(n, k)·2^{k(n−k)}·
    a(n − k), a(0) = 1 — 1, 3, 25, 543, 29,281 for n = 1..5."""
    a = [1]
    for m in range(1, n + 1):
        a.append(sum((-1) ** (k + 1) * math.comb(m, k) * 2 ** (k * (m - k)) * a[m - k] for k in range(1, m + 1)))
    return a[n]


#: :func:`admissible_dags` counts over the subsets of at most this many variables (3^n steps)
ADMISSIBLE_DAGS_MAX_VARIABLES = 10


def admissible_dags(allowed: np.ndarray, max_parents: int | None = None) -> int:
    """The number of DAGs whose every arc i → j is allowed (``allowed[i, j]``) and whose every node has at most
    ``max_parents`` parents — Robinson's recurrence over the set S of sinks (nodes without children) of the DAG
    on U, by inclusion–exclusion (Robinson 1973; with per-node parent sets as in Kuipers & Moffa 2015):

        a(U) = Σ_{∅ ≠ S ⊆ U} (−1)^{|S|+1} · Π_{v ∈ S} f_v(U ∖ S) · a(U ∖ S),   a(∅) = 1,

    f_v(W) the parent sets v may take inside W (allowed, at most ``max_parents``): the sinks choose their parents
    among the other nodes, which form a DAG of their own. Without constraints it is :func:`labelled_dags`.
    3^n steps: at most :data:`ADMISSIBLE_DAGS_MAX_VARIABLES` variables (more is a ``ValueError``)."""
    n = allowed.shape[0]
    if n > ADMISSIBLE_DAGS_MAX_VARIABLES:
        raise ValueError(f"admissible_dags counts up to {ADMISSIBLE_DAGS_MAX_VARIABLES} variables, got {n}")
    limit = n if max_parents is None else max_parents
    masks = [sum(1 << i for i in range(n) if allowed[i, j] and i != j) for j in range(n)]

    def choices(v: int, inside: int) -> int:
        m = (masks[v] & inside).bit_count()
        return sum(math.comb(m, k) for k in range(min(m, limit) + 1))

    a = [0] * (1 << n)
    a[0] = 1
    for u in range(1, 1 << n):
        total, s = 0, u
        while s:                                    # every non-empty S ⊆ U
            rest = u & ~s
            term = a[rest]
            t = s
            while t and term:
                v = (t & -t).bit_length() - 1
                term *= choices(v, rest)
                t &= t - 1
            total += term if s.bit_count() % 2 else -term
            s = (s - 1) & u
        a[u] = total
    return a[-1]


def allowed_matrix(score: LocalScore) -> np.ndarray:
    """allowed[i, j] ⇔ i may be a parent of j under ``score``."""
    n = score.data.n
    allowed = np.zeros((n, n), dtype=bool)
    for j in range(n):
        for i in range(n):
            allowed[i, j] = i != j and score.allowed_parent(j, i)
    return allowed


def random_dag(
    n: int,
    rng: np.random.Generator,
    *,
    expected_parents: float = 1.0,
    max_parents: int | None = None,
    allowed: np.ndarray | None = None,
) -> np.ndarray:
    """A random DAG as an adjacency matrix (see the module docstring for the distribution)."""
    if n < 2:
        return np.zeros((n, n), dtype=bool)
    p = min(1.0, 2.0 * expected_parents / (n - 1))
    order = rng.permutation(n)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    forward = rank[:, None] < rank[None, :]
    adj = forward & (rng.random((n, n)) < p)
    if allowed is not None:
        adj &= allowed
    if max_parents is not None:
        for j in np.flatnonzero(adj.sum(axis=0) > max_parents):
            pa = np.flatnonzero(adj[:, j])
            adj[:, j] = False
            adj[rng.choice(pa, size=max_parents, replace=False), j] = True
    return adj


# ----------------------------------------------------------------------------------------------
# the Gaussian process


def graph_kernel(b1: np.ndarray, b2: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """k(g, g') = b(g) W b(g')ᵀ for all rows of ``b1`` × rows of ``b2``."""
    return (np.atleast_2d(b1) * weights) @ np.atleast_2d(b2).T


def _cholesky(K: np.ndarray) -> tuple[np.ndarray, bool]:
    """cho_factor of K, adding jitter only if K is numerically singular."""
    return _cholesky_jittered(K)[0]


def _cholesky_jittered(K: np.ndarray) -> tuple[tuple[np.ndarray, bool], float]:
    """(cho_factor of K + jitter·I, jitter): jitter 0 unless K is numerically singular, then the first of
    1e-12, 1e-10, … times K's mean diagonal that factors."""
    try:
        return cho_factor(K, lower=True, check_finite=False), 0.0
    except LinAlgError:
        jitter = 1e-12 * max(float(np.mean(np.diag(K))), 1e-300)
        for _ in range(8):
            try:
                return cho_factor(K + jitter * np.eye(K.shape[0]), lower=True, check_finite=False), jitter
            except LinAlgError:
                jitter *= 100.0
        raise


def log_marginal_likelihood(theta: np.ndarray, B: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray]:
    """ln p(s | B, θ) and its gradient for θ = (ln w_1..ln w_d, ln σ², μ, β) (R&W eqs. 5.8–5.9).

    The mean function is μ + β·|g| (|g| = number of edges, the row sums of B).
    """
    m, d = B.shape
    w = np.exp(theta[:d])
    noise = math.exp(theta[d])
    mean, slope = theta[d + 1], theta[d + 2]
    K = graph_kernel(B, B, w)
    K[np.diag_indices(m)] += noise
    factor = _cholesky(K)
    counts = B.sum(axis=1)
    y = s - mean - slope * counts
    alpha = cho_solve(factor, y, check_finite=False)
    logdet = 2.0 * float(np.log(np.diag(factor[0])).sum())
    value = -0.5 * float(y @ alpha) - 0.5 * logdet - 0.5 * m * math.log(2.0 * math.pi)
    A = np.outer(alpha, alpha) - cho_solve(factor, np.eye(m), check_finite=False)
    grad = np.empty(d + 3)
    grad[:d] = 0.5 * w * np.einsum("ij,ij->j", B, A @ B)
    grad[d] = 0.5 * noise * float(np.trace(A))
    grad[d + 1] = float(alpha.sum())
    grad[d + 2] = float(alpha @ counts)
    return value, grad


@dataclass
class GraphGP:
    """A fitted proxy: ŝ(g) = mean + b(g)·coefficients, in score units.

    Hyperparameters: ``weights`` (w, one per possible edge), ``noise`` (σ²), ``mean`` (μ) and
    ``slope`` (β, the mean function's change per edge); ``alpha`` = K⁻¹(s − μ − β|g|);
    ``coefficients`` c = w ⊙ Bᵀα + β; ``coefficient_sd`` their posterior standard deviations in
    the weight-space view (c − β ~ N(w ⊙ Bᵀα, W − W Bᵀ K⁻¹ B W), R&W §2.1.2; diagonal only);
    ``active`` marks the edges seen in training.
    """

    weights: np.ndarray
    noise: float
    mean: float
    slope: float
    B: np.ndarray
    scores: np.ndarray
    alpha: np.ndarray
    coefficients: np.ndarray
    coefficient_sd: np.ndarray
    active: np.ndarray
    log_marginal_likelihood: float
    iterations: int
    seconds: float
    #: whether L-BFGS-B met its convergence test (False: it stopped at ``maxiter`` or failed; ``fit_message``
    #: says which); True when nothing was optimised
    converged: bool = True
    fit_message: str = ""
    #: what was added to the kernel matrix's diagonal so that it factored (0: nothing), in standardised units
    jitter: float = 0.0

    def predict(self, bits: np.ndarray) -> np.ndarray | float:
        """ŝ for one bit string (a float) or for each row of a matrix of them."""
        bits = np.asarray(bits, dtype=np.float64)
        out = self.mean + bits @ self.coefficients
        return float(out) if bits.ndim == 1 else out

    def predict_kernel(self, bits: np.ndarray) -> np.ndarray:
        """ŝ = μ + β|g*| + k*ᵀ α computed through the kernel (a check on :meth:`predict`)."""
        bits = np.atleast_2d(np.asarray(bits, dtype=np.float64))
        return (self.mean + self.slope * bits.sum(axis=1)
                + graph_kernel(bits, self.B, self.weights) @ self.alpha)


def fit_gp(
    B: np.ndarray,
    scores: np.ndarray,
    *,
    noise: float | None = None,
    learn_mean: bool = True,
    edge_slope: bool = True,
    optimize: bool = True,
    maxiter: int = DEFAULT_MAXITER,
) -> GraphGP:
    """Fit the graph-kernel GP to training bit strings ``B`` and exact ``scores``.

    ``noise``: fixed σ² in score units (learned when ``None``). ``learn_mean=False`` fixes μ at the
    mean of the scores; ``edge_slope=False`` fixes β = 0 (the seed's constant mean).
    ``optimize=False`` keeps the initial weights (w·mean edge count = score variance, σ² = 0.1 of
    it). BLAS runs single-threaded here: the matrices are small, and OpenBLAS threads made the fit
    about 13× slower on a 2-core machine (measured on alarm1000).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_gp(B, scores, noise=noise, learn_mean=learn_mean, edge_slope=edge_slope,
                       optimize=optimize, maxiter=maxiter)


def _fit_gp(B: np.ndarray, scores: np.ndarray, *, noise: float | None, learn_mean: bool, edge_slope: bool,
            optimize: bool, maxiter: int) -> GraphGP:
    B = np.asarray(B, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if B.ndim != 2 or B.shape[0] != s.shape[0] or B.shape[0] < 1:
        raise InputError("fit_gp needs a (samples × edges) matrix and one score per sample")
    if not np.isfinite(s).all():
        raise InputError("fit_gp: a training score is not finite")
    start = time.perf_counter()
    m = B.shape[0]
    active = B.any(axis=0)
    Ba = B[:, active]
    d = Ba.shape[1]
    center = float(s.mean())
    scale = float(s.std()) or 1.0
    y = (s - center) / scale
    edges = max(float(Ba.sum(axis=1).mean()), 1.0)
    log_w0 = np.full(d, -math.log(edges))
    mean0, slope0 = 0.0, 0.0
    if noise is None:
        log_n0 = math.log(0.1)
        noise_bounds = _LOG_NOISE_BOUNDS
    else:
        if not noise > 0:
            raise InputError(f"fit_gp: noise must be > 0, got {noise}")
        log_n0 = math.log(noise / scale**2)
        noise_bounds = (log_n0, log_n0)
    theta = np.concatenate([log_w0, [log_n0, mean0, slope0]])
    iterations, converged, message = 0, True, ""
    if optimize and d > 0:
        bounds = [_LOG_W_BOUNDS] * d + [noise_bounds, _MEAN_BOUNDS if learn_mean else (0.0, 0.0),
                                        _SLOPE_BOUNDS if edge_slope else (0.0, 0.0)]

        def objective(th: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = log_marginal_likelihood(th, Ba, y)
            return -value, -grad

        res = minimize(objective, theta, jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": maxiter})
        theta = res.x
        iterations, converged, message = int(res.nit), bool(res.success), str(res.message)
    lml, _ = log_marginal_likelihood(theta, Ba, y)
    w = np.exp(theta[:d])
    K = graph_kernel(Ba, Ba, w)
    K[np.diag_indices(m)] += math.exp(theta[d])
    mean, slope = float(theta[d + 1]), float(theta[d + 2])
    factor, jitter = _cholesky_jittered(K)
    alpha = cho_solve(factor, y - mean - slope * Ba.sum(axis=1), check_finite=False)
    shrink = np.einsum("ij,ij->j", Ba, cho_solve(factor, Ba, check_finite=False))
    sd = np.full(B.shape[1], scale / math.sqrt(edges))
    sd[active] = scale * np.sqrt(np.maximum(w - w * w * shrink, 0.0))
    weights = np.full(B.shape[1], scale**2 / edges)
    weights[active] = w * scale**2
    coefficients = np.full(B.shape[1], scale * slope)
    coefficients[active] += scale * w * (Ba.T @ alpha)
    return GraphGP(
        weights=weights,
        noise=math.exp(theta[d]) * scale**2,
        mean=center + scale * mean,
        slope=scale * slope,
        B=B,
        scores=s,
        alpha=alpha / scale,
        coefficients=coefficients,
        coefficient_sd=sd,
        active=active,
        log_marginal_likelihood=lml - m * math.log(scale),
        iterations=iterations,
        seconds=time.perf_counter() - start,
        converged=converged,
        fit_message=message,
        jitter=jitter,
    )


# ----------------------------------------------------------------------------------------------
# exact scores with a cache


def _exact_column(scorer: _ExactScorer, allowed: np.ndarray, kmax: int, *,
                  cached_only: bool = False) -> Callable[[int, np.ndarray], np.ndarray]:
    """T[:, j] of the exact score: the change of s(j | Π_j) when i is toggled in Π_j.

    With ``cached_only`` a toggle whose family has not been scored yet gets −∞ (never chosen).
    """
    n = allowed.shape[0]

    def column(j: int, a: np.ndarray) -> np.ndarray:
        pa = frozenset(np.flatnonzero(a[:, j]).tolist())
        base = scorer.local(j, pa)
        out = np.full(n, -math.inf)
        full = len(pa) >= kmax
        for i in range(n):
            if i in pa:
                new = pa - {i}
            elif allowed[i, j] and not full:
                new = pa | {i}
            else:
                continue
            if not cached_only or (j, new) in scorer.cache:
                out[i] = scorer.local(j, new) - base
        return out

    return column


class _ExactScorer:
    """Local scores cached by (child, parent set); totals with math.fsum."""

    def __init__(self, score: LocalScore):
        self.score = score
        self.cache: dict[tuple[int, frozenset[int]], float] = {}

    def local(self, child: int, parents: frozenset[int]) -> float:
        key = (child, parents)
        hit = self.cache.get(key)
        if hit is None:
            hit = float(self.score.local(child, tuple(sorted(parents))))
            self.cache[key] = hit
        return hit

    def total(self, adj: np.ndarray) -> float:
        return math.fsum(self.local(j, frozenset(np.flatnonzero(adj[:, j]).tolist()))
                         for j in range(adj.shape[0]))


# ----------------------------------------------------------------------------------------------
# the hill climber


#: a move must gain more than this times (1 + |the objective|): a toggle's two local scores each carry a rounding
#: error of ~1e-16 of their size, no more than the total's where scores share a sign (BIC, BDeu); 1e-10 of the
#: total hid real gains of 14 nats on totals of ~1e12 (scores shifted by a constant per family)
_GAIN_TOL = 1e-13


def _hill_climb(
    adj: np.ndarray,
    allowed: np.ndarray,
    max_parents: int,
    column: Callable[[int, np.ndarray], np.ndarray],
    value: float,
    names: list[str],
    trajectory: list[dict[str, Any]],
    key: str,
    max_steps: int = 1_000_000,
    report: Callable[[np.ndarray], float] | None = None,
    initial: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Best-improvement hill climbing with add / delete / reverse moves.

    ``column(j, adj)`` gives T[:, j]: T[i, j] = change of the objective when edge i→j is toggled
    (added if absent, deleted if present); it depends only on the parents of j. Entries where the
    move is not allowed are ignored. Each move is logged in ``trajectory`` with ``key`` = the
    objective, or = ``report(adj)`` when given (the objective then goes under ``"objective"``).
    ``initial``: T at the start, when the caller already has it. Returns the final adjacency and
    objective value.
    """
    n = adj.shape[0]
    adj = adj.copy()
    if initial is None:
        T = np.column_stack([column(j, adj) for j in range(n)]) if n else np.zeros((0, 0))
    else:
        T = np.array(initial, dtype=np.float64)
    indeg = adj.sum(axis=0)
    step = int(trajectory[-1]["step"]) if trajectory else 0
    for _ in range(max_steps):
        room = indeg < max_parents
        gains = np.full((3, n, n), -np.inf)
        gains[0] = np.where(~adj & allowed & room[None, :], T, -np.inf)
        gains[1] = np.where(adj, T, -np.inf)
        gains[2] = np.where(adj & allowed.T & room[:, None], T + T.T, -np.inf)
        tol = _GAIN_TOL * (1.0 + abs(value))
        flat = gains.ravel()
        candidates = np.flatnonzero(flat > tol)
        chosen = None
        for idx in candidates[np.argsort(-flat[candidates], kind="stable")]:
            kind, i, j = np.unravel_index(idx, gains.shape)
            if kind == 0 and _reaches(adj, j, i):
                continue
            if kind == 2:
                adj[i, j] = False
                closes = _reaches(adj, i, j)
                adj[i, j] = True
                if closes:
                    continue
            chosen = (int(kind), int(i), int(j), float(flat[idx]))
            break
        if chosen is None:
            break
        kind, i, j, gain = chosen
        if kind == 0:
            adj[i, j] = True
            changed = [j]
        elif kind == 1:
            adj[i, j] = False
            changed = [j]
        else:
            adj[i, j] = False
            adj[j, i] = True
            changed = [i, j]
        indeg = adj.sum(axis=0)
        for c in changed:
            T[:, c] = column(c, adj)
        value += gain
        step += 1
        move = ("add", "delete", "reverse")[kind]
        entry: dict[str, Any] = {"step": step, "move": f"{move} {names[i]}->{names[j]}"}
        if report is None:
            entry[key] = value
        else:
            entry[key] = report(adj)
            entry["objective"] = value
        trajectory.append(entry)
    return adj, value


def _check_max_parents(max_parents: int | None, n: int) -> int:
    if max_parents is None:
        return max(n - 1, 0)
    return check_count(max_parents, "max_parents (--max-parents)", 0)


def _start_adjacency(score: LocalScore, start: Mapping[str, Iterable[str]] | None, allowed: np.ndarray,
                     max_parents: int) -> np.ndarray:
    data = score.data
    adj = np.zeros((data.n, data.n), dtype=bool)
    if start is None:
        return adj
    given = parent_lists(start, "start")
    for child, parents in given.items():
        j = data.index(child)
        for p in parents:
            i = data.index(p)
            if not allowed[i, j]:
                raise InputError(f"start network: {p!r} may not be a parent of {child!r}")
            adj[i, j] = True
    if not is_dag(adj):
        check_acyclic(given, "start network")
    if (adj.sum(axis=0) > max_parents).any():
        raise InputError(f"start network has a variable with more than {max_parents} parents")
    return adj


# ----------------------------------------------------------------------------------------------
# results


@dataclass
class SearchResult:
    """A network found by :func:`greedy_search` or :func:`proxy_search`.

    ``parents`` maps every variable to its parent names; ``score`` is the exact total score;
    ``proxy_score`` the GP prediction at the network (``None`` for greedy); ``samples`` the number
    of graphs scored exactly — training samples, climbs' end points and refinement samples (0 for greedy);
    ``evaluations`` the distinct local scores
    computed; ``timings`` seconds per phase; ``found_by`` where the network came from (for proxy:
    a proxy climb, a training sample or a refinement sample — the best network scored exactly);
    ``local_optimum`` whether it is proven that no single add, delete or reverse improves the
    network's exact score (always for greedy; for proxy when refinement converged at the network returned,
    or ``polish``). ``limits`` names what cut the search short (:data:`PROXY_LIMITS`; empty when nothing did):
    ``"refine_rounds"`` — the ``refine`` rounds ran out before refinement converged (and no ``polish`` climbed
    on from there); ``"samples"`` — fewer
    distinct training DAGs than ``samples`` were drawn (``samples_drawn`` of them) in
    :data:`DRAW_ATTEMPTS_PER_SAMPLE` attempts a sample; ``"fit_iterations"`` — with ``refine=0`` and no
    ``polish`` the network is the proxy's alone, and the proxy's L-BFGS-B fit stopped unconverged — at ``maxiter``,
    or at its evaluations' cap or a failed line search (with refinement or polishing exact scores decide, whatever the
    fit).
    """

    method: str
    parents: dict[str, frozenset[str]]
    score: float
    proxy_score: float | None
    samples: int
    seconds: float
    trajectory: list[dict[str, Any]]
    seed: int | None
    variables: list[str] = field(default_factory=list)
    evaluations: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    found_by: str = "greedy"
    local_optimum: bool = True
    limits: list[str] = field(default_factory=list)
    samples_drawn: int | None = None
    #: the proxy's fit (:func:`fit_gp`): L-BFGS-B ``iterations`` of ``maxiter``, whether it ``converged`` (its
    #: ``message``), the ``jitter`` the kernel matrix needed; None for greedy and where no proxy was fitted
    fit: dict[str, Any] | None = None

    def edges(self) -> list[tuple[str, str]]:
        """Every arrow (parent, child), by child then parent in the data's column order."""
        order = {v: k for k, v in enumerate(self.variables or sorted(self.parents))}
        return sorted(((p, c) for c, ps in self.parents.items() for p in ps),
                      key=lambda e: (order[e[1]], order[e[0]]))

    def to_networkx(self) -> nx.DiGraph:
        """The network as a ``networkx.DiGraph`` (parent → child), every variable a node, isolated ones too."""
        return to_digraph(self.parents, nodes=self.variables or None)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values: parents as sorted lists, and every field of the dataclass."""
        order = {v: k for k, v in enumerate(self.variables or sorted(self.parents))}
        return {
            "method": self.method,
            "parents": {v: sorted(self.parents[v], key=order.__getitem__) for v in order},
            "score": self.score,
            "proxy_score": self.proxy_score,
            "samples": self.samples,
            "seconds": self.seconds,
            "trajectory": self.trajectory,
            "seed": self.seed,
            "evaluations": self.evaluations,
            "timings": self.timings,
            "found_by": self.found_by,
            "local_optimum": self.local_optimum,
            "limits": list(self.limits),
            "samples_drawn": self.samples_drawn,
            "fit": self.fit,
        }


#: what :attr:`SearchResult.limits` may name
PROXY_LIMITS = ("refine_rounds", "samples", "fit_iterations")
#: random draws per requested training DAG before the draw stops short (and says so: ``"samples"``)
DRAW_ATTEMPTS_PER_SAMPLE = 50
#: float64 m × m matrices the fit holds at once (K, its factor, K⁻¹ and ααᵀ − K⁻¹, with slack)
_FIT_MATRICES = 6


def _parents_of(adj: np.ndarray, names: list[str]) -> dict[str, frozenset[str]]:
    return {names[j]: frozenset(names[i] for i in np.flatnonzero(adj[:, j])) for j in range(len(names))}


def _say(progress: Progress | None, message: str) -> None:
    if progress is not None:
        progress(message)


# ----------------------------------------------------------------------------------------------
# the two searches


def greedy_search(
    score: LocalScore,
    *,
    max_parents: int | None = None,
    start: Mapping[str, Iterable[str]] | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> SearchResult:
    """Greedy hill climbing on exact scores (add / delete / reverse; cycles rejected).

    Deterministic (ties go to the first move in add, delete, reverse and row-major order);
    ``seed`` is only recorded. ``start`` maps variable names to parent names (default: empty).
    ``max_parents``: the most parents a variable may get (default: no limit but the variables'); ``progress``:
    called with a one-line message (str) as the search goes.
    """
    began = time.perf_counter()
    check_score(score)
    check_callback(progress)
    seed = check_seed(seed, "seed (--seed)")     # a NumPy integer as a plain one: the result's JSON holds it (a review)
    data = score.data
    n = data.n
    kmax = _check_max_parents(max_parents, n)
    allowed = allowed_matrix(score)
    adj = _start_adjacency(score, start, allowed, kmax)
    scorer = _ExactScorer(score)
    column = _exact_column(scorer, allowed, kmax)
    value = scorer.total(adj)
    trajectory: list[dict[str, Any]] = [{"step": 0, "move": "start", "score": value}]
    _say(progress, f"greedy search on {n} variables")
    adj, _ = _hill_climb(adj, allowed, kmax, column, value, data.names, trajectory, "score")
    for entry in trajectory:
        entry["proxy_score"] = None
    final = scorer.total(adj)
    seconds = time.perf_counter() - began
    return SearchResult(method="greedy", parents=_parents_of(adj, data.names), score=final,
                        proxy_score=None, samples=0, seconds=seconds, trajectory=trajectory, seed=seed,
                        variables=list(data.names), evaluations=len(scorer.cache),
                        timings={"search": seconds})


def _reachability(adj: np.ndarray) -> np.ndarray:
    """R[u, v] ⇔ a directed path u ⇝ v of length ≥ 1 (``adj`` must be acyclic)."""
    n = adj.shape[0]
    indeg = adj.sum(axis=0)
    order: list[int] = []
    ready = list(np.flatnonzero(indeg == 0))
    while ready:
        u = ready.pop()
        order.append(u)
        for v in np.flatnonzero(adj[u]):
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    reach = np.zeros((n, n), dtype=bool)
    for u in reversed(order):
        kids = np.flatnonzero(adj[u])
        if kids.size:
            reach[u] = adj[u] | reach[kids].any(axis=0)
    return reach


def neighbour_moves(adj: np.ndarray, allowed: np.ndarray, max_parents: int) -> list[tuple[int, int, int]]:
    """Every valid single-edge move (kind, i, j) from DAG ``adj``: kind 0 adds i→j, 1 deletes it,
    2 reverses it; the result is acyclic and respects ``allowed`` and ``max_parents``."""
    reach = _reachability(adj)
    room = adj.sum(axis=0) < max_parents
    adds = np.argwhere(~adj & allowed & room[None, :] & ~reach.T)
    moves = [(0, int(i), int(j)) for i, j in adds]
    for i, j in np.argwhere(adj):
        moves.append((1, int(i), int(j)))
        if allowed[j, i] and room[i]:
            others = np.flatnonzero(adj[i])
            others = others[others != j]
            if not (others.size and reach[others, j].any()):
                moves.append((2, int(i), int(j)))
    return moves


def _graph_key(adj: np.ndarray) -> bytes:
    """A 16-byte digest of an adjacency matrix (duplicate detection without keeping the graphs)."""
    return hashlib.blake2b(np.packbits(adj).tobytes(), digest_size=16).digest()


def _apply(adj: np.ndarray, move: tuple[int, int, int]) -> np.ndarray:
    kind, i, j = move
    new = adj.copy()
    new[i, j] = kind == 0
    if kind == 2:
        new[j, i] = True
    return new


def _predicted_gains(coef: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """Proxy change of each move (kind, i, j): +c_ij to add, −c_ij to delete, c_ji − c_ij to reverse."""
    kind, i, j = moves.T
    return np.where(kind == 0, coef[i, j], np.where(kind == 1, -coef[i, j], coef[j, i] - coef[i, j]))


def _parent_sets(adj: np.ndarray) -> list[frozenset[int]]:
    """Π_j of every variable j of adjacency matrix ``adj``."""
    return [frozenset(np.flatnonzero(adj[:, j]).tolist()) for j in range(adj.shape[0])]


def vicinity_posterior(coef: np.ndarray, weights: np.ndarray, moves: np.ndarray, deltas: np.ndarray,
                       noise: float = 1e-8) -> np.ndarray:
    """The GP refitted on the vicinity of a network g₀: posterior edge coefficients (an n×n matrix).

    Model (the module's GP, centred at g₀): s(g) = s(g₀) + Σ_ij c_ij (b_ij(g) − b_ij(g₀)) with prior
    c ~ N(``coef``, W), W = diag(``weights``) (n×n, the fitted kernel weights). Data: the exact
    changes y of single-edge moves from g₀ (``moves`` rows (kind, i, j), ``deltas`` y), each a row x
    of X ∈ {−1, 0, 1}^{m×d}: +1 at an added edge, −1 at a deleted one, both for a reversal. Posterior
    mean (R&W eqs. 2.25 and 2.42 with the mean function b(g)·coef): c ← c + W Xᵀ (X W Xᵀ + σ² I)⁻¹
    (y − X c). ``noise`` σ² is relative to the mean weight: a single move's change is exact, so the
    posterior interpolates it; edges no move touches keep their prior coefficient. X W Xᵀ couples only
    the deletion and the reversal of the same edge (blocks of ≤ 2 rows), so it is solved sparse.
    """
    coef = np.array(coef, dtype=np.float64)
    moves = np.asarray(moves, dtype=np.int64).reshape(-1, 3)
    if moves.shape[0] == 0:
        return coef
    kind, i, j = moves.T
    rev = kind == 2
    m = moves.shape[0]
    rows = np.concatenate([np.arange(m), np.flatnonzero(rev)])
    n = coef.shape[0]
    flat = np.concatenate([i * n + j, j[rev] * n + i[rev]])
    vals = np.concatenate([np.where(kind == 0, 1.0, -1.0), np.ones(int(rev.sum()))])
    touched, col = np.unique(flat, return_inverse=True)
    X = sparse.csr_matrix((vals, (rows, col)), shape=(m, touched.size))
    ti, tj = np.divmod(touched, n)
    w = weights[ti, tj]
    prior = coef[ti, tj]
    K = (X @ sparse.diags(w) @ X.T + noise * float(w.mean()) * sparse.identity(m)).tocsc()
    beta = splinalg.spsolve(K, np.asarray(deltas, dtype=np.float64) - X @ prior)
    coef[ti, tj] = prior + w * (X.T @ np.atleast_1d(beta))
    return coef


def proxy_search(
    score: LocalScore,
    *,
    samples: int = DEFAULT_SAMPLES,
    refine: int = DEFAULT_REFINE,
    refine_samples: int | None = None,
    radius: int = 1,
    max_parents: int | None = None,
    expected_parents: float = DEFAULT_EXPECTED_IN_DEGREE,
    edge_slope: bool = True,
    seed: int | None = None,
    maxiter: int = DEFAULT_MAXITER,
    polish: bool = False,
    kappa: float = DEFAULT_KAPPA,
    progress: Progress | None = None,
) -> SearchResult:
    """Search by proxy: score ``samples`` random DAGs exactly, fit the GP, climb on it, refine.

    Round 0 (the seed's method): the training set is the empty graph plus ``samples − 1`` distinct
    random DAGs (fewer when there are not that many); the GP is fitted to them and climbed from the
    empty graph, at most one parent per variable. Then up to ``refine`` refinement rounds (module
    docstring), each scoring ``refine_samples`` (default ``samples``, at least 5) moves and
    making at most ``radius`` exact-improving moves; they stop early at an exact local optimum
    (the trajectory ends with a ``converged`` entry and ``local_optimum`` is true). ``refine=0`` is
    the seed's pure proxy search.

    The result is the best network scored exactly (``found_by`` says which); ``samples`` counts
    every exactly scored graph, ``evaluations`` the distinct local scores. ``kappa`` > 0 makes the
    round-0 climb use a lower confidence bound (c_ij − κ·sd(c_ij), :class:`GraphGP`). ``polish``
    finishes with exact greedy hill climbing from the best network. ``seed`` (drawn and recorded
    when ``None``) fixes every random choice.

    ``max_parents``: at most this many parents per variable in every graph drawn, proposed or climbed
    (``None``: no limit). ``expected_parents``: the mean in-degree of the random training DAGs.
    ``edge_slope=False`` fixes the GP's mean slope β at 0 (the seed's constant mean). ``maxiter``: L-BFGS-B
    iterations at most in each fit of the GP's hyperparameters (:func:`fit_gp`). ``progress``: called with a
    message (a string) as each phase begins.
    """
    began = time.perf_counter()
    check_score(score)
    check_callback(progress)
    samples = check_count(samples, "samples (--samples)", 2)
    refine = check_count(refine, "refine (--refine)", 0)
    check_real(expected_parents, "expected_parents (--expected-in-degree)", 0, above=True)
    check_real(kappa, "kappa (--kappa)", 0)
    radius = check_count(radius, "radius", 1)
    maxiter = check_count(maxiter, "maxiter", 1)
    check_flag(polish, "polish (--polish)")
    check_flag(edge_slope, "edge_slope")
    per_round = max(5, samples) if refine_samples is None else check_count(refine_samples,
                                                                           "refine_samples (--refine-samples)", 1)
    if refine_samples is not None and refine == 0:      # as the command line: a setting that would be ignored
        raise InputError("refine_samples (--refine-samples) sets the moves each refinement round scores: refine=0 "
                         "(--refine 0) runs none")
    seed = check_seed(seed, "seed (--seed)")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**31))
    rng = np.random.default_rng(seed)
    data = score.data
    n = data.n
    names = data.names
    kmax = _check_max_parents(max_parents, n)
    allowed = allowed_matrix(score)
    scorer = _ExactScorer(score)
    timings = {"sample": 0.0, "fit": 0.0, "search": 0.0, "exact": 0.0}
    seen: set[bytes] = set()
    graphs: list[np.ndarray] = []
    values: list[float] = []
    best: list[Any] = [None, -math.inf, ""]

    def record(adj: np.ndarray, value: float, origin: str) -> None:
        """Count an exactly scored network once; keep it as training data only before the fit."""
        key = _graph_key(adj)
        if key not in seen:
            seen.add(key)
            if origin == "training sample":
                graphs.append(adj)
                values.append(value)
        if value > best[1]:
            best[0], best[1], best[2] = adj, value, origin

    t0 = time.perf_counter()
    _say(progress, f"scoring {samples} training DAGs exactly")
    record(np.zeros((n, n), dtype=bool), scorer.total(np.zeros((n, n), dtype=bool)), "training sample")
    if kmax == 0 or not allowed.any():          # the empty graph is the only DAG: exact, and a local optimum
        return SearchResult(method="proxy", parents=_parents_of(graphs[0], names), score=values[0],
                            proxy_score=None, samples=1, seconds=time.perf_counter() - began,
                            trajectory=[{"step": 0, "round": 0, "move": "converged", "score": values[0]}],
                            seed=seed, variables=list(names), evaluations=len(scorer.cache), timings=timings,
                            found_by="the only DAG (no edge allowed)", samples_drawn=1)
    # at most as many graphs as there are DAGs to draw (30,000 asked on 3 variables, 25 DAGs, was refused for 40 GiB,
    # and the draw went on for 1.5 million attempts after it had them all)
    drawable = min(samples, admissible_dags(allowed, kmax) if n <= ADMISSIBLE_DAGS_MAX_VARIABLES else samples)
    _check_fit_memory(drawable, n)
    attempts = 0
    while len(graphs) < drawable and attempts < DRAW_ATTEMPTS_PER_SAMPLE * samples:
        attempts += 1
        adj = random_dag(n, rng, expected_parents=expected_parents, max_parents=kmax, allowed=allowed)
        if _graph_key(adj) not in seen:
            record(adj, scorer.total(adj), "training sample")
    if len(graphs) < 2:
        raise InputError(f"{data.source}: only the empty graph was drawn in {attempts} random DAGs at "
                         f"expected_parents (--expected-in-degree) {expected_parents:g}; raise it")
    limits = ["samples"] if len(graphs) < samples else []
    timings["sample"] += time.perf_counter() - t0

    t0 = time.perf_counter()
    _say(progress, f"fitting the proxy to {len(graphs)} graphs")
    gp = fit_gp(np.array([graph_bits(a) for a in graphs]), np.array(values), edge_slope=edge_slope,
                maxiter=maxiter)
    timings["fit"] += time.perf_counter() - t0
    src, dst = edge_pairs(n)
    coef = np.zeros((n, n))
    coef[src, dst] = gp.coefficients
    weights = np.zeros((n, n))
    weights[src, dst] = gp.weights
    anchor = (np.zeros((n, n), dtype=bool), gp.mean)

    def predict(adj: np.ndarray) -> float:
        ref, level = anchor
        return level + float(coef[adj & ~ref].sum() - coef[ref & ~adj].sum())

    trajectory: list[dict[str, Any]] = []
    climb_coef = coef.copy()
    if kappa > 0:
        climb_coef[src, dst] -= kappa * gp.coefficient_sd

    def proxy_column(j: int, a: np.ndarray) -> np.ndarray:
        return np.where(a[:, j], -climb_coef[:, j], climb_coef[:, j])

    t0 = time.perf_counter()
    _say(progress, "round 0: greedy search on the proxy")
    empty = np.zeros((n, n), dtype=bool)
    trajectory.append({"step": 0, "round": 0, "move": "start", "proxy_score": gp.mean, "score": values[0]})
    adj, _ = _hill_climb(empty, allowed, min(kmax, 1), proxy_column, gp.mean, names, trajectory,
                         "proxy_score", report=predict)
    for entry in trajectory:
        entry.setdefault("round", 0)
    timings["search"] += time.perf_counter() - t0
    if adj.any():
        t0 = time.perf_counter()
        trajectory[-1]["score"] = scorer.total(adj)
        record(adj, trajectory[-1]["score"], "proxy climb (round 0)")
        timings["exact"] += time.perf_counter() - t0

    cached_column = _exact_column(scorer, allowed, kmax, cached_only=True)
    current, level = empty, values[0]
    parent_sets = _parent_sets(current)
    toggles = np.column_stack([cached_column(j, current) for j in range(n)])
    converged = False
    for rnd in range(1, refine + 1):
        t0 = time.perf_counter()
        moves = np.array(neighbour_moves(current, allowed, kmax), dtype=np.int64).reshape(-1, 3)
        kind, src_m, dst_m = moves.T
        exact = toggles[src_m, dst_m] + np.where(kind == 2, toggles[dst_m, src_m], 0.0)
        pool = np.flatnonzero(~np.isfinite(exact))
        ranked = pool[np.argsort(-_predicted_gains(coef, moves[pool]), kind="stable")]
        top = ranked[: math.ceil(0.8 * per_round)]
        chosen = np.concatenate([top, rng.permutation(ranked[top.size:])[: per_round - top.size]])
        _say(progress, f"round {rnd}: scoring {chosen.size} moves exactly")
        for k in chosen.astype(np.int64).tolist():
            move = tuple(moves[k].tolist())
            changed = [(move[1], move[2])] + ([(move[2], move[1])] if move[0] == 2 else [])
            for i, j in changed:
                toggles[i, j] = scorer.local(j, parent_sets[j] ^ {i}) - scorer.local(j, parent_sets[j])
            exact[k] = math.fsum(toggles[i, j] for i, j in changed)
            record(_apply(current, move), level + exact[k], f"refinement sample (round {rnd})")
        exact = toggles[src_m, dst_m] + np.where(kind == 2, toggles[dst_m, src_m], 0.0)
        timings["sample"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        have = np.isfinite(exact)
        coef = vicinity_posterior(coef, weights, moves[have], exact[have])
        anchor = (current, level)
        timings["fit"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        first = len(trajectory)
        trajectory.append({"step": trajectory[-1]["step"], "round": rnd, "move": "start",
                           "proxy_score": level, "score": level})
        previous = current
        current, level = _hill_climb(current, allowed, kmax, cached_column, level, names, trajectory, "score",
                                     max_steps=radius, initial=toggles)
        for entry in trajectory[first:]:
            entry.setdefault("round", rnd)
            entry.setdefault("proxy_score", predict(current) if entry is trajectory[-1] else None)
        for j in np.flatnonzero((current != previous).any(axis=0)):
            parent_sets[j] = frozenset(np.flatnonzero(current[:, j]).tolist())
            toggles[:, j] = cached_column(int(j), current)
        timings["search"] += time.perf_counter() - t0
        if len(trajectory) - first > 1:
            record(current, level, f"refinement climb (round {rnd})")
        elif ranked.size <= chosen.size:
            trajectory[-1]["move"] = "converged"
            converged = True
            break
    best_adj, found_by = best[0], best[2]
    best_score = scorer.total(best_adj)
    if converged and not np.array_equal(best_adj, current) and level >= best_score - _tie_margin(best_score):
        best_adj, found_by, best_score = current, f"refinement climb (converged, round {rnd})", scorer.total(current)
    if refine > 0 and not converged and not polish:       # polishing climbs on to a local optimum regardless
        limits.append("refine_rounds")
    # the proxy's network alone, from a fit cut short (its iterations, or L-BFGS-B's evaluations or line search)
    if refine == 0 and not polish and (gp.iterations >= maxiter or not gp.converged):
        limits.append("fit_iterations")
    if polish:
        t0 = time.perf_counter()
        _say(progress, "polishing: greedy search on exact scores from the best network")
        first = len(trajectory)
        trajectory.append({"step": trajectory[-1]["step"], "round": "polish", "move": "start",
                           "score": best_score})
        best_adj, _ = _hill_climb(best_adj, allowed, kmax, _exact_column(scorer, allowed, kmax), best_score,
                                  names, trajectory, "score")
        best_score = scorer.total(best_adj)
        for entry in trajectory[first:]:
            entry.setdefault("round", "polish")
            entry.setdefault("proxy_score", None)
        timings["polish"] = time.perf_counter() - t0
        found_by += " + exact polish"
    return SearchResult(method="proxy", parents=_parents_of(best_adj, names), score=best_score,
                        proxy_score=predict(best_adj), samples=len(seen),
                        seconds=time.perf_counter() - began, trajectory=trajectory, seed=seed,
                        variables=list(names), evaluations=len(scorer.cache), timings=timings,
                        found_by=found_by, limits=limits, samples_drawn=len(graphs),
                        fit={"iterations": gp.iterations, "maxiter": maxiter, "converged": gp.converged,
                             "message": gp.fit_message, "jitter": gp.jitter},
                        local_optimum=polish or (converged and bool(np.array_equal(best_adj, current))))


def _tie_margin(score: float) -> float:
    """Scores this close are one score (the same network totalled in another order)."""
    return float(tie_tolerance(score))


def _check_fit_memory(samples: int, n: int) -> None:
    """Refuse (:class:`LimitError`) a training set whose GP fit would not fit in the free memory: about
    :data:`_FIT_MATRICES` float64 matrices of ``samples``² entries and two of samples × n(n−1)."""
    need = 8 * (_FIT_MATRICES * samples * samples + 2 * samples * n * max(n - 1, 1))
    free = free_memory()
    if free is not None and need > free:
        raise LimitError(f"fitting the proxy to {samples:,} training graphs needs about {need / 2**30:.1f} GiB, "
                         f"{free / 2**30:.1f} GiB free: lower samples (--samples)")


__all__ = [
    "GraphGP",
    "SearchResult",
    "edge_pairs",
    "fit_gp",
    "graph_bits",
    "graph_kernel",
    "greedy_search",
    "is_dag",
    "log_marginal_likelihood",
    "neighbour_moves",
    "proxy_search",
    "random_dag",
    "vicinity_posterior",
]
