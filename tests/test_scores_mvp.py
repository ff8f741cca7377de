"""MVP against a plain-numpy evaluation of Andrews, Ramsey & Cooper §4 (eqs. 19–21)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bnilp.data import load_data
from bnilp.errors import InputError
from bnilp.scores.cg import PartitionCache
from bnilp.scores.mvp import CANCEL_TOL, VARIANCE_FLOOR, MixedVariablePolynomial, _Gram, polynomial_basis
from tests.mixed_helpers import (
    assert_every_family_finite,
    assert_true_parents_of_g_win,
    degenerate_dataset,
    make_dataset,
    random_mixed,
)
from tests.oracles import exact_least_squares, exact_variance, power_columns

CLG = "/work/shared/data/mixed/clgaussian.test"


def oracle(data, child: int, parents: tuple[int, ...], degree) -> tuple[float, float]:
    """Row loops and lstsq per discrete-parent cell, written from the paper."""
    disc = [p for p in parents if data.kinds[p] == "discrete"]
    cont = [p for p in parents if data.kinds[p] == "continuous"]
    keys = [tuple(int(data.codes[t, p]) for p in disc) for t in range(data.N)]
    ll, df = 0.0, 0.0
    for key in sorted(set(keys)):
        rows = np.array([t for t in range(data.N) if keys[t] == key])
        n_p = len(rows)
        discrete_child = data.kinds[child] == "discrete"
        d = data.arities[child]
        if n_p <= 1:
            df += d - 1 if discrete_child else 1
            continue
        g = int(math.floor(math.log(n_p))) if degree == "log" else degree
        cols = [np.ones(n_p)]
        for p in cont:
            x = data.values[rows, p]
            if g >= 1 and x.std() > 1e-12 * data.values[:, p].std():
                z = (x - x.mean()) / x.std()
                cols += [z ** e for e in range(1, g + 1)]
        if len(cols) >= n_p:
            cols = cols[:1]
        X = np.column_stack(cols)
        if discrete_child:
            y = data.codes[rows, child]
            Y = np.eye(d)[y]
            fitted = X @ np.linalg.lstsq(X, Y, rcond=None)[0]
            for j in range(n_p):
                m = fitted[j].min()
                alpha = 1.0
                if m < 1 / n_p:
                    alpha = (1 / n_p - 1 / d) / (m - 1 / d) if m < 1 / d else 0.0
                    alpha = min(max(alpha, 0.0), 1.0)
                ll += math.log(alpha * fitted[j, y[j]] + (1 - alpha) / d)
            df += X.shape[1] * (d - 1)
        else:
            y = data.values[rows, child] / data.values[:, child].std()      # in units of its SD
            resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
            s2 = float(np.mean(resid ** 2))
            ll += -n_p / 2 * (math.log(2 * math.pi) + math.log(s2) + 1)
            df += X.shape[1]
    return ll, df


@pytest.mark.parametrize("degree", ["log", 1, 2, 200])
def test_mvp_matches_oracle(degree) -> None:
    rng = np.random.default_rng(11)
    data = random_mixed(rng, "dcdcc", 150, arity=3)
    score = MixedVariablePolynomial(data, degree=degree)
    for child in range(5):
        others = [j for j in range(5) if j != child]
        for size in range(3):
            for pa in itertools.combinations(others, size):
                ll, df = score.loglik_df(child, pa)
                ll_o, df_o = oracle(data, child, pa, degree)
                assert ll == pytest.approx(ll_o, abs=1e-7, rel=1e-10), (child, pa)
                assert df == df_o
                assert score.raw(child, pa) == pytest.approx(ll_o - 0.5 * df_o * math.log(150), abs=1e-7)


def test_shrink_step_is_exercised() -> None:
    """A discrete child whose linear-probability fit leaves [1/n_p, 1] on some rows (eq. 21)."""
    rng = np.random.default_rng(12)
    x = rng.normal(size=80)
    y = (x + 0.2 * rng.normal(size=80) > 0.5).astype(int) + (x > 1.5).astype(int)
    data = make_dataset([x, y], "cd")
    score = MixedVariablePolynomial(data, degree=1)
    design = np.column_stack([np.ones(80), (x - x.mean()) / x.std()])
    fitted = design @ np.linalg.lstsq(design, np.eye(3)[y], rcond=None)[0]
    assert (fitted.min(axis=1) < 1 / 80).any()
    ll, df = score.loglik_df(1, (0,))
    assert ll == pytest.approx(oracle(data, 1, (0,), 1)[0], abs=1e-9)
    assert df == 2 * 2


def test_degree_log_is_per_partition() -> None:
    rng = np.random.default_rng(13)
    d = np.array([0] * 200 + [1] * 8)
    x = rng.normal(size=208)
    y = x ** 2 + rng.normal(size=208)
    data = make_dataset([d, x, y], "dcc")
    _, df = MixedVariablePolynomial(data).loglik_df(2, (0, 1))
    assert df == (math.floor(math.log(200)) + 1) + (math.floor(math.log(8)) + 1)


def test_mvp_not_score_equivalent() -> None:
    rng = np.random.default_rng(14)
    x = rng.normal(size=300)
    y = x ** 2 + 0.3 * rng.normal(size=300)
    data = make_dataset([x, y], "cc")
    score = MixedVariablePolynomial(data)
    forward = score.raw(0, ()) + score.raw(1, (0,))
    backward = score.raw(1, ()) + score.raw(0, (1,))
    assert abs(forward - backward) > 1.0


def test_a_degree_past_every_cell_is_the_intercept_alone_without_building_its_powers() -> None:
    """A fixed degree g with 1 + c·g ≥ n_p falls back to the intercept in every cell (200 does on 150 rows, as the
    oracle shows above); 10⁹ gives the same scores at once (its powers were built first: gigabytes, a
    MemoryError traceback from `bnilp citest --mvp-degree`)."""
    data = random_mixed(np.random.default_rng(11), "dcdcc", 150, arity=3)
    huge, past = MixedVariablePolynomial(data, degree=10**9), MixedVariablePolynomial(data, degree=200)
    for child in range(5):
        for pa in itertools.combinations([j for j in range(5) if j != child], 2):
            assert huge.loglik_df(child, pa) == past.loglik_df(child, pa)


def test_degenerate_inputs_stay_finite() -> None:
    data = degenerate_dataset(15)
    for degree in ("log", 1, 3):
        assert_every_family_finite(MixedVariablePolynomial(data, degree=degree))


def test_bad_degree() -> None:
    data = random_mixed(np.random.default_rng(0), "cd", 20)
    for bad in (0, -1, "cubic", 1.5):
        with pytest.raises(InputError):
            MixedVariablePolynomial(data, degree=bad)
    assert MixedVariablePolynomial(data, degree="3").degree == 3
    assert MixedVariablePolynomial(data).settings()["degree"] == "log"


def test_clgaussian_true_parents_of_g() -> None:
    assert_true_parents_of_g_win(MixedVariablePolynomial(load_data(CLG)))


def test_mvp_on_values_near_1e_minus_200_is_one_line_not_a_math_domain_error(tmp_path) -> None:
    """``bnilp learn --score mvp`` on a column of values near 1e-200 (and one near 1e-170, whose variance
    underflows as well) ended in ``ValueError: math domain error`` at ln σ̃² = ln 0: the column is refused at load
    (:data:`bnilp.data.MIN_CONTINUOUS_SD`) — one line naming it, exit 2."""
    from click.testing import CliRunner

    from bnilp.cli import main

    rng = np.random.default_rng(1)
    lines = ["a,b,c"]
    for _ in range(50):
        a = int(rng.integers(0, 2))
        lines.append(f"{a},{rng.random() * 1e-200:.6e},{(a + rng.random()) * 1e-170:.6e}")
    path = tmp_path / "tiny.csv"
    path.write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(main, ["learn", str(path), "--score", "mvp", "-q"])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "column 'b' is continuous with a standard deviation" in res.output


def test_mvp_is_the_same_in_any_units_of_a_continuous_child_one_row_cells_included() -> None:
    """Y → a·Y + b leaves every MVP local score of Y unchanged. A cell of one row contributes no likelihood
    (paper, Tetrad) while every other cell's Gaussian ℓ_p shifted by −n_p·ln|a| on raw values, so parent sets
    with more one-row cells gained ln|a| each: on 60 rows with 8 one-row cells of D, D → Y appeared when Y
    went from metres to millimetres (s(Y|D) − s(Y|∅) −3.03 vs +52.23 = −3.03 + 8·ln 1000). The child is now
    scored in units of its SD."""
    import pandas as pd

    from bnilp.data import from_dataframe

    rng = np.random.default_rng(0)
    d = np.array(["a"] * 26 + ["b"] * 26 + [f"s{i}" for i in range(8)])
    rng.shuffle(d)
    y, x = rng.normal(size=60), rng.normal(size=60)
    gains = []
    for a, b in ((1.0, 0.0), (1000.0, 0.0), (-0.01, 5e4), (-7.0, -3.0)):
        data = from_dataframe(pd.DataFrame({"D": d, "Y": a * y + b, "X": 3.0 * x - 1.0}),
                              continuous=["Y", "X"])
        score = MixedVariablePolynomial(data)
        local = [score.local(1, ps) for ps in ((), (0,), (2,), (0, 2))]
        gains.append(local)
        assert score.local(1, (0,)) < score.local(1, ())       # Y is independent of D: no gain in any units
    for other in gains[1:]:
        assert other == pytest.approx(gains[0], rel=1e-9, abs=1e-9)


def test_a_continuous_child_far_from_zero_is_fitted_as_one_near_zero() -> None:
    """A child of 10¹⁵ ± 1 (the same values as a centred one, shifted exactly): least squares on the uncentred
    child lost the ± 1 — X|{Y} 50 nats and X|{Y, Z} 125 nats off, and the credible set changed. The child is now
    centred first (the intercept makes that change nothing but the rounding): the scores agree."""
    import pandas as pd

    from bnilp.data import from_dataframe

    rng = np.random.default_rng(3)
    x = rng.normal(size=100)
    y, z = x + rng.normal(size=100), rng.normal(size=100)
    far = 1e15 + x
    near = far - 1e15
    assert np.all(near + 1e15 == far)                  # the same values, shifted exactly
    scores = [MixedVariablePolynomial(from_dataframe(pd.DataFrame({"X": c, "Y": y, "Z": z})))
              for c in (far, near)]
    for parents in ((), (1,), (2,), (1, 2)):
        assert scores[0].local(0, parents) == pytest.approx(scores[1].local(0, parents), rel=1e-9, abs=1e-6)


# -- the fit in per-cell orthonormal bases ---------------------------------------------------------------------


def exact_mvp_loglik(data, child: int, parents: tuple[int, ...], degree) -> float:
    """ℓ of the paper's design from exact rational least squares (``tests.oracles.exact_least_squares``) on the
    raw powers x, x², …, x^g taken exactly (``power_columns``) — the span of the standardised ones — with the
    oracle's rules for degrees, constant parents (all values equal, or SD ≤ 10⁻¹² of the column's) and fallbacks; a
    continuous child in units of its exact SD, a discrete child's rows shrunk (eq. 21)."""
    disc = [p for p in parents if data.kinds[p] == "discrete"]
    cont = [p for p in parents if data.kinds[p] == "continuous"]
    keys = [tuple(int(data.codes[t, p]) for p in disc) for t in range(data.N)]
    ll = 0.0
    for key in sorted(set(keys)):
        rows = np.array([t for t in range(data.N) if keys[t] == key])
        n_p = len(rows)
        if n_p <= 1:
            continue
        g = int(math.floor(math.log(n_p))) if degree == "log" else degree
        cols: list = [np.ones(n_p)]
        for p in cont:
            x = data.values[rows, p]
            if g >= 1 and np.ptp(x) > 0 and x.std() > 1e-12 * data.values[:, p].std():
                cols += power_columns(x, g)
        if len(cols) >= n_p:
            cols = cols[:1]
        if data.kinds[child] == "discrete":
            d = data.arities[child]
            y = data.codes[rows, child]
            fitted, _ = exact_least_squares(cols, np.eye(d)[y])
            low = fitted.min(axis=1)
            alpha = np.where(low < 1 / n_p, np.clip((1 / n_p - 1 / d) / np.minimum(low - 1 / d, -1e-300), 0, 1), 1.0)
            ll += float(np.log(alpha * fitted[np.arange(n_p), y] + (1 - alpha) / d).sum())
        else:
            _, (rss,) = exact_least_squares(cols, data.values[rows, child])
            s2 = float(rss / exact_variance(data.values[:, child])) / n_p
            ll += -n_p / 2 * (math.log(2 * math.pi) + math.log(s2) + 1)
    return ll


