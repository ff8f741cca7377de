"""Likelihood-ratio conditional-independence tests from a local score (Andrews, Ramsey & Cooper §5.3).

To test Y0 ⟂ Y1 | Z with a score whose families have a maximised log-likelihood ℓ and free
parameter count df (:meth:`bnilp.scores.base.LocalScore.lr_loglik_df`):

    G  = 2·(ℓ(Y0 | {Y1} ∪ Z) − ℓ(Y0 | Z)),   k = df(Y0 | {Y1} ∪ Z) − df(Y0 | Z),   p = P(χ²_k ≥ G)

(``scipy.stats.chi2.sf``). Independence is rejected ("dependent") when p < α.

A score-equivalent score gives the same G and k with Y0 and Y1 swapped (BIC: G = 2N·Î(Y0; Y1 | Z),
k = (r0−1)(r1−1)·q_Z; CG: G = 2(ℓ(Y0Y1Z) − ℓ(Y1Z) − ℓ(Y0Z) + ℓ(Z)) by eqs. 3–4, 12–13), so one
direction suffices. For a score that is not score-equivalent (MVP, CGd, anything not in
:data:`SCORE_EQUIVALENT`) both directions are tested (§5.3). The seed calls the pair dependent when
either test rejects; that rule's size is up to 2α (measured: 9–12 % at α = 0.05 for MVP with two
continuous variables). bnilp combines the two p-values by Simes (1986) instead,

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

Conventions: a statistic below 0 (rounding, or CG's small-cell rule) counts as 0; a test with
k ≤ 0 has no power and gets p = 1. The df are :meth:`~bnilp.scores.base.LocalScore.lr_loglik_df`'s:
every parameter the nested models estimate (for MVP one more per partition than the score's
penalty counts: the partition variance of a continuous child).

Calibration (``benchmarks/citest_calibration.py``, README table): type-I error is within Monte Carlo
error of α wherever the score's model describes the simulated data. It is not where a *discrete*
variable depends on a continuous one through the simulator's steps (equal-frequency bins) and the
continuous one is conditioned on: neither CG's Gaussian mixture nor MVP's polynomial linear-
probability fit represents a step, so the other tested variable, itself a noisy function of the
conditioning variable, still improves the fit. That is misspecification, not a df count, and no df
correction can remove it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from scipy.stats import chi2

from bnilp.data import Dataset
from bnilp.errors import InputError
from bnilp.scores import LocalScore, make_score

#: scores whose likelihood-ratio statistic and df are symmetric in the two tested variables
SCORE_EQUIVALENT = frozenset({"bic", "cg"})
#: small-sample correction of G: Bartlett's mean correction where the score gives the null mean, or none
CORRECTIONS = ("bartlett", "none")
#: how two directions' p-values become one decision: Simes' combination (default) or the seed's "either rejects"
COMBINE_RULES = ("simes", "either")


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
    directions: list[DirectionResult] = field(default_factory=list)
    combine: str = "simes"
    correction: str = "bartlett"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["given"] = list(self.given)
        out["independent"] = not self.dependent
        return out


def _resolve(data: Dataset, var: str | int, what: str) -> int:
    if isinstance(var, bool):
        raise InputError(f"{what}: {var!r} is not a variable")
    if isinstance(var, int):
        if not 0 <= var < data.n:
            raise InputError(f"{what}: column index {var} is out of range 0..{data.n - 1}")
        return var
    name = str(var)
    if name in data.dropped:
        raise InputError(f"{data.source}: variable {name!r} is constant (dropped when loading); "
                         "it is independent of everything")
    return data.index(name)


def _one_direction(score: LocalScore, child: int, parent: int, given: tuple[int, ...],
                   alpha: float, correction: str = "bartlett") -> DirectionResult:
    try:
        ll1, df1 = score.lr_loglik_df(child, tuple(sorted((parent, *given))))
        ll0, df0 = score.lr_loglik_df(child, tuple(sorted(given)))
    except NotImplementedError:
        raise InputError(f"score {score.name!r} has no log-likelihood/df decomposition; "
                         "use a likelihood-based score (bic, cg, cgd, mvp)") from None
    stat = max(2.0 * (float(ll1) - float(ll0)), 0.0)
    k = float(df1) - float(df0)
    factor = 1.0
    null_mean = score.lr_null_mean(child, parent, given) if correction == "bartlett" else None
    if null_mean is not None:
        mean, k = null_mean
        factor = mean / k
    p = float(chi2.sf(stat / factor, k)) if k > 0 else 1.0
    names = score.data.names
    return DirectionResult(names[child], names[parent], stat, k, p, p < alpha, factor)


def ci_test(
    data: Dataset,
    x: str | int,
    y: str | int,
    given: Iterable[str | int] = (),
    score: str | LocalScore = "cg",
    alpha: float = 0.01,
    both_directions: bool | None = None,
    combine: str = "simes",
    correction: str = "bartlett",
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
    test). Bad variables, α outside
    (0, 1) or a score without ℓ/df raise :class:`~bnilp.errors.InputError`.
    """
    if not 0.0 < alpha < 1.0:
        raise InputError(f"--alpha must lie in (0, 1), got {alpha}")
    if combine not in COMBINE_RULES:
        raise InputError(f"combine must be one of {', '.join(COMBINE_RULES)}, got {combine!r}")
    if correction not in CORRECTIONS:
        raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    xi = _resolve(data, x, "x")
    yi = _resolve(data, y, "y")
    zi = tuple(_resolve(data, z, "given") for z in given)
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
    if both_directions is None:
        both_directions = scorer.name not in SCORE_EQUIVALENT
    directions = [_one_direction(scorer, xi, yi, zi, alpha, correction)]
    if both_directions:
        directions.append(_one_direction(scorer, yi, xi, zi, alpha, correction))
    best = min(directions, key=lambda d: d.p_value)
    p = combined_p_value([d.p_value for d in directions], combine)
    return CITestResult(
        x=names[xi], y=names[yi], given=tuple(names[z] for z in zi), score=scorer.name, alpha=float(alpha),
        statistic=best.statistic, df=best.df, p_value=p, dependent=p < alpha, directions=directions,
        combine=combine, correction=correction,
    )


def combined_p_value(p_values: list[float], combine: str = "simes") -> float:
    """One p-value from the directions' p-values p_(1) ≤ … ≤ p_(m): Simes (1986), min_i m·p_(i)/i, or the
    seed's ``either`` rule, p_(1) (reject when any direction rejects). One direction: its own p."""
    ps = sorted(p_values)
    if combine == "either" or len(ps) == 1:
        return ps[0]
    m = len(ps)
    return min(1.0, min(m * p / (i + 1) for i, p in enumerate(ps)))
