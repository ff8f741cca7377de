"""``bnilp learn`` (data → report) and ``bnilp solve`` (score file → report).

Exit codes: 0 = proven optimal and the credible set is complete; 3 = a time, network, memory or palim
limit (or an interrupt) cut the work short (the printed and written results say so);
2 = bad input, or a score file whose tables admit no DAG.
"""

from __future__ import annotations

import json
import math
import shlex
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from bnilp.averaging import PRIORS as AVERAGING_PRIORS
from bnilp.cli import EXIT_INPUT, EXIT_LIMIT, outputs_whole, say_signal_after_search
from bnilp.cli.options import (
    bf_options,
    check_outputs,
    check_time_limits,
    data_options,
    epsilon_from,
    given_on_command_line,
    knowledge_from_options,
    knowledge_options,
    load_from_options,
    read_paths,
    score_options,
    split_priors,
    writes_stdout,
)
from bnilp.cli.score import score_data, walk_options, warn_stream_losses
from bnilp.data import default_path
from bnilp.errors import DataWarning, InputError, NoDagError, OutputError, UnsoundTableError
from bnilp.export import PARAMETER_METHODS
from bnilp.graphs import check_acyclic
from bnilp.ilp import DEFAULT_MAX_NETWORKS
from bnilp.inputs import read_input_text
from bnilp.mec import MASK_MAX_VARIABLES
from bnilp.metrics import check_tetrad_names, tetrad_graph_text
from bnilp.pipeline import (
    DEFAULT_LEARN_BF,
    ENUMERATE_CHOICES,
    NO_DAG,
    LearnResult,
    enumeration_unit,
    project_network,
    pruned_for_less,
    solve_table,
    unknown_pruning_note,
    warm_start_unheld,
)
from bnilp.report import (
    best_network_caveat,
    limit_reason,
    lists_every_dag,
    print_report,
    report_json_text,
    write_dot,
    write_graphml,
    write_report,
)
from bnilp.scorefile import (
    ScoreTable,
    atomic_write_text,
    check_score_file_names,
    output_set,
    read_score_file,
    sidecar_path,
    write_score_file,
)
from bnilp.scores.base import bayes_factor, bf_text, distinct_g
from bnilp.scores.discrete import DEFAULT_ESS, MIN_ESS
from bnilp.terminal import LogProgress, one_line, plain_console
from bnilp.twins import mergeable_pairs


def solve_options(func):
    """--time-limit, --max-networks, --prior, outputs, --quiet."""
    for opt in reversed([
        click.option("--time-limit", type=float, default=None,
                     help="Seconds for the search (both phases). Default: no limit."),
        click.option("--enumerate", "enumerate_by", type=click.Choice(list(ENUMERATE_CHOICES)), default=None,
                     help="List every credible DAG, or one per equivalence class with its DAGs counted "
                          "(default auto: classes for score-equivalent scores)."),
        click.option("--optimum-only", is_flag=True,
                     help="Prove OPT and return one optimal network; do not list tied or near-optimal "
                          "networks (what GOBNILP returns; --bf 1 lists every tied optimal network)."),
        click.option("--list-dags", is_flag=True,
                     help="With class enumeration, also list the DAGs of every class, best first, at most "
                          "--max-networks of them (past that the result is marked incomplete)."),
        click.option("--max-networks", type=int, default=DEFAULT_MAX_NETWORKS, show_default=True,
                     help="Stop collecting after this many networks — classes, under class enumeration (the "
                          "default for score-equivalent scores) — and mark the result incomplete."),
        click.option("--count-past-cap", is_flag=True,
                     help="With class enumeration, do not stop at --max-networks classes: list on until the set "
                          "is complete (or a limit stops it), report the best --max-networks classes and count "
                          "every class found into the DAG counts and posteriors (with --list-dags: the best "
                          "--max-networks DAGs listed, every DAG counted). Where the dynamic programme lists the "
                          "set (peeling) every class is counted already: it changes nothing there."),
        click.option("--warm-start", "warm_start", metavar="proxy|greedy|FILE.json",
                     help="Hand branch-and-cut a first network: from greedy or proxy search (learn only: they need "
                          "the data), or a JSON with 'parents'. Where the dynamic programme proves OPT (up to 22 "
                          "variables) it is not used, and the JSON says so."),
        click.option("--json", "json_out", metavar="FILE", help="Write the result as JSON."),
        click.option("--report", "report_dir", metavar="DIR",
                     help="Write edges.csv, mecs.csv, networks.json, DOT and GraphML files and PNG pictures "
                          "here."),
        click.option("--dot", "dot_out", metavar="FILE", help="Write the best network as DOT."),
        click.option("--graphml", "graphml_out", metavar="FILE",
                     help="Write the best network as GraphML."),
        click.option("--tetrad", "tetrad_out", metavar="FILE",
                     help="Write the best network in Tetrad's text format (Graph Nodes / Graph Edges), which "
                          "Tetrad, causal-cmd and causal-learn read."),
        click.option("-q", "--quiet", is_flag=True, help="Only the result, no progress."),
    ]):
        func = opt(func)
    return func


