"""``bnilp proxy-search``: greedy search on exact scores or on a Gaussian-process proxy.

Exit codes: 0 = done; 2 = bad input; 3 = a limit (the result is still written, its ``limits`` say which): the
``--refine`` round limit stopped refinement before it converged, fewer distinct training DAGs than
``--samples`` were drawn, or (``--refine 0`` without ``--polish``: the network is the proxy's alone) the proxy's
fit stopped at ``--fit-iterations`` unconverged; 3 with no output also when the GP fit would not fit in the free
memory.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from bnilp.cli import EXIT_LIMIT
from bnilp.cli.options import (
    check_outputs,
    check_seed,
    data_options,
    load_from_options,
    refuse_averaging_prior,
    score_from_options,
    score_options,
    structure_priors_only,
    writes_stdout,
)
from bnilp.errors import InputError
from bnilp.provenance import provenance
from bnilp.proxy import (
    ADMISSIBLE_DAGS_MAX_VARIABLES,
    DEFAULT_EXPECTED_IN_DEGREE,
    DEFAULT_KAPPA,
    DEFAULT_MAXITER,
    DEFAULT_REFINE,
    DEFAULT_SAMPLES,
    SearchResult,
    admissible_dags,
    allowed_matrix,
    greedy_search,
    labelled_dags,
)
from bnilp.proxy import proxy_search as run_proxy_search
from bnilp.scorefile import atomic_write_text
from bnilp.terminal import lossless, plain_console


def _summary(result: SearchResult, console: Console) -> None:
    table = Table(title=f"bnilp proxy-search ({result.method})", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("method", result.method)
    table.add_row("exact score", f"{result.score:.4f}")
    table.add_row("proxy score", "—" if result.proxy_score is None else f"{result.proxy_score:.4f}")
    table.add_row("samples", str(result.samples))
    if result.method == "proxy":
        table.add_row("network from", result.found_by)
    table.add_row("local optimum", "yes (no single add, delete or reverse improves it)" if result.local_optimum
                  else "not established")
    if result.fit is not None:
        fit = result.fit
        how = ("converged" if fit["converged"] else
               f"stopped unconverged ({fit['message']})") + f" after {fit['iterations']} of {fit['maxiter']} iterations"
        table.add_row("proxy fit (L-BFGS-B)", how + (f"; jitter {fit['jitter']:.1e} on K's diagonal" if fit["jitter"]
                                                       else ""))
    table.add_row("local scores computed", str(result.evaluations))
    table.add_row("time", f"{result.seconds:.2f} s")
    edges = result.edges()
    table.add_row("edges", str(len(edges)))
    if result.seed is not None:
        table.add_row("seed", str(result.seed))
    console.print(lossless(table))
    if edges:
        console.print("edges: " + ", ".join(f"{p} -> {c}" for p, c in edges), highlight=False, soft_wrap=True,
                      markup=False)


@click.command("proxy-search")
@click.argument("data", metavar="DATA")
@data_options
@score_options
@click.option("--method", type=click.Choice(["proxy", "greedy"]), default="proxy", show_default=True,
              help="proxy: greedy search on a GP fitted to exactly scored random DAGs; greedy: exact scores.")
@click.option("--samples", type=int, default=DEFAULT_SAMPLES, show_default=True,
              help="Training graphs scored exactly (the empty graph and random DAGs; ≥ 2).")
@click.option("--seed", type=int, default=None,
              help="Random seed of the proxy search (drawn and reported when omitted); greedy search is "
                   "deterministic: there it is only recorded.")
@click.option("--refine", type=int, default=None,
              help=f"[default: {DEFAULT_REFINE}] At most this many refinement rounds (score the moves the "
                   "proxy rates best, refit, climb); they stop at a local optimum. 0 = the seed's pure proxy search.")
@click.option("--refine-samples", type=int, default=None,
              help="Moves scored exactly per refinement round [default: --samples, at least 5].")
@click.option("--polish", is_flag=True, help="Finish with exact greedy search from the proxy's network.")
@click.option("--max-parents", type=int, default=None, help="At most K parents per variable.")
@click.option("--kappa", type=float, default=DEFAULT_KAPPA, show_default=True,
              help="Climb on the proxy's lower confidence bound: each edge coefficient minus kappa posterior sd (≥ 0).")
@click.option("--expected-in-degree", "expected_in_degree", type=float, default=DEFAULT_EXPECTED_IN_DEGREE,
              show_default=True,
              help="Mean in-degree of the random training DAGs (> 0).")
@click.option("--fit-iterations", "fit_iterations", type=int, default=DEFAULT_MAXITER, show_default=True,
              help="L-BFGS-B iterations at most for each fit of the proxy's hyperparameters.")
@click.option("--json", "json_out", default=None, metavar="FILE",
              help="Write the result as JSON to this file.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary on the terminal.")
def proxy_search(data: str, method: str, samples: int, seed: int | None, refine: int | None,
                         refine_samples: int | None, polish: bool, max_parents: int | None, kappa: float,
                         expected_in_degree: float, fit_iterations: int, json_out: str | None, quiet: bool,
                         **opts: Any) -> None:
    """Search for a high-scoring network by proxy (Yackley, Anderson & Lane 2011) or greedily."""
    check_seed(seed)
    check_outputs({"json_out": json_out}, {"json_out": "--json"}, inputs={data: "DATA"})
    if samples < 2:
        raise InputError(f"--samples must be ≥ 2, got {samples}")
    refuse_averaging_prior(opts, "proxy-search")
    if method == "greedy":
        ctx = click.get_current_context()
        given = [f"--{name.replace('_', '-')}" for name in ("refine", "refine_samples", "polish", "kappa", "samples",
                                                             "expected_in_degree", "fit_iterations")
                 if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
        if given:
            raise InputError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to --method proxy only")
    refine = DEFAULT_REFINE if refine is None else refine
    if refine < 0:
        raise InputError(f"--refine must be ≥ 0, got {refine}")
    if refine_samples is not None and refine_samples < 1:
        raise InputError(f"--refine-samples must be ≥ 1, got {refine_samples}")
    if refine_samples is not None and refine == 0:
        raise InputError("--refine-samples sets the moves each refinement round scores: --refine 0 runs none")
    if max_parents is not None and max_parents < 0:
        raise InputError(f"--max-parents must be ≥ 0, got {max_parents}")
    if not (math.isfinite(expected_in_degree) and expected_in_degree > 0):
        raise InputError(f"--expected-in-degree must be a finite number > 0, got {expected_in_degree}")
    if not (math.isfinite(kappa) and kappa >= 0):
        raise InputError(f"--kappa must be a finite number ≥ 0, got {kappa}")
    if fit_iterations < 1:
        raise InputError(f"--fit-iterations must be ≥ 1, got {fit_iterations}")
    dataset = load_from_options(data, opts, quiet=quiet)
    score = score_from_options(dataset, opts)
    err = plain_console(stderr=True, quiet=quiet)
    with err.status("searching") as status:
        def progress(message: str) -> None:
            status.update(message)

        if method == "greedy":
            result = greedy_search(score, max_parents=max_parents, seed=seed, progress=progress)
        else:
            result = run_proxy_search(score, samples=samples, refine=refine, refine_samples=refine_samples,
                                      max_parents=max_parents, expected_parents=expected_in_degree,
                                      polish=polish, kappa=kappa, seed=seed, maxiter=fit_iterations,
                                      progress=progress)
    if json_out:
        # what was scored (the score's settings, its structure prior among them, and the data) and what ran it:
        # a result JSON says so as learn's does (a proxy-search JSON did not name its score or prior; a review)
        described = dataset.describe()
        scoring = {**score.settings(), **{k: described[k] for k in ("data", "data_sha256", "N", "rows_dropped_missing")
                                          if k in described}}
        doc = {**result.to_dict(), "scoring": scoring, "provenance": provenance()}
        atomic_write_text(json_out, json.dumps(doc, indent=2) + "\n")
    if not quiet:
        _summary(result, plain_console(stderr=writes_stdout(json_out)))     # stdout holds the JSON alone
    if method == "proxy" and result.limits:
        err = plain_console(stderr=True)
        if "samples" in result.limits:
            allowed = allowed_matrix(score)
            unconstrained = max_parents is None and bool(allowed[~np.eye(dataset.n, dtype=bool)].all())
            total = (labelled_dags(dataset.n) if unconstrained else admissible_dags(allowed, max_parents)
                     if dataset.n <= ADMISSIBLE_DAGS_MAX_VARIABLES else None)
            space = "in all" if unconstrained else f"that the score{' and --max-parents' if max_parents else ''} allow"
            hint = (f"{dataset.n} variables have only {total:,} DAGs {space}: ask for fewer --samples"
                    if total is not None and total < samples else "raise --expected-in-degree")
            err.print(f"bnilp: limited: only {result.samples_drawn} distinct training DAGs drawn of the {samples} "
                      f"asked ({hint})", highlight=False, soft_wrap=True)
        if "refine_rounds" in result.limits:
            err.print(f"bnilp: limited: refinement stopped after {refine} rounds before reaching a local optimum "
                      "(raise --refine)", highlight=False, soft_wrap=True)
        if "fit_iterations" in result.limits:
            err.print(f"bnilp: limited: the proxy's fit stopped unconverged after {result.fit['iterations']} "
                      f"iterations ({result.fit['message'] or 'not converged'}) and "
                      "the network is the proxy's alone (raise --fit-iterations, or refine or --polish it with "
                      "exact scores)", highlight=False, soft_wrap=True)
        sys.exit(EXIT_LIMIT)


structure_priors_only(proxy_search)