def test_polynomial_basis_is_orthonormal_and_spans_the_powers_in_every_cell() -> None:
    """Per cell: Φ's live columns are orthonormal and orthogonal to the constant; every power z^k, k ≤ g, lies in
    span(1, Φ) and Φ in span(1, z, …, z^g); a cell with v distinct values gets min(g, v − 1) columns; a constant
    cell and a cell of degree 0 get none."""
    rng = np.random.default_rng(31)
    cells = [rng.normal(size=400), rng.normal(size=60) * 1e-3 + 5e3, np.round(rng.normal(size=50)),
             np.repeat([1.0, 2.0, 4.0], 7), np.full(9, 3.0), rng.normal(size=12), rng.exponential(size=200) ** 3]
    degrees = np.array([8, 5, 9, 6, 3, 0, 7])
    x = np.concatenate(cells)
    counts = np.array([c.size for c in cells])
    basis = polynomial_basis(x, counts, degrees, constant_sd=1e-12)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    for p, values in enumerate(cells):
        phi = basis.phi[starts[p]:starts[p] + counts[p]][:, basis.live[p]]
        distinct = np.unique(values).size
        assert basis.active[p] == (degrees[p] >= 1 and distinct > 1)
        expected = min(degrees[p], distinct - 1) if basis.active[p] else 0
        assert phi.shape[1] == expected, p
        if not expected:
            continue
        assert np.allclose(phi.T @ phi, np.eye(expected), atol=1e-12)
        assert np.allclose(phi.sum(axis=0), 0.0, atol=1e-10)
        z = (values - values.mean()) / values.std()
        powers = np.column_stack([np.ones(values.size)] + [z ** k for k in range(1, degrees[p] + 1)])
        span = np.column_stack([np.ones(values.size), phi])
        coef = np.linalg.lstsq(span, powers, rcond=None)[0]
        assert np.allclose(span @ coef, powers, rtol=0, atol=1e-8 * np.abs(powers).max())
        back = np.linalg.lstsq(powers, phi, rcond=None)[0]
        # least squares on the powers themselves is only as good as their conditioning (cond ≈ 7e9 on the cube of
        # exponentials, whose residual, 1.4e-8, failed a flat 1e-8 on one machine: a review): a backward-stable
        # solve's residual is within a small multiple of cond·eps
        noise = 10 * np.finfo(float).eps * np.linalg.cond(powers)
        assert np.allclose(powers @ back, phi, atol=max(1e-8, noise))


