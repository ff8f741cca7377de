"""bnilp.citest: calibration under independence, power under dependence, chains, both directions."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bnilp.citest import ci_test, combined_p_value
from bnilp.data import Dataset, from_dataframe
from bnilp.errors import InputError
from bnilp.scores import make_score


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


needs_cg = pytest.mark.skipif(not _has("bnilp.scores.cg"), reason="bnilp.scores.cg not written yet")
needs_mvp = pytest.mark.skipif(not _has("bnilp.scores.mvp"), reason="bnilp.scores.mvp not written yet")


def _discrete(seed: int, N: int = 300, dependent: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, N)
    z = rng.integers(0, 2, N)
    y = rng.integers(0, 3, N)
    if dependent:
        y = np.where(rng.random(N) < 0.3, x, y)
    return pd.DataFrame({"x": x, "y": y, "z": z}).astype(str)


def _chain_discrete(seed: int, N: int = 1000) -> pd.DataFrame:
    # X → Z → Y, each a noisy copy of its parent
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, N)
    z = np.where(rng.random(N) < 0.6, x, rng.integers(0, 3, N))
    y = np.where(rng.random(N) < 0.6, z, rng.integers(0, 3, N))
    return pd.DataFrame({"x": x, "y": y, "z": z}).astype(str)


def _mixed(seed: int, N: int = 400, dependent: bool = False, chain: bool = False) -> pd.DataFrame:
    """x continuous, z discrete (3 states), y continuous; chain: x → z → y."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(N)
    if chain:
        z = np.digitize(x + 0.5 * rng.standard_normal(N), [-0.5, 0.5])
        y = np.array([-1.0, 0.0, 1.0])[z] + rng.standard_normal(N)
    else:
        z = rng.integers(0, 3, N)
        y = (0.4 * x if dependent else 0.0) + rng.standard_normal(N)
    return pd.DataFrame({"x": x, "y": y, "z": [f"s{v}" for v in z]})


@pytest.mark.slow
def test_bic_pvalues_uniform_under_independence():
    p = [ci_test(from_dataframe(_discrete(s)), "x", "y", ["z"], score="bic").p_value for s in range(200)]
    assert stats.kstest(p, "uniform").pvalue > 1e-3
    assert np.mean(np.array(p) < 0.05) < 0.12


def test_bic_rejects_under_dependence_and_is_symmetric():
    """With the χ² reference p is below 1e-6; under ``auto`` these tables (fewer than 20 rows a cell) are
    permuted, and no permuted data set reaches the statistic: p = 1/200, the least 199 permutations give."""
    for s in range(5):
        data = from_dataframe(_discrete(s, dependent=True))
        auto = ci_test(data, "x", "y", ["z"], score="bic")
        assert auto.null == "local-permutation" and auto.dependent and auto.p_value == pytest.approx(1 / 200)
        r = ci_test(data, "x", "y", ["z"], score="bic", both_directions=True, null="chi2")
        assert r.dependent and r.p_value < 1e-6
        a, b = r.directions
        assert (a.child, a.parent, b.child, b.parent) == ("x", "y", "y", "x")
        # BIC's statistic is 2N·Î(X; Y | Z) and df (r_x − 1)(r_y − 1)q_Z = 2·2·2 in both directions
        assert a.statistic == pytest.approx(b.statistic) and a.df == b.df == 8


def test_bic_chain_conditional_independence():
    for s in range(5):
        data = from_dataframe(_chain_discrete(s))
        assert ci_test(data, "x", "y", score="bic").dependent
        r = ci_test(data, "x", "y", ["z"], score="bic")
        assert not r.dependent and r.df == 12 and len(r.directions) == 1


def test_score_object_and_indices_are_accepted():
    data = from_dataframe(_chain_discrete(0))
    score = make_score("bic", data)
    by_name = ci_test(data, "x", "y", ["z"], score=score)
    by_index = ci_test(data, 0, 1, [2], score=score)
    assert by_name.to_dict() == by_index.to_dict()
    assert by_name.to_dict()["independent"] is True and by_name.given == ("z",)


def test_bad_input():
    data = from_dataframe(_discrete(0))
    with pytest.raises(InputError, match="unknown variable"):
        ci_test(data, "x", "nope", score="bic")
    with pytest.raises(InputError, match="itself"):
        ci_test(data, "x", "x", score="bic")
    with pytest.raises(InputError, match="conditioning set"):
        ci_test(data, "x", "y", ["x"], score="bic")
    with pytest.raises(InputError, match="twice"):
        ci_test(data, "x", "y", ["z", "z"], score="bic")
    with pytest.raises(InputError, match="alpha"):
        ci_test(data, "x", "y", score="bic", alpha=1.5)
    with pytest.raises(InputError, match="decomposition"):
        ci_test(data, "x", "y", score="bdeu")
    with pytest.raises(InputError, match="out of range"):
        ci_test(data, 0, 7, score="bic")
    with pytest.raises(InputError, match="different data"):
        ci_test(data, "x", "y", score=make_score("bic", from_dataframe(_discrete(1))))
    # a seed is checked whatever the null: the χ² null drew nothing, so seed=2.5 or "abc" was taken (a review)
    for seed in (2.5, float("nan"), "abc", True, -3):
        with pytest.raises(InputError, match=r"seed \(--seed\) must be an integer ≥ 0"):
            ci_test(data, "x", "y", score="bic", null="chi2", seed=seed)
    assert ci_test(data, "x", "y", score="bic", null="chi2", seed=7.0).null == "chi2"
    # each parameter that a flag sets is named with the flag (a review: only alpha's was)
    for kwargs, flag in (({"combine": "any"}, "combine (--combine)"),
                         ({"correction": "x"}, "correction (--correction)"), ({"null": "perm"}, "null (--null)"),
                         ({"permutations": 0}, "permutations (--permutations)")):
        with pytest.raises(InputError, match=rf"^{flag.replace('(', '[(]').replace(')', '[)]')} must be"):
            ci_test(data, "x", "y", score="bic", **kwargs)
    # settings that change scores and not the test: the command line refused them, the API took them (a review)
    for kwargs in ({"penalty_discount": 2.0}, {"prior": "binomial"}):
        with pytest.raises(InputError, match=f"{next(iter(kwargs))} change scores, not the likelihood-ratio test"):
            ci_test(data, "x", "y", score="bic", **kwargs)


