"""``bnilp simulate`` (mixed data from a random DAG) and ``bnilp compare`` (AP/AR/AHP/AHR, SHD).

Both follow Andrews, Ramsey & Cooper §6; the definitions are in :mod:`bnilp.simulate` and
:mod:`bnilp.metrics`.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from bnilp.cli import EXIT_LIMIT
from bnilp.cli.options import check_outputs, check_seed, writes_stdout
from bnilp.errors import InputError
from bnilp.metrics import (
    compare_marked,
    cpdag_graph,
    dag_graph,
    parents_of_result,
    pattern_graph,
    read_graph_or_json,
    thresholded_graph,
)
from bnilp.scorefile import atomic_write_text, output_set
from bnilp.simulate import DEFAULT_AVG_DEGREE, DEFAULT_LINK, DEFAULT_MAX_DEGREE, LINKS
from bnilp.simulate import simulate as simulate_data
from bnilp.statuses import STATUSES
from bnilp.terminal import lossless, plain_console


def _json_safe(obj: Any) -> Any:
    """NaN/inf → null, recursively (strict JSON)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def _parse_categories(text: str) -> tuple[int, int]:
    parts = text.split("-")
    try:
        if len(parts) == 1:
            lo = hi = int(parts[0])
        elif len(parts) == 2:
            lo, hi = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise InputError(f"--categories must look like LO-HI (e.g. 2-5) or K, got {text!r}") from None
    return lo, hi


@click.command()
@click.option("--nodes", type=int, required=True, help="Number of variables.")
@click.option("--samples", type=int, required=True, help="Number of rows.")
@click.option("--avg-degree", type=float, default=None,
              help=f"Average degree, in [0, nodes − 1]; the DAG gets round(avg_degree·nodes/2) edges "
                   f"[default: {DEFAULT_AVG_DEGREE:g}, or nodes − 1 where that is less].")
@click.option("--max-degree", type=int, default=DEFAULT_MAX_DEGREE, show_default=True,
              help="Largest degree of any node (0 = no limit).")
@click.option("--discrete-fraction", type=float, default=0.5, show_default=True,
              help="Fraction of the variables that are discrete, in [0, 1].")
@click.option("--categories", default="2-5", show_default=True, metavar="LO-HI",
              help="Categories of a discrete variable (uniform in LO-HI); also the temporary bins of a "
                   "continuous parent of a discrete child.")
@click.option("--nonlinear", is_flag=True, help="Continuous children depend on random cubic polynomials.")
@click.option("--link", type=click.Choice(LINKS), default=DEFAULT_LINK, show_default=True,
              help="How a discrete child depends on continuous parents: through steps (the temporary "
                   "bins, the seed's) or a softmax link linear in the parents (the form the CG model implies).")
@click.option("--seed", type=int, default=None,
              help="Random seed (default: a fresh one, recorded in the truth).")
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="Data CSV to write.")
@click.option("--truth", "truth_path", required=True, metavar="FILE",
              help="True graph JSON to write ({'parents': ..., 'kinds': ..., ...}).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing.")
def simulate(nodes: int, samples: int, avg_degree: float, max_degree: int, discrete_fraction: float,
             categories: str, nonlinear: bool, link: str, seed: int | None, output: str, truth_path: str,
             quiet: bool) -> None:
    """Simulate mixed discrete/continuous data from a random DAG (Andrews et al. §6)."""
    check_seed(seed)
    check_outputs({"output": output, "truth": truth_path}, {"output": "-o", "truth": "--truth"})
    if avg_degree is None:          # 1 or 2 nodes cannot have the default degree: as dense as they can be
        avg_degree = float(min(DEFAULT_AVG_DEGREE, max(nodes - 1, 0)))
    lo, hi = _parse_categories(categories)
    if max_degree < 0:
        raise InputError(f"--max-degree must be ≥ 0 (0 = no limit), got {max_degree}")
    data, truth = simulate_data(nodes, samples, avg_degree, max_degree or None, discrete_fraction,
                                (lo, hi), nonlinear, seed, link)
    truth["data"] = output
    with output_set():              # the data without its truth is no output: both or neither
        # every float as it was drawn (shortest round trip): the truth's bin_cuts are data points, which 12 digits
        # moved across their own cut (a review: 59 rows changed bin in 30 simulations of 1,001 rows)
        atomic_write_text(output, data.to_csv(index=False, lineterminator="\n"))
        atomic_write_text(truth_path, json.dumps(truth, indent=1) + "\n")
    if quiet:
        return
    to_stderr = writes_stdout(output, truth_path)       # stdout holds that output alone
    console = plain_console(markup=False, highlight=False, stderr=to_stderr)
    n_disc = len(truth["discrete"])
    console.print(f"wrote {output}: {samples} rows, {nodes} variables ({n_disc} discrete, "
                  f"{nodes - n_disc} continuous), {'nonlinear' if nonlinear else 'linear'}")
    console.print(f"wrote {truth_path}: {truth['n_edges']} edges, seed {truth['settings']['seed']}")
    for note in truth["notes"]:
        console.print(f"note: {note}")
    if truth["discrete"]:
        click.echo(f"discrete columns: --discrete {','.join(truth['discrete'])}", err=to_stderr)


