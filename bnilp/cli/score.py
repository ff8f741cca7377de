"""``bnilp score``: data in, pruned candidate parent sets out (a Jaakkola score file + JSON sidecar)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Any

import click
import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from bnilp.cli import EXIT_LIMIT, outputs_whole
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
    refuse_averaging_prior,
    score_from_options,
    score_options,
    structure_priors_only,
)
from bnilp.data import MAX_INFERRED_LEVELS, Dataset, constant_column_text, twin_columns_text
from bnilp.errors import InputError, listed_names
from bnilp.parentsets import ALL_RULES, DEFAULT_FAMILY_BUDGET, TableProgress, score_parent_sets
from bnilp.report import limit_reason
from bnilp.scorefile import ScoreTable, check_score_file_names, write_score_file
from bnilp.scores import CONTINUOUS_ONLY_SCORES
from bnilp.scores.base import bf_text, score_words
from bnilp.scores.subsets import COUNT_MODES, SUBSET_TABLE_MAX_SUBSETS, SUBSET_TABLE_MAX_VARIABLES
from bnilp.terminal import LogProgress, lossless, plain_console

RULE_COLUMNS = tuple(sorted(ALL_RULES))
#: past this many variables the scoring table shows the ones that scored the most sets (the rest are in the score
#: file's sidecar, ``per_variable``): 3,000 rows scrolled the rest of the output away
SCORING_TABLE_ROWS = 40


def walk_options(func):
    """--palim, --no-prune, --jobs, --scheduler, --counts, --score-time-limit."""
    func = click.option("--score-time-limit", type=float, default=None, metavar="SECONDS",
                        help="Stop scoring after SECONDS: the walk deepens (palim 1, 2, …) and the last "
                             "finished depth is kept, exact for parent sets up to it (reported; exit 3). "
                             "Default: no limit.")(func)
    func = click.option("--counts", type=click.Choice(COUNT_MODES), default="auto", show_default=True,
                        help="How discrete BIC/BDeu families are counted: 'subsets' counts each variable subset "
                             "once and shares it between the families that use it (up to "
                             f"{SUBSET_TABLE_MAX_VARIABLES} variables and {SUBSET_TABLE_MAX_SUBSETS:,} subsets), "
                             "'families' counts every family on its own, 'auto' counts subsets where that pays "
                             "(BDeu; BIC on many distinct rows and not too many variables — the sidecar's "
                             "counts.reason says which and why). The score file is the same.")(func)
    func = click.option("--scheduler", metavar="ADDRESS",
                        help="Run the scoring on a Dask cluster at ADDRESS ('local' starts a LocalCluster of "
                             "--jobs - 1 single-thread workers, default all cores: threads of this process for BIC "
                             "and BDeu, processes for the other scores; needs bnilp[dask]); data scattered once."
                        )(func)
    func = click.option("--jobs", "n_jobs", type=int, default=1, show_default=True,
                        help="Scoring workers (-1 = all cores): threads of this process for BIC and BDeu, loky "
                             "processes for the other scores; blocks of parent sets within and across "
                             "variables; the score file is the same for any value. In learn also the "
                             "processes that list the credible set when branch-and-cut lists it (from 30 "
                             "variables), the same set for any value.")(func)
    func = click.option("--no-prune", is_flag=True, help="Keep every parent set up to --palim (no rules).")(func)
    func = click.option("--palim", type=int, default=None,
                        help=f"Largest parent set (default: none where rules bound it, or with --no-prune on "
                             f"up to 16 variables; else the largest that keeps the number of families ≤ "
                             f"{DEFAULT_FAMILY_BUDGET:,}).")(func)
    return func


def _walking(stats: Any) -> str:
    """A running walk's progress: ``X3: parent sets of size 7 scored (1,234,567 sets, 812,034 to extend), 95 s``;
    a table computed ahead of the walks (:class:`~bnilp.parentsets.TableProgress`): ``set table: 12,000 of
    31,931 variable sets, 40 s``."""
    if isinstance(stats, TableProgress):
        return f"{stats.table}: {stats.done:,} of {stats.total:,} {stats.unit}, {stats.seconds:.0f} s"
    return (f"{stats.child}: parent sets of size {stats.level} scored ({stats.scored:,} sets, "
            f"{stats.frontier:,} to extend), {stats.seconds:.0f} s")


@contextmanager
def _progress(console: Console, n: int, deepening: bool, quiet: bool):
    """Each variable walked shown: a bar at a terminal (no total when ``deepening``: each pass walks every
    variable again), else a line now and then (:class:`~bnilp.terminal.LogProgress`; a transient bar left a blank
    line in a file). A walk still running is shown after each of its levels (one variable's walk can take
    minutes: the log printed nothing until it ended)."""
    if quiet:
        yield lambda stats: None
        return
    if not console.is_terminal:
        log, seen, walk = LogProgress(console), set(), 1

        def logged(stats: Any) -> None:
            nonlocal walk
            if isinstance(stats, TableProgress):    # a pass builds its table before any of its walks
                if seen:
                    seen.clear()
                    walk += 1
                log(f"scoring{f', pass {walk}' if deepening else ''}: {_walking(stats)}")
                return
            if stats.child in seen:         # deepening: a deeper pass walks them all again (its first line may
                seen.clear()                # be a running walk's)
                walk += 1
            if not stats.finished:
                log(f"scoring{f', pass {walk}' if deepening else ''}: {len(seen)} of {n} variables walked; "
                    f"{_walking(stats)}")
                return
            seen.add(stats.child)
            log(f"scoring{f', pass {walk}' if deepening else ''}: {len(seen)} of {n} variables walked, the last "
                f"{stats.child}: kept {stats.kept} of {stats.scored}")

        yield logged
        return
    with Progress(TextColumn("scoring"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}", markup=False),   # a name such as rate[/s] is no markup
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("", total=None if deepening else n)

        def update(stats: Any) -> None:
            if not stats.finished:
                bar.update(task, description=_walking(stats))
                return
            bar.update(task, advance=1, description=f"{stats.child}: kept {stats.kept} of {stats.scored}")

        yield update


def continuous_only_text(data: Dataset, name: str) -> str:
    """The type line of a continuous-only score read without type options: every column continuous, and which
    of them the inference would have made discrete (integers with few values) — they are not silently numbers."""
    # those the arity line declared discrete have their own line (a note of the data): not "integers … read as numbers"
    declared = {note.partition(":")[0] for note in data.notes if "declared discrete in the arity line" in note}
    few = [data.names[j] for j in range(data.n)
           if data.names[j] not in declared and np.all(data.values[:, j] == np.round(data.values[:, j]))
           and np.unique(data.values[:, j]).size <= MAX_INFERRED_LEVELS]
    return (f"types: every column continuous for a continuous-only score (--score {name})"
            + (f"; integers with ≤ {MAX_INFERRED_LEVELS} distinct values read as numbers: {listed_names(few, 12)}"
               if few else ""))


def score_data(data: Dataset, opts: dict[str, Any], epsilon: float, console: Console, quiet: bool) -> ScoreTable:
    """Score and prune with the options of the command line; prints what was inferred and done. The score is
    built first: a setting it refuses, or data it cannot score, is the one line of an error, not the last of the
    data's warnings (shown even with ``-q``) followed by it."""
    score = score_from_options(data, opts)
    for warning in data.warnings:  # shown even with -q
        console.print(Text(f"warning: {warning}", style="yellow"))
    many = [note for note in data.notes if note.endswith(" states")]
    if quiet and many:  # a likely mistake is shown even with -q
        console.print(Text(f"types inferred (many states): {'; '.join(many)}", style="yellow"))
    if not quiet:
        groups: dict[str, list[str]] = {}
        for note in data.notes:
            name, _, why = note.partition(": ")
            groups.setdefault(why, []).append(name)
        for why, names in groups.items():
            console.print(Text(f"types inferred: {why}: {listed_names(names, 12)}", style="dim"))
        if opts.get("score_name") in CONTINUOUS_ONLY_SCORES and not (opts.get("discrete_cols")
                                                                    or opts.get("continuous_cols")):
            console.print(Text(continuous_only_text(data, opts["score_name"]), style="dim"))
        for name in data.dropped:
            console.print(Text(f"warning: {constant_column_text(name)}", style="yellow"))
        for group in data.twins:
            console.print(Text(f"warning: {twin_columns_text(group)}", style="yellow"))
    deepening = opts.get("score_time_limit") is not None   # children are walked once per depth
    with _progress(console, data.n, deepening, quiet) as update:
        table = score_parent_sets(score, epsilon=epsilon, palim=opts.get("palim"), prune=not opts.get("no_prune"),
                                  n_jobs=opts.get("n_jobs", 1), scheduler=opts.get("scheduler"), progress=update,
                                  knowledge=opts.get("knowledge"), counts=opts.get("counts", "auto"),
                                  time_limit=opts.get("score_time_limit"), table_progress=update)
    if not quiet:
        print_scoring_summary(table, console)
    return table


