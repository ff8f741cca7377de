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
import numbers
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import networkx as nx
import pandas as pd

from bnilp.averaging import PRIORS as AVERAGING_PRIORS
from bnilp.data import Dataset, from_dataframe, load_data
from bnilp.errors import (
    InputError,
    LimitError,
    NoDagError,
    check_callback,
    check_flag,
    check_real,
    check_seconds,
    interrupts_as_keyboard,
    warn_at_caller,
)
from bnilp.graphs import check_acyclic, parent_lists, to_digraph
from bnilp.ilp import DEFAULT_MAX_NETWORKS, Network, Parents, SolveResult, settings, solve
from bnilp.knowledge import Knowledge, pruning_note, restrict_table, with_recorded
from bnilp.mec import (
    EQUIVALENCE_SLACK,
    class_tail_mass,
    credible_classes,
    expand_classes,
    knowledge_tail_mass,
    rounding_slack,
    unequal_covered_families,
)
from bnilp.memory import paused_gc
from bnilp.parentsets import score_parent_sets
from bnilp.provenance import provenance
from bnilp.report import limits_text, summarise, summarise_classes
from bnilp.scorefile import SIDECAR_HASH, ScoreTable, check_is_table, check_table, exact_up_to, record_unvouched
from bnilp.scores import CONTINUOUS_ONLY_SCORES, DISCRETE_ONLY_SCORES, StructurePrior, make_score
from bnilp.scores.base import (
    DEFAULT_EBIC_GAMMA,
    DEFAULT_EXPECTED_PARENTS,
    bayes_factor,
    bf_text,
    distinct_g,
    score_equivalent,
    score_words,
    tie_tolerance,
)

#: --enumerate: ``auto`` picks ``mecs`` for score-equivalent scores, else ``dags``
ENUMERATE_CHOICES = ("auto", "mecs", "dags")
#: the Bayes factor `learn` (API and command line) uses when neither bf nor epsilon is given
DEFAULT_LEARN_BF = 20.0


@dataclass
class LearnResult:
    """Score table, solver result and the report dict (JSON of ``bnilp learn``)."""

    table: ScoreTable
    solution: SolveResult
    report: dict[str, Any]
    #: the data the table was scored from (set by :func:`learn`; the export methods default to it)
    dataset: Dataset | None = None

    def __repr__(self) -> str:
        """A summary (the generated repr printed every network, the score table and the data: megabytes)."""
        sol = self.solution
        return (f"LearnResult(status={sol.status!r}, optimum={sol.optimum!r}, complete={sol.complete}, "
                f"dags={self.report.get('n_networks', len(sol.networks))}, mecs={self.report.get('n_mecs')}, "
                f"networks_listed={len(sol.networks)}, variables={len(self.table.variables)}, "
                f"score={self.table.meta.get('score')!r}, bf={self.report.get('bf')!r}"
                + (f", limits={self.limits!r}" if self.limits else "") + ")")

    @property
    def complete(self) -> bool:
        """The search proved OPT and listed the whole credible set *of the score table* (see :attr:`limits`)."""
        return self.solution.complete

    @property
    def limits(self) -> list[str]:
        """Limits that make the result narrower than the question asked: ``"palim"`` when the scoring cut
        parent sets at a size limit (the set is then exact only for parent sets up to
        ``report["exact_for_parent_sets_up_to"]``; the scoring's time or memory limit, deepening, cut it so),
        ``"knowledge_pruning"`` when a table pruned without the knowledge may lack sets it needs
        (``report["knowledge_note"]``); the search's own limits are its ``status``."""
        return list(self.report.get("limits", []))

    def best_graph(self) -> nx.DiGraph:
        """The optimal network (the first of the credible set) as a DiGraph parent → child."""
        if not self.solution.networks:
            raise InputError("no network: the score table admits no DAG")
        return to_digraph(self.solution.networks[0].parents)

    def graphs(self) -> list[nx.DiGraph]:
        """Every listed network (``solution.networks``), best first. Under class enumeration
        (``report["enumerate"] == "mecs"``) that is one representative DAG per credible equivalence class, fewer
        than ``report["n_networks"]`` (the DAGs counted); ``list_dags=True`` lists every DAG."""
        return [to_digraph(net.parents) for net in self.solution.networks]

    def _network(self, network: int) -> tuple[Parents, float]:
        nets = self.solution.networks
        if not nets:
            raise InputError("no network: the score table admits no DAG")
        if not _is_index(network):      # a float index read "0..0" for 0.0 (a review): an index is an integer
            raise InputError(f"network={network!r}: network is an index of the listed networks, an integer "
                             "(0 = the best)")
        if not 0 <= network < len(nets):
            if self.report.get("enumerate") == "mecs" and "n_dags_counted" not in self.report:
                raise InputError(f"network={network!r}: {len(nets)} networks are listed, {len(nets)} class "
                                 f"representatives (one DAG per equivalence class) of "
                                 f"{self.report.get('n_networks')} DAGs; "
                                 f"network indexes the listed networks, 0..{len(nets) - 1} (0 = the best); "
                                 "list_dags=True (--list-dags) lists every DAG")
            raise InputError(f"network={network!r}: {len(nets)} network(s) are listed, indices 0..{len(nets) - 1} "
                             "(0 = the best)")
        return nets[int(network)].parents, nets[int(network)].score

    def fit(self, data: str | os.PathLike[str] | pd.DataFrame | Dataset | None = None, network: int = 0,
            method: str | None = None, ess: float | None = None) -> dict[str, Any]:
        """Parameters of the ``network``-th best network (0 = the best) fitted to ``data`` (default: the
        data :func:`learn` scored). ``network`` indexes the listed networks, ``solution.networks`` (what
        :meth:`graphs` returns): under class enumeration one representative DAG per equivalence class, so
        ``network=1`` is the best DAG of the 2nd best class; ``list_dags=True`` lists every DAG. The result is
        as :func:`bnilp.export.fit_parameters` documents. ``method``: ``ml`` or ``bayes`` (default ``bayes``
        when the score was BDeu, else ``ml``); ``ess``: the Dirichlet's equivalent sample size (default: the
        run's ESS, else 1)."""
        from bnilp import export

        parents, score = self._network(network)
        dataset = self._dataset(data)
        meta = self.table.meta
        for v in parents:
            if v not in dataset.names:
                continue
            j = dataset.index(v)
            kind, arity = meta.get("kinds", {}).get(v), meta.get("arities", {}).get(v)
            if kind is not None and kind != dataset.kinds[j]:
                raise InputError(f"data: {v!r} is {dataset.kinds[j]} here but was {kind} when the network was "
                                 "learned (give the same types)")
            if arity is not None and dataset.kinds[j] == "discrete" and arity != dataset.arities[j]:
                raise InputError(f"data: {v!r} has {dataset.arities[j]} states here but had {arity} when the "
                                 "network was learned")
        method = export.default_method(meta.get("score")) if method is None else method    # not False, 0 or ''
        if ess is None and method == "bayes":
            ess = meta.get("ess", export.DEFAULT_ESS)
        fitted = export.fit_parameters(dataset, parents, method=method, ess=ess)
        for name in meta.get("dropped_constant", []):
            fitted["absent"].setdefault(name, "constant column (one value): left out of the network")
        fitted["score"] = meta.get("score")
        fitted["score_description"] = score_words(meta)       # "bic" alone hid a prior or a penalty (a review)
        fitted["network"] = {"rank": int(network) + 1, "score": score, "of": len(self.solution.networks),
                             # what the run it came from could not promise (the export files say so too)
                             "optimum_proven": bool(self.solution.optimum_proven), "limits": self.limits,
                             "status": self.solution.status, "complete": bool(self.solution.complete)}
        if self.limits:
            fitted["network"]["limited"] = limits_text(self.report)
        ranking = _ranking(fitted["network"], bool(self.report.get("optimum_only")))
        if ranking:
            fitted["network"]["ranking"] = ranking
        try:
            fitted["model_string"] = export.model_string(parents, self.table.variables)
        except InputError as exc:               # names bnlearn's syntax cannot hold: every format but it still works
            fitted["model_string"] = None
            fitted["notes"].append(f"no model string: {exc}")
        return fitted

    def _dataset(self, data: str | os.PathLike[str] | pd.DataFrame | Dataset | None) -> Dataset:
        if data is None:
            if self.dataset is None:
                raise InputError("data: this result does not hold its data (it came from a score table); pass data=")
            return self.dataset
        return _as_dataset(data, self.table.meta.get("score"))

    def export(self, path: str | os.PathLike[str], data: str | os.PathLike[str] | pd.DataFrame | Dataset | None = None,
               network: int = 0, method: str | None = None, ess: float | None = None) -> dict[str, Any]:
        """Write the fitted ``network``-th best network to ``path`` — BIF, XMLBIF or JSON by extension
        (:data:`bnilp.export.EXPORT_FORMATS`; BIF/XMLBIF discrete only) — and return the fitted structure."""
        from bnilp import export

        fmt = export.export_format(path)
        fitted = self.fit(data, network=network, method=method, ess=ess)
        export.check_discrete(fitted, fmt)
        export.write_export(fitted, path)
        return fitted

    def to_pgmpy(self, data: str | os.PathLike[str] | pd.DataFrame | Dataset | None = None, network: int = 0,
                 method: str | None = None, ess: float | None = None) -> Any:
        """The fitted ``network``-th best network as a pgmpy ``DiscreteBayesianNetwork``, or a
        ``LinearGaussianBayesianNetwork`` where every variable is continuous (extra ``bnilp[pgmpy]``;
        :func:`bnilp.export.to_pgmpy`); arguments as for :meth:`fit`."""
        from bnilp import export

        return export.to_pgmpy(self.fit(data, network=network, method=method, ess=ess))

    def model_string(self, network: int = 0, mec: int | None = None) -> str:
        """bnlearn's model string of the ``network``-th best network, or with ``mec`` of that equivalence
        class's CPDAG — under background knowledge its PDAG, the class's DAGs that satisfy it (undirected u — v
        written as mutual parents; see :mod:`bnilp.export`)."""
        from bnilp import export

        if mec is None:
            return export.model_string(self._network(network)[0], self.table.variables)
        mecs = self.report.get("mecs") or []
        if not (_is_index(mec) and 0 <= mec < len(mecs)):
            raise InputError(f"mec={mec!r}: there are {len(mecs)} equivalence classes, indices 0..{len(mecs) - 1}")
        cpdag = mecs[int(mec)].get("pdag") or mecs[int(mec)]["cpdag"]
        return export.model_string(export.cpdag_parents(self.table.variables, cpdag["directed"],
                                                        cpdag["undirected"]), self.table.variables)

    def edge_posteriors(self) -> pd.DataFrame:
        """Directed-edge posteriors as a (parent × child) matrix."""
        variables = self.report["variables"]
        frame = pd.DataFrame(0.0, index=variables, columns=variables)
        for edge in self.report["edges"]:
            frame.loc[edge["from"], edge["to"]] = edge["posterior"]
        return frame