def _graph(obj: Any, where: str, role: str, cpdag: bool):
    """The graph of a result, a parents file or a Tetrad text graph: a DAG's own (or its CPDAG, ``--cpdag``); a
    graph given with undirected edges (a CPDAG) as it stands, and only with ``--cpdag``. ``"undirected": []`` is
    a DAG's, in either mode: with ``--cpdag`` its CPDAG, as for the same DAG without the key (a review: it was
    compared as it stands, every reversible edge an arrowhead — a DAG against itself had SHD 2)."""
    if isinstance(obj, dict) and "undirected" in obj:
        pattern = pattern_graph(obj, where)         # its undirected edges checked in either mode
        if len(pattern.adjacencies) > len(pattern.arrowheads):
            if cpdag:
                return pattern
            raise InputError(f"{where} ({role}) has undirected edges (a CPDAG, not a DAG): compare CPDAGs with --cpdag")
    return (cpdag_graph if cpdag else dag_graph)(parents_of_result(obj, where), where)


def _learned_graph(obj: Any, where: str, true_nodes: frozenset[str], threshold: float | None, cpdag: bool):
    if threshold is None:
        return _graph(obj, where, "LEARNED", cpdag)
    if cpdag:
        raise InputError("--cpdag compares DAGs; it cannot be combined with --edges-threshold")
    if not isinstance(obj, dict) or not isinstance(obj.get("edges"), list):
        raise InputError(f"{where}: --edges-threshold needs an 'edges' list of {{from, to, posterior}}")
    if isinstance(obj.get("variables"), list):
        nodes = [str(v) for v in obj["variables"]]
    elif "parents" in obj or "networks" in obj:
        nodes = list(parents_of_result(obj, where))
    else:
        nodes = sorted(true_nodes)
    return thresholded_graph(obj["edges"], nodes, threshold, where)


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return "n/a" if math.isnan(x) else f"{x:.3f}"
    return str(x)


@click.command()
@click.argument("learned")
@click.argument("true")
@click.option("--edges-threshold", type=float, default=None,
              help="Compare the posterior-averaged graph of the result's 'edges' at this threshold, in (0, 1].")
@click.option("--cpdag", is_flag=True, help="Compare the CPDAGs (equivalence classes) of both DAGs.")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
def compare(learned: str, true: str, edges_threshold: float | None, cpdag: bool, as_json: bool) -> None:
    """Compare a LEARNED result with the TRUE graph: AP, AR, AHP, AHR, SHD, skeleton F1 (§6).

    Each is a result or parents JSON, or a graph in Tetrad's text format (Graph Nodes: / Graph Edges:)."""
    true_graph = _graph(read_graph_or_json(true, "true graph"), true, "TRUE", cpdag)
    learned_obj = read_graph_or_json(learned, "learned result")
    learned_graph = _learned_graph(learned_obj, learned, true_graph.nodes, edges_threshold, cpdag)
    try:
        result = compare_marked(learned_graph, true_graph)
    except InputError as exc:       # the two graphs disagree: name both files (a review: it named neither)
        raise InputError(f"{learned} (LEARNED) and {true} (TRUE): {exc}") from None
    result["mode"] = "cpdag" if cpdag else ("averaged" if edges_threshold is not None else "dag")
    if edges_threshold is not None:
        result["edges_threshold"] = edges_threshold
    note = _learned_state(learned_obj, result, learned)
    if as_json:
        click.echo(json.dumps(_json_safe(result), indent=1))
    else:
        _print_compare(learned, true, result, note)
    if note:
        click.echo(f"bnilp: {note}", err=True)
        sys.exit(EXIT_LIMIT)


