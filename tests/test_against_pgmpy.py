"""Another library on the same data: pgmpy's scores and its exhaustive search as oracles.

pgmpy (``pgmpy.estimators``, in the test extra) scores families with its own code — BIC as LL − ½·ln N·(r − 1)·q,
BDeu with α = ESS/q and β = ESS/(q·r) (Heckerman, Geiger & Chickering 1995), the Gaussian BIC from a
generalised linear model (``BICGauss``) — and ``ExhaustiveSearch.all_scores`` scores every DAG over a handful of
variables. So the local scores, OPT, the credible set DAG by DAG and its edge posteriors can all be recomputed
without any of bnilp's code.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import bnilp
from bnilp.data import from_dataframe
from bnilp.scores import make_score
from tests.conftest import random_discrete_frame

estimators = pytest.importorskip("pgmpy.estimators")

#: relative agreement of two codes' family scores (sums of a few hundred logarithms each)
RTOL = 1e-12


def _pgmpy_score(name: str, frame: pd.DataFrame, ess: float | None = None):
    with warnings.catch_warnings():                 # pgmpy's deprecation notices
        warnings.simplefilter("ignore")
        if name == "bic":
            return estimators.BIC(frame)
        if name == "bdeu":
            return estimators.BDeu(frame, equivalent_sample_size=ess)
        return estimators.BICGauss(frame)


def _families(n: int, max_size: int):
    for child in range(n):
        others = [j for j in range(n) if j != child]
        for k in range(min(max_size, n - 1) + 1):
            for parents in itertools.combinations(others, k):
                yield child, parents


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name, ess", [("bic", None), ("bdeu", 0.5), ("bdeu", 1.0), ("bdeu", 10.0)])
def test_bic_and_bdeu_family_scores_equal_pgmpys(seed, name, ess) -> None:
    """Every family of up to 3 parents over 5 discrete columns of 2–4 states (q up to 64 configurations, most
    unseen at N = 120): bnilp's score equals pgmpy's to 1e-12 relative."""
    frame = random_discrete_frame(seed, 5, 120, max_arity=4).astype(str)
    data = from_dataframe(frame, discrete="all")
    ours = make_score(name, data, **({"ess": ess} if ess is not None else {}))
    theirs = _pgmpy_score(name, frame, ess)
    names = list(frame.columns)
    checked = 0
    for child, parents in _families(5, 3):
        expected = theirs.local_score(names[child], [names[j] for j in parents])
        assert ours.local(child, parents) == pytest.approx(expected, rel=RTOL, abs=RTOL), (child, parents)
        checked += 1
    assert checked == 5 * (1 + 4 + 6 + 4)


def test_cg_on_continuous_data_is_pgmpys_gaussian_bic() -> None:
    """On continuous columns CG is the linear-Gaussian BIC: each child's ML regression on its parents, penalised
    by ½·ln N per coefficient, intercept and variance (Andrews, Ramsey & Cooper 2018) — pgmpy's ``BICGauss``,
    fitted by statsmodels' GLM. Every family of 4 variables, to 1e-12 relative."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(300, 4))
    x[:, 1] += 0.8 * x[:, 0]
    x[:, 2] += 0.5 * x[:, 1] - 0.3 * x[:, 3]
    frame = pd.DataFrame(x * [1.0, 3.0, 0.2, 50.0] + [0.0, -2.0, 7.0, 1e3], columns=list("ABCD"))
    ours = make_score("cg", from_dataframe(frame, continuous="all"))
    theirs = _pgmpy_score("gauss", frame)
    for child, parents in _families(4, 3):
        expected = theirs.local_score("ABCD"[child], ["ABCD"[j] for j in parents])
        assert ours.local(child, parents) == pytest.approx(expected, rel=RTOL), (child, parents)


def _credible_from_pgmpy(frame: pd.DataFrame, name: str, ess: float | None, bf: float):
    """pgmpy's exhaustive search: every DAG over the frame's columns with its score; the credible set (OPT − ln BF,
    with bnilp's tie tolerance) as edge sets, and directed-edge posteriors with each DAG weighed by exp(s − OPT)
    (the uniform prior over DAGs, ``averaging.md``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scored = estimators.ExhaustiveSearch(frame, scoring_method=_pgmpy_score(name, frame, ess)).all_scores()
    opt = max(s for s, _ in scored)
    line = opt - math.log(bf) - 1e-9 * max(1.0, abs(opt))
    credible = {frozenset(dag.edges()): s for s, dag in scored if s >= line}
    weight = {edges: math.exp(s - opt) for edges, s in credible.items()}
    total = sum(weight.values())
    posterior: dict[tuple[str, str], float] = {}
    for edges, w in weight.items():
        for edge in edges:
            posterior[edge] = posterior.get(edge, 0.0) + w / total
    return len(scored), opt, credible, posterior


@pytest.mark.parametrize("seed", [0, 5, 11])
@pytest.mark.parametrize("name, ess", [("bic", None), ("bdeu", 1.0), ("bdeu", 10.0)])
@pytest.mark.parametrize("bf", [1, 20, 150])
def test_the_credible_set_is_pgmpys_exhaustive_search_cut_at_the_bayes_factor(seed, name, ess, bf) -> None:
    """All 543 DAGs over 4 variables scored by pgmpy: OPT, every credible DAG (as its set of arrows, with its
    score) and each directed edge's posterior are bnilp's — in DAG mode and, counted from the classes, in class
    mode."""
    frame = random_discrete_frame(seed, 4, 150).astype(str)
    n_dags, opt, credible, posterior = _credible_from_pgmpy(frame, name, ess, bf)
    assert n_dags == 543
    data = from_dataframe(frame, discrete="all")
    settings = {"ess": ess} if ess is not None else {}
    listed = bnilp.learn(data, score=name, bf=bf, enumerate_by="dags", **settings)
    assert listed.solution.complete and listed.solution.optimum == pytest.approx(opt, rel=RTOL)
    got = {frozenset((p, c) for c, ps in net.parents.items() for p in ps): net.score
           for net in listed.solution.networks}
    assert got.keys() == credible.keys()
    for edges, s in got.items():
        assert s == pytest.approx(credible[edges], rel=RTOL)
    classes = bnilp.learn(data, score=name, bf=bf, enumerate_by="mecs", **settings)
    assert classes.report["n_networks"] == len(credible)
    for result in (listed, classes):
        ours = {(e["from"], e["to"]): e["posterior"] for e in result.report["edges"]}
        assert ours.keys() == posterior.keys()
        for edge, p in posterior.items():
            assert ours[edge] == pytest.approx(p, abs=1e-9), edge