def _ranking(network: dict[str, Any], optimum_only: bool) -> str:
    """What an exported network's rank K "of n" means where the list it indexes is not the credible set (a
    review: a run cut at 1,000 of 4,097 DAGs exported its 2nd listed DAG as "network 2 of 1000", 19.9 nats below
    the true 2nd best): the list and its status, and — past the best, which a proven OPT still names — that K
    ranks it among the n listed only. Empty where the list is complete."""
    if network["complete"]:
        return ""
    if optimum_only:
        return "optimum only: one optimal network proven, tied optimal networks not listed"
    words = f"the list is not complete (status {network['status']})"
    if network["rank"] > 1 or not network["optimum_proven"]:
        words += f": network {network['rank']} ranks among the {network['of']} listed, not among every credible network"
    return words


def scoring_summary(table: ScoreTable) -> dict[str, Any]:
    """What the report says about how the candidate parent sets were made (from the sidecar)."""
    meta = table.meta
    keys = ("score", "ess", "bins", "degree", "alpha_mu", "alpha_w", "standardize", "prior", "expected_parents",
            "ebic_gamma", "penalty_discount",
            "data", "N", "palim", "palim_default", "palim_reached", "exact_for_parent_sets_up_to", "scored",
            "kept", "pruned", "seconds", "dropped_constant", "twin_columns", "warnings", "score_time_limit",
            "score_time_limit_reached", "score_memory_limit_reached", "score_deeper_pass_refused", "deepening",
            "data_sha256", "rows_dropped_missing", "provenance")
    out = {k: meta[k] for k in keys if k in meta}
    out["parent_sets"] = table.n_parent_sets()
    return out


def project_network(table: ScoreTable, parents: dict[str, Any]) -> tuple[Parents | None, str]:
    """(A DAG that uses only the table's parent sets, "") — each variable keeps its parent set if the table
    has it, else the best-scoring table set inside it, so the result is a subgraph of ``parents`` and stays
    acyclic — or (None, why) when some variable's table holds no set inside its parents: a table scored
    with required parents (``--require``) has no ∅ for their children, and a network found without the
    knowledge (greedy or proxy search) may lack them."""
    out: Parents = {}
    for v in table.variables:
        ps = frozenset(parents.get(v, ()))
        if ps in table.families[v]:
            out[v] = ps
            continue
        inside = [(s, cand) for cand, s in table.families[v].items() if cand <= ps]
        if not inside:
            return None, f"no parent set of {v!r} in the score table fits inside its parents {sorted(ps)}"
        out[v] = max(inside, key=lambda t: t[0])[1]
    return out, ""