def test_nearly_collinear_parents_are_fitted_as_exact_least_squares_would() -> None:
    """x₂ = 2x₁ + 10⁻⁶·noise: the bases' Gram matrix is near singular (least eigenvalue below GRAM_TOL), so those
    cells are fitted row by row on their orthonormal columns — ℓ within 10⁻⁸ nat of exact rational least squares
    for a continuous and a discrete child, with and without a discrete parent (the normal equations alone are
    10⁻³ nat off here; ``lstsq`` on the powers themselves can be 10⁻⁴ off: ``benchmarks/mvp_accuracy.py``)."""
    rng = np.random.default_rng(32)
    n = 120
    x1 = rng.normal(size=n)
    x2 = 2 * x1 + 1e-6 * rng.normal(size=n)
    d = rng.integers(0, 2, n)
    y = x1 ** 2 - x2 + 0.3 * rng.normal(size=n)
    c = (x1 + 0.5 * rng.normal(size=n) > 0).astype(int) + (x2 > 1)
    data = make_dataset([x1, x2, d, y, c], "ccdcd")
    score = MixedVariablePolynomial(data, degree=3)
    part = score.partition(())
    g = _Gram(score, part, [0, 1], [score._basis(part, 0), score._basis(part, 1)], 0, 3, np.array([0]),
              np.array([0]), 3)
    assert not g.ok()[0]
    for child, parents in [(3, (0, 1)), (3, (0, 1, 2)), (4, (0, 1)), (4, (0, 1, 2))]:
        assert score.loglik_df(child, parents)[0] == pytest.approx(exact_mvp_loglik(data, child, parents, 3),
                                                                   abs=1e-8), (child, parents)