def limited_to(meta: dict[str, Any]) -> int | None:
    """The largest parent-set size for which a score table is exact (None: every size)."""
    if not meta.get("palim_reached"):
        return None
    k = meta.get("exact_for_parent_sets_up_to")
    return k if k is not None else meta.get("palim")


def warn_stream_losses(table: ScoreTable, out: str, written: str | None) -> None:
    """Where a score file went to a stream (``-o -``, a pipe: no sidecar) and its sidecar would have told its reader
    something the answer depends on — a palim or scoring limit that cut it, the background knowledge it was scored
    under — a ``bnilp: warning:`` line (with ``-q`` too) saying what is lost: ``solve`` on it took the cut table for
    complete, exit 0 (a review). Not for ``/dev/null``."""
    if written is not None or os.path.realpath(out) == os.devnull:
        return
    lost = []
    k = limited_to(table.meta)
    if k is not None:
        lost.append(f"that it is exact only for parent sets of size ≤ {k}")
    if table.meta.get("knowledge"):
        lost.append("that it was scored under background knowledge (give its reader the same knowledge)")
    if lost:
        click.echo(f"bnilp: warning: {out} has no sidecar (a stream): its reader will not know "
                   f"{' and '.join(lost)}; write it to a file to keep them", err=True)


def print_scoring_summary(table: ScoreTable, console: Console) -> None:
    """The console's table of the walk per variable (sets scored and kept, what each rule R1–R6 removed, the largest
    kept set, seconds; the heaviest :data:`SCORING_TABLE_ROWS` walks where there are more) and its totals line."""
    meta = table.meta
    rows = meta["per_variable"]
    shown = list(rows)
    if len(shown) > SCORING_TABLE_ROWS:     # the heaviest walks, in file order
        heavy = set(sorted(shown, key=lambda v: -rows[v]["scored"])[:SCORING_TABLE_ROWS])
        shown = [v for v in shown if v in heavy]
    grid = Table(title=f"parent sets: {score_words(meta)}, ε = {meta['epsilon']:.6g} (BF {bf_text(meta['epsilon'])})",
                 show_lines=False)
    if len(shown) < len(rows):
        grid.caption = (f"the {len(shown)} of {len(rows)} variables that scored the most sets; every variable's row "
                        "is in a score file's sidecar (per_variable: score -o, learn --scores)")
    for col in ("variable", "scored", "kept", *RULE_COLUMNS, "max |Π|", "s"):
        grid.add_column(col, justify="right" if col != "variable" else "left")
    for name in shown:
        st = rows[name]
        pr = st["pruned"]
        grid.add_row(Text(name), str(st["scored"]), str(st["kept"]), *(str(pr.get(r, 0)) for r in RULE_COLUMNS),
                     str(st["max_kept_size"]), f"{st['seconds']:.2f}")
    console.print(lossless(grid, console.width))
    console.print(f"N = {meta['N']}, {len(table.variables)} variables: scored {meta['scored']}, "
                  f"kept {meta['kept']} parent sets in {meta['seconds']:.2f} s")
    counting = meta.get("counts") or {}
    if counting.get("mode") == "subsets":
        console.print(f"[dim]counts: {counting['subsets']:,} variable subsets counted once each "
                      f"({counting['table_seconds']:.2f} s), shared by the families[/dim]")
    if meta.get("knowledge"):
        unpruned = meta.get("knowledge_unpruned") or []
        which = f"all {len(unpruned)} variables" if len(unpruned) == len(table.variables) > 1 else ", ".join(unpruned)
        console.print(f"background knowledge: {len(meta['knowledge']['statements'])} statement(s); forbidden parents "
                      "not scored" + (f"; walked without pruning (required knowledge): {which}"
                                      if unpruned else ""), highlight=False, markup=False)
    if meta.get("score_time_limit_reached"):
        console.print(f"[yellow]scoring time limit ({meta['score_time_limit']:g} s): the walk finished parent "
                      f"sets up to size {limited_to(meta)}; results are exact for those sizes only[/yellow]")
    elif meta.get("score_memory_limit_reached"):
        console.print(f"[yellow]scoring memory limit ({meta['deepening'][-1].get('stopped')}): the walk finished "
                      f"parent sets up to size {limited_to(meta)}; results are exact for those sizes only[/yellow]")
    elif meta.get("score_deeper_pass_refused"):
        console.print(Text(f"scoring stopped deepening ({meta['score_deeper_pass_refused']}): the walk finished "
                           f"parent sets up to size {limited_to(meta)}; results are exact for those sizes only",
                           style="yellow"))
    elif meta.get("palim_reached"):
        k = limited_to(meta)
        console.print(f"[yellow]palim {k} cut the walk: results are exact for parent sets of size "
                      f"≤ {k} only[/yellow]")
    applied = {tuple(v) for v in meta["rules_applied"].values()}
    if meta["prune"] and any(set(v) == {"R1"} for v in applied):
        console.print("[dim]only R1 applies to some variables (R2–R6 need a discrete BIC/BDeu child and no "
                      "structure prior)[/dim]")