def warm_start_unheld(table: ScoreTable, parents: dict[str, Any]) -> str:
    """Why the score table cannot hold a warm start's network — the first variable whose parent set is not
    among its candidates, and what keeps it out (the palim, the knowledge the table was scored with, or
    pruning) — or "" when it can. Variables the network does not name are not judged here (the solver
    refuses such a start as malformed)."""
    meta = table.meta
    palim = exact_up_to(meta) if meta.get("palim_reached") else meta.get("palim")
    for v in table.variables:
        if v not in parents:
            continue
        ps = frozenset(parents[v])
        if ps in table.families[v]:
            continue
        scored_under = Knowledge.coerce(meta["knowledge"]) if isinstance(meta.get("knowledge"), dict) else None
        if palim is not None and len(ps) > palim:
            why = f"larger than the palim ({palim})"
        elif scored_under is not None and not scored_under.family_ok(v, ps):
            why = "the background knowledge it was scored with excludes it"
        elif meta and meta.get("prune", True):       # a table with no sidecar says nothing of how it was made
            why = "pruned: no network within the BF it was scored for uses it"
        else:
            why = "not among its candidate parent sets"
        return f"the parent set {sorted(ps)} of {v!r} is not in the score table ({why})"
    return ""


def _check_warm_start_network(table: ScoreTable, parents: dict[str, Any]) -> None:
    """A warm start must be a network of the table's variables — every one of them, no other name, no directed
    cycle — else an :class:`InputError` (a malformed start is bad input, not a hint to drop)."""
    names = set(table.variables)
    missing = [v for v in table.variables if v not in parents]
    unknown = sorted(({str(v) for v in parents} | {str(p) for ps in parents.values() for p in ps}) - names)
    if missing or unknown:
        raise InputError(f"warm_start: variables missing {missing[:5]}, unknown {unknown[:5]}: it must give every "
                         "variable of the score table its parents")
    check_acyclic(parents, "warm_start")


def enumeration_unit(table: ScoreTable, enumerate_by: str = "auto") -> tuple[str, str]:
    """(``dags`` or ``mecs``, why) for a score table: ``auto`` enumerates classes exactly when the table's
    sidecar says the score is score-equivalent (:data:`bnilp.scores.base.SCORE_EQUIVALENT_SCORES`, no
    prior that breaks it); a file without a sidecar is not assumed to be. ``mecs`` on a score that is
    not score-equivalent is an error: its classes' DAGs do not share one score."""
    if not isinstance(enumerate_by, str) or enumerate_by not in ENUMERATE_CHOICES:
        raise InputError(f"enumerate_by (--enumerate) must be one of {', '.join(ENUMERATE_CHOICES)}, got "
                         f"{enumerate_by!r}")
    meta = table.meta
    equivalent = score_equivalent(meta)
    what = f"{meta.get('score', 'unknown score')}" + (f" with prior {meta['prior']}" if meta.get("prior", "none")
                                                       != "none" else "")
    if enumerate_by == "dags":
        return "dags", "asked (--enumerate dags)"
    if enumerate_by == "mecs":
        if equivalent is False:
            raise InputError(f"enumerate_by='mecs' (--enumerate mecs) needs a score-equivalent score; {what} is not "
                             "(Markov equivalent DAGs score differently): use enumerate_by='dags' (--enumerate dags)")
        return "mecs", ("asked (--enumerate mecs)" if equivalent else
                        "asked (--enumerate mecs); no sidecar says the score is score-equivalent: assumed")
    if equivalent:
        return "mecs", f"auto: {what} is score-equivalent, so each class is enumerated once and its DAGs counted"
    if equivalent is None:
        return "dags", "auto: no sidecar says the score is score-equivalent, so DAGs are enumerated"
    return "dags", f"auto: {what} is not score-equivalent, so DAGs are enumerated"


def pruned_for_less(table: ScoreTable, epsilon: float) -> float | None:
    """The ε a table was pruned for (its ``meta["epsilon"]``, from the sidecar) when that is less than
    ``epsilon``, else None. Sound pruning keeps the parent sets of every network within the ε it was pruned
    for; for a larger ε networks may be missing. An unpruned table holds every network's parent sets."""
    made_for = table.meta.get("epsilon")
    if table.meta.get("prune", True) and made_for is not None and epsilon > float(made_for) + 1e-12:
        return float(made_for)
    return None


def unknown_pruning_note(table: ScoreTable, epsilon: float) -> str | None:
    """For ε > 0, when nothing records the ε a table was pruned for (a score file without its sidecar, as
    GOBNILP's and pygobnilp's; a table built by hand), what the completeness of its credible set rests on —
    the search lists every network within ε *of the table*, which holds every credible network only if the
    table was pruned for at least that ε — else None (``report["pruning_note"]``; the CLI prints it, with
    ``-q`` too)."""
    if epsilon <= 0 or table.meta.get("epsilon") is not None or not table.meta.get("prune", True):
        return None
    if "pss" in table.meta and SIDECAR_HASH not in table.meta:
        why = "no sidecar, and a PSS file's header has no such field"
    else:
        why = "its sidecar has no 'epsilon'" if table.meta else "no sidecar"
    return (f"nothing records the BF this score table was pruned for ({why}): its credible set is complete "
            f"only if the table was pruned for at least BF {bf_text(epsilon)}")


#: what a score table that admits no DAG is (:class:`NoDagError`: solve_table, count_credible; the CLI, exit 2)
NO_DAG = ("the score table admits no DAG (some variable lacks the empty parent set and every choice of the candidate "
          "parent sets makes a cycle)")


def check_table_epsilon(table: ScoreTable, epsilon: float) -> None:
    """An :class:`InputError` when the table was pruned for a smaller ε (:func:`pruned_for_less`): its
    credible set would not be complete."""
    made_for = pruned_for_less(table, epsilon)
    if made_for is not None:
        asked, made = distinct_g(epsilon, float(made_for))
        raise InputError(f"epsilon={asked}: the table was pruned for epsilon={made} (BF "
                         f"{bf_text(float(made_for))}); a larger epsilon needs a table scored for at "
                         "least that epsilon")


