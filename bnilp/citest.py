"""Likelihood-ratio conditional-independence tests from a local score (Andrews, Ramsey & Cooper §5.3).

To test Y0 ⟂ Y1 | Z with a score whose families have a maximised log-likelihood ℓ and free
parameter count df (:meth:`bnilp.scores.base.LocalScore.lr_loglik_df`, their difference
:meth:`~bnilp.scores.base.LocalScore.lr_difference`):

    G  = 2·(ℓ(Y0 | {Y1} ∪ Z) − ℓ(Y0 | Z)),   k = df(Y0 | {Y1} ∪ Z) − df(Y0 | Z),   p = P(χ²_k ≥ G)

(``scipy.stats.chi2.sf``). Independence is rejected ("dependent") when p ≤ α.

A score-equivalent score gives the same G and k with Y0 and Y1 swapped (BIC: G = 2N·Î(Y0; Y1 | Z),
k = (r0−1)(r1−1)·q_Z; CG: G = 2(ℓ(Y0Y1Z) − ℓ(Y1Z) − ℓ(Y0Z) + ℓ(Z)) by eqs. 3–4, 12–13), so one
direction suffices. CG (and CGd's continuous child) computes G where a tested variable is continuous as that
variable's nested Gaussian regressions, cell by cell (:meth:`~bnilp.scores.base.LocalScore.lr_difference`,
:func:`bnilp.scores.cg.nested_gaussian_lr`): the same G wherever every cell keeps a residual, and never
negative where the score's small-cell rule would fit the two models by different rules.

For a score that is not score-equivalent (MVP, CGd, anything not in :data:`SCORE_EQUIVALENT`) both directions
are tested (§5.3). The seed calls the pair dependent when either test rejects; that rule's size is up to 2α
(measured: 9–12 % at α = 0.05 for MVP with two continuous variables). bnilp combines the two p-values by Simes
(1986) instead,

    p = min(2·min(p1, p2), max(p1, p2)),

which has size ≤ α when the two statistics are independent or positively dependent (Sarkar & Chang
1997) and exactly α when they coincide; ``combine="either"`` restores the seed's rule (p = min).
Both directions are reported.

Small samples (``correction="bartlett"``, the default): where the score's model gives the null mean
of G exactly — a Gaussian child, whose cell residual variances satisfy n_p·σ̂²_p/σ² ~ χ²_{n_p−1−k}
(:meth:`~bnilp.scores.base.LocalScore.lr_null_mean`; CG and CGd with a continuous tested variable, MVP's
continuous child) — the p-value is P(χ²_k ≥ G·k/E[G]) (Bartlett 1937: the statistic's mean matched to
its reference distribution's), k counting the observed cells. ln σ̂² is biased downwards in small cells
(E[ln σ̂²] = ln σ² + ψ((n−1−k)/2) + ln(2/n)), so the plain G over-rejects where cells have few rows:
CG with a discrete and a continuous variable given a discrete Z rejected 7.1 % (N = 1,000) and 9.8 %
(N = 200) at α = 0.05, 5.5 % and 6.0 % corrected. ``correction="none"`` gives the plain G of the seed and
Tetrad; ``statistic`` is always the plain G, ``bartlett`` the factor E[G]/k.

Misspecification (``null``): where a *discrete* tested variable is modelled given a *continuous*
conditioning variable, the score's model of that discrete child (CG's per-cell Gaussians of its
continuous parents inverted by Bayes' rule, MVP's polynomial linear-probability fit, CGd's bins) may not
describe the data (e.g. the seed simulator's steps), and then the other tested variable, itself a
function of the conditioning set, still improves the fit: G's χ² reference rejects far too often
(measured 87 % at α = 0.05 for CG with discrete X, Y and a continuous Z). ``null="auto"`` (the default)
refers the same statistic to a *local permutation* distribution there (Kim, Neykov, Balakrishnan &
Wasserman 2022): the rows are split into groups that share the discrete conditioning values and lie
close in the continuous ones (:func:`local_groups`: median splits of the standardised values, at most
:data:`LOCAL_GROUP_SIZE` rows), ``y`` is permuted within each group, which keeps its relation to the
conditioning set and breaks any direct one to ``x``, and the χ² p-value of the permuted data is the
statistic: p = (1 + #{p_b ≤ p_obs}) / (1 + B). Besag & Clifford's (1991) sequential rule stops after
:data:`SEQUENTIAL_EXCEEDANCES` exceedances with p = h/ℓ (both valid p-values: P(p ≤ α) ≤ α when the
permuted data sets are exchangeable with the observed one). ``null="chi2"`` always uses χ² (the
seed's and Tetrad's test), ``null="local-permutation"`` always permutes (any conditioning set with a
continuous variable; otherwise it is an ordinary stratified permutation test). Every decision rejects
when p ≤ α (for a continuous χ² p-value the same as p < α; for a permutation p-value the rule whose
size is exactly α when α·(B + 1) is an integer).

Conventions: a statistic below 0 (rounding, or CG's single-Gaussian mixture for two discrete tested variables
given a continuous Z) counts as 0; a test with k ≤ 0 has no power and gets p = 1. The df are
:meth:`~bnilp.scores.base.LocalScore.lr_loglik_df`'s: every parameter the nested models estimate (for MVP one
more per partition than the score's penalty counts: the partition variance of a continuous child).

Calibration (``benchmarks/citest_calibration.py``, README table): with the χ² reference, type-I error is
within Monte Carlo error of α wherever the score's model describes the simulated data, and not where a
discrete variable depends on a continuous conditioning variable through the simulator's steps (no df
correction can remove misspecification); the default ``null="auto"`` permutes locally exactly there.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from bnilp.data import Dataset
from bnilp.errors import InputError, check_count, check_flag, check_seed
from bnilp.scores import LocalScore, make_score

#: scores whose likelihood-ratio statistic and df are symmetric in the two tested variables
SCORE_EQUIVALENT = frozenset({"bic", "cg"})
#: the scores the test takes: those with a log-likelihood and its parameter count (BDeu and MML have neither)
LIKELIHOOD_SCORES = ("bic", "cg", "cgd", "mvp")
#: scores whose statistic on all-discrete variables is the multinomial G²: its df are counted over the table as
#: observed (:func:`observed_df`)
MULTINOMIAL_G2_SCORES = frozenset({"bic", "cg", "cgd"})
#: small-sample correction of G: Bartlett's mean correction where the score gives the null mean, or none
CORRECTIONS = ("bartlett", "none")
#: how two directions' p-values become one decision: Simes' combination (default) or the seed's "either rejects"
COMBINE_RULES = ("simes", "either")
#: reference distribution of the statistic: χ², or local permutation where a discrete tested variable is
#: modelled given a continuous conditioning variable (``auto``), or always
NULL_DISTRIBUTIONS = ("auto", "chi2", "local-permutation")
#: permutations drawn at most for a local-permutation p-value (p resolution 1/(B + 1) = 0.005), or more where α
#: needs them (:func:`least_permutations`), up to MAX_AUTO_PERMUTATIONS unless asked for: a dependence draws every
#: one (no exceedance stops it), about a millisecond each at N = 400, so α = 1e-7 would have drawn for hours
DEFAULT_PERMUTATIONS = 199
MAX_AUTO_PERMUTATIONS = 9_999
#: the test's defaults, one place for the API and ``bnilp ci-test``: significance level, the two-direction
#: rule, the small-sample correction and the reference distribution
DEFAULT_ALPHA = 0.01
DEFAULT_COMBINE = "simes"
DEFAULT_CORRECTION = "bartlett"
DEFAULT_NULL = "auto"
#: rows at most in a local-permutation group (neighbours in the continuous conditioning variables)
LOCAL_GROUP_SIZE = 4
#: below this ln p, :func:`chi2_log_sf` sums the tail series instead of trusting ``chi2.logsf`` (which underflows
#: near −708); and at most this many terms
_LOG_SF_FLOOR = -600.0
_LOG_SF_TERMS = 100_000
#: an all-discrete G² whose observed tables hold fewer rows than this per cell on average is referred to the
#: stratified permutation distribution under ``null="auto"``: its χ² reference rejected 8–25 % at α = 0.05 with
#: 2.5–4.1 rows a cell, 10 % at 7.4 and 5.8 % at 12.3 with uniform margins (benchmarks/citest_sparse.py), and
#: 9–11 % at a median of 9–14 rows a cell with the simulator's Dirichlet margins (a review's 300–400 null data
#: sets each), where the mean hides small cells; Cochran's 1954 rule of thumb (expected counts of 5) was the
#: earlier threshold, and too low
SPARSE_ROWS_PER_CELL = 20.0
#: Besag & Clifford's h: stop permuting after this many permuted p-values at or below the observed one
SEQUENTIAL_EXCEEDANCES = 10


@dataclass(frozen=True)
class DirectionResult:
    """One likelihood-ratio test with ``child`` as Y0 and ``parent`` as Y1."""

    child: str
    parent: str
    statistic: float
    df: float
    p_value: float
    dependent: bool
    #: E[G]/df under the null (Bartlett's factor; p is from G / bartlett), 1.0 when not corrected
    bartlett: float = 1.0
    #: ln p (``chi2.logsf``): what the local permutation compares, since p itself underflows to 0 at large N
    log_p_value: float = 0.0


@dataclass(frozen=True)
class CITestResult:
    """Outcome of ``x ⟂ y | given``; statistic/df are those of the direction with the smallest p, ``p_value``
    the combined p-value of the decision (``combine``)."""

    x: str
    y: str
    given: tuple[str, ...]
    score: str
    alpha: float
    statistic: float
    df: float
    p_value: float
    dependent: bool
    directions: tuple[DirectionResult, ...] = ()
    combine: str = DEFAULT_COMBINE
    correction: str = DEFAULT_CORRECTION
    #: the reference distribution used: ``chi2`` or ``local-permutation`` (``auto`` resolved)
    null: str = "chi2"
    #: permuted data sets drawn (0 for χ²)
    permutations: int = 0
    #: the combined χ² p-value (the permutation test's statistic; equal to ``p_value`` for χ²)
    chi2_p_value: float | None = None
    #: what the user should know about the reference used (e.g. a local permutation over more continuous
    #: conditioning variables than it is calibrated for)
    notes: tuple[str, ...] = ()
    #: ``("permutations",)`` where too few permutations were drawn for the p-value to reach α and none of them was
    #: as extreme as the data (the p-value at its floor 1/(B + 1)): "not rejected" is then the count's verdict, not
    #: the data's — the command line exits 3
    limits: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # tuples, as a frozen result's fields: lists could be changed in place and made hash() fail
        for name in ("given", "directions", "notes", "limits"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values (``independent`` = not ``dependent`` added)."""
        out = asdict(self)
        out["given"] = list(self.given)
        out["directions"] = list(out["directions"])
        out["notes"] = list(self.notes)
        out["limits"] = list(self.limits)
        out["independent"] = not self.dependent
        return out