def test_an_alpha_whose_inverse_overflows_a_float_is_tested_not_a_traceback():
    """α in (0, 1) down to the least subnormal: 1/α overflowed in the count of permutations that can reach it (an
    OverflowError even under the χ² null, which draws none); that count is exact past the float range."""
    from fractions import Fraction

    from bnilp.citest import least_permutations

    assert least_permutations(0.001) == 999 and least_permutations(0.05) == 19
    assert least_permutations(1e-320) == math.ceil(1 / Fraction(1e-320)) - 1 > 10**319
    for alpha in (0.0, 1.0, float("nan")):
        with pytest.raises(InputError, match="alpha must be a number in"):
            least_permutations(alpha)
    data = from_dataframe(_discrete(0, dependent=True))
    got = ci_test(data, "x", "y", score="bic", null="chi2", alpha=5e-324)
    from bnilp.citest import local_groups
    with pytest.raises(InputError, match=r"given must be column indices of data \(0\.\.2\)"):
        local_groups(data, ["z"])           # a TypeError deep in the data set (a review)
    assert got.alpha == 5e-324 and got.p_value == ci_test(data, "x", "y", score="bic", null="chi2").p_value


def test_a_constant_conditioning_column_is_left_out_with_a_note_and_a_constant_tested_one_refused():
    """Conditioning on a constant changes no distribution: the test is the unconditional one, with a note
    saying so (it was refused); testing a constant stays an error (it is independent of everything)."""
    frame = _discrete(0).assign(c=1)
    data = from_dataframe(frame)
    assert data.dropped == ["c"]
    plain, given = ci_test(data, "x", "y", score="bic"), ci_test(data, "x", "y", ["c"], score="bic")
    assert given.p_value == plain.p_value and given.given == ()
    assert given.notes == ("conditioning on 'c', a constant column (dropped when loading), changes nothing: left out",)
    with pytest.raises(InputError, match="'c' is constant"):
        ci_test(data, "c", "y", score="bic")


@needs_cg
def test_cg_pvalues_uniform_under_independence():
    p = [ci_test(from_dataframe(_mixed(s)), "x", "y", ["z"], score="cg").p_value for s in range(150)]
    assert stats.kstest(p, "uniform").pvalue > 1e-3


@needs_cg
def test_cg_dependence_and_chain():
    for s in range(3):
        assert ci_test(from_dataframe(_mixed(s, dependent=True)), "x", "y", ["z"], score="cg").dependent
        chain = from_dataframe(_mixed(s, chain=True))
        assert ci_test(chain, "x", "y", score="cg").dependent
        assert not ci_test(chain, "x", "y", ["z"], score="cg").dependent
        # CG is score-equivalent: one direction by default, the same statistic the other way round
        both = ci_test(chain, "x", "y", ["z"], score="cg", both_directions=True)
        assert both.directions[0].statistic == pytest.approx(both.directions[1].statistic, rel=1e-6, abs=1e-6)


@needs_mvp
def test_mvp_tests_both_directions():
    data = from_dataframe(_mixed(0, chain=True))
    r = ci_test(data, "x", "z", score="mvp", degree=1)
    assert len(r.directions) == 2 and r.dependent
    p1, p2 = sorted(d.p_value for d in r.directions)
    assert r.combine == "simes" and r.p_value == min(2 * p1, p2)
    seed_rule = ci_test(data, "x", "z", score="mvp", degree=1, combine="either")
    assert seed_rule.p_value == p1
    r = ci_test(data, "x", "y", ["z"], score="mvp", degree=1)
    assert len(r.directions) == 2 and not r.dependent


@needs_mvp
def test_mvp_pvalues_roughly_uniform_under_independence():
    # each direction alone is an ordinary likelihood-ratio test
    p = [ci_test(from_dataframe(_mixed(s)), "x", "y", ["z"], score="mvp", degree=1).directions[0].p_value
         for s in range(100)]
    assert stats.kstest(p, "uniform").pvalue > 1e-3


def test_simes_combination_closed_forms():
    # Simes (1986): min over i of m·p_(i)/i
    assert combined_p_value([0.04, 0.01]) == pytest.approx(0.02)       # 2·0.01 < 0.04
    assert combined_p_value([0.03, 0.02]) == pytest.approx(0.03)       # max wins when both are small
    assert combined_p_value([0.3, 0.3]) == pytest.approx(0.3)          # identical tests: the test itself
    assert combined_p_value([0.7, 0.6]) == pytest.approx(0.7)
    assert combined_p_value([0.04, 0.01], "either") == 0.01            # the seed's rule
    assert combined_p_value([0.2]) == 0.2