def export_options(func):
    """--export, --export-network, --parameters (learn only: fitting parameters needs the data)."""
    for opt in reversed([
        click.option("--export", "export_path", metavar="FILE",
                     help="Write the best network with fitted parameters: .bif, .xmlbif/.xml (discrete only) "
                     "or .json."),
        click.option("--export-network", type=int, default=None, metavar="K",
                     help="Export the K-th network listed instead (1 = the best): under class enumeration the K-th "
                          "class's representative (--list-dags lists every DAG)."),
        click.option("--parameters", "parameter_method", type=click.Choice(PARAMETER_METHODS), default=None,
                     help="Parameters of the export: maximum likelihood or BDeu-consistent Dirichlet with --ess "
                     "(default: bayes when --score bdeu, else ml)."),
    ]):
        func = opt(func)
    return func


def _check_export(data: Any, opts: dict[str, Any]) -> None:
    """Export options that can be refused before any work: format, discrete-only, K, stray options."""
    if not opts.get("export_path"):
        for name, key in (("--export-network", "export_network"), ("--parameters", "parameter_method")):
            if opts.get(key) is not None:
                raise InputError(f"{name} needs --export PATH")
        return
    from bnilp.export import check_discrete, check_xml_text, default_method, export_format

    try:
        fmt = export_format(opts["export_path"])
    except InputError as exc:       # (the API's message names the path; the command line's its flag too)
        raise InputError(f"--export: {exc}") from None
    check_discrete(data, fmt)
    if fmt == "xmlbif":
        check_xml_text(dict(zip(data.names, data.levels, strict=True)))
    k = opts.get("export_network")
    if k is not None and not 1 <= k <= opts.get("max_networks", k):
        raise InputError(f"--export-network must lie in 1..--max-networks ({opts.get('max_networks')}), got {k}")
    if k is not None and k > 1 and opts.get("optimum_only"):
        raise InputError(f"--optimum-only returns one network: --export-network {k} cannot be exported")
    method = opts.get("parameter_method") or default_method(opts.get("score_name"))
    if method == "bayes" and not any(data.is_discrete(j) for j in range(data.n)):
        raise InputError("--parameters bayes sets the discrete children's CPTs, but every variable of the network is "
                         "continuous (constant columns are left out): their regressions are maximum likelihood "
                         "whatever the method (drop --parameters bayes)")
    ess = opts.get("ess", DEFAULT_ESS)
    if method == "bayes" and not (math.isfinite(ess) and ess >= MIN_ESS):
        raise InputError(f"--ess must be a finite number ≥ {MIN_ESS:g} for --parameters bayes, got {ess} (smaller, "
                         "α/(q·r) underflows to 0 and an unseen configuration's row is 0/0)")