def _learned_state(obj: Any, result: dict[str, Any], where: str) -> str:
    """Copy what a learned result says of itself into ``result`` (``learned_status``, ``learned_complete``,
    ``learned_limits``, ``learned_optimum_proven``; None where LEARNED, e.g. a bare parents file, does not say) and
    return why the comparison rests on a narrower result than it asked for — an incomplete credible set (a cap
    or a time limit: the averaged graph is over the networks found, the best network may not be OPT) or a limit
    of the scoring (palim, knowledge pruning) — or "" when none applies (then compare exits 0, else 3)."""
    obj = obj if isinstance(obj, dict) else {}
    for key in ("complete", "optimum_proven", "optimum_only"):      # "false" (a string) would read as true
        if obj.get(key) is not None and not isinstance(obj[key], bool):
            raise InputError(f"{where}: {key!r} must be true or false, got {obj[key]!r}")
    status, complete, limits, proven = (obj.get("status"), obj.get("complete"), obj.get("limits"),
                                        obj.get("optimum_proven"))
    # a mistyped limits or status was read as none, and the limit it stood for was not said (exit 0; a review)
    if limits is not None and not (isinstance(limits, list) and all(isinstance(x, str) for x in limits)):
        raise InputError(f"{where}: 'limits' must be a list of names, got {limits!r}")
    if status is not None and status not in STATUSES:
        raise InputError(f"{where}: 'status' must be one of {', '.join(STATUSES)}, got {status!r}")
    result.update(learned_status=status, learned_complete=complete, learned_limits=limits,
                  learned_optimum_proven=proven, learned_note=None)
    why = []
    # one optimal network is the whole answer to "the best DAG" (or its CPDAG), not to the averaged graph (a review:
    # an --optimum-only result's posteriors, one of 4 tied optima, compared with exit 0)
    one_optimum = obj.get("optimum_only") and status == "optimal"
    averaged_one = one_optimum and result["mode"] == "averaged"
    complete = False if status is not None and status not in ("optimal", "infeasible") else complete
    listed, counted = obj.get("n_mecs"), obj.get("posterior_classes")
    # count_past_cap (or peeling): the list is capped, the set is not — the posteriors and OPT cover every class
    counted_all = (status == "network_limit" and proven is not False and isinstance(listed, int)
                   and isinstance(counted, int) and counted > listed)
    if counted_all:
        why.append(f"the learned result's list is capped (the best {listed} of {counted} credible classes listed)")
    elif averaged_one:
        why.append("the learned result is one optimal network (optimum_only), its posteriors 1 on that network's "
                   "arrows, not averaged over the credible set")
    elif complete is False and not one_optimum:
        why.append(f"the learned result is incomplete (status {status}"
                   + ("; its best network is not a proven optimum" if proven is False else "") + ")")
    elif proven is False:
        why.append(f"the learned result's best network is not a proven optimum (status {status})")
    if limits:
        why.append(f"the learned result is limited ({', '.join(limits)})")
    if why:
        result["learned_note"] = "; ".join(why) + (
            f": the metrics rest on its proven optimum and its posteriors over all {counted} credible classes"
            if counted_all and not limits else ": the metrics describe the networks it found")
    return result["learned_note"] or ""


def _print_compare(learned: str, true: str, result: dict[str, Any], note: str) -> None:
    table = Table(title=Text(f"{learned} vs {true} ({result['mode']})"),
                  caption=Text(f"NOTE: {note}") if note else None)
    for col in ("AP", "AR", "AHP", "AHR", "SHD", "skeleton F1"):
        table.add_column(col, justify="right")
    table.add_row(*(_fmt(result[k]) for k in ("AP", "AR", "AHP", "AHR", "SHD", "skeleton_F1")))
    console = plain_console()
    console.print(lossless(table))
    adj = result["adjacencies"]
    console.print(f"adjacencies: {adj['true_positive']} correct, {adj['false_positive']} extra, "
                  f"{adj['false_negative']} missing; {result['reversed']} reversed, "
                  f"{result['mark_mismatch'] - result['reversed']} with other marks; AHR over all true arrowheads "
                  f"{_fmt(result['AHR_all'])}")