@interrupts_as_keyboard
def solve_table(table: ScoreTable, *, epsilon: float = 0.0, time_limit: float | None = None,
                max_networks: int = DEFAULT_MAX_NETWORKS, prior: str = "dags", warm_start: Parents | None = None,
                progress: Any = None, enumerate_by: str = "auto", list_dags: bool = False,
                knowledge: Knowledge | Any = None, optimum_only: bool = False, jobs: int = 1,
                count_past_cap: bool = False) -> LearnResult:
    """OPT and every network within ε of it, grouped and averaged.

    ``time_limit``: seconds for the whole search (None: none); reaching it leaves ``complete`` False and the
    status ``time_limit``, with what was found. ``max_networks``: the most networks (classes, under class
    enumeration) listed; past it the status is ``network_limit``. ``prior``: the prior over structures for the
    posteriors, uniform over ``dags`` or over ``mecs`` (averaging.md). ``progress``: called with a dict
    (``phase``, ``networks``, ``elapsed`` and the phase's figures) at most every 0.25 s.

    ``jobs`` (−1: one per core): processes for phase 2 when branch-and-cut lists the set (from 30 variables,
    past its first :data:`~bnilp.ilp.settings.PHASE2_SERIAL_SECONDS`; :mod:`bnilp.ilp.cubes`); the set is the
    same for any value.

    ``knowledge`` (:class:`bnilp.knowledge.Knowledge`, a dict of its fields or a knowledge file):
    OPT, the credible set, the classes and the posteriors are those of the DAGs that satisfy it —
    families that disagree with its arrows are dropped (:func:`bnilp.knowledge.restrict_table`), the
    search adds the rest (:mod:`bnilp.ilp.knowledge_rows`), and a class is its DAGs that satisfy it.
    When no DAG does, an :class:`InputError` says so — a :class:`bnilp.errors.LimitError` (``knowledge_pruning``)
    where the table was pruned without the knowledge's required statements, whose sets the pruning may have
    removed (the CLI exits 3: score with the knowledge); a table that admits no DAG even without knowledge
    raises :class:`bnilp.errors.NoDagError` (an :class:`InputError`): there is no result to return.
    ``report["knowledge"]`` lists the statements,
    the required and the forbidden arrows, and ``knowledge_note`` why a foreign table may be inexact.

    ``optimum_only``: prove OPT and return one optimal network, without listing the other optimal
    ones (``ilp.solve(..., enumerate_ties=False)``; what GOBNILP and pygobnilp return). ε must then be
    0; the report says ``"optimum_only": true`` and ``complete`` stays False (the list is not the set).

    ``enumerate_by`` (``auto``, ``mecs``, ``dags``; :func:`enumeration_unit`): with ``mecs`` the solver
    lists one representative per credible class and :func:`bnilp.mec.credible_classes` counts each
    class's DAGs and their edge shares from its CPDAG (``list_dags`` lists them all instead); the report
    is the same as for DAG enumeration, with ``n_networks`` the number of DAGs counted.

    ``warm_start`` (each variable mapped to its parents) is only a hint to the search: a network whose parent
    sets the table does not hold (pruned, past the palim; :func:`warm_start_unheld`) or that breaks the
    knowledge is not used, and ``report["warm_start_note"]`` says why; one that leaves out a variable, names
    one the table lacks or has a directed cycle is an :class:`InputError`.

    ``count_past_cap`` (class enumeration): list on past ``max_networks`` classes (``ilp.solve``); the report
    holds the best ``max_networks`` and its class and edge posteriors, ``posterior_classes`` and
    ``posterior_dags`` cover every class found (with ``list_dags``: the best ``max_networks`` DAGs listed, every
    DAG counted; under ``knowledge`` each class past the cap counted as a listed one, for at most
    :data:`~bnilp.ilp.settings.TAIL_COUNT_SECONDS`).
    """
    check_is_table(table)
    if not isinstance(prior, str) or prior not in AVERAGING_PRIORS:
        raise InputError(f"prior (--prior) must be one of {', '.join(AVERAGING_PRIORS)}, got {prior!r}")
    epsilon = check_real(epsilon, "epsilon (--epsilon)", 0)
    list_dags, optimum_only, count_past_cap = _check_flags(list_dags=list_dags, optimum_only=optimum_only,
                                                           count_past_cap=count_past_cap)
    check_callback(progress)
    check_table(table, "table")
    check_table_epsilon(table, epsilon)
    if warm_start is not None and not isinstance(warm_start, Mapping):
        raise InputError(f"warm_start must be a dict of each variable → its parents, got {type(warm_start).__name__}")
    if optimum_only and epsilon != 0:
        raise InputError(f"optimum_only proves OPT and returns one optimal network: it takes no ε > 0 (got {epsilon})")
    _check_optimum_only(optimum_only, enumerate_by, list_dags, prior)
    unit, why = ("dags", "optimum only: one optimal network, no enumeration") if optimum_only else \
        enumeration_unit(table, enumerate_by)
    if list_dags and unit != "mecs":
        raise InputError(f"list_dags (--list-dags) lists the DAGs of each equivalence class, but this run lists every "
                         f"DAG already ({why})")
    k = with_recorded(table, Knowledge.coerce(knowledge))
    if k is not None and k.empty():
        k = None
    if count_past_cap:
        _check_count_past_cap(unit, why, list_dags, k)
    note = ws_note = None
    warm_start_given = warm_start is not None     # the record says a start was given, used or not (a review)
    if isinstance(warm_start, Mapping):    # only a hint: a network the table cannot hold is not used, and said so
        warm_start = parent_lists(warm_start, "warm_start")          # a string is one parent, never its letters
        _check_warm_start_network(table, warm_start)
        unheld = warm_start_unheld(table, warm_start)
        if unheld:
            ws_note, warm_start = f"warm start not used: {unheld}", None
    if k is not None:
        k.validated(table.variables, table.meta.get("dropped_constant", ()))   # a name it lacks is no pruning limit
        note = pruning_note(table, k)
        try:
            table = restrict_table(table, k)
        except InputError as exc:
            palim = table.meta.get("palim")
            beyond = palim is not None and any(len(ps) > palim for ps in k.required_parents().values())
            # more required parents than the table's palim: no pruning explains it, the request is impossible
            raise (InputError(str(exc)) if beyond else _no_dag_under(k, note, str(exc))) from None
        admitted = _admitted_warm_start(table, k, warm_start)
        if warm_start is not None and admitted is None:
            ws_note = "warm start not used: it does not satisfy the background knowledge"
        warm_start = admitted
    started = time.perf_counter()
    solution = solve(table, epsilon, time_limit=time_limit, max_networks=max_networks,
                     warm_start=warm_start, progress=progress, enumerate_by=unit,
                     enumerate_ties=not optimum_only, jobs=jobs, count_past_cap=count_past_cap)
    if warm_start is not None and solution.stats.get("warm_start_used") is False:
        prover = {"forests": "the heaviest forest (Kruskal) is OPT's class",
                  "branchings": "the maximum spanning arborescence (Edmonds) is OPT's DAG"}.get(
            solution.stats["phase1"].get("method"), "the dynamic programme proved OPT")
        ws_note = f"warm start not used: {prover}; only branch-and-cut takes a start"
    if k is not None and solution.status == "infeasible":
        raise _no_dag_under(k, note, "knowledge: no DAG satisfies the background knowledge with these candidate "
                                     f"parent sets ({'; '.join(k.statements())})")
    if solution.status == "infeasible":       # no result to report: the CLI says this one line (exit 2)
        raise NoDagError(f"table: {NO_DAG}")
    if unit == "mecs" and not equivalence_vouched(table.meta):    # assumed: a table that is not says so here
        # auto: the user asked for no classes; the record's claim chose them (a review: the message named
        # --enumerate mecs, which was never given)
        check_assumed_equivalence(table, solution, "enumerate_by='mecs' (--enumerate mecs)"
                                  if enumerate_by == "mecs" else f"class enumeration ({why})")
    with paused_gc():
        if unit == "mecs":
            deadline = _tail_deadline(solution.status, time_limit)
            if k is not None:           # (the search has checked time_limit)
                deadline = _knowledge_tail_deadline(deadline, None if time_limit is None else
                                                    started + float(time_limit))
            report, solution = _class_report(table, solution, epsilon, prior, list_dags, k, note is None,
                                             max_networks, deadline)
        else:
            doc = solution.to_dict()
            report = summarise(doc, prior=prior, variables=table.variables, knowledge=k,
                               class_members=_cut_class_members(table, doc, prior, k))
    if k is not None:
        report["knowledge"] = knowledge_report(k)
        for edge in report["edges"]:
            if (edge["from"], edge["to"]) in set(k.required):
                edge["knowledge"] = "required"
        if note:
            report["knowledge_note"] = note
    report["enumerate"] = unit
    report["enumerate_reason"] = why
    report["optimum_only"] = optimum_only
    report["bf"] = bayes_factor(epsilon)
    report["scoring"] = scoring_summary(table)
    if ws_note:
        report["warm_start_note"] = ws_note
    unknown = unknown_pruning_note(table, epsilon)
    if unknown:             # a DataWarning too: a notebook showed nothing of it (a review; the CLI prints its line)
        report["pruning_note"] = unknown
        warn_at_caller(unknown)
    report["limits"] = []
    if note:
        report["limits"].append("knowledge_pruning")
    if table.meta.get("palim_reached"):
        report["exact_for_parent_sets_up_to"] = exact_up_to(table.meta)
        report["limits"].append("palim")
    if table.meta.get("score_time_limit_reached"):
        report["limits"].append("score_time_limit")
    if table.meta.get("score_memory_limit_reached"):
        report["limits"].append("score_memory_limit")
    report["provenance"] = {**provenance(), "settings": {
        "time_limit": time_limit, "max_networks": max_networks, "prior": prior, "enumerate_by": enumerate_by,
        "list_dags": list_dags, "optimum_only": optimum_only, "count_past_cap": count_past_cap, "jobs": jobs,
        "warm_start": warm_start_given}}
    return LearnResult(table, solution, report)