def _export(result: LearnResult, data: Any, opts: dict[str, Any]) -> tuple[str | None, str | None]:
    """Fit and write the chosen network (--export); the report records what was written. Returns the error
    when network K was not collected (known only after the search): nothing is exported, the report
    says why, and :func:`_finish` still writes the other outputs before it exits 2; and the line to print
    once every output is in place (a review: "exported … to o.bif" was printed, then a later file of the set
    could not be written and the export was rolled back)."""
    k = opts.get("export_network") or 1
    n = len(result.solution.networks)
    if n == 0:                      # nothing to fit: the report says why (infeasible, or a limit hit first)
        return None, "[yellow]no network was found: nothing exported[/yellow]"
    if k > n:
        error = (f"--export-network {k}: only {n} network(s){_one_per_class(result.report)} were collected; "
                 "nothing exported")
        result.report["export"] = {"path": opts["export_path"], "network": k, "error": error}
        return error, None
    from bnilp.export import default_method, export_format

    method = opts.get("parameter_method") or default_method(result.table.meta.get("score"))
    try:
        fitted = result.export(opts["export_path"], data, network=k - 1, method=method,
                               ess=opts.get("ess") if method == "bayes" else None)
    except OutputError:                # the file could not be written: no output is left (output_set)
        raise
    except InputError as exc:          # what only the fitted network shows: the search's outputs still count
        result.report["export"] = {"path": opts["export_path"], "network": k, "error": str(exc)}
        return str(exc), None
    info = {"path": opts["export_path"], "format": export_format(opts["export_path"]), "network": k,
            "score": fitted["network"]["score"], "parameters": fitted["parameters"],
            "absent": fitted["absent"]}
    result.report["export"] = info
    par = fitted["parameters"]
    how = par["method"] + (f", ESS {par['ess']:g}" if par["ess"] is not None else "")
    if par.get("continuous") and par["method"] != par["continuous"]:     # bayes: it concerns the CPTs only
        cpts = any(e.get("cpt") is not None for e in fitted["variables"].values())
        how += f" for the CPTs, {par['continuous']} regressions" if cpts else \
            f" (no child has a CPT: every parameter is {par['continuous']})"
    absent = f"; absent (constant): {', '.join(fitted['absent'])}" if fitted["absent"] else ""
    ranking = f"; {fitted['network']['ranking']}" if fitted["network"].get("ranking") else ""
    done = f"exported network {k} of {n}{_one_per_class(result.report)} with {how} parameters to " \
           f"{opts['export_path']}{absent}{ranking}"
    return None, None if opts.get("quiet") else escape(done)


def _one_per_class(report: dict[str, Any]) -> str:
    """What the collected networks are, where they are not every DAG: one per class in ``mecs`` mode unless
    ``--list-dags`` listed every DAG of every class (the export's lines said "one per equivalence class" then too)."""
    return " (one per equivalence class)" if report.get("enumerate") == "mecs" and not lists_every_dag(report) else ""


def _where(info: dict[str, Any]) -> str:
    """A progress report in words: the phase and its networks, or the share of the dynamic programme's passes."""
    if "done" in info:
        return f"{info.get('phase', '')}: {info['done']:.0%} of its passes done"
    return f"{info.get('phase', '')}: {info.get('networks', 0)} networks"


@contextmanager
def _live(console: Console, quiet: bool):
    """A status line fed by the solver's progress callback."""
    if quiet:
        yield None
        return
    if not console.is_terminal:     # a log: a line now and then
        log = LogProgress(console)
        yield lambda info: log(f"search, {_where(info)}")
        return
    with console.status("solving …") as status:
        def update(info: dict[str, Any]) -> None:
            status.update(f"{_where(info)}, {info.get('elapsed', 0.0):.1f} s")

        yield update


def _warm_start(spec: str | None, table: ScoreTable, data: Any, opts: dict[str, Any],
                console: Console) -> tuple[dict[str, frozenset[str]] | None, dict[str, Any]]:
    """The starting network and what the report says of it (source, score, search seconds)."""
    if not spec:
        return None, {}
    if spec in ("proxy", "greedy"):
        if data is None:
            raise InputError("--warm-start proxy|greedy needs data (use bnilp learn), or give a JSON file")
        from bnilp.cli.options import score_from_options
        from bnilp.proxy import greedy_search, proxy_search

        scorer = score_from_options(data, opts)
        palim = table.meta.get("palim")
        found = (proxy_search(scorer, max_parents=palim, seed=0) if spec == "proxy"
                 else greedy_search(scorer, max_parents=palim, seed=0))
        parents, why = project_network(table, found.parents)
        if parents is None:     # only a hint to SCIP: the search goes on without it, and says so
            console.print(f"warm start from {spec} search not used: {why}", highlight=False, markup=False)
            return None, {"source": spec, "used": False, "why": why, "search_seconds": round(found.seconds, 4)}
        score = table.network_score(parents)
        if not opts.get("quiet"):
            console.print(f"warm start from {spec} search: exact score {score:.6f}")
        return parents, {"source": spec, "score": score, "search_seconds": round(found.seconds, 4)}
    parents = opts["warm_start_parents"]       # read by _check_search_options, its names by _check_warm_start_names
    why = warm_start_unheld(table, parents)
    if why:                     # only a hint, as a searched one: not used, and the report says why
        console.print(f"warm start from {spec} not used: {why}", highlight=False, markup=False)
        return None, {"source": spec, "used": False, "why": why}
    return parents, {"source": spec, "score": table.network_score(parents)}


