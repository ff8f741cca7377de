"""The whole job from Python: data → scores → OPT and credible set → MECs → posteriors.

>>> from bnilp import learn
>>> result = learn("instances/asia.csv", score="bic", bf=20)     # doctest: +SKIP
>>> result.report["n_networks"], result.best_graph().edges         # doctest: +SKIP

``learn`` scores and prunes (``bnilp.parentsets``), solves (``bnilp.ilp``), groups (``bnilp.mec``)
and averages (``bnilp.averaging`` through ``bnilp.report.summarise``); ``solve_table`` does the
same from a score table. The report dict is the JSON of ``bnilp learn --json``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import networkx as nx
import pandas as pd

from bnilp.data import Dataset, from_dataframe, load_data
from bnilp.errors import InputError
from bnilp.ilp import Parents, SolveResult, solve, to_digraph
from bnilp.parentsets import score_parent_sets
from bnilp.report import summarise
from bnilp.scorefile import ScoreTable
from bnilp.scores import StructurePrior, make_score


@dataclass
class LearnResult:
    """Score table, solver result and the report dict (JSON of ``bnilp learn``)."""

    table: ScoreTable
    solution: SolveResult
    report: dict[str, Any]

    @property
    def complete(self) -> bool:
        return self.solution.complete

    def best_graph(self) -> nx.DiGraph:
        """The optimal network (the first of the credible set) as a DiGraph parent → child."""
        if not self.solution.networks:
            raise InputError("no network: the score table admits no DAG")
        return to_digraph(self.solution.networks[0].parents)

    def graphs(self) -> list[nx.DiGraph]:
        """Every collected network, best first."""
        return [to_digraph(net.parents) for net in self.solution.networks]

    def edge_posteriors(self) -> pd.DataFrame:
        """Directed-edge posteriors as a (parent × child) matrix."""
        variables = self.report["variables"]
        frame = pd.DataFrame(0.0, index=variables, columns=variables)
        for edge in self.report["edges"]:
            frame.loc[edge["from"], edge["to"]] = edge["posterior"]
        return frame


def scoring_summary(table: ScoreTable) -> dict[str, Any]:
    """What the report says about how the candidate parent sets were made (from the sidecar)."""
    meta = table.meta
    keys = ("score", "ess", "bins", "degree", "prior", "expected_parents", "ebic_gamma", "penalty_discount",
            "data", "N", "palim", "palim_default", "palim_reached", "exact_for_parent_sets_up_to", "scored",
            "kept", "pruned", "seconds", "dropped_constant")
    out = {k: meta[k] for k in keys if k in meta}
    out["parent_sets"] = table.n_parent_sets()
    return out


def project_network(table: ScoreTable, parents: dict[str, Any]) -> Parents:
    """A DAG that uses only the table's parent sets: each variable keeps its parent set if the table
    has it, else the best-scoring table set inside it (∅ is one, so the result stays acyclic)."""
    out: Parents = {}
    for v in table.variables:
        ps = frozenset(parents.get(v, ()))
        if ps in table.families[v]:
            out[v] = ps
            continue
        inside = [(s, cand) for cand, s in table.families[v].items() if cand <= ps]
        if not inside:
            raise InputError(f"warm start: no parent set of {v!r} in the table fits inside {sorted(ps)}")
        out[v] = max(inside, key=lambda t: t[0])[1]
    return out


def solve_table(table: ScoreTable, *, epsilon: float = 0.0, time_limit: float | None = None,
                max_networks: int = 150_000, prior: str = "dags", warm_start: Parents | None = None,
                progress: Any = None) -> LearnResult:
    """OPT and every network within ε of it, grouped and averaged."""
    if prior not in ("dags", "mecs"):
        raise InputError(f"--prior must be 'dags' or 'mecs', got {prior!r}")
    solution = solve(table, epsilon, time_limit=time_limit, max_networks=max_networks,
                     warm_start=warm_start, progress=progress)
    report = summarise(solution.to_dict(), prior=prior, variables=table.variables)
    report["bf"] = math.exp(epsilon) if epsilon < 700 else None
    report["scoring"] = scoring_summary(table)
    if table.meta.get("palim_reached"):
        report["exact_for_parent_sets_up_to"] = table.meta.get("palim")
    return LearnResult(table, solution, report)


def learn(
    data: str | os.PathLike[str] | pd.DataFrame | Dataset,
    *,
    score: str = "bic",
    bf: float = 20.0,
    epsilon: float | None = None,
    palim: int | None = None,
    time_limit: float | None = None,
    max_networks: int = 150_000,
    prior: str = "dags",
    structure_prior: str = "none",
    expected_parents: float = 1.0,
    ebic_gamma: float = 0.5,
    n_jobs: int = 1,
    **score_settings: Any,
) -> LearnResult:
    """Learn the optimal network and every network within Bayes factor ``bf`` of it.

    ``data``: a path (CSV/TSV/.dat), a DataFrame or a :class:`Dataset`. ``score``: bic, bdeu, cg,
    cgd, mvp, mml; ``score_settings`` go to the score (``ess``, ``bins``, ``degree``,
    ``penalty_discount``). ε = ln(bf) unless ``epsilon`` is given. ``prior`` is the prior over
    structures for averaging (uniform over ``dags`` or ``mecs``); ``structure_prior`` the per-family
    prior added to the score (none, binomial, ebic).
    """
    if isinstance(data, Dataset):
        dataset = data
    elif isinstance(data, pd.DataFrame):
        dataset = from_dataframe(data)
    else:
        dataset = load_data(data)
    eps = math.log(bf) if epsilon is None else float(epsilon)
    if not (math.isfinite(eps) and eps >= 0):
        raise InputError(f"BF must be ≥ 1 (ε ≥ 0), got ε = {eps}")
    sp = StructurePrior(structure_prior, dataset.n, expected_parents, ebic_gamma)
    scorer = make_score(score, dataset, prior=sp, **score_settings)
    table = score_parent_sets(scorer, epsilon=eps, palim=palim, n_jobs=n_jobs)
    return solve_table(table, epsilon=eps, time_limit=time_limit, max_networks=max_networks, prior=prior)
