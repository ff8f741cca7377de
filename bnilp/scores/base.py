"""The local-score interface shared by every score, and the structure priors.

A local score s(i | Π) is a log-score, higher is better, in natural-log units, so that differences
of network totals approximate ln(Bayes factor) (see ``shared/docs/scores.md``).
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import digamma

from bnilp.data import Dataset
from bnilp.errors import InputError, check_real

#: scores whose network totals are equal on Markov equivalent DAGs: BIC and BDeu (Heckerman, Geiger &
#: Chickering 1995), CG (every family is a difference of one set function, Andrews et al. eqs. 3–4), BGe (a
#: difference of one set function too, Geiger & Heckerman 2002).
#: Not CGd, MVP or MML (their discrete-child and polynomial terms depend on the orientation).
SCORE_EQUIVALENT_SCORES = frozenset({"bic", "bdeu", "cg", "bge"})
#: structure priors that keep score equivalence. Each is a function of the in-degree k_i alone, and the
#: multiset of in-degrees is the same for every DAG of a class: the nodes of a chain component share their
#: directed parents, their parents inside it form a clique, and every (j+1)-clique of the component has
#: exactly one last vertex in an orientation, so Σ_v C(k_v, j) counts those cliques for every j
#: (checked on random classes in ``tests/test_credible.py``).
EQUIVALENCE_PRESERVING_PRIORS = frozenset({"none", "binomial", "ebic"})
#: the structure priors a local score may add (``structure_prior``, ``--prior``): :class:`StructurePrior`
STRUCTURE_PRIORS = ("none", "binomial", "ebic")
#: the score settings' defaults, one place for the API and the command line: the multiplier of BIC's ½·ln N
#: penalty (``penalty_discount``, ``--penalty-discount``), the binomial prior's expected parents r and the EBIC
#: prior's γ (:class:`StructurePrior`)
DEFAULT_PENALTY_DISCOUNT = 1.0
DEFAULT_EXPECTED_PARENTS = 1.0
DEFAULT_EBIC_GAMMA = 0.5
#: relative float tolerance between log-scores (:func:`tie_tolerance`)
TIE_RTOL = 1e-9


def tie_tolerance(value):
    """TIE_RTOL·max(1, |value|): two log-scores this close are one score — the same families totalled in
    another order, or a threshold computed in floats (a network at OPT − ε − this is credible; a pruning
    rule keeps a set this close to its bound). Scalars or arrays."""
    return TIE_RTOL * np.maximum(1.0, np.abs(value))


def score_equivalent(meta: Mapping[str, Any]) -> bool | None:
    """Whether a score table's record (its sidecar, ``ScoreTable.meta``) says its score is score-equivalent — a
    score of :data:`SCORE_EQUIVALENT_SCORES` with a prior of :data:`EQUIVALENCE_PRESERVING_PRIORS`, or an explicit
    ``score_equivalent`` — or None where it says nothing (a file without a sidecar, a table built by hand)."""
    if "score_equivalent" in meta:
        return bool(meta["score_equivalent"])
    if "score" in meta:
        return meta["score"] in SCORE_EQUIVALENT_SCORES and meta.get("prior", "none") in EQUIVALENCE_PRESERVING_PRIORS
    return None


def central_value(column: np.ndarray) -> float:
    """The column's value nearest its median: subtracting it is exact for every value within a factor 2 of it
    (Sterbenz), so a column of 10¹⁵ ± 1 keeps its ± 1 (a mean of such values is off by a few hundredths, and
    the SD computed around it by as much). NaNs (other kinds' cells) are passed over."""
    median = float(np.nanmedian(column))
    return float(column[np.nanargmin(np.abs(column - median))])


def centred_columns(x: np.ndarray) -> np.ndarray:
    """Each column less its mean, computed on the column less its :func:`central_value` (exact there) — the mean
    of raw 10¹⁵ ± k values is off by its rounding, and every centred value with it (BGe was 0.27 nats off, MML's
    variance floor 2 %: a review)."""
    if not x.shape[0]:
        return x
    shifted = x - np.array([central_value(x[:, j]) for j in range(x.shape[1])])
    return shifted - shifted.mean(axis=0)


def score_words(meta: Mapping[str, Any]) -> str:
    """The score a table's record (``ScoreTable.meta``, its sidecar) names, in words, with what changes its values: a
    penalty discount other than 1 and the structure prior, part of the score's identity (``scores.md``) —
    ``bic``, ``bic, penalty discount 2``, ``bdeu, EBIC prior (γ = 1)``; ``"unnamed score"`` where it names none (a
    file without a sidecar). The scoring table's title and an exported network's header (which said "bic" for a
    network scored with a binomial prior, a review) use it."""
    if not meta.get("score"):
        return "unnamed score"
    words = [str(meta["score"])]
    discount = meta.get("penalty_discount")
    if isinstance(discount, (int, float)) and discount != DEFAULT_PENALTY_DISCOUNT:
        words.append(f"penalty discount {discount:g}")
    prior = meta.get("prior")
    if prior == "binomial":
        words.append(f"binomial prior (r = {meta.get('expected_parents'):g})")
    elif prior == "ebic":
        words.append(f"EBIC prior (γ = {meta.get('ebic_gamma'):g})")
    return ", ".join(words)


def distinct_g(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` written with 6 significant digits, or as many more (10, then 17) as it takes to tell them
    apart: a refusal of ε = ln 3.0000001 on a table pruned for ln 3 said "pruned for ε = 1.09861 … ε = 1.09861
    needs" (a review)."""
    for digits in (6, 10, 17):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            break
    return x, y


def bayes_factor(epsilon: float) -> float | None:
    """BF = e^ε, the Bayes factor that the threshold ε = ln BF stands for (Kass & Raftery 1995: a
    difference of log marginal likelihoods is ln BF), written to 15 significant digits so that a BF
    given as 20 reads back as 20 and not as exp(ln 20) = 19.999999999999996; None where e^ε
    overflows a float (ε > ~709.78) — strict JSON has no infinity.
    """
    try:
        return float(f"{math.exp(epsilon):.15g}")
    except OverflowError:
        return None


def bf_text(epsilon: float) -> str:
    """BF = e^ε for people: 3 significant digits below 1,000 (2.72, 20, 150), a whole number below 10⁶ (2500),
    scientific above (1.00e+07), and ``e^ε`` past ε = 700, where e^ε would overflow a float (so a message or a
    table never fails on a huge ε)."""
    if epsilon > 700:           # (ε = 1e300 wrote its 301 digits: a review)
        return f"e^{epsilon:.1f}" if epsilon < 1e15 else f"e^{epsilon:.6g}"
    bf = math.exp(epsilon)
    return f"{bf:.3g}" if bf < 999.5 else f"{bf:.0f}" if bf < 1e6 else f"{bf:.2e}"


@dataclass(frozen=True)
class StructurePrior:
    """ln π(|Π|) added to every local score.

    - ``none``: 0.
    - ``binomial`` (Andrews et al. §5.1): each of the n−1 possible parents is present with
      probability p = r/(n−1): ln π(k) = k·ln p + (n−1−k)·ln(1−p), r = expected parents, in (0, n−1);
      ``expected_parents=None``: :func:`default_expected_parents`. With one variable there is no parent to
      have: π(0) = 1 whatever r > 0.
    - ``ebic`` (Chen & Chen 2008): −γ·ln C(n−1, k).
    """

    kind: str = "none"
    n_variables: int = 1
    expected_parents: float | None = None
    gamma: float = DEFAULT_EBIC_GAMMA

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in STRUCTURE_PRIORS:
            raise InputError(f"structure_prior (--prior) must be one of {', '.join(STRUCTURE_PRIORS)}, "
                             f"got {self.kind!r}")
        if self.kind == "binomial" and self.expected_parents is None:
            object.__setattr__(self, "expected_parents", default_expected_parents(self.n_variables))
        if self.kind == "binomial":
            r = check_real(self.expected_parents, "expected_parents (--expected-parents)", 0, above=True)
            if self.n_variables > 1 and not r < self.n_variables - 1:
                raise InputError(f"expected_parents (--expected-parents) must lie in (0, n−1) = "
                                 f"(0, {self.n_variables - 1}), got {self.expected_parents}")
        if self.kind == "ebic":     # a finite γ: with γ = inf the prior of k = 0 is inf · 0 = nan
            check_real(self.gamma, "ebic_gamma (--ebic-gamma)", 0)
        # as Python floats: a NumPy float32 γ made the penalty float32 arithmetic (a review: another optimum)
        if self.kind == "binomial":
            object.__setattr__(self, "expected_parents", float(self.expected_parents))
        if self.kind == "ebic":
            object.__setattr__(self, "gamma", float(self.gamma))

    def log_prior(self, k: int) -> float:
        m = self.n_variables - 1
        if self.kind == "none" or m == 0:       # one variable: the empty family is the only one, π(0) = 1
            return 0.0
        if self.kind == "binomial":
            p = self.expected_parents / m
            return k * math.log(p) + (m - k) * math.log1p(-p)
        return -self.gamma * (math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1))

    def settings(self) -> dict[str, Any]:
        if self.kind == "none":
            return {"prior": "none"}
        if self.kind == "binomial":
            return {"prior": "binomial", "expected_parents": self.expected_parents}
        return {"prior": "ebic", "ebic_gamma": self.gamma}


def default_expected_parents(n_variables: int) -> float:
    """The binomial prior's r when none is given (``expected_parents=None``, ``--expected-parents`` left out):
    :data:`DEFAULT_EXPECTED_PARENTS` (1, Andrews, Ramsey & Cooper 2018's setting in all their experiments), or
    (n−1)/2 where 1 does not lie in (0, n−1): two variables, p = ½, so a → b, b → a and no edge are equally likely
    (the prior is 0 for any r with one variable, which has no parent to have)."""
    m = n_variables - 1
    return DEFAULT_EXPECTED_PARENTS if DEFAULT_EXPECTED_PARENTS < m or m < 1 else m / 2


def residual_deviance_mean(counts: np.ndarray, slopes: int | np.ndarray) -> float:
    """Σ_p E[n_p·(ln σ̂²_p − ln σ² + 1)] over cells p with n_p rows, for the MLE residual variance of a
    Gaussian regression with intercept and ``slopes`` regressors per cell and common true variance σ².

    n_p·σ̂²_p/σ² ~ χ²_{n_p−1−k}, and E[ln χ²_ν] = ψ(ν/2) + ln 2, so the term is
    n_p·(ψ((n_p − 1 − k)/2) + ln(2/n_p) + 1) ≈ n_p − (k + 2) for large n_p (the count of parameters
    a cell estimates: intercept, k slopes, variance). A cell with n_p ≤ k + 1 fits its rows exactly
    (scores fall back to a pooled or floored variance there): its residual has no expected deviance
    and it contributes 0. The difference of this sum between the null and the larger model is the
    null mean of the Gaussian likelihood-ratio statistic G = Σ_null n_p(ln σ̂²_p + 1) − Σ_full n(ln σ̂² + 1).
    """
    n = np.asarray(counts, dtype=float)
    k = np.broadcast_to(np.asarray(slopes, dtype=float), n.shape)
    fit = n >= k + 2
    nu = n[fit] - 1.0 - k[fit]
    return float((n[fit] * (digamma(nu / 2.0) + np.log(2.0 / n[fit]) + 1.0)).sum())


class LocalScore(ABC):
    """Local score of a family: ``local(child, parents)`` with variables as column indices.

    Subclasses implement :meth:`raw` (the score without the structure prior) and say which
    pruning rules of ``shared/docs/pruning.md`` are sound for a child (:meth:`pruning_rules`).
    """

    name: str = ""
    #: whether ``penalty_discount`` scales a penalty of this score (BDeu and MML have none: they refuse it)
    takes_penalty_discount: bool = True

    def __init__(self, data: Dataset, *, prior: StructurePrior | None = None,
                 penalty_discount: float = DEFAULT_PENALTY_DISCOUNT):
        check_real(penalty_discount, "penalty_discount (--penalty-discount)", 0, above=True)
        if not isinstance(data, Dataset):
            raise InputError(f"data must be a bnilp Dataset (bnilp.data.load_data or from_dataframe makes one), "
                             f"got {type(data).__name__}")
        if prior is not None and not isinstance(prior, StructurePrior):
            raise InputError(f"prior must be a StructurePrior, got {type(prior).__name__} {prior!r}")
        if prior is not None and prior.kind != "none" and prior.n_variables != data.n:
            raise InputError(f"prior is for {prior.n_variables} variables, the data have {data.n}")
        self.data = data
        self.prior = prior or StructurePrior("none", data.n)
        self.penalty_discount = float(penalty_discount)
        self._families: dict[tuple[int, tuple[int, ...]], float] = {}     # the family table, if one was built
        self._families_under: tuple[Any, float] | None = None      # (prior, penalty_discount) it was built with
        self._share_key: int | None = None          # the key whose sums are kept (:meth:`share`)

    def constructor_settings(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this score on other data (:meth:`with_data`)."""
        return {"prior": self.prior, "penalty_discount": self.penalty_discount}

    def with_data(self, data: Dataset) -> LocalScore:
        """The same score, configured alike, on ``data`` (same columns; e.g. a permuted copy)."""
        return type(self)(data, **self.constructor_settings())

    @abstractmethod
    def raw(self, child: int, parents: tuple[int, ...]) -> float:
        """Score of the family without the structure prior."""

    def local(self, child: int, parents: tuple[int, ...]) -> float:
        """s(child | parents) = raw score + ln π(|parents|) (read from the family table where it holds it)."""
        if self._current_families():
            hit = self._families.get((child, tuple(parents)))
            if hit is not None:
                return hit
        return self.raw(child, parents) + self.prior.log_prior(len(parents))

    def _current_families(self) -> dict[tuple[int, tuple[int, ...]], float]:
        """The family table, emptied first if the score's prior or penalty discount changed since it was built
        (its values hold them: a review's find)."""
        under = self._families_under
        if self._families and (under is None or under[0] is not self.prior or under[1] != self.penalty_discount):
            self._families.clear()
        return self._families

    # -- the family table (:func:`bnilp.lattice.plan_family_table`)

    def family_share_key(self, child: int, parents: tuple[int, ...]) -> int | None:
        """What the family shares with others of the same key — sums kept on a row partition; MVP: its discrete
        parents as a bit mask — so that a family table scores each key's families together and each process
        builds those sums once. ``None`` (the default): the score takes no family table."""
        return None

    def release_shared(self) -> None:
        """Let go of the sums kept for the last key's families (a family table's build has moved past them);
        nothing is kept by default."""
        return None

    def for_task(self) -> LocalScore:
        """This score for one task of a family table, with sums of its own: a shallow copy (the data shared) whose
        kept sums start empty — tasks may run at once on threads of one process (a Dask worker's), and on one score
        they would let go of each other's sums at every change of key."""
        twin = copy.copy(self)
        twin._share_key = None
        twin.release_shared()
        return twin

    def share(self, key: int | None) -> None:
        """The next families are of ``key``: the sums of another key are let go first (:meth:`release_shared`);
        ``None`` lets go of every key's."""
        if key != self._share_key or key is None:
            self.release_shared()
            self._share_key = key

    def add_family_table(self, table: Mapping[tuple[int, tuple[int, ...]], float]) -> None:
        """Local scores, keyed (child, parents as the walk writes them), that :meth:`local` reads from now on;
        :func:`bnilp.lattice.build_family_table` fills it for a walk."""
        self._current_families().update(table)
        self._families_under = (self.prior, self.penalty_discount)

    def holds_family(self, child: int, parents: tuple[int, ...]) -> bool:
        return (child, tuple(parents)) in self._current_families()

    def walk_score(self, child: int) -> LocalScore:
        """The score whose parent-set walk gives ``child``'s families (:func:`bnilp.parentsets.score_parent_sets`):
        this one, or an equal score of another kind whose walk is faster and prunes more (CGd's discrete
        children: BIC on the binned data, the same values)."""
        return self

    def loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """(maximised log-likelihood ℓ, free parameters df) of the family, for likelihood-ratio tests.

        Scores that are not of the form ℓ − ½·c·df·ln N (BDeu, MML) raise ``NotImplementedError``.
        """
        raise NotImplementedError(f"score {self.name!r} has no likelihood/df decomposition")

    def lr_loglik_df(self, child: int, parents: tuple[int, ...]) -> tuple[float, float]:
        """(ℓ, df) for likelihood-ratio CI tests (:mod:`bnilp.citest`): df counts *every* parameter the
        fitted model estimates, so that df(Y | X ∪ Z) − df(Y | Z) is the χ² degrees of freedom of the
        nested comparison (Wilks 1938). Equal to :meth:`loglik_df` unless the score's penalty counts
        fewer parameters than it fits (MVP: the per-partition variances)."""
        return self.loglik_df(child, parents)

    def lr_difference(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float]:
        """(ℓ(child | {parent} ∪ given) − ℓ(child | given), the df it adds): half the likelihood-ratio statistic G
        of the test of ``child`` ⟂ ``parent`` | ``given`` and its χ² degrees of freedom (:mod:`bnilp.citest`),
        from :meth:`lr_loglik_df` of the two families. A score whose two families may be fitted by rules that do
        not nest (CG's small cells) overrides it with a statistic of nested models."""
        ll1, df1 = self.lr_loglik_df(child, tuple(sorted((parent, *given))))
        ll0, df0 = self.lr_loglik_df(child, tuple(sorted(given)))
        return float(ll1) - float(ll0), float(df1) - float(df0)

    def lr_null_mean(self, child: int, parent: int, given: tuple[int, ...]) -> tuple[float, float] | None:
        """(E[G], k) for the test of ``child`` ⟂ ``parent`` | ``given`` where the score's model gives the
        null mean of G = 2(ℓ(child | parent ∪ given) − ℓ(child | given)) exactly, k the χ² degrees of
        freedom over the observed cells; ``None`` where it does not (no Bartlett correction is made).

        :mod:`bnilp.citest` then refers G·k/E[G] to χ²_k (Bartlett 1937): the mean of the statistic
        matches its reference distribution's in finite samples, which removes the small-cell bias of
        ln σ̂² (Gaussian children) without changing the asymptotic test."""
        return None

    def penalised(self, ll: float, df: float) -> float:
        """ℓ − ½·c·df·ln N: the BIC form shared by CG and MVP."""
        return ll - 0.5 * self.penalty_discount * df * math.log(self.data.N)

    def allowed_parent(self, child: int, parent: int) -> bool:
        """Whether ``parent`` may be a parent of ``child`` at all under this score."""
        return parent != child

    def pruning_rules(self, child: int) -> frozenset[str]:
        """Rules of pruning.md that are sound for ``child`` under this score (R1 always)."""
        return frozenset({"R1"})

    @property
    def score_equivalent(self) -> bool:
        """Whether Markov equivalent DAGs always get the same total (:data:`SCORE_EQUIVALENT_SCORES`,
        :data:`EQUIVALENCE_PRESERVING_PRIORS`): the condition for enumerating classes, not DAGs."""
        return self.name in SCORE_EQUIVALENT_SCORES and self.prior.kind in EQUIVALENCE_PRESERVING_PRIORS

    def __repr__(self) -> str:
        """The score, its settings and its data in one line (Python's default showed only an address)."""
        shown = ", ".join(f"{k}={v!r}" for k, v in self.settings().items()       # the values, not the prose
                          if k not in ("score", "score_equivalent") and (not isinstance(v, str) or len(v) <= 12))
        return f"{type(self).__name__}({self.name!r}, {shown}; {self.data!r})"

    def settings(self) -> dict[str, Any]:
        """How the score was configured (for the score file's sidecar and reports)."""
        out: dict[str, Any] = {"score": self.name, "penalty_discount": self.penalty_discount}
        out.update(self.prior.settings())
        out["score_equivalent"] = self.score_equivalent
        return out


def check_score(score: object, name: str = "score") -> LocalScore:
    """``score`` when it is a :class:`LocalScore`; else an :class:`InputError` naming ``name`` (None or a
    DataFrame failed later with an ``AttributeError``)."""
    if not isinstance(score, LocalScore):
        raise InputError(f"{name} must be a score object (bnilp.scores.make_score(name, data) makes one), got "
                         f"{type(score).__name__}")
    return score
