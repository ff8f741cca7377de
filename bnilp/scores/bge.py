"""BGe: the Bayesian Gaussian equivalent score for continuous data, a log marginal likelihood.

Sources: Geiger & Heckerman, "Parameter priors for directed acyclic graphical models and the characterization of
several probability distributions" (Ann. Statist. 2002), Theorem 2 and §5 (the normal-Wishart case), with the
correction of Kuipers, Moffa & Heckerman, "Addendum on the scoring of Gaussian directed acyclic graphical models"
(Ann. Statist. 2014), eqs. 1–4: the marginal of a set S of l variables is scored with α_w − n + l degrees of
freedom, not α_w. Derived here from the normal-inverse-Wishart marginal likelihood (e.g. Murphy 2007,
"Conjugate Bayesian analysis of the Gaussian distribution", eq. 266) and tested against its sequential form.

The data (N rows, n continuous columns) are rows of a Gaussian with unknown mean μ and precision W, and the
prior is normal-Wishart: W ~ Wishart(α_w, T⁻¹) (so Σ = W⁻¹ ~ inverse-Wishart(α_w, T)) and μ | W ~ N(ν, (α_μ W)⁻¹),
with T = t·I, t = α_μ(α_w − n − 1)/(α_μ + 1) (the prior expected covariance is then the identity), ν the
sample mean, α_μ = 1 and α_w = n + 2 by default (bnlearn's ``bge``, BiDAG, pygobnilp's ``BGe``). The columns are
standardised first (population SD) unless ``standardize=False``: T = t·I states a prior covariance in the
data's units, so on raw columns the score depends on them; standardised, every a·x + b of a column scores the
same network the same.

For a set S (|S| = l), the prior's marginal on S is normal-inverse-Wishart with ν_l = α_w − n + l degrees of
freedom and scale T_SS, so its marginal likelihood is

    g(S) = ln p(d_S) = (l/2)·ln(α_μ/(N + α_μ)) − (lN/2)·ln π + ln Γ_l((N + ν_l)/2) − ln Γ_l(ν_l/2)
                       + (ν_l/2)·ln det T_SS − ((N + ν_l)/2)·ln det R_SS,

R = T + S_N + (N·α_μ/(N + α_μ))·(ν − x̄)(ν − x̄)ᵀ, S_N = Σ_rows (x − x̄)(x − x̄)ᵀ (the last term is 0 with ν = x̄),
Γ_l the multivariate gamma function, g(∅) = 0. The local score is s(i | Π) = g(Π ∪ {i}) − g(Π); summed over a
DAG's families it is ln p(D | G) (Geiger & Heckerman 2002, Theorem 2), the same for Markov equivalent DAGs.
The Bayes factor of two networks is then exactly exp of their score difference.

Pruning: only R1 is claimed (the superset bound that R_{ii·Π″} ≥ t gives stands about (N/2)·ln(1 + N·σ²/t) nats
above a family's real score, σ² the child's standardised residual variance: it would prune only near-deterministic
children).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular

from bnilp.data import Dataset
from bnilp.errors import InputError, check_real
from bnilp.scores.base import DEFAULT_PENALTY_DISCOUNT, TIE_RTOL, LocalScore, StructurePrior, centred_columns
from bnilp.scores.batch import log_rising_gamma

#: imaginary sample size of the normal part of the prior (μ | W ~ N(ν, (α_μ W)⁻¹))
DEFAULT_ALPHA_MU = 1.0
#: the Wishart's degrees of freedom are n + this by default (bnlearn, BiDAG, pygobnilp: n + 2)
DEFAULT_ALPHA_W_OVER_N = 2
#: the parent sets whose inverse Cholesky factor is kept (bit mask → terms); cleared when full
SET_CACHE = 200_000
#: a family's score whose rounding bound exceeds this share of it (of 1 nat at least) is refused (:meth:`BGe.raw`):
#: the pipeline's relative tie tolerance (:data:`bnilp.scores.base.TIE_RTOL`). A column duplicated as the parent of
#: its copy, at the default prior: bound 1.3·10⁻⁷ nats at 10⁴ rows, 1.3·10⁻³ at 10⁶ (2.4·10⁻¹⁰ of the score), 0.13 at
#: 10⁷ (2·10⁻⁹: refused)
SCORE_ROUNDING = TIE_RTOL
#: a family's score past this size is refused: the credible set's tie tolerance (1e-9·|OPT|) would be nats wide
MAX_SCORE = 1e12
#: α_μ and the prior matrix's t must lie in [MIN_PRIOR, 1/MIN_PRIOR] (as BDeu's ESS ≥ 1e-100: beyond, the
#: arithmetic of t, ln t and λ/t leaves the doubles' range or their precision)
MIN_PRIOR = 1e-100


def prior_scale(alpha_mu: float, alpha_w: float, n: int) -> float:
    """t of T = t·I: α_μ(α_w − n − 1)/(α_μ + 1), which makes the prior expected covariance the identity
    (Kuipers, Moffa & Heckerman 2014, §2; needs α_w > n + 1)."""
    return (alpha_w - n - 1.0) / (1.0 + 1.0 / alpha_mu)     # no overflow of α_μ·(α_w − n − 1)


class BGe(LocalScore):
    """BGe score (Geiger & Heckerman 2002, Kuipers et al. 2014); see the module docstring for the formula.

    Parameters
    ----------
    alpha_mu:
        α_μ > 0, the normal part's imaginary sample size (``--alpha-mu``).
    alpha_w:
        α_w > n + 1, the Wishart's degrees of freedom (``--alpha-w``); None: n + 2.
    standardize:
        score the columns standardised (default) or in their own units (``--raw-units``; bnlearn's and
        pygobnilp's default).
    """

    name = "bge"
    takes_penalty_discount = False

    def __init__(self, data: Dataset, *, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT, alpha_mu: float = DEFAULT_ALPHA_MU,
                 alpha_w: float | None = None, standardize: bool = True):
        if penalty_discount != DEFAULT_PENALTY_DISCOUNT:
            raise InputError(f"score 'bge' takes no penalty_discount (--penalty-discount) (got {penalty_discount}); "
                             "BGe is a marginal likelihood, with no penalty to scale")
        super().__init__(data, prior=prior, penalty_discount=penalty_discount)
        discrete = [data.names[j] for j in range(data.n) if data.is_discrete(j)]
        if discrete:
            shown = ", ".join(repr(v) for v in discrete[:5]) + (", …" if len(discrete) > 5 else "")
            raise InputError(f"{data.source}: score 'bge' takes continuous columns only; {shown} "
                             f"{'is' if len(discrete) == 1 else 'are'} discrete (read the data with "
                             "continuous='all', --continuous all on the command line, or choose a mixed score)")
        check_real(alpha_mu, "alpha_mu (--alpha-mu)", MIN_PRIOR, above=False)
        if alpha_w is not None:
            try:
                check_real(alpha_w, "alpha_w (--alpha-w)", data.n + 1, above=True)
            except InputError as exc:
                raise InputError(f"{exc} (n + 1 with {data.n} variables: the prior matrix t·I needs "
                                 "t = α_μ(α_w − n − 1)/(α_μ + 1) > 0)") from None
        if not isinstance(standardize, bool):
            raise InputError(f"standardize must be True or False, got {standardize!r}")
        self.N, self.n = data.N, data.n
        self.alpha_mu = float(alpha_mu)
        self._alpha_w_given = None if alpha_w is None else float(alpha_w)
        self.alpha_w = float(self.n + DEFAULT_ALPHA_W_OVER_N) if alpha_w is None else float(alpha_w)
        self.standardize = standardize
        self.t = prior_scale(self.alpha_mu, self.alpha_w, self.n)
        if not MIN_PRIOR <= self.t <= 1.0 / MIN_PRIOR:
            raise InputError(f"alpha_mu (--alpha-mu) {self.alpha_mu:g} and alpha_w (--alpha-w) {self.alpha_w:g} give "
                             f"the prior matrix t·I t = α_μ(α_w − n − 1)/(α_μ + 1) = {self.t:g}, outside "
                             f"[{MIN_PRIOR:g}, {1 / MIN_PRIOR:g}]")
        x = data.values.astype(float)
        centred = centred_columns(x)           # less a central value first: far from 0 the column loses no digits
        if standardize:
            sd = np.sqrt((centred * centred).mean(axis=0))
            centred = centred / np.where(sd > 0, sd, 1.0)
        # ν = x̄: the mean term of R = t·I + S vanishes
        self.S = centred.T @ centred
        self._parent_sets: dict[int, tuple[np.ndarray, np.ndarray, float, float]] = {}
        self._const = [self._family_constant(size) for size in range(self.n)]

    def _family_constant(self, size: int) -> float:
        """The terms of s(i | Π) that depend on |Π| = k only: ½·ln(α_μ/(N + α_μ)) − (N/2)·ln(π·t)
        + ln Γ((N + ν)/2) − ln Γ(ν/2), ν = α_w − n + k + 1 (:func:`bnilp.scores.batch.log_rising_gamma`: no
        cancellation of two lnΓ however large ν)."""
        nu = self.alpha_w - self.n + size + 1
        return (-0.5 * math.log1p(self.N / self.alpha_mu) - self.N / 2.0 * math.log(math.pi * self.t)
                + log_rising_gamma(nu / 2.0, self.N / 2.0))

    def _parent_terms(self, parents: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, float, float]:
        """The parents (sorted), L⁻¹ for the Cholesky factor L of t·I + S_ΠΠ (a triangular solve, once),
        ln det(I + S_ΠΠ/t) = Σ_j ln(L_jj²/t), and a bound on that term's rounding error (:meth:`_rounding`); kept by
        the parent set (every child of that set reads them)."""
        key = 0
        for j in parents:
            key |= 1 << j
        hit = self._parent_sets.get(key)
        if hit is not None:
            return hit
        idx = np.array(sorted(parents), dtype=np.intp)
        block = self.S[np.ix_(idx, idx)] + self.t * np.eye(idx.size)
        try:
            factor = np.linalg.cholesky(block)        # ⪰ t·I in exact arithmetic; rounded, where t ≪ eps·S, not
        except np.linalg.LinAlgError:
            raise self._unresolved(None, parents, "its parents' scatter is singular to double precision") from None
        pivots = np.diag(factor) ** 2
        # (no parents: the empty inverse; SciPy before 1.14 refused a 0 × 0 solve — "illegal value in 7th argument")
        inverse = solve_triangular(factor, np.eye(idx.size), lower=True, check_finite=False) if idx.size \
            else np.empty((0, 0))
        error = 0.5 * float((self._rounding(idx.size) * np.diag(block) / pivots).sum())
        value = (idx, inverse, float((np.log(pivots) - math.log(self.t)).sum()), error)
        if len(self._parent_sets) >= SET_CACHE:
            self._parent_sets = {}
        self._parent_sets[key] = value
        return value

    def _rounding(self, size: int) -> float:
        """Relative rounding of a Cholesky pivot (or the child's Schur complement) of a (size + 1)-square block,
        as a share of the block's diagonal: 2(size + 2)·eps, twice Higham's γ_{size+1} (Accuracy and Stability of
        Numerical Algorithms, 2002, Theorem 10.3)."""
        return 2.0 * (size + 2) * np.finfo(float).eps

    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        """s(i | Π) = g(Π ∪ {i}) − g(Π) (module docstring), written so that nothing large cancels: with T = t·I,
        R_{ii·Π} = t + Q, Q = S_ii − ‖L⁻¹S_Πi‖² (L the Cholesky factor of t·I + S_ΠΠ: the last step of a Cholesky
        factorisation, backward stable), and det R_Π = t^k·det(I + S_ΠΠ/t),

            s(i | Π) = ½·ln(α_μ/(N + α_μ)) − (N/2)·ln(π·t) + ln Γ((N + ν)/2) − ln Γ(ν/2)
                       − ((N + ν)/2)·log1p(Q/t) − ½·ln det(I + S_ΠΠ/t),   ν = α_w − n + |Π| + 1

        (the π^{k/2} of the two multivariate gamma functions cancel, and Γ_{k+1}(a)/Γ_k(a − ½) = π^{k/2}·Γ(a)).
        Differences of g itself lost every digit at α_w = 10¹⁶ (a review: 180 nats off).

        Q and the pivots are known to about eps·S_ii each, so where t + Q is far below S_ii (a child, or a parent,
        nearly determined by the others on the scale of t) the score is ill-conditioned in double precision: its
        rounding bound ((N + ν)/2)·δQ/(t + Q) + ½·Σ δp_j/p_j exceeding :data:`SCORE_ROUNDING` of the score, or the
        score's size past :data:`MAX_SCORE`, is an :class:`InputError` naming the prior (a review: silent errors
        of 14.5 nats on OPT at α_μ = 10⁻³⁰ with nearly collinear columns, and a traceback at N ≤ n)."""
        idx, inverse, logdet, error = self._parent_terms(tuple(parents))
        q = float(self.S[child, child])
        scale = q
        if idx.size:
            proj = inverse @ self.S[idx, child]
            explained = float(proj @ proj)
            q -= explained
            scale += explained
        nu = self.alpha_w - self.n + idx.size + 1
        value = self._const[idx.size] - (self.N + nu) / 2.0 * math.log1p(max(q, 0.0) / self.t) - 0.5 * logdet
        error += (self.N + nu) / 2.0 * self._rounding(idx.size) * scale / (self.t + max(q, 0.0))
        if error > SCORE_ROUNDING * max(1.0, abs(value)):
            raise self._unresolved(child, parents, f"its score {value:.10g} is known only to ±{error:.2g} in double "
                                   "precision (the child or a parent is determined by the others to within the data's "
                                   "rounding, on the scale of t)")
        if abs(value) > MAX_SCORE:
            raise InputError(f"score 'bge': {self._family_text(child, parents)} scores {value:.3g}: the prior "
                             f"(alpha_mu={self.alpha_mu!r}, alpha_w={self.alpha_w!r}) outweighs the data past what the "
                             f"search can compare (|score| > {MAX_SCORE:g}); choose a smaller alpha_w (--alpha-w) or a "
                             "larger alpha_mu (--alpha-mu)")
        return value

    def _family_text(self, child: int | None, parents: tuple[int, ...]) -> str:
        names = self.data.names
        given = "{" + ", ".join(names[j] for j in sorted(parents)) + "}"
        return f"the parents {given}" if child is None else f"{names[child]!r} given {given}"

    def _unresolved(self, child: int | None, parents: tuple[int, ...], why: str) -> InputError:
        return InputError(f"score 'bge': {self._family_text(child, parents)}: {why}; the prior matrix's t = "
                          f"α_μ(α_w − n − 1)/(α_μ + 1) = {self.t:.3g} is too small for these data — raise alpha_mu "
                          f"(--alpha-mu, {self.alpha_mu!r}) or alpha_w (--alpha-w, {self.alpha_w!r}), or leave out "
                          "nearly collinear columns")

    def set_value(self, variables: tuple[int, ...]) -> float:
        """g(S) = ln p(d_S), the marginal likelihood of the columns S: the sum of the local scores along S in
        increasing order (the chain rule; any order gives the same, score equivalence)."""
        order = sorted(set(variables))
        return math.fsum(self.raw(v, tuple(order[:k])) for k, v in enumerate(order))

    def constructor_settings(self) -> dict[str, Any]:
        return {**super().constructor_settings(), "alpha_mu": self.alpha_mu, "alpha_w": self._alpha_w_given,
                "standardize": self.standardize}

    def settings(self) -> dict[str, Any]:
        out = super().settings()
        out.update({
            "alpha_mu": self.alpha_mu,
            "alpha_w": self.alpha_w,
            "prior_matrix": f"t*I, t = alpha_mu*(alpha_w - n - 1)/(alpha_mu + 1) = {self.t:.12g}",
            "prior_mean": "the sample mean",
            "standardize": self.standardize,
            "columns": "standardised (population SD)" if self.standardize else "in their own units",
            "set_degrees_of_freedom": "alpha_w - n + |S| (Kuipers, Moffa & Heckerman 2014)",
            "units": "nats; score = ln p(data | DAG), a log marginal likelihood",
            "pruning": "R1 only",
        })
        return out
