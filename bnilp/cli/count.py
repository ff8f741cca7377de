"""``bnilp count``: the number of credible DAGs and equivalence classes of a score file, identical columns merged."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
import numpy as np
from rich.table import Table

from bnilp.averaging import PRIORS as AVERAGING_PRIORS
from bnilp.cli import EXIT_LIMIT, outputs_whole, say_signal_after_search
from bnilp.cli.learn import _check_search_options, _check_table_epsilon, _live, _no_dag_said, _search_jobs
from bnilp.cli.options import bf_options, check_outputs, epsilon_from, split_priors, writes_stdout
from bnilp.errors import DataWarning, InputError, UnsoundTableError
from bnilp.pipeline import unknown_pruning_note
from bnilp.report import (
    COUNT_REPORT_FILES,
    TOP_MECS,
    cpdag_lists,
    posterior_lists,
    probability_text,
    write_count_report,
)
from bnilp.scorefile import atomic_write_text, output_set, read_score_file, sidecar_path, strict_json
from bnilp.scores.base import bayes_factor, bf_text, score_equivalent
from bnilp.terminal import lossless, one_line, plain_console
from bnilp.twins import certain_pairs, class_groups, count_credible, count_refusal

#: the cap on the reduced table's classes (``--max-networks``): each is expanded, not reported
DEFAULT_COUNT_CAP = 1_000_000


@contextmanager
def _file_named(scores_path: str) -> Iterator[None]:
    """An :class:`UnsoundTableError` from the count names the score file it is about (a review: it named none)."""
    try:
        yield
    except UnsoundTableError as exc:
        raise UnsoundTableError(f"{scores_path}: {exc}") from None


@click.command()
@click.argument("scores_path", metavar="FILE.scores")
@bf_options
@click.option("--time-limit", type=float, default=None,
              help="Seconds (> 0) for listing the reduced table's classes (90 % of it at most) and counting what "
                   "they expand to.")
@click.option("--max-networks", type=int, default=DEFAULT_COUNT_CAP, show_default=True,
              help="Cap (≥ 1) on the classes of the reduced table (each is counted, not reported).")
@click.option("--jobs", "n_jobs", type=int, default=1, show_default=True,
              help="Processes for listing the reduced table's classes when branch-and-cut lists them (-1 = all "
                   "cores), as solve's --jobs: the counts are the same for any value.")
@click.option("--prior", "priors", type=click.Choice(AVERAGING_PRIORS), multiple=True,
              help="Prior over structures for the class table's posteriors and the JSON's edge posteriors: uniform "
                   "over DAGs (default) or over MECs.")
@click.option("--json", "json_out", metavar="FILE",
              help="Write the counts, the class table by groups (with their class sizes) and the edge posteriors "
                   "(arrows, adjacencies, undirected in the CPDAG) as JSON.")
@click.option("--report", "report_dir", metavar="DIR",
              help="Write edges.csv, groups.csv (the class table by groups), count.json, averaged.dot and PNG pictures "
                   "(heatmap.png, averaged.png) of the edge posteriors into DIR.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def count(scores_path: str, bf: float | None, epsilon: float | None, **opts: Any) -> None:
    """Count the DAGs and Markov equivalence classes within --bf of the optimum of a score file (default BF 1), without
    listing them: where two columns are identical (twins, checked on the table: bnilp.twins), one of them is merged
    into the other, the smaller table's classes are listed, and each is counted by what it stands for. For
    score-equivalent scores (BIC, BDeu, …). Exit 3 when a limit cut the count short (the numbers are then lower
    bounds)."""
    eps = epsilon_from(bf, epsilon, default_bf=1.0)
    prior = split_priors(opts.get("priors"))[1]
    _check_search_options(opts)
    check_outputs(opts, {"json_out": "--json", "report_dir": "--report"}, folders=("report_dir",),
                  inputs={scores_path: "SCORES", sidecar_path(scores_path): "SCORES's sidecar"},
                  folder_files=COUNT_REPORT_FILES)
    table = read_score_file(scores_path)
    _check_table_epsilon(table, eps, scores_path)
    if score_equivalent(table.meta) is False:
        raise InputError(f"bnilp count counts equivalence classes: it needs a score-equivalent score, and the score "
                         f"file's sidecar says {table.meta.get('score', 'its score')} is not")
    if table.meta.get("knowledge"):
        raise InputError("the score file's sidecar records background knowledge: bnilp count counts without it (the "
                         "knowledge could tell twin columns apart)")
    refusal = count_refusal(table, "bnilp count", scores_path)    # the library's words name count_credible (a review)
    if refusal:
        raise InputError(refusal)
    with _live(plain_console(stderr=True), opts.get("quiet", False)) as update, warnings.catch_warnings(), \
            _no_dag_said(scores_path), _file_named(scores_path):
        warnings.simplefilter("ignore", DataWarning)      # the pruning note: printed by _check_table_epsilon
        result = count_credible(table, eps, time_limit=opts.get("time_limit"), max_networks=opts["max_networks"],
                                jobs=_search_jobs(opts), progress=update,
                                posteriors=bool(opts.get("json_out") or opts.get("report_dir")))
    groups = class_groups(result, prior)
    if opts.get("json_out") or opts.get("report_dir"):      # the files hold each group's CPDAG; the console does not
        dropped = {p.dropped for p in result.pairs}
        for group, cpdag in zip(groups, cpdag_lists((e.cpdag for e in result.expansions),
                                                    [v for v in table.variables if v not in dropped]), strict=True):
            group["cpdag"] = cpdag
    report = {
        "n_dags": result.dags, "n_mecs": result.classes, "complete": result.complete, "status": result.status,
        "optimum": result.optimum, "epsilon": eps, "bf": bayes_factor(eps),
        "twins": [{"kept": p.kept, "merged": p.dropped} for p in result.pairs],
        "message": result.message,
        "reduced": {"variables": len(table.variables) - len(result.pairs), "n_dags": result.reduced_dags,
                    "n_mecs": result.reduced_classes, "n_mecs_counted": result.expanded},
        "prior": prior,
        **dict(zip(("edges", "adjacency"), _posterior_lists(result.posteriors.get(prior, ({}, {})),
                                                            table.variables, certain_pairs(result, table.variables)),
                   strict=True)),
        "groups": groups,
        "variables": list(table.variables), "posterior_dags": result.dags,
        "seconds": result.seconds,
    }
    unknown = unknown_pruning_note(table, eps)
    if unknown:                 # as solve's JSON has it (a review: only on stderr)
        report["pruning_note"] = unknown
    with outputs_whole(), output_set():     # the JSON and the report: both or neither, a signal waiting meanwhile
        if opts.get("report_dir"):
            write_count_report(opts["report_dir"], report)
        if opts.get("json_out"):
            atomic_write_text(opts["json_out"], json.dumps(strict_json(report), indent=1) + "\n")
    if not opts.get("quiet"):
        say = (lambda text: click.echo(text, err=True)) if writes_stdout(opts.get("json_out")) else click.echo
        merged = ", ".join(f"{p.dropped} into {p.kept}" for p in result.pairs) or "none"
        bound = "" if result.complete else "≥ "
        say(f"twins merged: {merged}; reduced table ({report['reduced']['variables']} variables): "
            f"{result.reduced_classes:,} classes listed ({bound}{result.reduced_dags:,} DAGs), "
            f"{result.expanded:,} counted")
        say(f"credible DAGs {bound}{result.dags:,}  classes {bound}{result.classes:,}  status {result.status}  "
            f"complete {str(result.complete).lower()}" + (f"  ({result.message})" if result.message else ""))
        if groups:
            table_out = plain_console(stderr=writes_stdout(opts.get("json_out")))
            table_out.print(lossless(_group_table(groups, prior, result.complete)))
    if not result.complete:         # why, with -q too, as solve and learn say it (a review: -q exited 3 silently)
        click.echo(one_line(f"bnilp: incomplete: {result.message or result.status}"), err=True)
        sys.exit(EXIT_LIMIT)
    if result.signal_after_search:
        say_signal_after_search(result.status)


def _group_table(groups: list[dict[str, Any]], prior: str, complete: bool) -> Table:
    """The terminal's class table of a counted set: the best :data:`~bnilp.report.TOP_MECS` groups of classes
    (:func:`bnilp.twins.class_groups`), each the classes that contract to one class of the merged table."""
    t = Table(title=f"Credible classes by the class of the merged table they contract to (top "
                    f"{min(TOP_MECS, len(groups))} of {len(groups)}{'' if complete else ' counted: NOT complete'})")
    for col in ("#", "score", "ln BF", "BF to best", "classes", "DAGs", "class sizes", f"posterior ({prior})"):
        t.add_column(col, justify="right")
    for k, g in enumerate(groups[:TOP_MECS], start=1):
        sizes = [size for size, _ in g["class_sizes"]]
        span = "—" if not sizes else f"{sizes[0]:,}" if len(sizes) == 1 else f"{sizes[0]:,}–{sizes[-1]:,}"
        t.add_row(str(k), f"{g['score']:.4f}", f"{g['ln_bf']:.4f}", bf_text(g["ln_bf"]), f"{g['n_mecs']:,}",
                  f"{g['n_dags']:,}", span, probability_text(g["posterior"]))
    return t


def _posterior_lists(posteriors: tuple[dict[tuple[str, str], float], dict[frozenset[str], float]],
                     variables: list[str], certain: tuple[np.ndarray, np.ndarray, np.ndarray]
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The JSON's ``edges`` and ``adjacency`` lists (:func:`bnilp.report.posterior_lists`, as learn's) from
    :func:`bnilp.twins.class_posteriors`' P(u → v) and P(u — v undirected in the CPDAG), 1 exactly for the pairs
    every DAG holds (``certain``, :func:`bnilp.twins.certain_pairs`)."""
    arrows, undirected = posteriors
    index = {v: i for i, v in enumerate(variables)}
    d = np.zeros((len(variables), len(variables)))
    for (u, v), p in arrows.items():
        d[index[u], index[v]] = p
    und = np.zeros_like(d)
    for pair, p in undirected.items():
        u, v = sorted(pair, key=index.__getitem__)
        und[index[u], index[v]] = und[index[v], index[u]] = p
    return posterior_lists(d, variables, und, certain)