def _check_warm_start_names(opts: dict[str, Any], names: list[str], dropped: tuple[str, ...] = (),
                            of: str = "the data's columns") -> None:
    """A ``--warm-start`` file's network names the variables ``names`` (the data's columns, or a score file's
    variables), each with its parents: an unknown name or a variable left out is an :class:`InputError` naming
    the file, checked before scoring. A constant column the data leave out (``dropped``) is taken out of the
    network (as a parent it keeps the start out of the table: not used)."""
    parents = opts.get("warm_start_parents")
    if parents is None:
        return
    spec = opts["warm_start"]
    known = set(names) | set(dropped)
    unknown = sorted(({v for v in parents} | {p for ps in parents.values() for p in ps}) - known)
    if unknown:
        raise InputError(f"{spec}: unknown variable(s) {', '.join(map(repr, unknown[:5]))}"
                         f"{', …' if len(unknown) > 5 else ''}: not among {of}")
    missing = [v for v in names if v not in parents]
    if missing:
        raise InputError(f"{spec}: no parents given for {', '.join(map(repr, missing[:5]))}"
                         f"{', …' if len(missing) > 5 else ''}: a warm start gives every variable its parents")
    opts["warm_start_parents"] = {v: ps for v, ps in parents.items() if v not in dropped}


def _warm_start_file(spec: str) -> dict[str, frozenset[str]]:
    """The network of a ``--warm-start`` JSON file: its ``parents`` (or its first network's), each variable
    mapped to a list of parent names; anything else is an :class:`InputError` naming the file."""
    try:
        doc = json.loads(read_input_text(spec, "utf-8-sig"))     # a byte-order mark is no JSON error
        raw = doc["parents"] if "parents" in doc else doc["networks"][0]["parents"]
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:     # ValueError: JSON's, a 5,000-digit int
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise InputError(f"{spec}: not a network JSON with 'parents' ({why})") from None
    except (KeyError, IndexError, TypeError):
        raise InputError(f"{spec}: not a network JSON with 'parents': a JSON object with 'parents' (each variable → "
                         "its parents) or 'networks' (a result JSON: its first network's) is needed") from None
    if not (isinstance(raw, dict) and all(isinstance(ps, list) and all(isinstance(p, str) for p in ps)
                                          for ps in raw.values())):
        raise InputError(f"{spec}: 'parents' must map each variable to a list of parent names")
    twice = next(((v, p) for v, ps in raw.items() for i, p in enumerate(ps) if p in ps[:i]), None)
    if twice is not None:       # as the score-file readers refuse one (a review: taken silently)
        raise InputError(f"{spec}: {twice[1]!r} is listed twice among the parents of {twice[0]!r}")
    parents = {str(v): frozenset(ps) for v, ps in raw.items()}
    loop = next((v for v, ps in parents.items() if v in ps), None)
    if loop is not None:
        raise InputError(f"{spec}: the network has a directed cycle ({loop!r} is its own parent)")
    check_acyclic(parents, spec)
    return parents


#: learn's and solve's output options (option key → flag); ``--report`` names a directory
OUTPUT_FLAGS = {"json_out": "--json", "report_dir": "--report", "dot_out": "--dot", "graphml_out": "--graphml",
                "tetrad_out": "--tetrad", "export_path": "--export", "scores_out": "--scores"}


def _check_tetrad(names: list[str], opts: dict[str, Any]) -> None:
    """``--tetrad``: every variable a name Tetrad's text format holds, known before the search."""
    if opts.get("tetrad_out"):
        check_tetrad_names(names, "--tetrad")


def _check_search_options(opts: dict[str, Any]) -> None:
    """What the search's options alone decide, checked before any scoring or reading of a score file
    (``--max-networks``, ``--time-limit`` and ``--score-time-limit`` finite and > 0, ``--jobs``, a
    ``--warm-start`` file, kept as ``opts["warm_start_parents"]``)."""
    if opts.get("max_networks", 1) < 1:
        raise InputError(f"--max-networks must be ≥ 1, got {opts['max_networks']}")
    check_time_limits(opts)
    _search_jobs(opts)
    if opts.get("list_dags") and opts.get("enumerate_by") == "dags":
        raise InputError("--list-dags lists the DAGs of each equivalence class: --enumerate dags lists every DAG "
                         "already")
    spec = opts.get("warm_start")
    if spec and spec not in ("proxy", "greedy"):
        opts["warm_start_parents"] = _warm_start_file(spec)