def _no_dag_under(k: Knowledge, note: str | None, why: str) -> InputError | LimitError:
    """No DAG of the table satisfies the knowledge: bad input where the table holds every set the knowledge could
    need, else (``note``: :func:`bnilp.knowledge.pruning_note`, a table pruned without its required statements) the
    ``knowledge_pruning`` limit — the pruning may have removed the sets those statements need."""
    if note is None:
        return InputError(why)
    return LimitError(f"knowledge_pruning: {why}, but the score table was pruned without the knowledge's required "
                      "arrows, adjacencies, ancestor relations or dependences and may lack the parent sets they need "
                      "(score the data with the knowledge, score_parent_sets(knowledge=…) / --knowledge, for an exact "
                      "result)")


def _cut_class_members(table: ScoreTable, doc: dict[str, Any], prior: str, knowledge: Any) -> dict | None:
    """Under ``prior="mecs"``, a DAG listing that a limit cut (``--enumerate dags``): each listed class's DAGs that
    the table admits (:func:`bnilp.mec.count_admitted`), so that a listed DAG weighs W(M)/m(M) as under
    ``--list-dags`` — the conditional of the posterior on what was listed; the 9 of a class's 10 DAGs that a cap
    listed shared all of W(M) (a review: 0.0537 for the class where ``--list-dags`` gave 0.0486). Only where every
    DAG of a class shares its score (a score-equivalent table bnilp vouches for) and no knowledge (which would
    decide which of them count); else None (the listed ones share W(M))."""
    from bnilp.mec import count_admitted, group_by_mec, network_items

    if prior != "mecs" or doc["complete"] or knowledge is not None or not equivalence_vouched(table.meta):
        return None
    members = {}
    for m in group_by_mec(network_items(doc["networks"])):
        admitted, exact = count_admitted(m.cpdag, table.families, table.variables)
        if not exact:
            return None
        members[m.key] = admitted
    return members


def equivalence_vouched(meta: dict[str, Any]) -> bool:
    """Whether a table's score equivalence is vouched for by what bnilp computed: a record that says it, made by
    bnilp's scoring in this process or read from a sidecar bnilp wrote for this very file (its SHA-256 checked on
    reading, :data:`bnilp.scorefile.SIDECAR_HASH`). No record, a PSS file's header (``score_type``) and a sidecar
    older than the hash are assumed and checked (:func:`check_assumed_equivalence`; a review: an MVP file whose header
    was made to say BIC listed 28 DAGs in 7 classes where 7 DAGs are credible), nor a record copied from one
    (:func:`bnilp.scorefile.record_unvouched`)."""
    return bool(score_equivalent(meta)) and not record_unvouched(meta)


def check_assumed_equivalence(table: ScoreTable, solution: SolveResult,
                              needs: str = "enumerate_by='mecs' (--enumerate mecs)",
                              instead: str = "enumerate_by='dags' (--enumerate dags)") -> None:
    """Where nothing says the table is score-equivalent and classes are enumerated all the same (``--enumerate
    mecs`` on a file without a sidecar), a covered-edge reversal the table scores differently shows it is not
    (:func:`~bnilp.mec.unequal_covered_families`, every one the table holds): an error, as for a score known not to
    be — each class's DAGs were counted as sharing its representative's score, DAGs outside the BF included (a
    review). ``needs`` names what needs the equivalence, ``instead`` what to use (as the API and the command line
    call them)."""
    # the class listing's own tolerance, or the file's rounding where it writes few decimals
    slack = max(EQUIVALENCE_SLACK, float(tie_tolerance(solution.optimum)), rounding_slack(table.families))
    found = unequal_covered_families(table.families, slack)
    if found is not None:
        u, v, shared, before, after = found
        given = "{" + ", ".join(sorted(map(str, shared))) + "}"
        raise InputError(f"{needs} needs a score-equivalent table, and this one is "
                         f"not: reversing the covered edge {u} → {v} (both with parents {given}) moves a DAG's "
                         f"score by {after - before:+.6g} (Markov equivalent DAGs score differently); use {instead}")


def _is(value: object, word: str) -> bool:
    """``value`` is the string ``word`` (a pandas Series compared with ``==`` is a Series, which has no truth)."""
    return isinstance(value, str) and value == word


def _check_optimum_only(optimum_only: bool, enumerate_by: str, list_dags: bool, prior: str) -> None:
    """``optimum_only`` enumerates nothing: an ``enumerate_by``, ``list_dags`` or ``prior="mecs"`` with it would
    silently not apply — refused, as the command line refuses them (the API ran with them ignored: a review)."""
    if optimum_only is not True:        # the settings are checked where they are used (a Series here: no bool)
        return
    ignored = [name for name, on in (("enumerate_by (--enumerate)", not _is(enumerate_by, "auto")),
                                     ("list_dags (--list-dags)", list_dags is True),
                                     ("prior='mecs' (--prior mecs)", _is(prior, "mecs"))) if on]
    if ignored:
        raise InputError(f"optimum_only returns one optimal network and enumerates nothing: drop "
                         f"{' and '.join(ignored)}")