def _continuous_given_discrete(seed: int, N: int = 400) -> pd.DataFrame:
    """y continuous, independent of the discrete x (3 states)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": [f"s{v}" for v in rng.integers(0, 3, N)], "y": rng.standard_normal(N)})


@needs_mvp
def test_mvp_test_counts_the_partition_variances():
    # continuous y given discrete x (r = 3): each of the 3 cells fits an intercept and a variance, the
    # empty set one of each, so the nested models differ by 2·(r − 1) = 4 parameters; the score's
    # penalty (seed eq. 20, Tetrad) counts only the intercepts: r − 1 = 2
    data = from_dataframe(_continuous_given_discrete(0))
    score = make_score("mvp", data)
    y, x = data.index("y"), data.index("x")
    assert score.loglik_df(y, (x,))[1] - score.loglik_df(y, ())[1] == 2
    assert score.lr_loglik_df(y, (x,))[1] - score.lr_loglik_df(y, ())[1] == 4
    assert score.lr_loglik_df(y, (x,))[0] == score.loglik_df(y, (x,))[0]
    r = ci_test(data, "y", "x", score=score, both_directions=False)
    assert r.df == 4


@needs_mvp
def test_mvp_continuous_child_of_discrete_is_calibrated():
    # with the variance parameters counted, the continuous-child direction is an ordinary LR test;
    # before, it rejected 18–33 % at α = 0.05
    p = np.array([ci_test(from_dataframe(_continuous_given_discrete(s)), "y", "x", score="mvp",
                          both_directions=False).p_value for s in range(200)])
    assert stats.kstest(p, "uniform").pvalue > 1e-3
    assert np.mean(p < 0.05) < 0.09


@needs_mvp
def test_mvp_discrete_child_of_discrete_equals_the_multinomial_test():
    # no continuous column: the test's likelihood is the multinomial maximum likelihood, so each
    # direction is BIC's likelihood-ratio test (the score keeps eq. 21's shrink)
    data = from_dataframe(_discrete(3))
    bic = ci_test(data, "x", "y", ["z"], score="bic")
    mvp = ci_test(data, "x", "y", ["z"], score="mvp")
    for d in mvp.directions:
        assert d.statistic == pytest.approx(bic.statistic, rel=1e-9) and d.df == bic.df


def _one_row_levels(seed: int, levels: int = 10, rows: int = 10, lone: int = 50) -> pd.DataFrame:
    """Continuous x independent of a discrete y: ``levels`` levels of ``rows`` rows and ``lone`` of one row."""
    rng = np.random.default_rng(seed)
    y = [f"L{v}" for v in range(levels) for _ in range(rows)] + [f"S{v}" for v in range(lone)]
    return pd.DataFrame({"x": rng.normal(size=len(y)), "y": y})


@needs_mvp
def test_mvp_leaves_a_continuous_child_s_one_row_cells_out_of_both_models():
    """A one-row cell of the larger model fits its row exactly (ℓ_p = 0 by the score's rule) while the smaller
    model pays for it: 2.8 to G and 2 to df per row, nothing to E[G] — p = 1e-13 for independent data with 50
    one-row levels (a review). The row tells nothing of the dependence, so the direction is the test on the
    other rows: the same G, df and Bartlett factor, and every level of one row rejected 100 % before."""
    frame = _one_row_levels(0)
    got = ci_test(from_dataframe(frame, discrete=["y"]), "x", "y", score="mvp", both_directions=False)
    rest = ci_test(from_dataframe(frame[frame["y"].str.startswith("L")], discrete=["y"]), "x", "y", score="mvp",
                   both_directions=False)
    assert (got.statistic, got.df, got.directions[0].bartlett) == pytest.approx(
        (rest.statistic, rest.df, rest.directions[0].bartlett), rel=1e-12)
    assert got.df == 2 * 9 and got.p_value > 0.01
    alone = pd.DataFrame({"x": [0.3, -1.2, 0.8], "y": ["a", "b", "c"]})     # no row left: no information
    none = ci_test(from_dataframe(alone, discrete=["y"]), "x", "y", score="mvp", both_directions=False)
    assert (none.statistic, none.df, none.p_value) == (0.0, 0.0, 1.0)
    p = np.array([ci_test(from_dataframe(_one_row_levels(s), discrete=["y"]), "x", "y", score="mvp",
                          both_directions=False).p_value for s in range(100)])
    assert np.mean(p <= 0.05) < 0.1


# -- Bartlett's small-sample correction -----------------------------------------------------------------

def test_the_residual_deviance_mean_is_the_monte_carlo_mean():
    # E[n·(ln σ̂² − ln σ² + 1)] of a Gaussian regression with intercept and k slopes, against simulation
    from bnilp.scores.base import residual_deviance_mean
    rng = np.random.default_rng(5)
    for n, k in [(2, 0), (3, 0), (5, 1), (9, 2), (40, 3)]:
        reps = 20_000
        x = rng.standard_normal((reps, n, k))
        design = np.concatenate([np.ones((reps, n, 1)), x], axis=2)
        y = rng.standard_normal((reps, n))
        beta = np.linalg.solve(design.transpose(0, 2, 1) @ design, design.transpose(0, 2, 1) @ y[..., None])
        rss = ((y - (design @ beta)[..., 0]) ** 2).sum(axis=1)
        draws = n * (np.log(rss / n) + 1.0)
        se = draws.std() / np.sqrt(reps)
        assert abs(residual_deviance_mean(np.array([n]), k) - draws.mean()) < 4 * se, (n, k)
    # large cells: n − (k + 2), the parameters a cell estimates; exact fits (n ≤ k + 1) contribute 0
    assert residual_deviance_mean(np.array([10**6]), 2) == pytest.approx(10**6 - 4, abs=1e-3)
    assert residual_deviance_mean(np.array([1, 2, 3]), 2) == 0.0


def _small_cells(seed: int, N: int = 60) -> pd.DataFrame:
    """y continuous depends on z (3 states) only; x has 4 states: 12 cells of ~5 rows."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 3, N)
    x = rng.integers(0, 4, N)
    y = np.array([-1.0, 0.0, 1.0])[z] + rng.standard_normal(N)
    return pd.DataFrame({"x": [f"a{v}" for v in x], "y": y, "z": [f"s{v}" for v in z]})


def _small_cell_p_values(reps: int, x: str, y: str, **kwargs) -> tuple[np.ndarray, np.ndarray, float]:
    """p-values of the plain and the corrected test on ``reps`` small-cell null data sets, and the
    smallest Bartlett factor seen."""
    plain, corrected, factor = [], [], np.inf
    for s in range(reps):
        data = from_dataframe(_small_cells(s))
        plain.append(ci_test(data, x, y, ["z"], correction="none", **kwargs).p_value)
        r = ci_test(data, x, y, ["z"], **kwargs)
        corrected.append(r.p_value)
        factor = min(factor, r.directions[0].bartlett)
    return np.array(plain), np.array(corrected), factor


@needs_cg
def test_bartlett_keeps_cg_calibrated_where_cells_have_few_rows():
    # ln σ̂² is biased downwards in a 5-row cell, so the plain G over-rejects; E[G]/df ≈ 1.3 here
    plain, corrected, factor = _small_cell_p_values(400, "x", "y", score="cg")
    assert factor > 1.1
    assert np.mean(plain < 0.05) > 0.09
    assert 0.025 < np.mean(corrected < 0.05) < 0.08
    assert stats.kstest(corrected, "uniform").pvalue > 1e-3


@needs_cg
def test_the_correction_only_rescales_g():
    data = from_dataframe(_small_cells(0))
    for score in ("cg", "mvp", "cgd"):
        for x, y in (("x", "y"), ("y", "x")):
            plain = ci_test(data, x, y, ["z"], score=score, correction="none")
            fixed = ci_test(data, x, y, ["z"], score=score)
            assert plain.correction == "none" and fixed.correction == "bartlett"
            for a, b in zip(plain.directions, fixed.directions, strict=True):
                assert a.bartlett == 1.0 and a.statistic == b.statistic
                assert a.p_value == pytest.approx(stats.chi2.sf(a.statistic, a.df), rel=1e-12)
                assert b.p_value == pytest.approx(stats.chi2.sf(b.statistic / b.bartlett, b.df), rel=1e-12)
                # only a Gaussian child has a null mean: CGd's and MVP's discrete child are not corrected
                gaussian = b.child == "y" or score == "cg"
                assert (b.bartlett != 1.0) == gaussian, (score, b.child)
    discrete = from_dataframe(_discrete(0))
    assert ci_test(discrete, "x", "y", ["z"], score="cg").directions[0].bartlett == 1.0
    with pytest.raises(InputError, match="correction"):
        ci_test(data, "x", "y", score="cg", correction="williams")


@needs_mvp
def test_bartlett_keeps_mvp_continuous_child_calibrated_in_small_cells():
    plain, corrected, _ = _small_cell_p_values(300, "y", "x", score="mvp", both_directions=False)
    assert np.mean(plain < 0.05) > 0.09
    assert 0.02 < np.mean(corrected < 0.05) < 0.085


# --- misspecification: the local permutation null -------------------------------------------------

def _steps_given_continuous(seed: int, N: int, dependent: bool = False) -> Dataset:
    """Discrete X and Y that depend on a continuous Z through the simulator's steps (3 equal-frequency
    bins): neither CG's nor MVP's model of a discrete child of Z describes that."""
    from bnilp.simulate import sample_dag
    parents = {"Z": [], "X": ["Z"], "Y": ["Z", "X"] if dependent else ["Z"]}
    frame = sample_dag(parents, {"Z": "continuous", "X": "discrete", "Y": "discrete"}, N, seed=seed)
    return from_dataframe(frame, discrete=["X", "Y"], continuous=["Z"])


def test_local_groups_partition_the_rows_into_neighbours_within_discrete_strata():
    from bnilp.citest import local_groups
    rng = np.random.default_rng(0)
    N = 301
    frame = pd.DataFrame({"d": rng.integers(0, 3, N).astype(str), "c1": rng.standard_normal(N),
                          "c2": 100 * rng.standard_normal(N), "y": rng.standard_normal(N)})
    data = from_dataframe(frame)
    d, c1, c2 = data.index("d"), data.index("c1"), data.index("c2")
    for given, size in (([c1], 4), ([d, c1], 4), ([d, c1, c2], 5), ([d], 4)):
        groups = local_groups(data, given, size)
        rows = np.concatenate(groups)
        assert np.array_equal(np.sort(rows), np.arange(N))          # every row exactly once
        for g in groups:
            assert np.unique(data.codes[g, d]).size == 1 or d not in given
            assert g.size <= size or given == [d]                    # without continuous: whole strata
    # one continuous column: each group is a run of consecutive values (its nearest neighbours)
    ranks = np.argsort(np.argsort(data.values[:, c1]))
    for g in local_groups(data, [c1], 4):
        assert ranks[g].max() - ranks[g].min() == g.size - 1


@needs_cg
@needs_mvp
def test_auto_null_permutes_exactly_where_a_discrete_variable_is_modelled_given_a_continuous_one():
    data = _steps_given_continuous(0, 300)
    for score in ("cg", "mvp"):
        r = ci_test(data, "X", "Y", ["Z"], score=score)
        assert r.null == "local-permutation" and 1 <= r.permutations <= 199
        assert r.chi2_p_value == pytest.approx(combined_p_value([d.p_value for d in r.directions]))
        chi = ci_test(data, "X", "Y", ["Z"], score=score, null="chi2")
        assert chi.null == "chi2" and chi.permutations == 0 and chi.p_value == chi.chi2_p_value == r.chi2_p_value
        # reproducible for a seed
        assert ci_test(data, "X", "Y", ["Z"], score=score, seed=5).p_value == \
            ci_test(data, "X", "Y", ["Z"], score=score, seed=5).p_value
    mixed = from_dataframe(_mixed(0))                   # x, y continuous given a discrete z: χ²
    assert ci_test(mixed, "x", "y", ["z"], score="cg").null == "chi2"
    assert ci_test(data, "X", "Z", score="cg").null == "chi2"           # nothing conditioned on
    forced = ci_test(mixed, "x", "y", ["z"], score="cg", null="local-permutation", permutations=19)
    assert forced.null == "local-permutation" and forced.permutations <= 19
    with pytest.raises(InputError, match="null"):
        ci_test(data, "X", "Y", ["Z"], null="exact")
    with pytest.raises(InputError, match="permutations"):
        ci_test(data, "X", "Y", ["Z"], permutations=0)


@pytest.mark.slow     # 18 s
@needs_cg
@needs_mvp
def test_local_permutation_is_calibrated_where_the_chi2_reference_is_not():
    """Discrete X ⟂ Y | continuous Z through steps: CG's and MVP's χ² references reject most null data
    sets at N = 1,000 (README calibration table: 87 % and 64 % at α = 0.05), the local permutation about
    α. 40 fixed null data sets: Binomial(40, 0.05) exceeds 6 with probability 0.014."""
    chi2_rejects, perm_rejects = {"cg": 0, "mvp": 0}, {"cg": 0, "mvp": 0}
    for s in range(40):
        data = _steps_given_continuous(100 + s, 1000)
        for score in ("cg", "mvp"):
            r = ci_test(data, "X", "Y", ["Z"], score=score, alpha=0.05, seed=s)
            perm_rejects[score] += r.dependent
            chi2_rejects[score] += r.chi2_p_value <= 0.05
    assert chi2_rejects["cg"] >= 20 and chi2_rejects["mvp"] >= 12
    assert perm_rejects["cg"] <= 6 and perm_rejects["mvp"] <= 6
    # and it keeps the power: X → Y is found
    for s in range(5):
        assert ci_test(_steps_given_continuous(200 + s, 1000, dependent=True), "X", "Y", ["Z"], score="cg",
                       alpha=0.05).dependent


@needs_cg
@needs_mvp
def test_a_score_rebuilt_on_other_data_keeps_its_settings():
    data = _steps_given_continuous(1, 200)
    for name, settings in (("cgd", {"bins": 5}), ("mvp", {"degree": 2}), ("cg", {"penalty_discount": 2.0})):
        score = make_score(name, data, **settings)
        again = score.with_data(data)
        assert type(again) is type(score) and again.settings() == score.settings()
        assert again.local(1, (0, 2)) == score.local(1, (0, 2))


def test_the_chi2_tail_s_logarithm_is_finite_and_exact_past_the_float_range():
    """chi2_log_sf against the closed form for even k, Q(a, t) = e^(−t)·Σ_{j<a} t^j/j! (a = k/2, t = x/2), in
    logs, where scipy's logsf is −inf (x ≥ 1,500) and where it is not."""
    import math

    from scipy.special import logsumexp

    from bnilp.citest import chi2_log_sf

    for k in (2, 4, 12, 40, 200):
        for x in (100.0, 1_000.0, 1_500.0, 5_000.0, 1e5):
            a, t = k // 2, x / 2
            exact = -t + logsumexp([j * math.log(t) - math.lgamma(j + 1) for j in range(a)])
            assert chi2_log_sf(x, k) == pytest.approx(exact, rel=1e-12, abs=1e-12), (k, x)
    assert chi2_log_sf(1_500.0, 1) < chi2_log_sf(1_499.0, 1) < -740       # odd k: monotone, finite


@needs_cg
def test_a_strong_dependence_at_large_n_is_not_lost_to_p_values_that_underflow():
    """X → Y on top of a step function of a continuous Z that CG's model of a discrete child cannot describe
    (so the local permutation is used): the observed G (~4,500) and every permuted one (~3,900) have χ²
    p-values below 1e-308, which once all compared equal — every draw "as extreme", p = 1, independent. In
    logarithms the permuted draws are less extreme: dependent, p = 1/(B + 1)."""
    rng = np.random.default_rng(0)
    N = 6000
    z = rng.normal(size=N)
    step = (np.sin(4 * z) > 0).astype(int)
    x = np.where(rng.random(N) < 0.97, step, 1 - step)
    y = np.where(rng.random(N) < 0.9, x, 1 - x)
    data = from_dataframe(pd.DataFrame({"X": x, "Y": y, "Z": z}), discrete=["X", "Y"], continuous=["Z"])
    r = ci_test(data, "X", "Y", ["Z"], score="cg", alpha=0.05)
    assert r.null == "local-permutation" and r.chi2_p_value == 0.0
    assert r.dependent and r.p_value == pytest.approx(1 / 200) and r.permutations == 199


@needs_cg
@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_cg_with_no_residual_left_in_the_larger_model_has_no_power(k):
    """N = k + 2 rows, k continuous Z and no discrete one: the larger model (k + 1 slopes and an intercept) fits
    every row exactly, so G is finite only through the variance floor and says nothing — p = 1 (as MVP
    gives), where the plain χ² rejected every null data set."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        frame = pd.DataFrame(rng.standard_normal((k + 2, k + 2)), columns=["a", "b"] + [f"c{i}" for i in range(k)])
        r = ci_test(from_dataframe(frame), "a", "b", [f"c{i}" for i in range(k)], score="cg", alpha=0.05)
        assert r.p_value == 1.0 and not r.dependent


def _small_mixed(rng: np.random.Generator, N: int, states: int = 4) -> pd.DataFrame:
    """Mixed data whose discrete cells hold few rows: d1, d2 discrete, c1..c3 continuous (c2 depends on c1 and
    d1, c3 on d2)."""
    d1, d2 = rng.integers(0, states, N), rng.integers(0, 3, N)
    c1 = rng.standard_normal(N)
    c2 = 0.5 * c1 + d1 + rng.standard_normal(N)
    c3 = rng.standard_normal(N) - d2
    return pd.DataFrame({"d1": [f"a{v}" for v in d1], "d2": [f"b{v}" for v in d2], "c1": c1, "c2": c2, "c3": c3})


def _tests_with_a_continuous_variable(data: Dataset):
    """(child, parent, given): every test of two variables, at least one continuous, given up to two others."""
    n = data.n
    for child in range(n):
        for parent in range(n):
            if parent == child or (data.is_discrete(child) and data.is_discrete(parent)):
                continue
            others = [j for j in range(n) if j not in (child, parent)]
            for size in range(3):
                for given in itertools.combinations(others, size):
                    yield child, parent, given


@needs_cg
def test_the_cg_statistic_of_nested_models_is_never_negative():
    """tetrad-notes asks of CG's small-cell rule that the LRT statistic of nested models never be negative. The
    score's set function decides per variable set which cells are small (pooled covariance), so ℓ(y | x ∪ Z) −
    ℓ(y | Z) from it goes negative on small data (here 258 of 2,520 times, down to −27 nats); the test's
    statistic, nested Gaussian regressions of the continuous tested variable, never does — CG and CGd, x discrete
    or continuous."""
    from bnilp.scores.base import LocalScore
    negative_before, tried = 0, 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        data = from_dataframe(_small_mixed(rng, int(rng.integers(6, 30))))
        for name in ("cg", "cgd"):
            score = make_score(name, data)
            for child, parent, given in _tests_with_a_continuous_variable(data):
                if name == "cgd" and data.is_discrete(child):
                    continue                                    # multinomial on bins, no Gaussian rule
                half_g, df = score.lr_difference(child, parent, given)
                assert half_g >= 0.0 and df >= 0.0, (seed, name, child, parent, given)
                tried += 1
                negative_before += LocalScore.lr_difference(score, child, parent, given)[0] < -1e-9
    assert tried > 1000 and negative_before > 100


@needs_cg
def test_the_cg_statistic_is_the_regressions_fitted_cell_by_cell():
    """Against an oracle that fits every group by ``np.linalg.lstsq`` on the raw values and builds the groups by
    loops: small cells (rows of sub-cells too few for a residual pooled, or joined to the largest sub-cell), a
    discrete and a continuous x, with and without continuous Z."""
    from bnilp.scores.cg import FLAT_TOL
    from tests.oracles import nested_regression_lr_by_loops
    checked = 0
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        data = from_dataframe(_small_mixed(rng, int(rng.integers(25, 120)), states=6))
        score = make_score("cg", data)
        values = data.values.astype(float)
        for child, parent, given in _tests_with_a_continuous_variable(data):
            y, x = (parent, child) if data.is_discrete(child) else (child, parent)
            disc = [j for j in given if data.is_discrete(j)]
            cont = sorted(j for j in given if not data.is_discrete(j))
            cells = np.unique(data.codes[:, disc], axis=0, return_inverse=True)[1].ravel() if disc else \
                np.zeros(data.N, dtype=int)
            xs = data.codes[:, x] if data.is_discrete(x) else values[:, x]
            want = nested_regression_lr_by_loops(values[:, y], values[:, cont], cells, xs, data.is_discrete(x),
                                                 FLAT_TOL)
            got = score.lr_difference(child, parent, given)
            assert got[1] == want[1], (seed, child, parent, given)
            assert got[0] == pytest.approx(want[0], rel=1e-7, abs=1e-7), (seed, child, parent, given)
            checked += want[1] > 0
    assert checked > 100


@needs_cg
def test_without_small_cells_the_cg_statistic_is_the_scores_own():
    """Every cell with a residual left in the larger model: the nested regressions are the score's
    ℓ(y | x ∪ Z) − ℓ(y | Z) (eqs. 3, 4, 12, 13) and its df, up to rounding — both tested variables as the child."""
    from bnilp.scores.base import LocalScore
    rng = np.random.default_rng(7)
    data = from_dataframe(_small_mixed(rng, 3000, states=3))
    score = make_score("cg", data)
    for child, parent, given in _tests_with_a_continuous_variable(data):
        got = score.lr_difference(child, parent, given)
        want = LocalScore.lr_difference(score, child, parent, given)
        assert got[0] == pytest.approx(want[0], rel=1e-9, abs=1e-8), (child, parent, given)
        assert got[1] == want[1]


@needs_cg
def test_a_dependence_inside_the_one_large_cell_is_found_among_two_row_cells():
    """A review's case: Z has one cell of 100 rows and 20 of 2; y = 0.6·x + noise. The set function pooled the
    2-row cells in the larger model only, its statistic was −26 and the test said independent (p = 1); the
    regression in the large cell alone gives r = 0.59, p ≈ 1e-10."""
    rng = np.random.default_rng(3)
    z = np.concatenate([np.zeros(100, dtype=int), np.repeat(np.arange(1, 21), 2)])
    x = rng.standard_normal(z.size)
    y = 0.6 * x + 0.8 * rng.standard_normal(z.size)
    data = from_dataframe(pd.DataFrame({"X": x, "Y": y, "P": [f"p{v}" for v in z]}))
    r_big = stats.pearsonr(x[:100], y[:100])
    for name in ("cg", "cgd"):
        r = ci_test(data, "X", "Y", ["P"], score=name)
        assert r.dependent and r.p_value < 1e-6 and r.df == 1.0, name
        assert r.p_value == pytest.approx(r_big.pvalue, rel=3.0)
        for direction in r.directions:
            assert direction.statistic > 0


@pytest.mark.slow        # ~20 s: Monte Carlo (the quick suite keeps under 15 minutes)
@needs_cg
def test_the_null_mean_of_the_cg_statistic_with_pooled_sub_cells_is_the_monte_carlo_mean():
    """E[G] of :meth:`ConditionalGaussian.lr_null_mean` for a design whose larger model pools sub-cells (a cell
    with sub-cells of 1–3 rows beside large ones; k = 1 continuous Z): the mean of G over null data sets."""
    rng = np.random.default_rng(11)
    z = np.repeat([0, 1, 2], [40, 17, 9])
    x = np.concatenate([rng.integers(0, 4, 40), [0] * 10 + [1] * 2 + [2] * 5, [0] * 6 + [1] * 1 + [2] * 2])
    c = rng.standard_normal(z.size)
    draws, mean = [], None
    for s in range(3000):
        y = 0.5 * c + np.random.default_rng(s).standard_normal(z.size)
        frame = pd.DataFrame({"y": y, "x": [f"a{v}" for v in x], "z": [f"s{v}" for v in z], "c": c})
        score = make_score("cg", from_dataframe(frame))
        draws.append(2 * score.lr_difference(0, 1, (2, 3))[0])
        mean = score.lr_null_mean(0, 1, (2, 3))
    draws = np.array(draws)
    # df (k + 2 = 3 a group past the first): the 40-row cell 4 groups; the 17-row one 2 (its 2-row sub-cell joins
    # the 10-row one); the 9-row one 2 (the 6-row sub-cell, and the 1 + 2 rows pooled, 3 = k + 2)
    assert mean is not None and mean[1] == 3 * 3 + 3 + 3
    assert abs(mean[0] - draws.mean()) < 4 * draws.std() / np.sqrt(draws.size)


def _g2_over_observed_strata(frame: pd.DataFrame, x: str, y: str, zs: list[str]) -> tuple[float, int]:
    """Oracle: G² and df summed over the configurations of zs that occur, each a contingency table of the
    values seen there (scipy's chi2_contingency, log-likelihood statistic)."""
    G, k = 0.0, 0
    for _, g in (frame.groupby(zs) if zs else [(None, frame)]):
        t = pd.crosstab(g[x], g[y]).values
        if min(t.shape) >= 2:
            s, _, dof, _ = stats.chi2_contingency(t, correction=False, lambda_="log-likelihood")
            G, k = G + s, k + dof
    return G, k


@pytest.mark.parametrize("score", ["bic", "cg"])
def test_discrete_tests_count_df_over_the_table_as_observed(score):
    """G² and its df against per-stratum contingency tables: configurations of Z never seen, and values of x or
    y never seen with a configuration, add no df (they were counted: 8 ternary Z gave df 26,244 for 150)."""
    rng = np.random.default_rng(5)
    for n_z, N in ((0, 60), (1, 80), (3, 120), (8, 400)):
        z = rng.integers(0, 3, (N, n_z))
        x = np.where(z[:, 0] == 2, 0, rng.integers(0, 3, N)) if n_z else rng.integers(0, 3, N)
        y = np.where(rng.random(N) < 0.4, x, rng.integers(0, 3, N))
        frame = pd.DataFrame({"x": x, "y": y, **{f"z{i}": z[:, i] for i in range(n_z)}}).astype(str)
        zs = [f"z{i}" for i in range(n_z)]
        r = ci_test(from_dataframe(frame), "x", "y", zs, score=score, alpha=0.05, null="chi2")
        G, k = _g2_over_observed_strata(frame, "x", "y", zs)
        assert r.statistic == pytest.approx(G, rel=1e-9, abs=1e-9) and r.df == k, (n_z, r.df, k)
        assert r.p_value == pytest.approx(stats.chi2.sf(G, k) if k else 1.0, rel=1e-9)


def test_auto_refers_a_sparse_all_discrete_table_to_the_stratified_permutation():
    """Under null="auto" an all-discrete G² with fewer than 20 rows a cell of its observed tables (where its χ²
    reference over-rejects: 23 % at α = 0.05 with 2.5 rows a cell, 10 % at 7.4, benchmarks/citest_sparse.py) is
    referred to the permutation distribution within the strata; with enough rows (24.7 here) it keeps χ²."""
    from bnilp.citest import SPARSE_ROWS_PER_CELL, rows_per_cell

    rng = np.random.default_rng(2)
    for N, sparse in ((200, True), (2000, False)):
        frame = pd.DataFrame(rng.integers(0, 3, (N, 4)), columns=["x", "y", "z0", "z1"]).astype(str)
        data = from_dataframe(frame)
        assert (rows_per_cell(data, 0, 1, (2, 3)) < SPARSE_ROWS_PER_CELL) == sparse
        r = ci_test(data, "x", "y", ["z0", "z1"], score="bic", alpha=0.05)
        assert r.null == ("local-permutation" if sparse else "chi2")
        assert (r.permutations > 0) == sparse and 1 / 200 <= r.p_value <= 1


def _step_dependence(seed: int = 5, N: int = 300) -> pd.DataFrame:
    """b a function of a (plus noise), c unrelated: a dependence whose χ² p-value underflows (2e-49 at seed 5)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, N)
    return pd.DataFrame({"a": a, "b": (a + rng.integers(0, 2, N)) % 3, "c": rng.integers(0, 2, N)}).astype(str)


@pytest.mark.slow       # ~12 s: the quick suite is at its 15-minute guide (911 s in a clean-clone CI)
def test_the_permutations_reach_any_alpha_unless_too_few_are_asked_for(tmp_path):
    """A permutation p-value is at least 1/(B + 1): with 199 draws no α below 0.005 could reject, and the test said
    "independent (not rejected)" of a dependence with χ² p = 2e-49, with no note (a review). By default B is now
    199 or ⌈1/α⌉ − 1, whichever is more, so the sparse table's stratified permutation rejects at α = 0.001 (p =
    1/1,000, every draw less extreme); a B given too small for α is drawn as given and a note says the test
    cannot reject, on the command line too."""
    from click.testing import CliRunner

    from bnilp.citest import DEFAULT_PERMUTATIONS, MAX_AUTO_PERMUTATIONS, least_permutations
    from bnilp.cli import main

    assert [least_permutations(a) for a in (0.5, 0.05, 0.01, 0.005, 0.004, 0.001, 1e-4)] == \
        [1, 19, 99, 199, 249, 999, 9999]
    assert all(1 / (least_permutations(a) + 1) <= a < 1 / least_permutations(a) for a in (0.3, 0.0049, 0.001, 7e-5))
    data = from_dataframe(_step_dependence())
    for alpha in (0.01, 0.001):
        r = ci_test(data, "a", "b", ["c"], score="bic", alpha=alpha)
        assert r.null == "local-permutation" and r.chi2_p_value < 1e-40 and r.dependent and not r.notes
        assert r.permutations == max(DEFAULT_PERMUTATIONS, least_permutations(alpha)) and r.p_value <= alpha
    few = ci_test(data, "a", "b", ["c"], score="bic", alpha=0.05, permutations=9)
    assert few.permutations == 9 and few.p_value == 0.1 and not few.dependent
    assert list(few.notes) == ["with 9 permutations the p-value is at least 1/10 = 0.1, above alpha 0.05: this test "
                               "cannot reject; 19 permutations or more (--permutations) can"]
    # the automatic B stops at MAX_AUTO_PERMUTATIONS: a dependence draws them all (α = 1e-7 drew for hours: a review)
    tiny = ci_test(data, "a", "b", ["c"], score="bic", alpha=1e-7)
    assert tiny.permutations == MAX_AUTO_PERMUTATIONS == 9_999 and tiny.p_value == 1e-4 and not tiny.dependent
    assert list(tiny.notes) == ["with 9999 permutations the p-value is at least 1/10000 = 0.0001, above alpha 1e-07: "
                                "this test cannot reject; 9999999 permutations or more (--permutations) can"]
    frame = tmp_path / "m.csv"
    _step_dependence().to_csv(frame, index=False)
    base = ["citest", str(frame), "a", "b", "--given", "c", "--score", "bic"]
    out = CliRunner().invoke(main, [*base, "--alpha", "0.001"])
    assert out.exit_code == 0 and "decision: dependent, p = 0.001" in out.output and "999 permuted" in out.output
    # a verdict the count decided is a limit (a review: exit 0 over χ² p 1.6e-24): exit 3, a "limited" line, and
    # the JSON's limits; where a permuted data set was as extreme, the data decided and nothing is limited
    assert r.limits == () and few.limits == tiny.limits == ("permutations",)
    assert few.to_dict()["limits"] == ["permutations"]
    null = ci_test(data, "a", "c", ["b"], score="bic", alpha=0.05, permutations=9, null="local-permutation")
    assert null.notes and null.p_value > 0.1 and not null.dependent and null.limits == ()
    out = CliRunner().invoke(main, [*base, "--alpha", "0.05", "--permutations", "9"])
    assert out.exit_code == 3 and "note: with 9 permutations" in out.output and "independent" in out.output
    assert out.output.strip().splitlines()[-1] == (
        "bnilp: limited: 9 permutations, every one drawn, cannot give a p-value below alpha 0.05: not rejected by "
        "their number, not by the data (--permutations 19 or more can reject)")
    out = CliRunner().invoke(main, [*base, "--alpha", "0.05", "--permutations", "9", "--json"])
    assert out.exit_code == 3 and '"permutations"' in out.output.split('"limits"')[1].split("]")[0]


def test_cgd_tests_a_discrete_child_on_its_binned_parent_with_the_observed_df():
    """CGd models a discrete child as the multinomial on its binned parents, so that direction's G² is the
    all-discrete one on the binned data, its df counted over the table as observed — as BIC's test on the binned
    column gives. With the df over every configuration of 6 ternary Z (2,916) x, a step function of y, read as
    p = 1 (a review); the observed tables give df 26 and p ≈ 5e-6. The sparse table (≈1 row a cell) is then
    referred to the stratified permutation under null="auto", as an all-discrete one is."""
    from bnilp.citest import multinomial_table, observed_df

    rng = np.random.default_rng(1)
    N = 300
    z = rng.integers(0, 3, (N, 6))
    y = rng.normal(size=N)
    x = (y > 0).astype(int) + (y > 1)
    frame = pd.DataFrame({"x": x, "y": y, **{f"z{i}": z[:, i] for i in range(6)}})
    zs = [f"z{i}" for i in range(6)]
    data = from_dataframe(frame, discrete=["x", *zs])
    r = ci_test(data, "x", "y", zs, score="cgd", alpha=0.05, null="chi2")
    x_given_y = r.directions[0]
    assert (x_given_y.child, x_given_y.parent) == ("x", "y") and x_given_y.df == 26
    binned = make_score("cgd", data).discrete_view().data
    oracle = ci_test(binned, "x", "y", zs, score="bic", alpha=0.05, null="chi2", both_directions=False)
    assert x_given_y.statistic == pytest.approx(oracle.statistic, rel=1e-12) and oracle.df == 26
    assert x_given_y.p_value == pytest.approx(oracle.p_value, rel=1e-9) and x_given_y.p_value < 1e-5
    assert r.dependent
    cgd = make_score("cgd", data)
    idx = [data.index(v) for v in zs]
    assert multinomial_table(cgd, data.index("x"), data.index("y"), tuple(idx)) is cgd.discrete_view().data
    assert multinomial_table(cgd, data.index("y"), data.index("x"), tuple(idx)) is None   # y continuous: CG's
    assert observed_df(cgd.discrete_view().data, 0, 1, tuple(idx)) == 26
    assert ci_test(data, "x", "y", zs, score="cgd", alpha=0.05).null == "local-permutation"


def test_a_local_permutation_over_several_continuous_z_carries_a_note(tmp_path):
    """The local permutation is calibrated for one continuous Z; with two the result and the CLI say so."""
    from click.testing import CliRunner

    from bnilp.cli import main

    rng = np.random.default_rng(4)
    N = 120
    z1, z2 = rng.normal(size=(2, N))
    frame = pd.DataFrame({"x": (z1 > 0).astype(int), "y": (z2 > 0).astype(int), "z1": z1, "z2": z2})
    data = from_dataframe(frame, discrete=["x", "y"], continuous=["z1", "z2"])
    one = ci_test(data, "x", "y", ["z1"], score="cg", permutations=19, alpha=0.05)   # (the least p is 1/20)
    two = ci_test(data, "x", "y", ["z1", "z2"], score="cg", permutations=19, alpha=0.05)
    assert one.null == two.null == "local-permutation"
    assert one.notes == () and "calibrated for one continuous" in two.notes[0]
    path = tmp_path / "m.csv"
    frame.rename(columns={"y": "y[bold]"}).to_csv(path, index=False)
    res = CliRunner().invoke(main, ["citest", str(path), "x", "y[bold]", "--given", "z1,z2", "--discrete", "x,y[bold]",
                                    "--permutations", "19", "--alpha", "0.05"])
    assert res.exit_code == 0, res.output
    assert "note: the local permutation is calibrated" in res.output and "y[bold]" in res.output
    assert "χ² p-value" in res.output


def test_given_may_be_repeated_and_names_a_column_with_a_comma_whole(tmp_path):
    """--given Z1,Z2 as before; --given repeated; a value that is a column's whole name ("p,q", quoted in the
    CSV) is that column, not split."""
    from click.testing import CliRunner

    from bnilp.cli import main

    rng = np.random.default_rng(8)
    z = rng.integers(0, 2, (2, 300))
    x = np.where(rng.random(300) < 0.8, z[0], 1 - z[0])
    y = np.where(rng.random(300) < 0.8, z[0], 1 - z[0])
    path = tmp_path / "c.csv"
    pd.DataFrame({"x": x, "y": y, "p,q": z[0], "w": z[1]}).astype(str).to_csv(path, index=False)
    runs = [["--given", "p,q"], ["--given", "p,q", "--given", "w"], ["--given", "w"]]
    given = []
    for extra in runs:
        res = CliRunner().invoke(main, ["citest", str(path), "x", "y", "--score", "bic", "--json", *extra])
        assert res.exit_code == 0, res.output
        given.append(json.loads(res.output)["given"])
    assert given == [["p,q"], ["p,q", "w"], ["w"]]
    res = CliRunner().invoke(main, ["citest", str(path), "x", "y", "--score", "bic", "--given", "w,p", "--json"])
    assert res.exit_code == 2 and "'p'" in res.output


def test_given_none_is_no_conditioning_set_and_a_single_index_is_one_variable():
    """``given=None`` means no conditioning set (as ``()``), and a single column index is one variable (as a
    single name is) — not a ``TypeError`` from iterating it; a given of another type is an ``InputError``."""
    data = from_dataframe(_discrete(3))
    names = data.names
    assert ci_test(data, names[0], names[1], given=None, score="bic").p_value == \
        ci_test(data, names[0], names[1], score="bic").p_value
    assert ci_test(data, names[0], names[1], given=2, score="bic").p_value == \
        ci_test(data, names[0], names[1], given=[names[2]], score="bic").p_value
    with pytest.raises(InputError, match="given"):
        ci_test(data, names[0], names[1], given=2.5, score="bic")
    with pytest.raises(InputError, match="alpha"):
        ci_test(data, names[0], names[1], score="bic", alpha="0.05")


def test_an_index_that_another_column_is_named_after_is_refused_not_shifted():
    """A frame made from an array names its columns 0..n−1; with column 0 constant (dropped), index 1 is the
    column named '2' of those kept. ``ci_test(data, 1, 2)`` silently tested '2' and '3' (independent) where the
    user meant columns 1 and 2 (dependent); now such an index is refused, and the names give the test meant."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 300)
    b = a ^ (rng.random(300) < 0.1)
    data = from_dataframe(pd.DataFrame(np.c_[np.zeros(300, int), a, b, rng.integers(0, 2, 300)]))
    assert data.names == ["1", "2", "3"]
    with pytest.raises(InputError, match=r"x=1 is ambiguous: column index 1 is '2'.*named '1'"):
        ci_test(data, 1, 2, score="bic")
    assert ci_test(data, "1", "2", score="bic").dependent
    with pytest.raises(InputError, match="x=0 is ambiguous"):      # '0' is the dropped column
        ci_test(data, 0, 1, score="bic")
    whole = from_dataframe(pd.DataFrame(np.c_[a, b, rng.integers(0, 2, 300)]))     # nothing dropped: no shift
    assert ci_test(whole, 0, 1, score="bic").p_value == ci_test(whole, "0", "1", score="bic").p_value