def _finish(result: LearnResult, opts: dict[str, Any], console: Console, t0: float, data: Any = None) -> None:
    """Write the export (--export, fitted on ``data``), print the report and write every output — all the files
    or none (:func:`bnilp.scorefile.output_set`); then the exit: 3 for a limit, 2 for an export the search could
    not serve (said on its own line either way), else 0."""
    with output_set():
        export_error, exported = _export(result, data, opts) if opts.get("export_path") else (None, None)
        _write(result, opts, t0)
    if exported:
        console.print(exported, highlight=False)
    _print(result, opts)
    _exit(result, export_error)


def _write(result: LearnResult, opts: dict[str, Any], t0: float) -> None:
    """The output files. ``--report DIR`` first (its pictures and tables can take tens of seconds on a large
    set), so that the JSON's ``total_seconds`` covers them: it read 21 s of a 55-s command (a review); the
    report's own ``networks.json`` holds the time up to the report."""
    report = result.report
    report["total_seconds"] = round(time.perf_counter() - t0, 4)
    if opts.get("report_dir"):
        write_report(opts["report_dir"], report)
        report["total_seconds"] = round(time.perf_counter() - t0, 4)
    if opts.get("json_out"):
        atomic_write_text(opts["json_out"], report_json_text(report))
    if result.solution.networks:
        best, caveat = result.solution.networks[0].parents, best_network_caveat(report)
        if opts.get("dot_out"):
            write_dot(best, opts["dot_out"], caveat)
        if opts.get("graphml_out"):
            write_graphml(best, opts["graphml_out"], caveat)
        if opts.get("tetrad_out"):
            atomic_write_text(opts["tetrad_out"], tetrad_graph_text(best, caveat=caveat))


def _print(result: LearnResult, opts: dict[str, Any]) -> None:
    """The report, printed once every file is in place: an output that cannot be written (a full disk) ends the
    run with its one line and exit 2, not after a report that reads as a success (a review's find)."""
    report = result.report
    to_stderr = writes_stdout(*(opts.get(key) for key in OUTPUT_FLAGS))     # stdout holds that output alone
    out = plain_console(stderr=to_stderr) if not opts.get("quiet") else None
    if out is not None:
        print_report(report, out)
    else:
        click.echo(f"optimum {report['optimum']} status {report['status']} networks {report['n_networks']} "
                   f"mecs {report['n_mecs']} complete {str(report['complete']).lower()}", err=to_stderr)


def _exit(result: LearnResult, export_error: str | None) -> None:
    """Every limit that applies said (with -q too), then the exit: 2 for ``export_error`` (no model file was written,
    though a limit applies too: a 3 read as "written, but limited" — a review), else 3 for any limit."""
    report = result.report
    if export_error:
        click.echo(one_line(f"bnilp: error: {export_error}"), err=True)
    incomplete = not result.solution.complete and not (report.get("optimum_only")
                                                       and result.solution.status == "optimal")
    if incomplete:
        click.echo(f"bnilp: incomplete: {result.solution.message or result.solution.status}", err=True)
    elif (result.solution.stats or {}).get("signal_after_search"):     # the set whole: the signal came too late
        say_signal_after_search(result.solution.status)
    if "knowledge_pruning" in result.limits:
        click.echo(f"bnilp: limited: {report.get('knowledge_note')}", err=True)
    if "palim" in result.limits:
        why = limit_reason(result.table.meta)
        click.echo(f"bnilp: limited: the credible set is exact only for parent sets of size ≤ "
                   f"{report['exact_for_parent_sets_up_to']} ({why}); larger sets were not scored", err=True)
    if export_error:
        sys.exit(EXIT_INPUT)
    if incomplete or {"knowledge_pruning", "palim"} & set(result.limits):
        sys.exit(EXIT_LIMIT)


@contextmanager
def _no_dag_said(source: str) -> Iterator[None]:
    """The API's :class:`NoDagError` (which names ``table``) in the command's words, naming the score table's
    ``source`` (its file, or the data it was scored from): one line, exit 2."""
    try:
        yield
    except NoDagError:
        raise InputError(f"{source}: {NO_DAG}") from None