def _check_count_past_cap(unit: str, why: str, list_dags: bool, k: Knowledge | None) -> None:
    """``count_past_cap`` needs class enumeration, whose classes past the cap are counted compactly
    (:func:`bnilp.mec.class_tail_mass`; under knowledge :func:`bnilp.mec.knowledge_tail_mass`). With ``list_dags``
    the best ``max_networks`` classes, kept whole, hold the best ``max_networks`` DAGs (each holds one or more),
    which are listed, and the DAGs of the rest are counted — the exact total, as peeling gives it (it was refused:
    the DAG total of a branch-and-cut or forests listing capped at ``max_networks`` classes was "at least")."""
    if unit != "mecs":
        raise InputError(f"count_past_cap counts equivalence classes, but this enumeration lists DAGs ({why})")


def _admitted_warm_start(table: ScoreTable, k: Knowledge, warm_start: Parents | None) -> Parents | None:
    """The warm start if every family of it is in the table restricted to K and it satisfies K, else
    None (a greedy or proxy start knows nothing of the knowledge; it is only a hint to SCIP)."""
    if warm_start is None:
        return None
    ok = all(frozenset(warm_start.get(v, ())) in table.families[v] for v in table.variables) and k.allows(warm_start)
    return warm_start if ok else None


def knowledge_report(k: Knowledge) -> dict[str, Any]:
    """``report["knowledge"]``: the statements, and the arrows it requires and forbids (with why)."""
    out = k.to_dict()
    out["required_arrows"] = [list(e) for e in k.required]
    out["forbidden_arrows"] = [[a, b, why] for (a, b), why in sorted(k.forbidden_arrows().items())]
    return out


def _tail_dags(tail: Any, table: ScoreTable, ref: float, prior: str, sound: bool, knowledge: Knowledge | None,
               first: int, deadline: float | None = None) -> tuple[int, int]:
    """The DAGs of the classes past the cap (``tail``), counted as the listed ones are: under ``knowledge`` only
    those that satisfy it (:func:`bnilp.mec.credible_classes`; the table was restricted to its arrows, so the
    compiled count of whole classes, which knows no knowledge, took the cut classes for unsound pruning), and how
    many classes ``deadline`` left uncounted."""
    if knowledge is None:
        mass = class_tail_mass(tail, table.families, table.variables, ref, prior, complete_classes=sound,
                               first=first, deadline=deadline)
    else:
        mass = knowledge_tail_mass(tail, table.families, table.variables, ref, prior, complete_classes=sound,
                                   knowledge=knowledge, first=first, deadline=deadline)
    return mass.dags, mass.uncounted


#: what stopped a search whose classes past the cap were counted to a deadline, in the report's words
_STOPPED_BY = {"time_limit": "time limit", "interrupted": "interrupt"}


def _knowledge_tail_deadline(deadline: float | None, limit_end: float | None) -> float:
    """When counting the classes past the cap under background knowledge must stop: ``deadline`` (a search stopped
    by a limit or a signal, :func:`_tail_deadline`); else, a search that ended within the user's time limit, at
    ``limit_end`` (when that limit runs out; a second from now at least); else
    :data:`~bnilp.ilp.settings.TAIL_COUNT_SECONDS` from now, at most. Each class is counted in Python there
    (:func:`bnilp.mec.knowledge_tail_mass`, about 0.1–1 ms a class): 401,978 classes of a completed search on 20
    variables took 55 s after a search of 8.6 s under a 20-s limit, and a Ctrl-C in that time lost the whole result
    (a review)."""
    if deadline is not None:
        return deadline
    now = time.perf_counter()
    most = now + settings.TAIL_COUNT_SECONDS
    return most if limit_end is None else min(most, max(limit_end, now + 1.0))


def _uncounted_words(uncounted: int, status: str, knowledge: Knowledge | None) -> str:
    """Why ``uncounted`` classes past the cap were left out of the counts, in the report's words: the time left
    after a limit or a signal, or (a completed search) the bound on counting them under background knowledge."""
    if status in _STOPPED_BY or knowledge is None:
        return f"the other {uncounted:,} not counted in the time left after the {_STOPPED_BY.get(status, status)}"
    return (f"the other {uncounted:,} not counted: under background knowledge the classes past the cap are "
            f"counted one by one, within the time limit and for at most {settings.TAIL_COUNT_SECONDS:g} s")


def _tail_deadline(status: str, time_limit: float | None) -> float | None:
    """When counting the classes found past the cap must stop (a :func:`time.perf_counter` time), or None: a
    search stopped by its ``time_limit`` gets :data:`~bnilp.ilp.settings.TAIL_COUNT_SHARE` of it more, one
    interrupted :data:`~bnilp.ilp.settings.TAIL_COUNT_SECONDS` (at least that either way) — not minutes of
    counting past the limit the user set (:func:`bnilp.mec.class_tail_mass`)."""
    if status not in ("time_limit", "interrupted"):
        return None
    share = settings.TAIL_COUNT_SHARE * time_limit if time_limit is not None else 0.0
    return time.perf_counter() + max(settings.TAIL_COUNT_SECONDS, share)


def classes_whole(table: ScoreTable, solution: SolveResult, epsilon: float, knowledge_sound: bool = True) -> bool:
    """Whether every DAG of each credible class is in ``table`` (``complete_classes`` of
    :func:`bnilp.mec.credible_classes`): the table was pruned soundly for at least ``epsilon`` (its provenance
    says so: no sidecar, no claim), without a palim cutting it, under the knowledge it is used with, and OPT is
    proven. Sound pruning keeps every parent set of every *credible* DAG; a best-so-far DAG from a phase 1
    stopped early need not be credible, so neither need the other DAGs of its class be in the table."""
    made_for = table.meta.get("epsilon")
    return (made_for is not None and epsilon <= float(made_for) + 1e-12 and not table.meta.get("palim_reached")
            and knowledge_sound and solution.optimum_proven)


