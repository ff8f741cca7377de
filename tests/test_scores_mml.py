"""MML (Li & Dai eqs. 3.8–3.14) evaluated directly on small hand-made data.

The −T·ln ε measurement-accuracy term is dropped by the score (constant per child), so the oracles
below leave it out too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bnilp.data import load_data
from bnilp.errors import InputError
from bnilp.scores.mml import MinimumMessageLength, log_kappa, structure_length
from tests.mixed_helpers import assert_every_family_finite, degenerate_dataset, make_dataset, random_mixed
from tests.oracles import mml_length_cell_by_cell, mml_regression_length_exact

CLG = "/work/shared/data/mixed/clgaussian.test"
KAPPA2 = 5 / (36 * math.sqrt(3))
KAPPA3 = 0.0785433


def eq38(n: int, m: int) -> float:
    return math.log(n) + math.log(math.comb(n, m))


def eq310(counts: list[int]) -> float:
    r = len(counts)
    nj = sum(counts)
    out = (r - 1) / 2 * (math.log(nj / 12) + 1) - math.log(math.factorial(r - 1))
    for c in counts:
        out -= (c + 0.5) * math.log((c + 0.5) / (nj + r / 2))
    return out


def eq312(v: list[float]) -> float:
    t = len(v)
    mu = sum(v) / t
    s2 = sum((x - mu) ** 2 for x in v) / (t - 1)
    return (0.5 * math.log(t * t / 2) + math.log(KAPPA2) + 1 + t / 2 * math.log(2 * math.pi)
            + (t - 1) / 2 * math.log(s2) + sum((x - mu) ** 2 for x in v) / (2 * s2))


def eq313(v: np.ndarray, x: np.ndarray, kappa: float) -> float:
    t, k = x.shape
    a = x.T @ x
    alpha = np.linalg.solve(a, x.T @ v)
    rss = float(np.sum((v - x @ alpha) ** 2))
    s2 = rss / (t - k)
    return (0.5 * math.log(t / 2) + 0.5 * math.log(np.linalg.det(a)) + (k + 1) / 2 * math.log(kappa)
            + (k + 1) / 2 + t / 2 * math.log(2 * math.pi) + (t - k) / 2 * math.log(s2) + rss / (2 * s2))


A = [0, 0, 1, 1, 1, 0, 1, 0, 1, 1]
B = [0, 1, 1, 0, 2, 2, 1, 0, 1, 2]
X = [1.2, 0.7, 2.5, 3.1, 2.2, 0.1, 2.9, 1.0, 3.3, 2.0]
Y = [2.0, 1.1, 5.2, 6.5, 4.1, 0.9, 6.2, 2.4, 6.0, 4.4]
HAND = make_dataset([np.array(A), np.array(B), np.array(X), np.array(Y)], "ddcc")


def test_eq38_structure() -> None:
    score = MinimumMessageLength(HAND)
    base = -score.raw(0, ())
    family = eq38(4, 1) + eq310([2, 1]) + eq310([1, 3]) + eq310([1, 2]) + 3 * math.log(3)
    assert -score.raw(0, (1,)) - base == pytest.approx(family - eq38(4, 0) - eq310([4, 6]))
    assert structure_length(7, 3) == pytest.approx(math.log(7) + math.log(35))


def test_eq311_discrete_child() -> None:
    score = MinimumMessageLength(HAND)
    assert -score.raw(0, ()) == pytest.approx(eq38(4, 0) + eq310([4, 6]), abs=1e-12)
    # B | A: configurations A=0 (B counts 2,1,1), A=1 (1,3,2); q = 2
    expected = eq38(4, 1) + 2 * math.log(2) + eq310([2, 1, 1]) + eq310([1, 3, 2])
    assert -score.raw(1, (0,)) == pytest.approx(expected, abs=1e-12)


def test_eq311_unobserved_configuration_contributes_ln_q() -> None:
    a = np.array([0, 0, 0, 1, 1, 1])
    b = np.array([0, 0, 1, 1, 2, 2])  # (a=0, b=2) and (a=1, b=0) are never seen together
    child = np.array([0, 1, 0, 1, 1, 0])
    score = MinimumMessageLength(make_dataset([a, b, child], "ddd"))
    expected = eq38(3, 2) + 6 * math.log(6) + eq310([1, 1]) + eq310([1, 0]) + eq310([0, 1]) + eq310([1, 1])
    assert -score.raw(2, (0, 1)) == pytest.approx(expected, abs=1e-12)


def test_eq312_continuous_no_parents() -> None:
    score = MinimumMessageLength(HAND)
    assert -score.raw(3, ()) == pytest.approx(eq38(4, 0) + eq312(Y), abs=1e-10)


def test_eq313_continuous_parent_paper_form_and_intercept() -> None:
    xc = np.array(X) - np.mean(X)
    yc = np.array(Y) - np.mean(Y)
    literal = MinimumMessageLength(HAND, intercept=False)
    assert -literal.raw(3, (2,)) == pytest.approx(eq38(4, 1) + eq313(yc, xc[:, None], KAPPA2), abs=1e-10)
    default = MinimumMessageLength(HAND)
    design = np.column_stack([np.ones(10), np.array(X)])
    assert -default.raw(3, (2,)) == pytest.approx(eq38(4, 1) + eq313(np.array(Y), design, KAPPA3), abs=1e-10)


def test_eq313_with_intercept_only_is_eq312() -> None:
    v = np.array(Y)
    assert eq313(v, np.ones((10, 1)), KAPPA2) == pytest.approx(eq312(Y), abs=1e-12)


def test_eq314_mixed_parents() -> None:
    score = MinimumMessageLength(HAND)
    a, x, y = np.array(A), np.array(X), np.array(Y)
    only_discrete = eq38(4, 1) + 2 * math.log(2) + sum(eq312(list(y[a == c])) for c in (0, 1))
    assert -score.raw(3, (0,)) == pytest.approx(only_discrete, abs=1e-10)
    mixed = eq38(4, 2) + 2 * math.log(2)
    for c in (0, 1):
        design = np.column_stack([np.ones(int((a == c).sum())), x[a == c]])
        mixed += eq313(y[a == c], design, KAPPA3)
    assert -score.raw(3, (0, 2)) == pytest.approx(mixed, abs=1e-10)


def test_the_variance_floor_of_a_column_far_from_zero_is_its_own():
    """The floor 1e-8·Var(y) holds in a cell of equal values; Var of y + 10¹⁵ on its raw mean was 0.22396 for
    0.22222 and the length 0.004 nats off (a review): y and y + 10¹⁵ score alike."""
    import pandas as pd

    from bnilp.data import from_dataframe

    lengths = []
    for off in (0.0, 1e15):
        data = from_dataframe(pd.DataFrame({"z": ["a", "b", "b"], "y": [off, off + 1, off + 1]}), discrete=["z"],
                              continuous=["y"])
        score = MinimumMessageLength(data)
        assert score.floor[1] == pytest.approx(1e-8 * 2 / 9, rel=1e-12)
        lengths.append(score.local(1, (0,)))
    assert lengths[1] == pytest.approx(lengths[0], rel=1e-12)


@pytest.mark.parametrize("scale", [1e-16, 1e-14, 1e-9, 1e-7, 1e-3, 1e3, 1e7, 1e9, 1e15, 1e17])
def test_a_parent_s_units_move_only_the_precision_term(scale: float) -> None:
    """Eq. 3.13: rescaling a continuous parent x by c leaves the fit alone and multiplies |XᵀX| by c² (the
    intercept's column stays), so the gain s(y | x) − s(y) moves by exactly −ln c — a parent in nanometres
    is no more degenerate than in metres (the rank test once compared raw eigenvalues and dropped it; past
    1e13 between the columns' scales the least-squares fit on the raw design dropped the small one)."""
    import pandas as pd

    from bnilp.data import from_dataframe

    rng = np.random.default_rng(1)
    x = rng.normal(size=200)
    y = x + 0.3 * rng.normal(size=200)

    def gain(c: float) -> float:
        mml = MinimumMessageLength(from_dataframe(pd.DataFrame({"x": x * c, "y": y}), continuous=["x", "y"]))
        return mml.local(1, (0,)) - mml.local(1, ())

    assert gain(1.0) > 200
    assert gain(scale) == pytest.approx(gain(1.0) - math.log(scale), abs=1e-6)


def test_kappa_values() -> None:
    assert math.exp(log_kappa(1)) == pytest.approx(1 / 12)
    assert math.exp(log_kappa(2)) == pytest.approx(KAPPA2)
    # Wallace's approximation continues the table smoothly past d = 8
    assert math.exp(log_kappa(9)) == pytest.approx(0.0716, abs=0.004)
    assert log_kappa(9) < log_kappa(8) + 0.05


def test_continuous_parent_of_discrete_child_disallowed() -> None:
    score = MinimumMessageLength(HAND)
    assert not score.allowed_parent(0, 2)
    assert score.allowed_parent(2, 0) and score.allowed_parent(0, 1) and not score.allowed_parent(0, 0)
    with pytest.raises(InputError):
        score.raw(0, (2,))
    assert score.settings()["continuous_parent_of_discrete_child"].startswith("disallowed")


def test_penalty_discount_rejected_and_no_loglik() -> None:
    with pytest.raises(InputError):
        MinimumMessageLength(HAND, penalty_discount=2.0)
    with pytest.raises(NotImplementedError):
        MinimumMessageLength(HAND).loglik_df(3, ())


def test_degenerate_inputs_stay_finite() -> None:
    data = degenerate_dataset(21)
    for intercept in (True, False):
        assert_every_family_finite(MinimumMessageLength(data, intercept=intercept))


def test_clgaussian_true_parents() -> None:
    data = load_data(CLG)
    score = MinimumMessageLength(data)
    ix = lambda *names: tuple(sorted(data.index(v) for v in names))  # noqa: E731
    g = data.index("G")
    true = score.local(g, ix("A", "D", "E", "F"))
    assert true > score.local(g, ()) and true > score.local(g, ix("B", "C", "H"))
    f = data.index("F")
    assert score.local(f, ix("B", "C")) > score.local(f, ()) > score.local(f, ix("A"))


def _hard_cells(seed: int) -> object:
    """Cells of every kind: a 7-level and a 3-level factor (cells of 1 to ~100 rows), a parent nearly collinear
    with another in some cells (the normal equations would lose digits: fitted on the rows), one constant inside
    a cell far from zero, one far from the others' scale, and a child fitted almost exactly in one cell."""
    rng = np.random.default_rng(seed)
    n = 400
    d1 = rng.choice(7, size=n, p=[0.3, 0.25, 0.2, 0.15, 0.06, 0.03, 0.01])
    d2 = rng.integers(0, 3, size=n)
    x = rng.normal(size=n)
    near = np.where(d1 == 0, x + 1e-5 * rng.normal(size=n), rng.normal(size=n))
    flat = np.where(d1 == 1, 123456.7, 123456.7 + rng.normal(size=n))
    big = 1e7 + 1e3 * rng.normal(size=n)
    y = x + 0.5 * near + 1e-4 * (big - 1e7) + np.where(d1 == 2, 1e-9, 1.0) * rng.normal(size=n) + d2
    return make_dataset([d1, d2, x, near, flat, big, y], "ddccccc")


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("case", ["hard", "random", "degenerate"])
def test_the_cells_read_from_sums_give_the_lengths_of_fits_on_their_rows(case: str, intercept: bool) -> None:
    """Every continuous child's family (all parent sets up to size 3; for tests too): the message length from the
    per-cell sums kept on the partition equals the one fitted cell by cell on the rows (eqs. 3.12–3.14, the
    code before; :func:`tests.oracles.mml_length_cell_by_cell`) — degenerate cells (T ≤ K, collinear or constant
    parents: eq. 3.12), cells whose normal equations would lose digits (fitted on their rows) and cells with no
    rows to spare alike; the same floats whatever was asked before."""
    import itertools

    data = {"hard": _hard_cells(3), "random": random_mixed(np.random.default_rng(4), "dcdccdc", 300),
            "degenerate": degenerate_dataset(21)}[case]
    score = MinimumMessageLength(data, intercept=intercept)
    cold = MinimumMessageLength(data, intercept=intercept)
    families = [(c, pa) for c in range(data.n) if not score.discrete[c] for k in range(4)
                for pa in itertools.combinations([j for j in range(data.n) if j != c], k)]
    for child, parents in families:
        got = score.message_length(child, parents)
        assert got == pytest.approx(mml_length_cell_by_cell(score, child, parents), rel=1e-10, abs=1e-7), \
            (child, parents)
    for child, parents in reversed(families):
        assert MinimumMessageLength(data, intercept=intercept).message_length(child, parents) == \
            score.message_length(child, parents) == cold.message_length(child, parents)


@pytest.mark.parametrize("seed", range(4))
def test_a_parent_far_from_zero_in_its_cell_gives_the_exact_length(seed: int) -> None:
    """A parent whose cell sits at 1e6 (the column centred on its overall mean): the unit-length design [1, x] is
    nearly singular there, and ln|A| from its eigenvalues (the row fit) is ~1e−6 relative off (a review's find);
    from the cell's centred scatter, |A| = T·|C|, the length is within 1e−9 of the exact one (rational arithmetic)."""
    rng = np.random.default_rng(seed)
    t = 10
    cell = np.repeat([0, 1], t)
    x = np.concatenate([10 * rng.normal(size=t), 1e6 + 10 * rng.normal(size=t)])
    y = rng.normal(size=2 * t)
    score = MinimumMessageLength(make_dataset([cell, x, y], "dcc"))
    got = score._cell_lengths(score.partition((0,)), 2, [1])
    for p in (0, 1):
        rows = cell == p
        design = np.column_stack([np.ones(t), score.centred[1][rows]])
        exact = mml_regression_length_exact(score.centred[2][rows], design, score.floor[2])
        assert got[p] == pytest.approx(exact, rel=1e-9), p
