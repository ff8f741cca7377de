"""``bnilp citest``: likelihood-ratio conditional-independence test from a score (Andrews et al. §5.3)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from bnilp.citest import (
    COMBINE_RULES,
    CORRECTIONS,
    DEFAULT_ALPHA,
    DEFAULT_COMBINE,
    DEFAULT_CORRECTION,
    DEFAULT_NULL,
    DEFAULT_PERMUTATIONS,
    LIKELIHOOD_SCORES,
    MAX_AUTO_PERMUTATIONS,
    MULTINOMIAL_G2_SCORES,
    NULL_DISTRIBUTIONS,
    SCORE_EQUIVALENT,
    SEQUENTIAL_EXCEEDANCES,
    SPARSE_ROWS_PER_CELL,
    CITestResult,
    ci_test,
    least_permutations,
    null_used,
)
from bnilp.cli import EXIT_LIMIT
from bnilp.cli.options import (
    check_seed,
    data_options,
    given_on_command_line,
    load_from_options,
    score_from_options,
    score_options,
)
from bnilp.errors import InputError
from bnilp.scores import DISCRETE_ONLY_SCORES
from bnilp.scores.base import DEFAULT_PENALTY_DISCOUNT
from bnilp.terminal import lossless, plain_console


@click.command()
@click.argument("data_path", metavar="DATA")
@click.argument("x")
@click.argument("y")
@click.option("--given", multiple=True, metavar="Z1,Z2",
              help="Conditioning set, comma-separated; may be repeated (a value that is a column's whole name, "
                   "commas and all, is that column).")
@click.option("--alpha", type=float, default=DEFAULT_ALPHA, show_default=True, help="Significance level, in (0, 1).")
@click.option("--combine", type=click.Choice(list(COMBINE_RULES)), default=DEFAULT_COMBINE, show_default=True,
              help="Two directions (MVP, CGd) into one decision: Simes (size ≤ α) or the seed's 'either rejects'.")
@click.option("--correction", type=click.Choice(list(CORRECTIONS)), default=DEFAULT_CORRECTION, show_default=True,
              help="Small-sample correction where the score gives G's null mean (Gaussian children of CG, "
                   "CGd, MVP): Bartlett's, or none (the plain G of the seed and Tetrad).")
@click.option("--null", "null", type=click.Choice(list(NULL_DISTRIBUTIONS)), default=DEFAULT_NULL, show_default=True,
              help="Reference distribution: auto permutes Y within groups of neighbouring rows where a tested "
                   "variable is discrete and GIVEN has a continuous variable (the score's model of the discrete "
                   "variable may be misspecified there), or where every variable is discrete and the cells "
                   f"average fewer than {SPARSE_ROWS_PER_CELL:g} rows with an all-discrete G² "
                   f"(--score {', '.join(sorted(MULTINOMIAL_G2_SCORES))}: χ² is off there), χ² "
                   "elsewhere; chi2 "
                   "always (the seed's test).")
@click.option("--permutations", type=int, default=None,
              help="Most permuted data sets for a local-permutation p-value (stops after "
                   f"{SEQUENTIAL_EXCEEDANCES} exceedances). Default: {DEFAULT_PERMUTATIONS}, or ⌈1/α⌉ − 1 where "
                   f"that is more, up to {MAX_AUTO_PERMUTATIONS} (a permutation p-value is at least 1/(B + 1), so "
                   "fewer could not reject at α; a note says so).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random stream of the permutations.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@data_options
@score_options
def citest(data_path: str, x: str, y: str, given: tuple[str, ...], alpha: float, combine: str, correction: str,
           null: str, permutations: int | None, seed: int, as_json: bool, **opts: Any) -> None:
    """Test X ⟂ Y | GIVEN on DATA: 2(ℓ(X | Y,Z) − ℓ(X | Z)) against χ², both directions for a
    score that is not score-equivalent (MVP, CGd), combined by Simes (--combine either: the seed's rule).
    Where the score gives G's null mean (a Gaussian child), G·df/E[G] is referred to χ²_df (Bartlett).
    Where a tested variable is discrete and GIVEN holds a continuous variable, or every variable is discrete
    and the cells are sparse (an all-discrete G²: BIC, CG, CGd), the p-value is a local permutation test's
    (--null)."""
    check_seed(seed)
    discount = opts.get("penalty_discount", DEFAULT_PENALTY_DISCOUNT)
    if any(p != "none" for p in opts.get("priors") or ()) or discount != DEFAULT_PENALTY_DISCOUNT:
        raise InputError("--prior and --penalty-discount change scores, not the likelihood-ratio test: citest "
                         "takes neither")
    data = load_from_options(data_path, opts)
    names = set(data.names) | set(data.dropped)
    z = [c for g in given for c in ([g] if g in names else [c.strip() for c in g.split(",")])]
    if "" in z:       # '' and ',' conditioned on nothing with exit 0 (a review): a slip, not a request
        bad = next(g for g in given if g not in names and "" in (c.strip() for c in g.split(",")))
        raise InputError(f"--given {bad!r}: an empty variable name (leave --given out to condition on nothing)")
    for name in (x, y, *z):
        if name not in data.dropped:
            data.index(name)
    if opts.get("score_name", "bic") in DISCRETE_ONLY_SCORES:   # a column outside the test may be continuous
        data = data.columns([x, y, *z])
    try:
        score = score_from_options(data, opts)
    except ModuleNotFoundError as exc:
        raise InputError(f"score {opts.get('score_name')!r} is not available in this installation ({exc})") \
            from None
    if permutations is not None and permutations < 1:
        raise InputError(f"--permutations must be ≥ 1, got {permutations}")
    ignored = [flag for key, flag in (("permutations", "--permutations"), ("seed", "--seed"))
               if given_on_command_line(key)]
    if ignored and null == "chi2":
        raise InputError(f"{' and '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} the permutation null's "
                         "setting (--null auto or local-permutation): with --null chi2 this run would ignore "
                         f"{'it' if len(ignored) == 1 else 'them'}")
    index = {name: data.index(name) for name in (x, y, *z) if name not in data.dropped}
    kept = tuple(index[name] for name in z if name in index)
    if ignored and null_used(score, index[x], index[y], kept, null,
                             score.name not in SCORE_EQUIVALENT) == "chi2":     # dropped without a word (a review)
        raise InputError(f"{' and '.join(ignored)}: --null auto refers this test to χ² (no discrete tested variable "
                         "given a continuous one, no sparse all-discrete table), so the run would ignore "
                         f"{'it' if len(ignored) == 1 else 'them'}; --null local-permutation permutes")
    if given_on_command_line("combine") and score.name in SCORE_EQUIVALENT:
        raise InputError(f"--combine joins the two directions of a score that is not score-equivalent (MVP, CGd); "
                         f"{score.name} tests one direction, so the run would ignore it")
    result = ci_test(data, x, y, z, score=score, alpha=alpha, combine=combine, correction=correction, null=null,
                     permutations=permutations, seed=seed)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=1))
    else:
        _print_result(result, alpha, seed)
    if result.limits:
        click.echo(f"bnilp: limited: {result.permutations} permutations, every one drawn, cannot give a p-value "
                   f"below alpha {alpha:g}: not rejected by their number, not by the data (--permutations "
                   f"{least_permutations(alpha)} or more can reject)", err=True)
        sys.exit(EXIT_LIMIT)


def _print_result(result: CITestResult, alpha: float, seed: int) -> None:
    cond = f" | {', '.join(result.given)}" if result.given else ""
    table = Table(title=Text(f"{result.x} ⟂ {result.y}{cond}  ({result.score}, α = {alpha:g})"))
    permuted = result.null == "local-permutation"
    for col in ("child", "parent", "statistic", "df", "Bartlett E[G]/df",
                "χ² p-value" if permuted else "p-value", "χ² rejects" if permuted else "rejects"):
        table.add_column(col, justify="right")
    for d in result.directions:
        table.add_row(Text(d.child), Text(d.parent), f"{d.statistic:.4g}", f"{d.df:g}", f"{d.bartlett:.4f}",
                      f"{d.p_value:.4g}", "yes" if d.dependent else "no")
    console = plain_console()
    console.print(lossless(table))
    verdict = "dependent" if result.dependent else "independent (not rejected)"
    how = f" ({result.combine} combination of both directions)" if len(result.directions) > 1 else ""
    if result.null == "local-permutation":
        console.print(Text(f"χ² p = {result.chi2_p_value:.4g}{how}; local permutation of {result.y} "
                           f"({result.permutations} permuted data sets, seed {seed})"))
        how = ""
    console.print(f"decision: {verdict}, p = {result.p_value:.4g}{how}")
    for note in result.notes:
        console.print(f"note: {note}", markup=False, highlight=False)


citest.params[[p.name for p in citest.params].index("score_name")].default = "cg"


def _citest_help_tells_the_truth() -> None:
    """citest shares the score options, but takes only the likelihood scores and none of the settings that change
    a score without changing its likelihood: those stay (refused with their reason) but leave the help."""
    for param in citest.params:
        if param.name == "score_name":
            param.type = click.Choice(list(LIKELIHOOD_SCORES))
        elif param.name in ("ess", "priors", "expected_parents", "ebic_gamma", "penalty_discount", "alpha_mu",
                            "alpha_w", "raw_units"):
            param.hidden = True


_citest_help_tells_the_truth()
