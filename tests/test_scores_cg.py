"""CG and CGd against plain-numpy oracles (Andrews, Ramsey & Cooper §3, §5.2)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from bnilp.data import load_data
from bnilp.errors import InputError
from bnilp.scores.cg import (
    ConditionalGaussian,
    ConditionalGaussianDiscretized,
    PartitionCache,
    cell_means,
    flat_columns,
)
from bnilp.scores.discrete import BIC
from tests.mixed_helpers import assert_true_parents_of_g_win, make_dataset, random_mixed

CLG = "/work/shared/data/mixed/clgaussian.test"


def regression_loglik(y: np.ndarray, x: np.ndarray) -> float:
    """Maximised log-likelihood of y on [1, x] with MLE variance."""
    design = np.column_stack([np.ones(len(y)), x]) if x.size else np.ones((len(y), 1))
    beta = np.linalg.lstsq(design, y, rcond=None)[0]
    sigma2 = float(np.mean((y - design @ beta) ** 2))
    return -len(y) / 2 * (math.log(2 * math.pi * sigma2) + 1)


def test_all_discrete_equals_bic() -> None:
    rng = np.random.default_rng(1)
    data = random_mixed(rng, "dddd", 400, arity=3)
    cg, bic = ConditionalGaussian(data), BIC(data)
    for child in range(4):
        others = [j for j in range(4) if j != child]
        for size in range(4):
            for pa in itertools.combinations(others, size):
                assert cg.raw(child, pa) == pytest.approx(bic.raw(child, pa), abs=1e-9, rel=1e-12)
                ll, df = cg.loglik_df(child, pa)
                ll_b, df_b = bic.loglik_df(child, pa)
                assert ll == pytest.approx(ll_b, abs=1e-9) and df == df_b


def test_continuous_child_is_linear_regression() -> None:
    rng = np.random.default_rng(2)
    data = random_mixed(rng, "cccc", 300)
    score = ConditionalGaussian(data)
    x = data.values
    for pa in [(), (1,), (1, 2), (1, 2, 3)]:
        ll, df = score.loglik_df(0, pa)
        expected = regression_loglik(x[:, 0], x[:, list(pa)])
        assert ll == pytest.approx(expected, abs=1e-8)
        # scores.md: df(Y|Pa) = df({Y} ∪ Pa) − df(Pa) = k + 2 (k slopes, intercept, variance)
        assert df == len(pa) + 2
        assert score.raw(0, pa) == pytest.approx(expected - 0.5 * (len(pa) + 2) * math.log(300), abs=1e-8)


def test_continuous_child_with_discrete_parent_is_cellwise_regression() -> None:
    rng = np.random.default_rng(3)
    data = random_mixed(rng, "dcc", 500, arity=4)
    score = ConditionalGaussian(data)
    cells = data.codes[:, 0]
    ll, df = score.loglik_df(2, (0, 1))
    y, x = data.values[:, 2], data.values[:, 1]
    expected = sum(regression_loglik(y[cells == c], x[cells == c]) for c in range(4))
    assert ll == pytest.approx(expected, abs=1e-8)
    assert df == 4 * (1 + 2)


def test_discrete_child_formula() -> None:
    """ℓ(D | X) = Σ_d n_d ln(n_d/N) − n_d/2 ln σ̂²_d − (−N/2 ln σ̂²) written out for one continuous parent."""
    rng = np.random.default_rng(4)
    data = random_mixed(rng, "cd", 400, arity=3)
    score = ConditionalGaussian(data)
    x, d = data.values[:, 0], data.codes[:, 1]
    n = len(x)
    expected = n / 2 * math.log(x.var())
    for c in range(3):
        nc = int((d == c).sum())
        expected += nc * math.log(nc / n) - nc / 2 * math.log(x[d == c].var())
    ll, df = score.loglik_df(1, (0,))
    assert ll == pytest.approx(expected, abs=1e-8)
    assert df == (3 * (1 + 1 + 1) - 1) - (1 + 1 + 1 - 1)


@pytest.mark.parametrize("kinds", ["ddd", "ddc", "dcd", "dcc", "cdc", "ccc"])
def test_score_equivalence_complete_dags(kinds: str) -> None:
    rng = np.random.default_rng(len(kinds) + sum(map(ord, kinds)))
    data = random_mixed(rng, kinds, 250, arity=3)
    score = ConditionalGaussian(data)
    totals = []
    for order in itertools.permutations(range(3)):
        totals.append(sum(score.raw(v, tuple(sorted(order[:i]))) for i, v in enumerate(order)))
    assert max(totals) - min(totals) < 1e-8 * max(1.0, abs(totals[0]))
    # v-structure-free equivalent pair: 0→1→2 vs 2→1→0
    chain = score.raw(0, ()) + score.raw(1, (0,)) + score.raw(2, (1,))
    reverse = score.raw(2, ()) + score.raw(1, (2,)) + score.raw(0, (1,))
    assert chain == pytest.approx(reverse, abs=1e-8)


def test_nested_lrt_nonnegative_for_continuous_child() -> None:
    rng = np.random.default_rng(5)
    data = random_mixed(rng, "dcdcc", 300, arity=3)
    score = ConditionalGaussian(data)
    for child in (1, 3, 4):
        others = [j for j in range(5) if j != child]
        for size in range(4):
            for z in itertools.combinations(others, size):
                for y1 in others:
                    if y1 in z:
                        continue
                    ll1, df1 = score.loglik_df(child, tuple(sorted(z + (y1,))))
                    ll0, df0 = score.loglik_df(child, z)
                    assert 2 * (ll1 - ll0) >= -1e-8
                    assert df1 > df0


def cgd_bins(x: np.ndarray, b: int) -> list[int]:
    """Tetrad's equal-frequency rule written independently: count cuts ≤ value, drop empty bins."""
    xs = sorted(x.tolist())
    cuts = [xs[(len(xs) // b) * (i + 1)] for i in range(b - 1)]
    raw = [sum(1 for c in cuts if v >= c) for v in x.tolist()]
    used = sorted(set(raw))
    return [used.index(r) for r in raw]


@pytest.mark.parametrize("bins", [2, 3, 5])
def test_cgd_discrete_child_is_bic_on_binned_copies(bins: int) -> None:
    rng = np.random.default_rng(6)
    data = random_mixed(rng, "cdcd", 300, arity=3)
    score = ConditionalGaussianDiscretized(data, bins=bins)
    cols = [cgd_bins(data.values[:, 0], bins), data.codes[:, 1].tolist(),
            cgd_bins(data.values[:, 2], bins), data.codes[:, 3].tolist()]
    arity = [len(set(c)) for c in cols]
    n = 300
    for child in (1, 3):
        others = [j for j in range(4) if j != child]
        for size in range(4):
            for pa in itertools.combinations(others, size):
                joint = Counter(tuple(cols[p][t] for p in pa) + (cols[child][t],) for t in range(n))
                marg = Counter(tuple(cols[p][t] for p in pa) for t in range(n))
                ll = sum(c * math.log(c / marg[key[:-1]]) for key, c in joint.items())
                q = math.prod(arity[p] for p in pa)
                expected = ll - 0.5 * q * (arity[child] - 1) * math.log(n)
                assert score.raw(child, pa) == pytest.approx(expected, abs=1e-9)
    cg = ConditionalGaussian(data)
    assert score.raw(0, (1, 2)) == cg.raw(0, (1, 2))


@pytest.mark.parametrize("prior", ["none", "binomial"])
def test_cgd_discrete_children_walk_on_its_bic_view_and_keep_what_its_own_walk_keeps(prior: str) -> None:
    """CGd scores a discrete child by its BIC on the binned data (``discrete_view``: the same floats), so that
    child's walk counts compiled and BIC's superset rules prune it (R2–R4; none with a structure prior): the
    kept sets and their scores are those of walking every child on CGd itself with R1 alone, every kept score is
    ``local``'s, the rules fire, and the sidecar says what applied and how each part was counted."""
    from bnilp.parentsets import score_parent_sets
    from bnilp.scores.base import StructurePrior

    data = random_mixed(np.random.default_rng(11), "dcdccdd", 400)
    pri = StructurePrior(prior, n_variables=data.n) if prior != "none" else StructurePrior()
    score = ConditionalGaussianDiscretized(data, prior=pri)

    class OwnWalk(ConditionalGaussianDiscretized):
        def walk_score(self, child):
            return self

    for palim in (2, 6):
        got = score_parent_sets(score, epsilon=math.log(20), palim=palim)
        want = score_parent_sets(OwnWalk(data, prior=pri), epsilon=math.log(20), palim=palim)
        assert got.families == want.families, palim
        for v, fams in got.families.items():
            child = data.names.index(v)
            for ps, value in fams.items():
                assert value == score.local(child, tuple(sorted(data.names.index(p) for p in ps)))
        meta = got.meta
        rules = meta["rules_applied"]
        assert all((set(rules[data.names[j]]) >= {"R2", "R3", "R4"}) is (data.kinds[j] == "discrete"
                                                                          and prior == "none") for j in range(data.n))
        assert meta["counts"]["discrete_children"]["mode"] in ("families", "subsets")
        assert "discrete children walk on BIC" in meta["pruning"]
        if prior == "none" and palim == 6:
            assert meta["pruned"]["R2"] > 0 and meta["pruned"]["R3"] > 0
    view = score.discrete_view()
    assert view is score.discrete_view() and score.walk_score(0) is view and score.walk_score(1) is score
    for child in (0, 2, 5, 6):
        for k in range(4):
            for ps in itertools.combinations([j for j in range(data.n) if j != child], k):
                assert score.local(child, ps) == view.local(child, ps)
                assert score.loglik_df(child, ps) == view.loglik_df(child, ps)


def test_cgd_with_ties_drops_empty_bins() -> None:
    x = np.array([0.0] * 8 + [1.0, 2.0])
    d = np.array([0, 1] * 5)
    score = ConditionalGaussianDiscretized(make_dataset([x, d], "cd"), bins=3)
    assert score.bin_arity[0] == len(set(cgd_bins(x, 3)))
    assert math.isfinite(score.raw(1, (0,)))


def test_cgd_rejects_bad_bins() -> None:
    data = random_mixed(np.random.default_rng(0), "cd", 20)
    with pytest.raises(InputError):
        ConditionalGaussianDiscretized(data, bins=1)
    # more bins than rows: every cut at the least value, one bin — refused, not scored as if binned (a review)
    assert len(set(cgd_bins(data.values[:, 0], 21))) == 1
    with pytest.raises(InputError, match=r"^bins \(--bins\) must be at most the rows, N = 20, got 21"):
        ConditionalGaussianDiscretized(data, bins=21)
    assert ConditionalGaussianDiscretized(data, bins=20).bin_arity[0] == 20


def test_small_cell_uses_pooled_covariance() -> None:
    """A cell with n_p ≤ k: its ℓ_p is the Gaussian likelihood under the pooled within-cell covariance."""
    rng = np.random.default_rng(7)
    n = 60
    d = np.array([0] * 58 + [1, 1])
    x = rng.normal(size=(n, 2))
    x[:, 1] += x[:, 0]
    score = ConditionalGaussian(make_dataset([d, x[:, 0], x[:, 1]], "dcc"))
    ll, _ = score.set_loglik_df(frozenset({0, 1, 2}))
    cells = [d == 0, d == 1]
    resid = np.vstack([x[c] - x[c].mean(axis=0) for c in cells])
    pooled = resid.T @ resid / n
    expected = 0.0
    for c in cells:
        nc = int(c.sum())
        cov = np.cov(x[c].T, bias=True)
        expected += nc * math.log(nc / n)
        if nc > 2:
            expected -= nc / 2 * (math.log(np.linalg.det(cov)) + 2 * (math.log(2 * math.pi) + 1))
        else:
            expected -= nc / 2 * (math.log(np.linalg.det(pooled)) + np.trace(np.linalg.solve(pooled, cov))
                                  + 2 * math.log(2 * math.pi))
    assert ll == pytest.approx(expected, abs=1e-8)


def test_cell_scatter_matrices_are_each_cells_centred_cross_products() -> None:
    """The cells' scatter matrices (summed by cell over the rows, one matrix product for a single cell) are
    Σ_{rows of p} (x − x̄_p)(x − x̄_p)ᵀ computed cell by cell — one-row cells (zero), cells far from the column's
    mean and a single cell alike."""
    rng = np.random.default_rng(12)
    n = 500
    d = np.concatenate([rng.integers(0, 6, n - 3), [6, 7, 8]])        # three one-row cells
    e = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 3)) + 1e4 * (d == 2)[:, None]
    score = ConditionalGaussian(make_dataset([d, e, x[:, 0], x[:, 1], x[:, 2]], "ddccc"))
    for disc in ((0,), (0, 1), ()):
        part = score.partition(disc)
        got = score._scatter(part, [2, 3, 4])
        for cell in range(part.counts.size):
            rows = score.zt[2:5, part.inverse == cell]
            centred = rows - rows.mean(axis=1, keepdims=True)
            assert got[cell] == pytest.approx(centred @ centred.T, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("max_bytes", [1 << 30, 1])
def test_sets_that_share_discrete_variables_read_the_same_cell_sums_bit_for_bit(max_bytes: int) -> None:
    """The cell sums of each pair of continuous columns are kept on their partition and shared by every set with
    the same discrete variables: ℓ of every set (any order of asking, the partitions let go after every set when
    the byte budget is tiny) equals, bit for bit, ℓ computed by a score that has summed nothing before it."""
    data = random_mixed(np.random.default_rng(7), "dcdccdc", 400)
    everything = [frozenset(s) for k in range(data.n + 1) for s in itertools.combinations(range(data.n), k)]
    fresh = {s: ConditionalGaussian(data)._set_value(s) for s in everything}
    shared = ConditionalGaussian(data)
    shared.partition.max_bytes = max_bytes
    for s in reversed(everything):
        assert shared.set_loglik_df(s) == fresh[s], sorted(s)
    parts = shared.partition._parts
    assert any(p.products for p in parts.values()) is (max_bytes > 1)


def _cache_of(width: int, rows: int = 60, **kw) -> PartitionCache:
    rng = np.random.default_rng(9)
    return PartitionCache([rng.integers(0, 3, rows) for _ in range(width)], [3] * width, rows, **kw)


def test_the_partition_cache_keeps_the_first_sets_a_walk_asks_for() -> None:
    """A walk asks for the same discrete sets child after child: with more sets than the cache holds, the first
    ones asked for are served from it on every later pass (clearing everything when full served none of them), a
    set past the cache is built once for a run of calls, and the bytes counted are those of what is held."""
    cache = _cache_of(5, size=3)
    sets = [(0,), (1,), (0, 1), (2,), (3, 4)]
    first = [cache(d) for d in sets]
    assert cache(sets[4]) is first[4]                      # a run of calls past the cache: one partition
    again = [cache(d) for d in sets]
    assert [a is f for a, f in zip(again, first, strict=True)] == [True, True, True, False, False]
    held = list(cache._parts.values()) + [cache._latest]
    assert cache.bytes == sum(p.held for p in held) == sum(p.nbytes for p in held)
    for d, p in zip(sets, again, strict=True):                          # the same partition however it was served
        assert np.array_equal(p.counts, first[sets.index(d)].counts)


def test_a_partition_the_cache_let_go_keeps_nothing_and_a_growing_one_stays() -> None:
    """Sums kept on a partition count against the budget while the cache holds it and go with it; a partition
    no longer held keeps nothing (its bytes would never be let go); past the budget :meth:`PartitionCache.grew`
    lets every other partition go and keeps the growing one as the latest."""
    cache = _cache_of(4, size=1)
    kept, past, later = cache((0,)), cache((1,)), cache((2,))      # (1,) held as the latest, then replaced
    assert cache.keep(kept, ("x",), "value", 100) == "value" and kept.extra == {("x",): "value"}
    cache.keep(past, ("x",), "value", 100)
    assert past.extra == {} and cache.bytes == kept.held + later.held == kept.nbytes + 100 + later.nbytes
    cache.max_bytes = cache.bytes + 10
    cache.grew(later, 50)
    assert cache._parts == {} and cache._latest is later and cache.bytes == later.held == later.nbytes + 50
    assert cache((2,)) is later and cache((0,)) is not kept


def test_the_set_table_is_read_before_the_cache_and_travels_without_the_caches() -> None:
    """Sets put in the set table (a parallel walk's: :func:`bnilp.lattice.build_set_table`) are what
    ``set_loglik_df`` returns; a pickled score (what a worker process reads) carries the table but not the
    caches of sets and partitions."""
    import pickle

    data = random_mixed(np.random.default_rng(8), "dcdc", 200)
    score = ConditionalGaussianDiscretized(data)
    assert score.holds_set(frozenset({0, 1})) is False
    score.set_loglik_df(frozenset({0, 1}))
    score.add_set_table({frozenset({2, 3}): (-1.5, 4.0)})
    assert score.holds_set(frozenset({0, 1})) and score.set_loglik_df(frozenset({2, 3})) == (-1.5, 4.0)
    score.loglik_df(0, (1, 3))
    copy = pickle.loads(pickle.dumps(score))
    assert copy._table == {frozenset({2, 3}): (-1.5, 4.0)}
    assert not copy._sets and not copy.partition._parts and copy._view is None
    assert [copy.uses_set_function(j) for j in range(4)] == [False, True, False, True]


@pytest.mark.parametrize("shift,rel", [(1e2, 1e-10), (1e5, 1e-10), (1e6, 1e-10), (1e9, 1e-8), (1e11, 1e-6),
                                       (1e12, 1e-5), (1e13, 1e-5), (1e14, 5e-5), (1e15, 1e-3)])
def test_cells_far_apart_keep_their_own_covariance(shift: float, rel: float) -> None:
    """A discrete parent that moves the mean of x by up to 10¹⁵ of x's within-cell spreads makes each cell's variance
    tiny on x's overall (standardised) scale, but the cells are large and not singular: ℓ(x | d) is the
    per-cell maximum-likelihood sum Σ_p n_p ln(n_p/N) − n_p/2·(ln σ̂²_p + ln 2π + 1) − ℓ(d), whatever the shift —
    to the digits the shifted doubles keep (a spread 10⁻¹⁰ of the SD counted as constant before: 4,288 nats off at
    10¹¹, a review; the cell means' naive sums left 3·10⁻⁴ of it at 10¹⁴ and half at 10¹⁵: now
    :func:`~bnilp.scores.cg.cell_means`, 1.2·10⁻⁵ and 4·10⁻⁴, the rest the standardised values' rounding)."""
    rng = np.random.default_rng(3)
    d = rng.integers(0, 2, 2000)
    x = shift * d + rng.normal(size=2000) * np.where(d == 1, 10.0, 1.0)
    score = ConditionalGaussian(make_dataset([d, x], "dc"))
    ll, _ = score.loglik_df(1, (0,))
    want = sum(-(d == c).sum() / 2 * (math.log(x[d == c].var()) + math.log(2 * math.pi) + 1) for c in (0, 1))
    assert ll == pytest.approx(want, rel=rel)


@pytest.mark.parametrize("offset", [0.0, 1e8, -1e14, 3e15])
def test_cell_means_are_the_nearest_floats_to_the_exact_means(offset: float) -> None:
    """Each cell's mean from :func:`~bnilp.scores.cg.cell_means` is the exact mean of its values (``math.fsum``,
    correctly rounded sums, over n) to within one ulp, for cells of 1 to 20,000 rows sitting far from 0 with a
    spread of an ulp or a few thousand: the naive per-cell sum is off by up to n ulps (checked: it misses here)."""
    rng = np.random.default_rng(17)
    sizes = np.array([1, 2, 7, 1_000, 20_000, 3_333])
    cells = np.repeat(np.arange(sizes.size), sizes)
    base = offset + rng.normal(size=sizes.size) * max(1.0, abs(offset)) * 1e-3
    x = base[cells] + rng.normal(size=cells.size) * np.spacing(base[cells]) * rng.choice([1.0, 5e3], cells.size)
    got = cell_means(x, cells, sizes)
    exact = np.array([math.fsum(x[cells == c]) / sizes[c] for c in range(sizes.size)])
    assert np.all(np.abs(got - exact) <= np.spacing(np.abs(exact)))
    naive = np.bincount(cells, weights=x) / sizes
    assert offset == 0.0 or np.any(np.abs(naive - exact) > np.spacing(np.abs(exact)))
    assert cell_means(np.ones(3), np.array([0, 0, 2]), np.array([2, 0, 1])).tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("outlier,rel", [(1e3, 1e-10), (1e11, 1e-7), (1e13, 1e-5), (1e16, 1e-2)])
def test_one_extreme_outlier_leaves_the_other_cells_their_own_covariance(outlier: float, rel: float) -> None:
    """One value of y far out (alone in its cell of d) leaves y's other cells a standardised spread of 10⁻¹¹ and
    less: each keeps its own variance, so ℓ(y | d) is the per-cell sum, the outlier's single-row cell (n_p ≤ k, so
    small: the pooled variance, floored at 1/N) aside — to the digits the outlier leaves the others (at 10¹⁶ a raw
    spread of 1 is held to 0.03: two digits; a review found such cells pooled, 1,500 nats off)."""
    rng = np.random.default_rng(5)
    d = np.repeat([0, 1, 2], [30, 30, 1])
    y = rng.normal(size=61) + 3.0 * d
    y[-1] = outlier
    score = ConditionalGaussian(make_dataset([d, y], "dc"))
    ll, _ = score.loglik_df(1, (0,))
    regular = sum(-30 / 2 * (math.log(y[d == c].var()) + math.log(2 * math.pi) + 1) for c in (0, 1))
    zt, cells = score.zt[1], [d == c for c in (0, 1)]
    low, high = np.array([[zt[c].min()] for c in cells]), np.array([[zt[c].max()] for c in cells])
    assert not flat_columns(low, high, score.z_offset[[1]]).any()
    var = np.array([zt[c].var() for c in cells])
    pooled_var = max(float((30 * var).sum() / 61), 1 / 61)
    alone = -0.5 * (math.log(pooled_var) + math.log(2 * math.pi)) - score.log_sd[1]
    assert ll == pytest.approx(regular + alone, rel=rel)


@pytest.mark.parametrize("rows", [30, 1_000, 100_000])
def test_duplicate_values_in_a_cell_count_as_constant_however_many_rows(rows: int) -> None:
    """A cell whose column holds one value (duplicates, or values equal but for rounding: 0.3 and 0.1 + 0.2) is
    constant there and its cell pooled, whatever its size: its variance is no test, as the cell mean's rounding
    (up to n_p ulps) squares into a spread that grows with n_p (0.1 over 1,000 rows: 2·10⁻³⁰)."""
    rng = np.random.default_rng(11)
    d = np.repeat([0, 1], [rows, 200])
    for value in (0.1, 7.25, -1.2345678901, 1e12):
        y = np.concatenate((np.full(rows, value), rng.normal(size=200)))
        y[: rows // 2] = value + value * 1e-16 if value == 0.1 else value      # 0.1 and its rounding neighbour
        score = ConditionalGaussian(make_dataset([d, y], "dc"))
        low, high = score._ranges(score.partition((0,)), [1])
        assert flat_columns(low, high, score.z_offset[[1]]).tolist() == [[True], [False]], (value, rows)


def test_degenerate_inputs_stay_finite() -> None:
    rng = np.random.default_rng(8)
    n = 40
    many = rng.integers(0, 15, size=n)  # tiny partitions
    x = rng.normal(size=n)
    collinear = 2 * x + 1
    dup = np.repeat(rng.normal(size=4), 10)  # duplicate rows
    y = x + rng.normal(size=n)
    flag = (y > 0).astype(int)
    data = make_dataset([many, x, collinear, dup, y, flag], "dcccc" + "d")
    for cls in (ConditionalGaussian, ConditionalGaussianDiscretized):
        score = cls(data)
        for child in range(6):
            others = [j for j in range(6) if j != child]
            for size in range(4):
                for pa in itertools.combinations(others, size):
                    assert math.isfinite(score.raw(child, pa)), (cls.name, child, pa)


def test_clgaussian_true_parents_of_g() -> None:
    assert_true_parents_of_g_win(ConditionalGaussian(load_data(CLG)))


def test_settings_complete() -> None:
    data = random_mixed(np.random.default_rng(0), "cd", 20)
    s = ConditionalGaussianDiscretized(data, bins=4, penalty_discount=2.0).settings()
    assert s["score"] == "cgd" and s["bins"] == 4 and s["penalty_discount"] == 2.0
    assert "small_partitions" in s and s["prior"] == "none"


def test_registry_and_json_settings() -> None:
    import json

    from bnilp.scores import StructurePrior, make_score

    data = random_mixed(np.random.default_rng(9), "dcc", 50)
    prior = StructurePrior("binomial", data.n, expected_parents=1.0)
    for name, kwargs in (("cg", {}), ("cgd", {"bins": 4}), ("mvp", {"degree": "log"}), ("mvp", {"degree": 2}),
                         ("mml", {})):
        score = make_score(name, data, prior=prior, **kwargs)
        settings = json.loads(json.dumps(score.settings()))
        assert settings["score"] == name and settings["prior"] == "binomial"
        assert score.local(2, (0, 1)) == pytest.approx(score.raw(2, (0, 1)) + prior.log_prior(2))


def test_penalty_discount_scales_penalty() -> None:
    data = random_mixed(np.random.default_rng(10), "dcc", 80)
    s1, s2 = ConditionalGaussian(data), ConditionalGaussian(data, penalty_discount=2.0)
    ll, df = s1.loglik_df(2, (0, 1))
    assert s2.raw(2, (0, 1)) == pytest.approx(ll - df * math.log(80), abs=1e-9)


def test_clgaussian_cgd_discrete_child() -> None:
    data = load_data(CLG)
    ix = lambda *names: tuple(sorted(data.index(v) for v in names))  # noqa: E731
    for score in (ConditionalGaussian(data), ConditionalGaussianDiscretized(data)):
        f = data.index("F")
        assert score.local(f, ix("B", "C")) > score.local(f, ())
        assert score.local(f, ix("B", "C")) > score.local(f, ix("A", "H"))  # independent of F
        a = data.index("A")
        assert score.local(data.index("D"), ix("A", "H")) > score.local(data.index("D"), ix("H"))
        assert score.local(a, ()) > score.local(a, ix("B", "C"))


def test_cgd_discrete_child_score_view_is_bic() -> None:
    data = random_mixed(np.random.default_rng(16), "cdcd", 200, arity=3)
    cgd = ConditionalGaussianDiscretized(data, bins=3, penalty_discount=1.5)
    view = cgd.discrete_child_score()
    for child in (1, 3):
        others = [j for j in range(4) if j != child]
        for size in range(4):
            for pa in itertools.combinations(others, size):
                assert view.local(child, pa) == pytest.approx(cgd.local(child, pa), abs=1e-9)


@pytest.mark.parametrize("n", [6, 10, 30, 100, 1000])
def test_a_row_identifier_is_never_a_parent_of_a_continuous_child(n: int) -> None:
    """A discrete column with a code per row (a patient or row id) puts every row in a cell of its own: every cell
    is small, Σ_W has no spread, and its floor decides the score. At 1/N (:func:`pooled_floor`) the identifier
    gains N·(ln N + 1)/2 over no parent and pays BIC's (N − 1)·ln N, so it does not win from N = 6 on, with or
    without a continuous co-parent (at the old floor 1e−9 it did: y | id 2,544 against −1,417 at N = 1,000)."""
    rng = np.random.default_rng(n)
    y, z = rng.normal(size=n), rng.normal(size=n)
    score = ConditionalGaussian(make_dataset([np.arange(n), y, z], "dcc"))
    assert score.raw(1, (0,)) < score.raw(1, ())
    assert score.raw(1, (0, 2)) < score.raw(1, (2,))
    assert score.raw(0, (1,)) + score.raw(1, ()) < score.raw(0, ()) + score.raw(1, ())   # the arrow either way