def test_a_nearly_exact_fit_is_fitted_row_by_row() -> None:
    """y = x³ + 10⁻³·noise leaves an RSS of ~10⁻⁷ of y's scatter (above the variance floor, 10⁻⁸): yᵀy − bᵀb would
    keep ~9 digits of it (10⁻⁷ nat off here), so the cell is fitted row by row (CANCEL_TOL) — ℓ within 10⁻⁹ nat
    of exact least squares."""
    rng = np.random.default_rng(33)
    n = 150
    x = rng.normal(size=n)
    y = x ** 3 + 1e-3 * rng.normal(size=n)
    data = make_dataset([x, y], "cc")
    score = MixedVariablePolynomial(data, degree=3)
    part = score.partition(())
    yc = score._child(part, 1)
    b = score._moments(part, 0, 1)[0][0]          # the one cell, in its degree group
    assert VARIANCE_FLOOR < (yc @ yc - b @ b) / n < CANCEL_TOL * (yc @ yc) / n
    assert score.loglik_df(1, (0,))[0] == pytest.approx(exact_mvp_loglik(data, 1, (0,), 3), abs=1e-9)


@pytest.mark.parametrize("degree", ["log", 2])
def test_cells_of_high_degree_match_the_oracle(degree) -> None:
    """3,000 rows in 3 cells (degree ⌊ln n_p⌋ = 6–7) and two or three continuous parents."""
    data = random_mixed(np.random.default_rng(34), "dcccd", 3000, arity=3)
    score = MixedVariablePolynomial(data, degree=degree)
    for child, parents in [(1, (0, 2, 3)), (3, (1, 2)), (4, (0, 1, 2, 3)), (4, (2, 3)), (2, (0, 1, 3))]:
        ll, df = score.loglik_df(child, parents)
        ll_o, df_o = oracle(data, child, parents, degree)
        assert ll == pytest.approx(ll_o, rel=1e-10) and df == df_o