def _resolve(data: Dataset, var: str | int, what: str) -> int:
    if isinstance(var, bool):
        raise InputError(f"{what}: {var!r} is not a variable")
    if isinstance(var, numbers.Integral):
        var = int(var)
        if not 0 <= var < data.n:
            raise InputError(f"{what}: column index {var} is out of range 0..{data.n - 1}")
        named = str(var)
        if named != data.names[var] and (named in data.names or named in data.dropped):
            # a frame made from an array has columns named 0..n−1; a dropped constant column shifts the indices
            raise InputError(f"{what}={var} is ambiguous: column index {var} is {data.names[var]!r} (of the columns "
                             f"kept), but a column is named {named!r}; pass the name as a string")
        return var
    if not isinstance(var, str):        # None, 1.0, a list: no variable ("unknown variable 'None'"; a review)
        raise InputError(f"{what} must be a column name or index, got {var!r}")
    name = var
    if name in data.dropped:
        raise InputError(f"{data.source}: variable {name!r} is constant (dropped when loading); "
                         "it is independent of everything")
    return data.index(name)


def _observed_levels(data: Dataset, child: int, parent: int,
                     given: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per configuration of ``given`` that occurs: the number of values of ``child`` and of ``parent`` seen with it."""
    codes = data.codes
    if given:
        _, stratum = np.unique(codes[:, list(given)], axis=0, return_inverse=True)
        stratum = np.asarray(stratum, dtype=np.int64).ravel()
    else:
        stratum = np.zeros(data.N, dtype=np.int64)
    n_strata = int(stratum.max()) + 1 if data.N else 0

    def seen(v: int) -> np.ndarray:
        radix = int(codes[:, v].max()) + 1
        return np.bincount(np.unique(stratum * radix + codes[:, v]) // radix, minlength=n_strata)

    return seen(child), seen(parent)


def rows_per_cell(data: Dataset, child: int, parent: int, given: tuple[int, ...]) -> float:
    """N over the cells of the observed tables, Σ_z r_child(z)·r_parent(z): the mean count a cell holds."""
    c, p = _observed_levels(data, child, parent, given)
    return data.N / max(int((c * p).sum()), 1)


def observed_df(data: Dataset, child: int, parent: int, given: tuple[int, ...]) -> int:
    """Degrees of freedom of the multinomial G² of ``child`` ⟂ ``parent`` | ``given`` (all discrete) over the
    table as observed: Σ_z (r_child(z) − 1)·(r_parent(z) − 1) over the configurations z of ``given`` that occur,
    r_v(z) the number of values of v seen with z. A configuration never seen, or a value of the child or the
    parent never seen with it, adds nothing to G and estimates nothing, so it adds no df (Tetrad's G² test and
    bnlearn's ``mi-adf`` adjust alike). The score's own df, (r_c − 1)(r_p − 1)·Π r_z, counts them all: with
    8 ternary Z and 73 of 6,561 configurations seen it gave df 26,244 against 150 and p = 1 for a dependence
    with p ≈ 1e-123."""
    c, p = _observed_levels(data, child, parent, given)
    return int(((c - 1) * (p - 1)).sum())


def chi2_log_sf(x: float, k: float) -> float:
    """ln P(χ²_k ≥ x), finite however far in the tail (``scipy.stats.chi2.logsf`` is −inf past p ≈ 1e-308).

    There, with a = k/2 and t = x/2, Q(a, t) = Γ(a, t)/Γ(a) = t^(a−1)·e^(−t)/Γ(a) · Σ_j Π_{i=1..j} (a − i)/t
    (the asymptotic series of the upper incomplete gamma function, Abramowitz & Stegun 6.5.32; a finite sum,
    exact, for integer a), summed until a term adds less than 1e-16: the tail is reached only with t well
    above a, where the terms fall geometrically.
    """
    # imported here, not at the top: scipy.stats takes over a second to import, and the CLI's help imports this
    # module for its defaults
    from scipy.stats import chi2

    log_p = float(chi2.logsf(x, k))
    if log_p > _LOG_SF_FLOOR:
        return log_p
    a, t = 0.5 * k, 0.5 * x
    term = total = 1.0
    for i in range(1, _LOG_SF_TERMS):
        term *= (a - i) / t
        total += term
        if abs(term) <= 1e-16 * abs(total):
            break
    return (a - 1.0) * math.log(t) - t - math.lgamma(a) + math.log(total)


def multinomial_table(score: LocalScore, child: int, parent: int, given: tuple[int, ...]) -> Dataset | None:
    """The all-discrete data whose multinomial G² is the statistic of ``child`` given ``parent`` and ``given``, or
    ``None`` where it is not one: the data itself where the three are discrete (a score of
    :data:`MULTINOMIAL_G2_SCORES`), and CGd's binned data for a discrete child whatever its parents (its model
    of a discrete child is the multinomial on the binned parents, :meth:`~bnilp.scores.cg.
    ConditionalGaussianDiscretized.lr_difference`: with the score's df over every configuration of 6 ternary Z,
    2,916, a step function of y read as p = 1, where the table's observed df are 26 and p = 5e-6 — a review)."""
    if score.name not in MULTINOMIAL_G2_SCORES:
        return None
    if all(score.data.is_discrete(v) for v in (child, parent, *given)):
        return score.data
    if score.name == "cgd" and score.data.is_discrete(child):
        return score.discrete_view().data
    return None


def _one_direction(score: LocalScore, child: int, parent: int, given: tuple[int, ...],
                   alpha: float, correction: str = DEFAULT_CORRECTION) -> DirectionResult:
    try:
        half_g, k = score.lr_difference(child, parent, given)
    except NotImplementedError:
        raise InputError(f"score {score.name!r} has no log-likelihood/df decomposition; "
                         f"use a likelihood-based score ({', '.join(LIKELIHOOD_SCORES)})") from None
    stat = max(2.0 * half_g, 0.0)
    table = multinomial_table(score, child, parent, given)
    if table is not None:
        k = float(observed_df(table, child, parent, given))
    factor = 1.0
    null_mean = score.lr_null_mean(child, parent, given) if correction == "bartlett" else None
    if null_mean is not None:
        mean, k = null_mean
        factor = mean / k if k > 0 else 1.0
    log_p = chi2_log_sf(stat / factor, k) if k > 0 else 0.0
    p = float(np.exp(log_p))
    names = score.data.names
    return DirectionResult(names[child], names[parent], stat, k, p, p <= alpha, factor, log_p)


def ci_test(
    data: Dataset,
    x: str | int,
    y: str | int,
    given: Iterable[str | int] = (),
    score: str | LocalScore = "cg",
    alpha: float = DEFAULT_ALPHA,
    both_directions: bool | None = None,
    combine: str = DEFAULT_COMBINE,
    correction: str = DEFAULT_CORRECTION,
    null: str = DEFAULT_NULL,
    permutations: int | None = None,
    seed: int | None = 0,
    **score_settings: Any,
) -> CITestResult:
    """Test ``x ⟂ y | given`` on ``data`` with the likelihood-ratio test of ``score`` (§5.3).

    ``x``, ``y`` and ``given`` are column names or indices. ``score`` is a score name for
    :func:`bnilp.scores.make_score` (``score_settings`` go to it) or a ready
    :class:`~bnilp.scores.base.LocalScore` built on ``data`` (reuse one across many tests: scores
    cache their counts). ``both_directions``: ``None`` tests both unless the score is in
    :data:`SCORE_EQUIVALENT`; ``combine`` (:data:`COMBINE_RULES`) turns two directions into one decision:
    ``simes`` (size ≤ α) or ``either`` (the seed's rule, size up to 2α). ``correction``
    (:data:`CORRECTIONS`): ``bartlett`` refers G·df/E[G] to χ²_df where the score gives the null mean
    E[G] (:meth:`~bnilp.scores.base.LocalScore.lr_null_mean`: CG and CGd with a continuous child, MVP's
    continuous child; df then counts the observed cells), ``none`` the plain G (the seed's and Tetrad's
    test). ``null`` (:data:`NULL_DISTRIBUTIONS`): ``auto`` refers the statistic to χ² unless a tested
    variable is discrete and ``given`` holds a continuous variable, where the score's model of the
    discrete variable may be misspecified; there it permutes ``y`` within groups of neighbouring rows
    (module docstring; at most ``permutations`` data sets, random stream ``seed``, so a result is
    reproducible; ``None``: :data:`DEFAULT_PERMUTATIONS`, or :func:`least_permutations` of α where that is
    more, up to :data:`MAX_AUTO_PERMUTATIONS` — a permutation p-value is never below 1/(B + 1), so with 199 draws
    no α below 0.005 could reject; a number too small for α is drawn as given, and the result's notes say the
    test cannot reject and how many would). Rejects when
    p ≤ α. A constant column in ``given`` (dropped when loading) is left out with a note. Bad variables, α
    outside (0, 1), ``permutations`` < 1 or a score without ℓ/df raise :class:`~bnilp.errors.InputError`.
    """
    if not isinstance(data, Dataset):
        raise InputError(f"data must be a bnilp Dataset (bnilp.data.load_data or from_dataframe makes one), got "
                         f"{type(data).__name__}")
    if (isinstance(alpha, bool) or not isinstance(alpha, numbers.Real)) or not 0.0 < alpha < 1.0:
        raise InputError(f"alpha (--alpha) must be a number in (0, 1), got {alpha!r}")
    moot = [k for k, v in score_settings.items()
            if (k == "penalty_discount" and v != 1) or (k == "prior" and v not in (None, "none"))]   # as the CLI's
    if moot:        # the command line refused --prior and --penalty-discount; the API took them silently (a review)
        raise InputError(f"{' and '.join(moot)} change scores, not the likelihood-ratio test: ci_test takes neither")
    alpha = float(alpha)        # a NumPy float made each verdict a numpy.bool the JSON could not hold (a review)
    if not isinstance(combine, str) or combine not in COMBINE_RULES:
        raise InputError(f"combine (--combine) must be one of {', '.join(COMBINE_RULES)}, got {combine!r}")
    if not isinstance(correction, str) or correction not in CORRECTIONS:
        raise InputError(f"correction (--correction) must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    if not isinstance(null, str) or null not in NULL_DISTRIBUTIONS:
        raise InputError(f"null (--null) must be one of {', '.join(NULL_DISTRIBUTIONS)}, got {null!r}")
    least = least_permutations(alpha)
    if permutations is None:
        permutations = max(DEFAULT_PERMUTATIONS, min(least, MAX_AUTO_PERMUTATIONS))
    permutations = check_count(permutations, "permutations (--permutations)", 1)
    seed = check_seed(seed, "seed (--seed)")  # whatever the null: a seed 2.5 was taken where χ² needed none (a review)
    xi = _resolve(data, x, "x")
    yi = _resolve(data, y, "y")
    if given is None:                                               # no conditioning set
        given = []
    elif isinstance(given, (str, numbers.Integral)) and not isinstance(given, bool):
        given = [given]                                             # one name or index, not its characters
    elif isinstance(given, Iterable) and not isinstance(given, (bytes, dict)):
        given = list(given)
    else:
        raise InputError(f"given must be a column name or index, or a list of them, got {given!r}")
    constant = [z for z in given if isinstance(z, str) and z in data.dropped]     # conditioning on them is void
    zi = tuple(_resolve(data, z, "given") for z in given if z not in constant)
    names = data.names
    if xi == yi:
        raise InputError(f"cannot test {names[xi]!r} against itself")
    if len(set(zi)) != len(zi):
        raise InputError("the conditioning set names a variable twice")
    for v in (xi, yi):
        if v in zi:
            raise InputError(f"{names[v]!r} is both tested and in the conditioning set")
    if isinstance(score, LocalScore):
        if score.data is not data:
            raise InputError("the score object was built on a different data set")
        scorer = score
    else:
        try:
            scorer = make_score(score, data, **score_settings)
        except ModuleNotFoundError as exc:
            raise InputError(f"score {score!r} is not available in this installation ({exc})") from None
    if check_flag(both_directions, "both_directions", optional=True) is None:
        both_directions = scorer.name not in SCORE_EQUIVALENT

    def chi2_test(sc: LocalScore) -> tuple[list[DirectionResult], float]:
        """The directions and the log of their combined χ² p-value."""
        dirs = [_one_direction(sc, xi, yi, zi, alpha, correction)]
        if both_directions:
            dirs.append(_one_direction(sc, yi, xi, zi, alpha, correction))
        return dirs, combined_log_p_value([d.log_p_value for d in dirs], combine)

    directions, log_p_chi2 = chi2_test(scorer)
    p_chi2 = combined_p_value([d.p_value for d in directions], combine)
    best = min(directions, key=lambda d: d.p_value)
    used = null_used(scorer, xi, yi, zi, null, both_directions)
    p, drawn = p_chi2, 0
    notes = [f"conditioning on {name!r}, a constant column (dropped when loading), changes nothing: left out"
             for name in dict.fromkeys(constant)]
    n_cont = sum(1 for z in zi if not data.is_discrete(z))
    if used == "local-permutation" and n_cont > 1:
        notes.append(f"the local permutation is calibrated for one continuous conditioning variable; with {n_cont} "
                     "its groups of neighbours are far apart and it rejects too often (measured 28-33 % at "
                     "alpha 0.05 with 2-3 continuous Z)")
    if used == "local-permutation" and permutations < least:
        notes.append(f"with {permutations} permutations the p-value is at least 1/{permutations + 1} = "
                     f"{1 / (permutations + 1):.3g}, above alpha {alpha:g}: this test cannot reject; "
                     f"{least if least < 10**15 else f'10^{len(str(least)) - 1}'} permutations or more "
                     "(--permutations) can")
    if used == "local-permutation":
        groups = local_groups(data, zi)
        p, drawn = local_permutation_p_value(
            log_p_chi2, lambda d: chi2_test(scorer.with_data(d))[1], data, yi, groups, permutations,
            np.random.default_rng(seed))
    return CITestResult(
        x=names[xi], y=names[yi], given=tuple(names[z] for z in zi), score=scorer.name, alpha=float(alpha),
        statistic=best.statistic, df=best.df, p_value=p, dependent=p <= alpha, directions=directions,
        combine=combine, correction=correction, null=used, permutations=drawn, chi2_p_value=p_chi2, notes=notes,
        # too few to reach α, every one drawn and none as extreme as the data (p at its floor 1/(B + 1)): the count,
        # not the data, said "not rejected" (a review: χ² p 1.6e-24 at α 1e-5 read "independent", exit 0)
        limits=("permutations",) if used == "local-permutation" and permutations < least and drawn >= permutations
        and round(p * (drawn + 1)) == 1 else (),
    )


def null_used(score: LocalScore, x: int, y: int, given: tuple[int, ...], null: str = DEFAULT_NULL,
              both_directions: bool = True) -> str:
    """The reference distribution :func:`ci_test` refers its statistic to: ``null`` itself, or for ``"auto"`` the
    local permutation where a tested variable is discrete and ``given`` holds a continuous variable (the score's model
    of the discrete variable may be misspecified there), or where the test is an all-discrete G² whose cells hold
    fewer than :data:`SPARSE_ROWS_PER_CELL` rows on average; else ``"chi2"``. Known before the test: the command line
    refuses ``--permutations``/``--seed`` where it is ``"chi2"`` (they were dropped without a word, a review)."""
    if null != "auto":
        return null
    data = score.data
    mixed = any(data.is_discrete(v) for v in (x, y)) and any(not data.is_discrete(z) for z in given)
    table = multinomial_table(score, x, y, given)
    if table is None and both_directions:
        table = multinomial_table(score, y, x, given)
    sparse = table is not None and rows_per_cell(table, x, y, given) < SPARSE_ROWS_PER_CELL
    return "local-permutation" if mixed or sparse else "chi2"


def least_permutations(alpha: float) -> int:
    """The fewest permutations B with which a permutation p-value can reach ``alpha``: its least value is
    1/(B + 1) (:func:`local_permutation_p_value`), so B = ⌈1/α⌉ − 1 (999 at α = 0.001; 1/α rounded to 9
    digits first, so that 0.001 gives 999, not 1,000)."""
    if (isinstance(alpha, bool) or not isinstance(alpha, numbers.Real)) or not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if alpha < 1e-300:      # 1/α overflows a float (α = 1e-320 was an OverflowError traceback): exact, as no rounding
        return math.ceil(1 / Fraction(alpha)) - 1
    return max(1, math.ceil(round(1.0 / alpha, 9)) - 1)


def local_groups(data: Dataset, given: Iterable[int], size: int | None = None) -> list[np.ndarray]:
    """Rows of ``data`` in groups of at most ``size`` that share the values of the discrete columns of
    ``given`` and lie close in its continuous ones: within each discrete configuration the rows are split
    at the median of the continuous column with the widest standardised range (a k-d tree) until a group
    has ``size`` rows or fewer. Without continuous columns a group is a whole configuration (an ordinary
    stratified permutation). Every row is in exactly one group. ``size`` defaults to
    :data:`LOCAL_GROUP_SIZE`."""
    size = LOCAL_GROUP_SIZE if size is None else int(size)
    given = list(given)
    if not all(isinstance(z, numbers.Integral) and not isinstance(z, bool) and 0 <= z < data.n for z in given):
        raise InputError(f"given must be column indices of data (0..{data.n - 1}), got {given!r}")
    disc = [z for z in given if data.is_discrete(z)]
    cont = [z for z in given if not data.is_discrete(z)]
    if disc:
        _, strata = np.unique(data.codes[:, disc], axis=0, return_inverse=True)
        strata = np.asarray(strata).ravel()
    else:
        strata = np.zeros(data.N, dtype=np.int64)
    values = data.values[:, cont].astype(float) if cont else np.zeros((data.N, 0))
    if cont:
        sd = values.std(axis=0)
        values = (values - values.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    order = np.argsort(strata, kind="stable")
    bounds = np.flatnonzero(np.diff(strata[order])) + 1
    groups: list[np.ndarray] = []
    stack = list(np.split(order, bounds))
    while stack:
        rows = stack.pop()
        if not cont or rows.size <= size:
            groups.append(rows)
            continue
        block = values[rows]
        axis = int(np.argmax(block.max(axis=0) - block.min(axis=0)))
        ranked = rows[np.argsort(block[:, axis], kind="stable")]
        half = ranked.size // 2
        stack.extend((ranked[:half], ranked[half:]))
    return groups


def local_permutation_p_value(observed: float, statistic_p: Any, data: Dataset, y: int,
                              groups: list[np.ndarray], permutations: int,
                              rng: np.random.Generator) -> tuple[float, int]:
    """(p-value, permuted data sets drawn) of the local permutation test: ``statistic_p(data_b)`` is the
    χ² p-value's logarithm on a copy of ``data`` whose column ``y`` is permuted within every group (``observed``:
    the same on the data); smaller is more extreme. Logarithms, because at large N the p-values of a strong
    dependence and of its permuted copies all underflow to 0, which made every draw "as extreme" (p = 1).
    With k of ℓ permuted p-values ≤ ``observed``: p = h/ℓ when k reaches h =
    :data:`SEQUENTIAL_EXCEEDANCES` (Besag & Clifford 1991), else (1 + k)/(1 + B) after B =
    ``permutations`` draws. Both satisfy P(p ≤ α) ≤ α under exchangeability within the groups."""
    codes, values = data.codes, data.values
    # one copy, column y overwritten per draw (a permuted data set and its score live for one draw)
    permuted = dataclasses.replace(data, codes=codes.copy(), values=values.copy())
    exceed = 0
    for drawn in range(1, permutations + 1):
        perm = np.arange(data.N)
        for rows in groups:
            if rows.size > 1:
                perm[rows] = rows[rng.permutation(rows.size)]
        permuted.codes[:, y] = codes[perm, y]
        permuted.values[:, y] = values[perm, y]
        if statistic_p(permuted) <= observed:
            exceed += 1
            if exceed >= SEQUENTIAL_EXCEEDANCES:
                return exceed / drawn, drawn
    return (1 + exceed) / (1 + permutations), permutations


def combined_log_p_value(log_p_values: list[float], combine: str = DEFAULT_COMBINE) -> float:
    """:func:`combined_p_value` on logarithms: ln min(1, min_i m·p_(i)/i), no underflow."""
    ls = sorted(log_p_values)
    if combine == "either" or len(ls) == 1:
        return ls[0]
    m = len(ls)
    return min(0.0, min(np.log(m / (i + 1)) + lp for i, lp in enumerate(ls)))


def combined_p_value(p_values: list[float], combine: str = DEFAULT_COMBINE) -> float:
    """One p-value from the directions' p-values p_(1) ≤ … ≤ p_(m): Simes (1986), min_i m·p_(i)/i, or the
    seed's ``either`` rule, p_(1) (reject when any direction rejects). One direction: its own p."""
    ps = sorted(p_values)
    if combine == "either" or len(ps) == 1:
        return ps[0]
    m = len(ps)
    return min(1.0, min(m * p / (i + 1) for i, p in enumerate(ps)))