def _twins_note(table: ScoreTable, eps: float, opts: dict[str, Any], scores_file: str | None) -> str | None:
    """Where identical columns merge exactly at this BF (``bnilp.twins``: what ``bnilp count`` would merge), a note
    that ``bnilp count`` counts the credible set without listing it, since listing such a set class by class can
    take the whole time limit (hailfinder500 BF 20: 2.6 M of 13.1 M classes in 30 minutes, counted in a second).
    Said with the result, not before the search: an error the search raises stays the run's one line."""
    if opts.get("optimum_only"):
        return None
    pairs = mergeable_pairs(table, eps, opts.get("knowledge"))
    if not pairs:
        return None
    bf = bayes_factor(eps)
    flag = f"--bf {bf:.15g}" if bf is not None else f"--epsilon {eps!r}"
    if split_priors(opts.get("priors"))[1] == "mecs":
        flag += " --prior mecs"
    how = f"`bnilp count {shlex.quote(scores_file)} {flag}`" if scores_file else \
        "`bnilp count` on the score file (save it with --scores FILE)"
    return (f"identical columns merge exactly at this BF ({', '.join(f'{p.dropped} into {p.kept}' for p in pairs)}; "
            f"bnilp.twins): {how} counts the credible DAGs and classes, with their class table by groups and their "
            "edge posteriors, without listing them")


def _run(table: ScoreTable, eps: float, opts: dict[str, Any], console: Console, data: Any, t0: float,
         source: str, scores_file: str | None = None) -> None:
    """Search, report and write the outputs; ``source`` (the score file, or the data scored) names the table in
    its errors; ``scores_file``: where the table is saved, if it is."""
    if opts.get("count_past_cap"):
        _check_count_past_cap(table, opts)
    _check_list_dags(table, opts)
    warm, warm_info = _warm_start(opts.get("warm_start"), table, data, opts, console)
    with _live(console, opts.get("quiet", False)) as update, _no_dag_said(source), warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)     # the pruning note: printed by _check_table_epsilon
        result = solve_table(table, epsilon=eps, time_limit=opts.get("time_limit"),
                             max_networks=opts.get("max_networks", DEFAULT_MAX_NETWORKS),
                             prior=split_priors(opts.get("priors"))[1],
                             warm_start=warm, progress=update, enumerate_by=opts.get("enumerate_by") or "auto",
                             list_dags=opts.get("list_dags", False), knowledge=opts.get("knowledge"),
                             optimum_only=opts.get("optimum_only", False), jobs=_search_jobs(opts),
                             count_past_cap=opts.get("count_past_cap", False))
    twins_note = _twins_note(table, eps, opts, scores_file)     # after the search: only a result carries it
    if twins_note:
        result.report["twins_note"] = twins_note
        if not opts.get("quiet"):
            console.print(f"note: {twins_note}", highlight=False, markup=False)
    if not opts.get("quiet"):
        console.print(f"enumerated {'equivalence classes' if result.report['enumerate'] == 'mecs' else 'DAGs'}: "
                      f"{result.report['enumerate_reason']}", style="dim", highlight=False, markup=False)
    if warm_info:
        note = result.report.get("warm_start_note")
        if note and warm_info.get("used") is not False:     # dropped by solve_table (against the knowledge)
            warm_info.update(used=False, why=note.removeprefix("warm start not used: "))
            if result.solution.stats.get("warm_start_used") is not False:   # (unused by the programme: a network
                warm_info.pop("score", None)                                 # still, with its gap to OPT)
            if not opts.get("quiet"):
                console.print(f"warm start from {warm_info['source']} {note.removeprefix('warm start ')}",
                              highlight=False, markup=False)
        elif warm_info.get("used") is False:                # the table could not hold it: said as solve_table says it
            result.report["warm_start_note"] = f"warm start not used: {warm_info['why']}"
        if warm_info.get("score") is not None and result.solution.networks:
            warm_info["gap_to_optimum"] = result.solution.optimum - warm_info["score"]
            if not opts.get("quiet"):
                console.print(f"warm start ({warm_info['source']}) was {warm_info['gap_to_optimum']:.6f} "
                              "below the best network found", highlight=False, markup=False)
        result.report["warm_start"] = warm_info
        # "whether one was given": a start the table cannot hold never reached solve_table (a review)
        result.report["provenance"]["settings"]["warm_start"] = True
    with outputs_whole():
        _finish(result, opts, console, t0, data)