def test_scores_do_not_depend_on_what_was_scored_before_or_on_the_cache() -> None:
    """The bases and sums kept on the partitions are the same floats whoever asked first: every family's (ℓ, df),
    for tests too, is bit-identical in a fresh score, in reverse order, and with a cache emptied at every growth."""
    data = random_mixed(np.random.default_rng(35), "dccdcc", 200, arity=3)
    families = [(c, pa) for c in range(6) for k in range(4)
                for pa in itertools.combinations([j for j in range(6) if j != c], k)]
    forward = MixedVariablePolynomial(data)
    values = {f: (forward.loglik_df(*f), forward.lr_loglik_df(*f)) for f in families}
    backward = MixedVariablePolynomial(data)
    starved = MixedVariablePolynomial(data)
    starved.partition = PartitionCache(starved.codes, starved.arities, starved.N, max_bytes=1)
    for score in (backward, starved):
        for f in reversed(families):
            assert (score.loglik_df(*f), score.lr_loglik_df(*f)) == values[f], f


def test_a_parent_constant_in_a_cell_far_from_zero_gives_no_columns_there() -> None:
    """x = 123456.7 on every row of one cell: its mean in floats is off by an ulp, so its SD came out above the
    constancy threshold and the cell counted g columns it never had (df 6 for 4; in the code before too, a review's
    find). Constancy is decided exactly (all values equal)."""
    rng = np.random.default_rng(36)
    d = np.array([0] * 150 + [1] * 50)
    x = np.where(d == 0, 123456.7, 123456.7 + rng.normal(size=200))
    y = rng.normal(size=200)
    data = make_dataset([d, x, y], "dcc")
    score = MixedVariablePolynomial(data, degree=2)
    ll, df = score.loglik_df(2, (0, 1))
    assert df == 1 + (1 + 2)
    assert ll == pytest.approx(exact_mvp_loglik(data, 2, (0, 1), 2), abs=1e-8)