def _class_report(table: ScoreTable, solution: SolveResult, epsilon: float, prior: str,
                  list_dags: bool, knowledge: Knowledge | None = None, knowledge_sound: bool = True,
                  max_networks: int | None = None, tail_deadline: float | None = None
                  ) -> tuple[dict[str, Any], SolveResult]:
    """Counted classes → (report, solution); ``list_dags``: every admitted DAG of every class listed and
    averaged — at most ``max_networks`` of them: past it the best ``max_networks`` are listed and averaged
    and the solution becomes incomplete (status ``network_limit``, as a DAG enumeration stopped by the cap).
    The classes found past the cap are counted until ``tail_deadline`` (:func:`_tail_deadline`; under knowledge
    :func:`_knowledge_tail_deadline`)."""
    meta = table.meta
    sound = classes_whole(table, solution, epsilon, knowledge_sound)
    mecs = credible_classes(solution.networks, table.families, table.variables, complete_classes=sound,
                            knowledge=knowledge)
    counted = ("every DAG of each class" if sound else
               "the DAGs of each class whose parent sets are all in the score table"
               + (f" (palim {exact_up_to(meta)})"
                  if meta.get("palim_reached") else "")
               + ("" if solution.optimum_proven else
                  " (OPT not proven: the class of the best DAG found so far, which may not be credible)"))
    if knowledge is not None:
        counted += " that satisfies the background knowledge" if sound else " that satisfy the background knowledge"
    listed = "all DAGs" if list_dags else "one representative per class"
    if list_dags:
        total, uncounted = int(sum(m.n_dags for m in mecs)), 0
        if solution.unlisted is not None and len(solution.unlisted):     # classes found past the cap: counted
            more, uncounted = _tail_dags(solution.unlisted, table, solution.optimum, prior, sound, knowledge,
                                         len(mecs) + 1, tail_deadline)
            total += more
        # every credible class found (the cap cut only the listing), or a count over those found so far
        exact = not uncounted and (solution.status == "optimal"
                                   or (solution.status == "network_limit" and solution.unlisted is not None))
        of = f"the {total:,}" if exact else f"at least {total:,}"
        # the search's cap is on classes here, which the user did not ask for: its "the best 2000 of 14225 credible
        # classes" read as 2000 classes kept, where 340 held the 2000 DAGs listed (a review)
        said, classes = solution.message, ""
        # the classes the DAGs were counted in: all those found but the ones a deadline left uncounted
        found = len(mecs) + (len(solution.unlisted) if solution.unlisted is not None else 0)
        counted_in = (f"{found:,}" if not uncounted else
                      f"{found - uncounted:,} of the {found:,}")
        left = f" ({_uncounted_words(uncounted, solution.status, knowledge)})" if uncounted else ""
        if solution.status == "network_limit" and solution.unlisted is not None:
            said, classes = "network limit reached", f" in {counted_in} credible classes{left}"
        elif solution.status == "network_limit":
            said = (f"network limit reached: the class search stopped at {len(mecs):,} classes (--max-networks caps "
                    "them too), so the DAGs are counted over those")
        elif solution.unlisted is not None and len(solution.unlisted) and said:    # stopped early, classes past the
            # cap counted: "the best 2000 of them kept" read as 2,000 classes listed, where 66 held the DAGs (a review)
            said = said.replace(f", the best {len(mecs)} of them kept", "")
            classes = f" in {counted_in} credible classes found{left}"
        if max_networks is not None and total > max_networks:
            listed = (f"the best {max_networks:,} of {of} DAGs counted (--max-networks); edge posteriors "
                      "over those listed")
            note = f"DAG listing stopped at {max_networks:,} DAGs (--max-networks) of {of} counted{classes}"
            solution = replace(solution, complete=False,
                               status="network_limit" if solution.status == "optimal" else solution.status,
                               message="; ".join(filter(None, (said, note))))
        elif not exact:     # the search stopped (a limit) before the set was complete: what it found, all of it
            listed = (f"all DAGs of the {len(mecs):,} classes found ({solution.status}: the set is not complete); "
                      "edge posteriors over those listed")
            solution = replace(solution, message=said)
        # the DAGs listed are the result's networks too (graphs(), fit(network=i), the exports), not only the JSON's
        solution = replace(solution, networks=[Network(s, dag) for s, dag in expand_classes(
            mecs, table.families, table.variables, knowledge, limit=max_networks)])
        doc = solution.to_dict()
        doc["n_networks"] = len(doc["networks"])
        report = summarise(doc, prior=prior, variables=table.variables, knowledge=knowledge,
                           class_members={m.key: m.n_dags for m in mecs})
        report["n_dags_counted"] = total
        report["n_dags_counted_exact"] = exact
        # the classes those DAGs were counted in (n_mecs: the classes of the DAGs listed — 1 of 7 said "1 found")
        report["n_mecs_counted"] = found - uncounted
        report["classes_uncounted"] = uncounted
        # what the posteriors average over, as in class listing: here the DAGs listed and their classes
        report["posterior_classes"] = report["n_mecs"]
        report["posterior_dags"] = report["n_networks"]
    else:
        tail = None
        if solution.unlisted is not None and len(solution.unlisted) and knowledge is None:
            tail = class_tail_mass(solution.unlisted, table.families, table.variables, solution.optimum, prior,
                                   complete_classes=sound, first=len(mecs) + 1, deadline=tail_deadline)
        elif solution.unlisted is not None and len(solution.unlisted):     # each class as a listed one is
            tail = knowledge_tail_mass(solution.unlisted, table.families, table.variables, solution.optimum, prior,
                                       complete_classes=sound, knowledge=knowledge, first=len(mecs) + 1,
                                       deadline=tail_deadline)
        if tail is not None:
            found = "credible classes" if solution.status == "network_limit" else "credible classes found"
            listed = (f"one representative for each of the best {len(mecs):,} classes; class and edge posteriors "
                      f"over all {len(mecs) + tail.classes:,} {found}")
            if tail.uncounted:
                listed = (f"one representative for each of the best {len(mecs):,} classes; class and edge "
                          f"posteriors over the best {len(mecs) + tail.classes:,} of the "
                          f"{len(mecs) + len(solution.unlisted):,} {found} "
                          f"({_uncounted_words(tail.uncounted, solution.status, knowledge)})")
        report = summarise_classes(solution.to_dict(), mecs, prior=prior, variables=table.variables, tail=tail)
        report["classes_uncounted"] = tail.uncounted if tail is not None else 0
    report["counted"] = counted
    report["listed"] = listed
    return report, solution