@click.command()
@click.argument("data_path", metavar="DATA")
@click.option("-o", "--output", "out", required=True, metavar="FILE",
              help="Score file to write: Jaakkola (GOBNILP) format, or PSS (URLearning) where FILE ends in .pss; "
                   "a JSON sidecar FILE.json is written beside it.")
@score_options
@bf_options
@walk_options
@data_options
@knowledge_options
@click.option("-q", "--quiet", is_flag=True, help="No progress or summary.")
def score(data_path: str, out: str, quiet: bool, bf: float | None, epsilon: float | None, **opts: Any) -> None:
    """Score candidate parent sets of DATA and write a GOBNILP/Jaakkola score file (PSS for a name ending in .pss).

    Keeps every parent set that a network within the Bayes factor --bf of the optimum can use
    (ε = ln BF; --bf 1, the default, keeps what optimal networks can use). Exits 3 after writing the file when a palim
    or --score-time-limit left larger parent sets unscored (the file is exact up to that size).
    """
    console = plain_console(stderr=True)
    eps = epsilon_from(bf, epsilon, default_bf=1.0)
    given = [flag for key, flag in (("bf", "--bf"), ("epsilon", "--epsilon")) if given_on_command_line(key)]
    if opts.get("no_prune") and given:      # recorded in the sidecar, used by nothing (a review)
        raise InputError(f"{given[0]} sets what the pruning keeps; with --no-prune every parent set up to --palim is "
                         "kept and it would not apply (the BF of the credible set is solve's --bf)")
    refuse_averaging_prior(opts, "score")
    check_time_limits(opts)
    check_outputs({"out": out}, {"out": "-o"}, sidecars=("out",), inputs=read_paths(opts, {data_path: "DATA"}))
    data = load_from_options(data_path, opts, quiet=quiet)
    check_score_file_names(data.names, "-o", out)
    opts["knowledge"] = knowledge_from_options(opts)
    if opts["knowledge"] is not None:
        opts["knowledge"].validated(data.names, data.dropped)
    table = score_data(data, opts, eps, console, quiet)
    with outputs_whole():
        written = write_score_file(table, out)
    if not quiet:
        beside = f"and {written}" if written else "no sidecar: a stream has no folder"
        console.print(f"wrote {out} ({table.n_parent_sets()} parent sets) {beside}", markup=False, highlight=False)
    warn_stream_losses(table, out, written)
    k = limited_to(table.meta)
    if k is not None:
        why = limit_reason(table.meta)
        click.echo(f"bnilp: limited: the score file is exact only for parent sets of size ≤ {k} ({why})", err=True)
        sys.exit(EXIT_LIMIT)


structure_priors_only(score)

__all__ = ["score", "score_data", "walk_options"]