def _check_count_past_cap(table: ScoreTable | None, opts: dict[str, Any]) -> None:
    """--count-past-cap needs class enumeration, without --optimum-only, on at most MASK_MAX_VARIABLES variables
    (:func:`bnilp.pipeline.solve_table` checks the same, naming its parameters); ``table`` None: what the
    options alone say, before scoring."""
    if opts.get("optimum_only"):
        raise InputError("--count-past-cap counts equivalence classes: --optimum-only lists none")
    if opts.get("enumerate_by") == "dags":
        raise InputError("--count-past-cap counts equivalence classes: --enumerate dags lists DAGs")
    if table is not None:
        unit, why = enumeration_unit(table, opts.get("enumerate_by") or "auto")
        if unit != "mecs":
            raise InputError(f"--count-past-cap counts equivalence classes, but this run lists DAGs ({why})")
        if len(table.variables) > MASK_MAX_VARIABLES:
            raise InputError(f"--count-past-cap works on at most {MASK_MAX_VARIABLES} variables, not "
                             f"{len(table.variables)}")


def _check_before_scoring(data: Any, opts: dict[str, Any], scores_out: str | None) -> None:
    """What the data's columns and the score's name decide, refused before scoring rather than after it: names
    a score file cannot hold (``--scores``), a ``--warm-start`` file's names, ``--enumerate mecs``,
    ``--count-past-cap`` or ``--list-dags`` with a score that is not score-equivalent (the table's sidecar will say what
    ``--score`` and the structure ``--prior`` say now, :func:`bnilp.pipeline.enumeration_unit`)."""
    if scores_out:
        check_score_file_names(data.names, "--scores", scores_out)
    _check_warm_start_names(opts, data.names, tuple(data.dropped))
    if opts.get("optimum_only"):
        return
    planned = ScoreTable(list(data.names), {}, {"score": opts.get("score_name", "bic"),
                                                "prior": split_priors(opts.get("priors"))[0]})
    enumeration_unit(planned, opts.get("enumerate_by") or "auto")
    if opts.get("count_past_cap"):
        _check_count_past_cap(planned, opts)
    _check_list_dags(planned, opts)


def _check_list_dags(table: ScoreTable, opts: dict[str, Any]) -> None:
    """``--list-dags`` lists the DAGs of each equivalence class: a run that lists DAGs (``--enumerate dags``, or
    ``auto`` on a score that is not score-equivalent) would ignore it, so it is refused."""
    if opts.get("list_dags") and not opts.get("optimum_only"):
        unit, why = enumeration_unit(table, opts.get("enumerate_by") or "auto")
        if unit != "mecs":
            raise InputError(f"--list-dags lists the DAGs of each equivalence class, but this run lists every DAG "
                             f"already ({why})")


def _search_jobs(opts: dict[str, Any]) -> int:
    """Processes for phase 2 (``--jobs``; −1 = all cores, which ``ilp.solve`` resolves), checked here to name
    the flag."""
    jobs = opts.get("n_jobs", 1)
    if jobs < 1 and jobs != -1:
        raise InputError(f"--jobs must be ≥ 1 or −1 (all cores), got {jobs}")
    return jobs


@click.command()
@click.argument("scores_path", metavar="FILE.scores")
@bf_options
@solve_options
@click.option("--jobs", "n_jobs", type=int, default=1, show_default=True,
              help="Processes for listing the credible set when branch-and-cut lists it (from 30 variables; "
                   "-1 = all cores): past its first seconds the search splits into parts by adjacency; the "
                   "set is the same for any value.")
@click.option("--prior", "priors", type=click.Choice(AVERAGING_PRIORS), multiple=True,
              help="Prior over structures for averaging: uniform over DAGs (default) or over MECs.")
@knowledge_options
def solve(scores_path: str, bf: float | None, epsilon: float | None, **opts: Any) -> None:
    """Prove the optimal network of a GOBNILP/Jaakkola or URLearning PSS score file; with --bf, every network
    within that Bayes factor of it (default --bf 1: the optimal networks, ties included)."""
    t0 = time.perf_counter()
    console = plain_console(stderr=True)
    eps = _optimum_only_epsilon(bf, epsilon, opts) if opts.get("optimum_only") else \
        epsilon_from(bf, epsilon, default_bf=1.0)
    _check_search_options(opts)
    check_outputs(opts, OUTPUT_FLAGS, folders=("report_dir",),
                  inputs=read_paths(opts, {scores_path: "SCORES", sidecar_path(scores_path): "SCORES's sidecar"}))
    table = read_score_file(scores_path)
    _check_warm_start_names(opts, table.variables, of="the score file's variables")
    _check_tetrad(list(table.variables), opts)
    _check_table_epsilon(table, eps, scores_path)
    opts["knowledge"] = knowledge_from_options(opts)
    if table.meta.get("knowledge") and not opts.get("quiet"):
        console.print("background knowledge: the score file's sidecar records "
                      f"{len(table.meta['knowledge']['statements'])} statement(s): applied (with any given here)",
                      highlight=False)
    try:
        _run(table, eps, opts, console, None, t0, scores_path, scores_file=scores_path)
    except UnsoundTableError as exc:    # the file's pruning does not hold what its sidecar says: name the file
        raise UnsoundTableError(f"{scores_path}: {exc}") from None