@interrupts_as_keyboard
def learn(
    data: str | os.PathLike[str] | pd.DataFrame | Dataset,
    *,
    score: str = "bic",
    bf: float | None = None,
    epsilon: float | None = None,
    palim: int | None = None,
    time_limit: float | None = None,
    max_networks: int = DEFAULT_MAX_NETWORKS,
    prior: str = "dags",
    structure_prior: str = "none",
    expected_parents: float | None = None,
    ebic_gamma: float = DEFAULT_EBIC_GAMMA,
    n_jobs: int = 1,
    enumerate_by: str = "auto",
    list_dags: bool = False,
    knowledge: Knowledge | Any = None,
    optimum_only: bool = False,
    count_past_cap: bool = False,
    scheduler: str | None = None,
    counts: str = "auto",
    score_time_limit: float | None = None,
    prune: bool = True,
    **score_settings: Any,
) -> LearnResult:
    """Learn the optimal network and every network within Bayes factor ``bf`` of it.

    ``data``: a path (CSV/TSV/.dat), a DataFrame or a :class:`Dataset`. ``score``: bic, bdeu, cg,
    cgd, mvp, mml, bge; ``score_settings`` go to the score (``ess``, ``bins``, ``degree``,
    ``penalty_discount``, ``alpha_mu``, ``alpha_w``, ``standardize``). ε = ln(bf) (``bf``
    :data:`DEFAULT_LEARN_BF` when neither is given) or ``epsilon``, not both (an :class:`InputError`, as the
    command line refuses ``--bf`` with ``--epsilon``); ``bf`` ≥ 1 and
    ``epsilon`` ≥ 0 must be finite
    real numbers (not ``bool`` or strings), checked before anything is read (an :class:`InputError` naming
    them). ``prior`` is the prior over
    structures for averaging (uniform over ``dags`` or ``mecs``); ``structure_prior`` the per-family
    prior added to the score (none, binomial, ebic). ``enumerate_by``, ``list_dags``, ``knowledge``,
    ``count_past_cap``: see
    :func:`solve_table` (the knowledge also shapes the scoring walk, :func:`score_parent_sets`).
    ``optimum_only``: score for ε = 0 (``bf`` is not used) and return one optimal network (:func:`solve_table`).
    ``n_jobs`` processes score the parent sets and list the credible set (``jobs`` of :func:`solve_table`).
    ``scheduler``: score on a Dask cluster, its address or ``"local"`` (a LocalCluster of ``n_jobs`` − 1
    workers, kept for later calls), as :func:`score_parent_sets` (``--scheduler``; extra ``bnilp[dask]``), which
    also takes ``counts`` (``--counts``) and, as ``time_limit``, ``score_time_limit`` (``--score-time-limit``:
    seconds of scoring, parent sets deepened size by size; the result is then exact for the sizes scored and
    ``limits`` says so). ``prune=False`` keeps every parent set up to the palim (``--no-prune``; as
    :func:`score_parent_sets`, with its default palim past 16 variables).
    ``palim``: the largest parent set scored (``None``: no limit beyond what the pruning rules prove; scores
    that need one get :func:`bnilp.parentsets.default_palim`, recorded in the report). ``time_limit``
    (seconds) and ``max_networks`` (DAGs, or classes under class enumeration, at most) bound the search;
    reaching one leaves :attr:`LearnResult.complete` False, and ``solution.status`` names it. ``expected_parents``
    (r of ``structure_prior="binomial"``; ``None``: :func:`bnilp.scores.base.default_expected_parents`, 1 from
    three variables) and ``ebic_gamma`` (γ of ``"ebic"``) are the structure priors' settings.

    Returns a :class:`LearnResult`: the solution (optimum, networks, classes), the posteriors and the
    report dictionary that the command line writes as JSON.
    """
    list_dags, optimum_only, count_past_cap = _check_flags(list_dags=list_dags, optimum_only=optimum_only,
                                                           count_past_cap=count_past_cap)
    prune = bool(check_flag(prune, "prune (--no-prune)"))
    _check_optimum_only(optimum_only, enumerate_by, list_dags, prior)
    if expected_parents is not None:
        check_real(expected_parents, "expected_parents (--expected-parents)", 0, above=True)
    check_real(ebic_gamma, "ebic_gamma (--ebic-gamma)", 0)
    # a prior's setting given with another prior would not apply: refused, as the command line refuses it (a review);
    # its documented default value is taken as the default (expected_parents=1.0 was, before None meant "default")
    for setting, value, defaults, kind in (("expected_parents", expected_parents, (None, DEFAULT_EXPECTED_PARENTS),
                                            "binomial"),
                                           ("ebic_gamma", ebic_gamma, (DEFAULT_EBIC_GAMMA,), "ebic")):
        if value not in defaults and not _is(structure_prior, kind):
            raise InputError(f"{setting} is a setting of structure_prior='{kind}' (--prior {kind}); with "
                             f"structure_prior={structure_prior!r} it would not apply")
    check_seconds(score_time_limit, "score_time_limit (--score-time-limit)", positive=True)
    if "jobs" in score_settings:    # solve_table's name: read as a score setting, "score 'bic' takes no setting 'jobs'"
        raise InputError("jobs: learn takes n_jobs (--jobs), the processes of both the scoring and the search")
    if bf is not None and epsilon is not None:
        raise InputError(f"give bf or epsilon, not both (got bf={bf!r}, epsilon={epsilon!r})")
    if optimum_only:
        if epsilon is not None and check_real(epsilon, "epsilon (--epsilon)", 0) != 0:
            raise InputError(f"optimum_only returns one optimal network: it takes no ε > 0 (got {epsilon})")
        if bf is not None and check_real(bf, "bf (--bf)", 1) != 1:
            raise InputError(f"optimum_only returns one optimal network: it takes no BF > 1 (got {bf})")
        eps = 0.0
    elif epsilon is None:
        eps = math.log(check_real(DEFAULT_LEARN_BF if bf is None else bf, "bf (--bf)", 1))
    else:
        eps = check_real(epsilon, "epsilon (--epsilon)", 0)
    dataset = _as_dataset(data, score)
    sp = StructurePrior(structure_prior, dataset.n, expected_parents, ebic_gamma)
    scorer = make_score(score, dataset, prior=sp, **score_settings)
    k = Knowledge.coerce(knowledge)
    if k is not None:
        k.validated(dataset.names, dataset.dropped)
    table = score_parent_sets(scorer, epsilon=eps, palim=palim, n_jobs=n_jobs, knowledge=k, scheduler=scheduler,
                              counts=counts, time_limit=score_time_limit, prune=prune)
    result = solve_table(table, epsilon=eps, time_limit=time_limit, max_networks=max_networks, prior=prior,
                         enumerate_by=enumerate_by, list_dags=list_dags, knowledge=k, optimum_only=optimum_only,
                         jobs=n_jobs, count_past_cap=count_past_cap)
    result.dataset = dataset
    return result


def _check_flags(**flags: object) -> list[bool]:
    """Each of ``flags`` as a ``bool`` (:func:`bnilp.errors.check_flag`: ``"no"`` is not False), in order; an error
    names the parameter and its command-line flag (``list_dags (--list-dags)``)."""
    return [bool(check_flag(value, f"{name} (--{name.replace('_', '-')})")) for name, value in flags.items()]


def _is_index(value: Any) -> bool:
    """A whole number usable as a list index: Python or NumPy integers, not ``bool`` (True is no rank)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _as_dataset(data: str | os.PathLike[str] | pd.DataFrame | Dataset, score: Any = None) -> Dataset:
    """``data`` as a :class:`Dataset`. A path or DataFrame is typed as the command line types it for ``score``:
    with a discrete-only score (:data:`bnilp.scores.DISCRETE_ONLY_SCORES`) columns of integer codes are discrete
    whatever their number of values (``integer_codes`` of :func:`bnilp.data.load_data`); with a continuous-only
    score (:data:`bnilp.scores.CONTINUOUS_ONLY_SCORES`: BGe) every column is continuous."""
    if isinstance(data, Dataset):
        return data
    codes = isinstance(score, str) and score.lower() in DISCRETE_ONLY_SCORES
    continuous = "all" if isinstance(score, str) and score.lower() in CONTINUOUS_ONLY_SCORES else None
    if not isinstance(data, (str, os.PathLike, pd.DataFrame)):
        raise InputError(f"data must be a file path, a pandas DataFrame or a bnilp Dataset, got {type(data).__name__}")
    try:
        if isinstance(data, pd.DataFrame):
            return from_dataframe(data, integer_codes=codes, continuous=continuous)
        return load_data(data, integer_codes=codes, continuous=continuous)
    except InputError as exc:
        if continuous and "is continuous but holds" in str(exc):
            raise InputError(f"{exc} (score {score!r} reads every column as continuous; a mixed score takes discrete "
                             "columns)") from None
        raise