def test_the_command_lines_help_does_not_import_scipy_stats() -> None:
    """``bnilp --help`` imports every command's module for its defaults, ``citest``'s too; ``scipy.stats`` (over a
    second of the 4-s help here) is imported only where a p-value is computed."""
    import subprocess
    import sys

    code = ("import sys; from click.testing import CliRunner; from bnilp.cli import main; "
            "out = CliRunner().invoke(main, ['--help']); assert out.exit_code == 0, out.output; "
            "out = CliRunner().invoke(main, ['citest', '--help']); assert out.exit_code == 0, out.output; "
            "print('scipy.stats' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.slow        # ~17 s each: Monte Carlo
@pytest.mark.parametrize("tested", ["continuous", "discrete"])
def test_the_null_mean_takes_each_cell_s_own_rank_where_a_given_column_adds_no_slope(tested):
    """Bartlett's E[G] took the nominal k continuous Z in every cell: a Z constant within each cell of the discrete
    Z (a cell-level covariate) or collinear with another Z leaves G and df as without it — the fits have the same
    slopes — but E[G]/df rose from 1.93 to 3.07, and the test, p 0.86 → 0.998, had no power (a review: size 0.000
    at α = 0.05 over 200 null data sets). E[G] now counts each fit's own slopes, so it is the same as without that
    Z; for a cell of n rows and no slope, n·(ψ((n − 1)/2) − ψ((n − 2)/2)) for a continuous X (Bartlett 1937,
    E[ln χ²_ν] = ψ(ν/2) + ln 2), and the Monte Carlo mean of G over null data sets."""
    from scipy.special import digamma

    rng = np.random.default_rng(7)
    d = np.repeat(np.arange(40), 5)
    c = rng.normal(size=40)[d]                       # one value per cell of d
    z = rng.normal(size=200)
    x = rng.normal(size=200) + c if tested == "continuous" else rng.integers(0, 2, 200)
    frame = pd.DataFrame(dict(d=d, c=c, z=z, z2=2 * z + 1, x=x, y=rng.normal(size=200) + c))
    data = from_dataframe(frame, discrete=["d"] + (["x"] if tested == "discrete" else []))
    pairs = ((["d"], ["d", "c"]), (["z"], ["z", "z2"]))
    for plain, padded in pairs:
        without, with_it = (ci_test(data, "y", "x", given, "cg", null="chi2") for given in (plain, padded))
        assert with_it.statistic == pytest.approx(without.statistic, rel=1e-9) and with_it.df == without.df
        assert with_it.directions[0].bartlett == pytest.approx(without.directions[0].bartlett, rel=1e-9)
        assert with_it.p_value == pytest.approx(without.p_value, rel=1e-9)
    score = make_score("cg", data)
    names = list(data.names)
    if tested == "continuous":      # closed form: 40 cells of 5 rows, no slope in the null model, one in the larger
        mean, df = score.lr_null_mean(names.index("y"), names.index("x"), (names.index("d"), names.index("c")))
        assert df == 40 and mean == pytest.approx(40 * 5 * (digamma(2.0) - digamma(1.5)), rel=1e-12)
    draws = []                      # Monte Carlo: y redrawn under the null, the design (d, c, x) kept
    for s in range(1500):
        y = c + np.random.default_rng(100 + s).normal(size=200)
        sample = from_dataframe(frame.assign(y=y), discrete=["d"] + (["x"] if tested == "discrete" else []))
        draws.append(2 * make_score("cg", sample).lr_difference(names.index("y"), names.index("x"),
                                                                 (names.index("d"), names.index("c")))[0])
    mean, _ = score.lr_null_mean(names.index("y"), names.index("x"), (names.index("d"), names.index("c")))
    draws = np.array(draws)
    assert abs(mean - draws.mean()) < 4 * draws.std() / np.sqrt(draws.size)