def _optimum_only_epsilon(bf: float | None, epsilon: float | None, opts: dict[str, Any]) -> float:
    """--optimum-only means ε = 0 (scoring prunes for BF 1); a larger --bf/--epsilon contradicts it."""
    eps = epsilon_from(bf, epsilon, default_bf=1.0)
    given = [flag for flag, on in (("--enumerate", opts.get("enumerate_by") is not None),
                                   ("--list-dags", opts.get("list_dags")),
                                   ("--max-networks", given_on_command_line("max_networks")),
                                   ("--prior mecs", split_priors(opts.get("priors"))[1] == "mecs")) if on]
    if given:           # each would silently not apply (the last two ran with no effect: a review)
        raise InputError(f"--optimum-only returns one optimal network and enumerates nothing: drop "
                         f"{' and '.join(given)}")
    if eps != 0:
        raise InputError("--optimum-only returns one optimal network: drop --bf/--epsilon (or use --bf 1 "
                         "without --optimum-only to list every tied optimal network)")
    return eps


def _check_table_epsilon(table: ScoreTable, eps: float, source: str) -> None:
    """A score file (``source``) pruned for a smaller ε cannot give the credible set of a larger one."""
    made_for = pruned_for_less(table, eps)
    if made_for is not None:
        made, asked = distinct_g(made_for, eps)
        raise InputError(f"{source}: the score file was pruned for ε = {made} (BF {bf_text(made_for)}); "
                         f"ε = {asked} needs a score file made with at least that BF")
    unknown = unknown_pruning_note(table, eps)
    if unknown:                 # on stderr with -q too, and in the JSON as pruning_note
        click.echo(f"bnilp: warning: {unknown}", err=True)


@click.command()
@click.argument("data_path", metavar="[DATA]", required=False)
@score_options
@bf_options
@walk_options
@data_options
@solve_options
@export_options
@knowledge_options
@click.option("--scores", "scores_out", metavar="FILE",
              help="Also save the score file here (and its .json sidecar); PSS where FILE ends in .pss.")
def learn(data_path: str | None, bf: float | None, epsilon: float | None, scores_out: str | None,
          **opts: Any) -> None:
    """Score DATA, prove the optimal network and find every network within --bf (default 20) of it,
    with equivalence classes and edge posteriors. Without DATA: the bundled ASIA instance."""
    t0 = time.perf_counter()
    console = plain_console(stderr=True)
    eps = _optimum_only_epsilon(bf, epsilon, opts) if opts.get("optimum_only") else \
        epsilon_from(bf, epsilon, default_bf=DEFAULT_LEARN_BF)
    if data_path is None:
        data_path = str(default_path("asia.csv"))
        if not opts.get("quiet"):
            console.print(f"[bold]bnilp learn[/bold]: the bundled default instance {data_path} "
                          f"(5,000 rows sampled from ASIA), score {opts['score_name']}, BF {bf_text(eps)}")
    data = load_from_options(data_path, opts, quiet=opts.get("quiet", False))
    _check_export(data, opts)
    _check_tetrad(list(data.names), opts)
    opts["knowledge"] = knowledge_from_options(opts)
    if opts["knowledge"] is not None:
        opts["knowledge"].validated(data.names, data.dropped)
    if opts.get("count_past_cap"):
        _check_count_past_cap(None, opts)
    _check_search_options(opts)
    check_outputs({**opts, "scores_out": scores_out}, OUTPUT_FLAGS, folders=("report_dir",), sidecars=("scores_out",),
                  inputs=read_paths(opts, {data_path: "DATA"}))
    _check_before_scoring(data, opts, scores_out)
    table = score_data(data, opts, eps, console, opts.get("quiet", False))
    if scores_out:
        with outputs_whole(final=False):        # the search is still to come
            written = write_score_file(table, scores_out)
        warn_stream_losses(table, scores_out, written)
    opts["scores_out"] = scores_out         # --scores - puts the score file on stdout: the report goes to stderr
    _run(table, eps, opts, console, data, t0, data_path, scores_file=scores_out)