def test_the_sums_of_a_pair_are_kept_per_degree_not_at_the_widest_cells_degree() -> None:
    """One cell of 3,000 rows (degree 8) and 2,000 cells of 4–5 rows (degree 1): Φ_aᵀΦ_b is kept per degree group,
    Σ_p g_p² floats (the widest degree for every cell took 64× as much there, gigabytes at 10⁵ cells; a review's
    find), and the scores still match the oracle."""
    rng = np.random.default_rng(37)
    d = np.concatenate([np.zeros(3000, dtype=int), np.repeat(np.arange(1, 2001), rng.integers(4, 6, 2000))])
    n = d.size
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    y = x1 - x2 ** 2 + rng.normal(size=n)
    data = make_dataset([d, x1, x2, y], "dccc")
    score = MixedVariablePolynomial(data)
    part = score.partition((0,))
    degrees = score._fitted_degrees(part)
    assert sum(a.nbytes for a in score._cross(part, 1, 2)) == 8 * int((degrees ** 2).sum())
    assert sum(a.nbytes for a in score._moments(part, 1, 3)) == 8 * int(degrees.sum())
    small = np.flatnonzero(d < 60)                    # the oracle on a slice: the big cell and a few small ones
    sliced = make_dataset([d[small], x1[small], x2[small], y[small]], "dccc")
    assert MixedVariablePolynomial(sliced).loglik_df(3, (0, 1, 2)) == pytest.approx(oracle(sliced, 3, (0, 1, 2),
                                                                                             "log"), rel=1e-10)


def test_a_cell_far_from_the_rest_of_its_column_keeps_its_digits() -> None:
    """A parent near 0 in one cell and near 10⁶ in the other: subtracting one central value for the whole column
    rounded the first cell to the spacing of 10⁶ (10⁻⁵ of its spread; 0.012 nat off, a review's find). Each cell is
    centred on its own mean: ℓ as exact least squares gives it."""
    rng = np.random.default_rng(38)
    d = np.array([0] * 50 + [1] * 150)
    x = np.concatenate([1e-5 * rng.random(50), 1e6 + rng.normal(size=150)])
    y = np.concatenate([x[:50] * 1e5 + 1e-3 * rng.normal(size=50), rng.normal(size=150)])
    data = make_dataset([d, x, y], "dcc")
    ll, df = MixedVariablePolynomial(data, degree=1).loglik_df(2, (0, 1))
    assert df == 2 + 2 and ll == pytest.approx(exact_mvp_loglik(data, 2, (0, 1), 1), abs=1e-8)
