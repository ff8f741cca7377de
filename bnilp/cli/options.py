"""Options shared by the commands that read data and score it (score, learn, proxy-search, citest)."""

from __future__ import annotations

import math
import os
import stat
import sys
import warnings
from collections.abc import Callable
from typing import Any

import click

from bnilp.averaging import PRIORS as AVERAGING_PRIORS
from bnilp.data import DATA_FORMATS, Dataset, dropped_rows_text, load_data
from bnilp.errors import DataWarning, InputError
from bnilp.memory import worker_count
from bnilp.scores import CONTINUOUS_ONLY_SCORES, DISCRETE_ONLY_SCORES, REGISTRY, LocalScore, StructurePrior, make_score
from bnilp.scores.base import DEFAULT_EBIC_GAMMA, DEFAULT_EXPECTED_PARENTS, DEFAULT_PENALTY_DISCOUNT, STRUCTURE_PRIORS
from bnilp.scores.bge import DEFAULT_ALPHA_MU
from bnilp.scores.cg import DEFAULT_BINS
from bnilp.scores.discrete import DEFAULT_ESS, MIN_ESS
from bnilp.scores.mvp import DEFAULT_MVP_DEGREE
from bnilp.threads import may_start_processes

#: platforms whose usual file systems ignore case (APFS, NTFS): ``r.json`` and ``R.JSON`` are one file there
CASE_BLIND_PLATFORMS = ("darwin", "win32", "cygwin")


def same_file_key(path: str | os.PathLike[str]) -> str:
    """What two paths share when they name one file: the real path, without case where the platform's usual file
    systems ignore it (:data:`CASE_BLIND_PLATFORMS`; ``--json r.json --dot R.JSON``, or ``--json ASIA.CSV`` over
    the input ``asia.csv``, were let through there and one file replaced the other — found by a review). A
    case-sensitive volume there has two outputs that differ only in case refused, which costs nothing. A name of
    an open descriptor (:func:`bnilp.scorefile.open_descriptor`: ``-``, ``/dev/stdout``, ``/dev/fd/1``) is the file
    it leads to where that is a regular file (``--json - > r.dot --dot r.dot``, ``--json - >> DATA``), else that
    descriptor: ``--json /dev/stdout --dot -`` wrote both into stdout (the real path of ``-`` is ``$PWD/-``)."""
    from bnilp.scorefile import DESCRIPTOR_FOLDER, open_descriptor

    descriptor = open_descriptor(path)
    if descriptor is not None:
        try:
            regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
        except OSError:
            regular = False
        via = os.path.join(DESCRIPTOR_FOLDER, str(descriptor))
        if not (regular and os.path.exists(via)):      # a pipe, a terminal (or no /dev/fd: Windows)
            return f"<descriptor {descriptor}>"
        path = via
    key = os.path.normcase(os.path.realpath(path))
    return key.casefold() if sys.platform in CASE_BLIND_PLATFORMS else key


def check_outputs(opts: dict[str, Any], flags: dict[str, str], folders: tuple[str, ...] = (),
                  sidecars: tuple[str, ...] = (), inputs: dict[str, str] | None = None,
                  folder_files: tuple[str, ...] | None = None) -> None:
    """Every output path given (``opts[key]`` for ``key`` in ``flags``, named by its flag) can be written
    (:func:`bnilp.scorefile.check_writable`; ``folders``: keys that name a directory) — checked before the
    work, so a bad path costs no search. No two outputs are one file, counting the sidecar ``PATH.json``
    that a score file (``sidecars``: its keys) brings, and none is an input (``inputs``: path → what names
    it): one would silently replace the other. Nor does one output lie inside another (``--dot nest`` with
    ``--json nest/r.json``): the second written would fail after the work, the first already there (a file
    may go into the folder of ``--report DIR``, beside the files it writes: ``folder_files``, by default
    :data:`bnilp.report.REPORT_FILES` — but none among those of :data:`bnilp.report.REPORT_FOLDER_FILES` it does
    not write, which it removes from its folder)."""
    from bnilp.scorefile import check_file_name, check_writable, is_stream, sidecar_path

    written: dict[str, str] = {same_file_key(path): name for path, name in (inputs or {}).items()}
    outputs: list[tuple[str, str, str, str]] = []     # files written: (key, real path, what names it, its flag)
    removed: list[tuple[str, str, str]] = []            # files a report folder's report removes: (flag, path, name)
    for key, flag in flags.items():
        if opts.get(key) == "":
            raise InputError(f"{flag}: an empty path (give a file name)")
        if opts.get(key) and key not in folders:
            try:
                check_file_name(str(opts[key]))     # it ends in '/', '/.' or '/..'
            except InputError as exc:
                raise InputError(f"{flag}: {exc}") from None
        if opts.get(key):
            paths = [(opts[key], flag)] + ([(sidecar_path(opts[key]), f"{flag}'s sidecar")]
                                           if key in sidecars and not is_stream(opts[key]) else [])
            if key in folders:                  # a report directory: the files it will hold are outputs too
                from bnilp.report import REPORT_FILES, REPORT_FOLDER_FILES

                names = REPORT_FILES if folder_files is None else folder_files
                paths += [(os.path.join(opts[key], name), f"{flag}'s {name}") for name in names]
                removed += [(flag, os.path.join(opts[key], name), name) for name in REPORT_FOLDER_FILES
                            if name not in names]
            for path, name in paths:
                try:
                    check_writable(path, folder=key in folders and path == opts[key])
                except InputError as exc:
                    raise InputError(f"{flag}: {exc}") from None
                other = written.setdefault(same_file_key(path), name)
                if other != name:
                    raise InputError(f"{other} and {name} name the same file ({path}): one would replace the other")
                if not (key in folders and path == opts[key]):      # files may go into a report folder
                    outputs.append((same_file_key(path), os.path.realpath(path), name, flag))
    for flag, path, name in removed:    # a report removes the files of another report it does not write: none may
        what = written.get(same_file_key(path))     # be an input or another output (a score file: written first)
        if what is not None:
            raise InputError(f"{flag}: {path} is {what}, and the report removes an earlier report's {name} from its "
                             "folder: give it another name")
    for outer_key, outer, outer_name, outer_flag in outputs:       # --dot nest with --json nest/r.json
        for inner_key, inner, inner_name, inner_flag in outputs:
            if outer_flag != inner_flag and inner_key.startswith(outer_key.rstrip(os.sep) + os.sep):
                raise InputError(f"{inner_name} ({inner}) lies inside {outer_name} ({outer}): one output cannot "
                                 "be written inside another")


def check_time_limits(opts: dict[str, Any]) -> None:
    """``--time-limit`` and ``--score-time-limit``, where given, finite and > 0: one line naming the flag, before any
    work (``score`` checked its limit only once the data were read, after their type line: a review)."""
    import math

    for key, flag in (("time_limit", "--time-limit"), ("score_time_limit", "--score-time-limit")):
        value = opts.get(key)
        if value is not None and not (math.isfinite(value) and value > 0):     # inf and nan too: no limit is no flag
            raise InputError(f"{flag} must be a finite number of seconds > 0, got {value}")


def writes_stdout(*paths: Any) -> bool:
    """Whether one of the output ``paths`` is this process's standard output (``--json /dev/stdout``): the
    command then says what it says on stderr, so that stdout holds that output alone (``| jq`` reads it)."""
    from bnilp.scorefile import open_descriptor

    return any(isinstance(p, str) and p and open_descriptor(p) == 1 for p in paths)


def read_paths(opts: dict[str, Any], given: dict[str, str]) -> dict[str, str]:
    """The files a command reads (``given``, and ``--knowledge`` and a ``--warm-start`` file where given),
    each with what names it, for :func:`check_outputs`'s ``inputs``."""
    more = {"knowledge_file": "--knowledge", "warm_start": "--warm-start"}
    return {**given, **{opts[k]: flag for k, flag in more.items()
                        if isinstance(opts.get(k), str) and opts[k] not in ("proxy", "greedy")}}


def check_seed(seed: int | None) -> None:
    """``--seed``: NumPy's generators take seeds ≥ 0."""
    if seed is not None and seed < 0:
        raise InputError(f"--seed must be ≥ 0, got {seed}")


def data_options(func: Callable) -> Callable:
    """--no-header, --discrete, --continuous, --missing, --drop-missing, --format."""
    for opt in reversed([
        click.option("--no-header", is_flag=True, help="The file has no names line; columns are named 0..n-1."),
        click.option("--discrete", "discrete_cols", metavar="COLS",
                     help="Comma-separated columns to treat as discrete ('all': every column but those "
                          "--continuous names)."),
        click.option("--continuous", "continuous_cols", metavar="COLS",
                     help="Comma-separated columns to treat as continuous ('all': every column but those "
                          "--discrete names)."),
        click.option("--missing", metavar="TOKENS",
                     help="Extra tokens meaning 'missing' (e.g. '?'); an error unless --drop-missing."),
        click.option("--drop-missing", is_flag=True,
                     help="Leave out every row with a missing value (complete-case analysis: sound where values "
                          "are missing completely at random); says how many."),
        click.option("--format", "fmt", type=click.Choice(DATA_FORMATS), default="auto", show_default=True,
                     help="Data format: CSV/TSV or GOBNILP .dat (names line, arities line with '-' for continuous)."),
    ]):
        func = opt(func)
    return func


def score_options(func: Callable) -> Callable:
    """--score and its settings, structure priors."""
    for opt in reversed([
        click.option("--score", "score_name", type=click.Choice(sorted(REGISTRY)), default="bic", show_default=True),
        click.option("--ess", type=float, default=DEFAULT_ESS, show_default=True,
                     help=f"BDeu equivalent sample size (> 0; the BDeu score needs ≥ {MIN_ESS:g})."),
        click.option("--mvp-degree", default=DEFAULT_MVP_DEGREE, show_default=True, metavar="log|N",
                     help="MVP polynomial degree: 'log' (⌊ln n_p⌋ per partition) or an integer ≥ 1."),
        click.option("--bins", type=int, default=DEFAULT_BINS, show_default=True,
                     help="CGd: equal-frequency bins (≥ 2)."),
        click.option("--alpha-mu", type=float, default=DEFAULT_ALPHA_MU, show_default=True,
                     help="BGe: imaginary sample size of the prior's normal part (> 0)."),
        click.option("--alpha-w", type=float, default=None,
                     help="BGe: the prior Wishart's degrees of freedom (> n + 1) [default: n + 2]."),
        click.option("--raw-units", is_flag=True, default=False,
                     help="BGe: score the columns in their own units, not standardised (as bnlearn's bge and "
                     "pygobnilp's BGe do)."),
        click.option("--prior", "priors", type=click.Choice([*STRUCTURE_PRIORS, *AVERAGING_PRIORS]),
                     multiple=True, help="Structure prior added to every local score (none, binomial, ebic; "
                     "default none) and/or, for learn, the prior over structures for averaging (dags, mecs; "
                     "default dags). Repeat to give both, e.g. --prior binomial --prior mecs."),
        click.option("--expected-parents", type=float, default=None,
                     help=f"Binomial prior: expected number of parents r, in (0, n − 1) [default: "
                     f"{DEFAULT_EXPECTED_PARENTS:g}; (n − 1)/2 with two variables]."),
        click.option("--ebic-gamma", type=float, default=DEFAULT_EBIC_GAMMA, show_default=True,
                     help="EBIC prior: γ (≥ 0)."),
        click.option("--penalty-discount", type=float, default=DEFAULT_PENALTY_DISCOUNT, show_default=True,
                     help="Multiplies the ½·ln N complexity penalty (BIC, CG, CGd, MVP; > 0)."),
    ]):
        func = opt(func)
    return func


def _once(hint: str) -> Callable:
    """A callback for an option that holds one value, declared ``multiple=True`` so that a second value is seen:
    refused, with ``hint`` (click kept the last one silently — a review: ``--knowledge k1 --knowledge k2`` dropped k1's
    statements, ``--tiers`` twice the first order)."""
    def given_once(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
        if len(value) > 1:
            raise click.BadParameter(f"given {len(value)} times ({', '.join(map(repr, value))}): {hint}",
                                     ctx, param)
        return value[0] if value else None
    return given_once


def knowledge_options(func: Callable) -> Callable:
    """--knowledge FILE, --require, --forbid, --tiers, --independent, --dependent (background knowledge,
    :mod:`bnilp.knowledge`)."""
    for opt in reversed([
        click.option("--knowledge", "knowledge_file", metavar="FILE", multiple=True,
                     callback=_once("one file holds every statement (and --require, --forbid, … add to it)"),
                     help="Background knowledge file: 'require a -> b', 'forbid a -- b', 'require a ~> b' "
                     "(ancestor), 'tier a, b' / 'tier! a, b', 'independent a, b | c, d', 'dependent a, b | c, d' "
                     "lines (README, 'Background knowledge')."),
        click.option("--require", "require", multiple=True, metavar="'a->b'",
                     help="Required arrow ('a->b'), adjacency ('a--b') or ancestor relation ('a~>b'); repeatable."),
        click.option("--forbid", "forbid", multiple=True, metavar="'a->b'",
                     help="Forbidden arrow, adjacency or ancestor relation (as --require); repeatable."),
        click.option("--tiers", "tiers", metavar="'a,b;c;d,e'", multiple=True,
                     callback=_once("every tier goes in one value, ';'-separated, in time order"),
                     help="Tiers in time order, ';'-separated: no arrow from a later tier into an earlier one "
                     "('!' before a tier: no arrows within it either)."),
        click.option("--independent", "independent", multiple=True, metavar="'a,b|c,d'",
                     help="A conditional independence: c, d d-separate a and b in every network ('a,b' alone: "
                     "marginally); repeatable."),
        click.option("--dependent", "dependent", multiple=True, metavar="'a,b|c,d'",
                     help="A conditional dependence: c, d do not d-separate a and b in any network ('a,b' alone: "
                     "marginally); repeatable."),
    ]):
        func = opt(func)
    return func


def knowledge_from_options(opts: dict[str, Any]) -> Any:
    """The :class:`bnilp.knowledge.Knowledge` of the options (None when none was given)."""
    from bnilp.knowledge import from_options

    return from_options(opts.get("knowledge_file"), opts.get("require") or (), opts.get("forbid") or (),
                        opts.get("tiers"), opts.get("independent") or (), opts.get("dependent") or ())


def bf_options(func: Callable) -> Callable:
    """--bf / --epsilon (ε = ln BF)."""
    func = click.option("--epsilon", type=float, default=None,
                        help="ε = ln(BF) directly (instead of --bf; ≥ 0).")(func)
    func = click.option("--bf", type=float, default=None,
                        help="Bayes factor: keep every network within BF of the optimum (ε = ln BF; BF ≥ 1).")(func)
    return func


def epsilon_from(bf: float | None, epsilon: float | None, default_bf: float) -> float:
    """ε from --bf or --epsilon (not both: one would silently win); BF must be ≥ 1 and ε ≥ 0, both finite."""
    if epsilon is not None and bf is not None:
        raise InputError(f"give --bf or --epsilon, not both (got --bf {bf:g} and --epsilon {epsilon:g})")
    if epsilon is not None:
        if not (math.isfinite(epsilon) and epsilon >= 0):
            raise InputError(f"--epsilon must be a finite number ≥ 0, got {epsilon}")
        return float(epsilon)
    bf = default_bf if bf is None else bf
    if not (math.isfinite(bf) and bf >= 1):
        raise InputError(f"--bf must be a finite number ≥ 1, got {bf}")
    return math.log(bf)




def structure_priors_only(command: click.Command) -> None:
    """A command with no credible set to average over (score, proxy-search) lists only the structure priors under
    --prior: ``dags``/``mecs`` stay refused with their reason (:func:`refuse_averaging_prior`) but leave the help,
    which showed them (a review)."""
    param = next(p for p in command.params if p.name == "priors")
    param.metavar = f"[{'|'.join(STRUCTURE_PRIORS)}]"
    param.help = f"Structure prior added to every local score ({', '.join(STRUCTURE_PRIORS)}; default none)."


def refuse_averaging_prior(opts: dict[str, Any], command: str) -> None:
    """``--prior dags|mecs`` weighs the networks of a credible set: only learn, solve and count have one."""
    if split_priors(opts.get("priors"))[1] != "dags" or "dags" in (opts.get("priors") or ()):
        raise InputError(f"--prior dags|mecs is the averaging prior of learn/solve/count; {command} takes "
                         "none|binomial|ebic")


def split_priors(values: tuple[str, ...] | list[str] | None) -> tuple[str, str]:
    """(structure prior, averaging prior) from the repeated --prior option."""
    values = list(values or [])
    structure = [v for v in values if v in STRUCTURE_PRIORS]
    averaging = [v for v in values if v in AVERAGING_PRIORS]
    for given, names in ((structure, STRUCTURE_PRIORS), (averaging, AVERAGING_PRIORS)):
        if len(set(given)) > 1:         # the kind that conflicts (count, which takes no structure prior, named both)
            raise InputError(f"--prior given conflicting values {values}: at most one of {', '.join(names)}")
    return (structure[0] if structure else "none"), (averaging[0] if averaging else "dags")



def _is_score_file(path: str) -> bool:
    """Whether ``path``, which did not read as data, reads as a score file (Jaakkola or PSS): a user who gave one
    to ``learn`` was told only that its line 2 had the wrong number of fields (a review). A stream cannot be read
    twice: no."""
    from bnilp.scorefile import is_stream, read_score_file

    try:
        if is_stream(path):
            return False
        read_score_file(path)
    except (InputError, OSError, ValueError):
        return False
    return True


def load_from_options(path: str, opts: dict[str, Any], quiet: bool = False) -> Dataset:
    """Load DATA with the type options; with a discrete-only score and none of --discrete/--continuous,
    columns of small non-negative integers are discrete whatever their number of codes. With --jobs and a
    score evaluated in Python the scoring processes are started first, so that their start overlaps the
    reading (BIC and BDeu count on threads: :class:`bnilp.lattice.ThreadExecutor`). ``quiet``: no line on
    stderr for the rows --drop-missing left out."""
    if opts.get("n_jobs", 1) < 1 and opts.get("n_jobs", 1) != -1:
        raise InputError(f"--jobs must be ≥ 1 or −1 (all cores), got {opts['n_jobs']}")
    if opts.get("palim") is not None and opts["palim"] < 0:
        raise InputError(f"--palim must be ≥ 0, got {opts['palim']}")
    n_jobs = worker_count(opts.get("n_jobs", 1))
    compiled = opts.get("score_name", "bic") in DISCRETE_ONLY_SCORES
    if n_jobs > 1 and not opts.get("scheduler") and not compiled and may_start_processes():    # a daemon: none
        from bnilp.lattice import start_pool

        start_pool(n_jobs)
    typed = opts.get("discrete_cols") or opts.get("continuous_cols")
    integer_codes = opts.get("score_name", "bic") in DISCRETE_ONLY_SCORES and not typed
    continuous = "all" if opts.get("score_name", "bic") in CONTINUOUS_ONLY_SCORES and not typed \
        else opts.get("continuous_cols")
    with warnings.catch_warnings():     # the commands print their own lines (score_data), -q or not
        warnings.simplefilter("ignore", DataWarning)
        try:
            data = load_data(path, no_header=opts.get("no_header", False), discrete=opts.get("discrete_cols"),
                             continuous=continuous, missing=opts.get("missing"),
                             fmt=opts.get("fmt", "auto"), integer_codes=integer_codes,
                             drop_missing=opts.get("drop_missing", False))
        except InputError as exc:
            if continuous == "all" and not typed and "is continuous but holds" in str(exc):
                raise InputError(f"{exc} (--score {opts['score_name']} reads every column as continuous; a mixed "
                                 "score takes discrete columns)") from None
            if _is_score_file(path):
                raise InputError(f"{exc} ({path} is a score file, not data: `bnilp solve` reads it)") from None
            raise
    if data.rows_dropped_missing and not quiet:   # stderr: stdout may
        # hold an output (--json -)
        from rich.text import Text

        from bnilp.terminal import plain_console

        plain_console(stderr=True).print(Text(dropped_rows_text(data), style="yellow"))
    return data


def given_on_command_line(key: str) -> bool:
    """Whether the option stored as ``key`` was given (on the command line or through the environment), not left
    at its default — False outside a click command."""
    from click.core import ParameterSource

    ctx = click.get_current_context(silent=True)
    return ctx is not None and ctx.get_parameter_source(key) in (ParameterSource.COMMANDLINE,
                                                                 ParameterSource.ENVIRONMENT)


def _check_ignored_settings(opts: dict[str, Any]) -> None:
    """A score or prior setting given on the command line that the run would ignore is refused (``--bins`` with
    ``--score bic``, ``--expected-parents`` without ``--prior binomial``, …): it would silently not apply.
    ``--ess`` is used by ``--score bdeu`` and by ``--export`` with ``--parameters bayes`` (the default after
    BDeu); given for neither, it is refused."""
    if click.get_current_context(silent=True) is None:
        return
    given = given_on_command_line

    from bnilp.export import default_method

    name, prior = opts.get("score_name", "bic"), split_priors(opts.get("priors"))[0]
    bayes_export = bool(opts.get("export_path")) and (
        opts.get("parameter_method") or default_method(name)) == "bayes"
    for key, flag, used, why in (
            ("ess", "--ess", name == "bdeu" or bayes_export, _ess_users()),
            ("bins", "--bins", name == "cgd", "CGd's (--score cgd)"),
            ("mvp_degree", "--mvp-degree", name == "mvp", "MVP's (--score mvp)"),
            ("alpha_mu", "--alpha-mu", name == "bge", "BGe's (--score bge)"),
            ("alpha_w", "--alpha-w", name == "bge", "BGe's (--score bge)"),
            ("raw_units", "--raw-units", name == "bge", "BGe's (--score bge)"),
            ("expected_parents", "--expected-parents", prior == "binomial", "the binomial prior's (--prior binomial)"),
            ("ebic_gamma", "--ebic-gamma", prior == "ebic", "the EBIC prior's (--prior ebic)"),
            ("penalty_discount", "--penalty-discount", name not in ("bdeu", "mml", "bge"),
             "the penalised scores' (--score bic, cg, cgd, mvp)")):
        if given(key) and not used:
            raise InputError(f"{flag} is {why} setting: this run would ignore it")


def _ess_users() -> str:
    """Who takes ``--ess`` in this command, for the refusal of one it would ignore: BDeu where its ``--score``
    offers it, the export's Bayesian parameters where it exports (``citest`` has neither, ``score`` no export)."""
    ctx = click.get_current_context()
    params = {p.name: p for p in ctx.command.params}
    scores = list(getattr(getattr(params.get("score_name"), "type", None), "choices", ()))
    users = [*(["BDeu's (--score bdeu)"] if "bdeu" in scores else []),
             *(["--parameters bayes's"] if "parameter_method" in params else [])]
    if not users:
        return f"BDeu's (which {ctx.info_name} does not take: its --score is one of {', '.join(scores)})"
    return " and ".join(users)


def score_from_options(data: Dataset, opts: dict[str, Any]) -> LocalScore:
    """Build the score named by --score with only the settings it takes (one it would ignore is refused)."""
    _check_ignored_settings(opts)
    name = opts.get("score_name", "bic")
    prior = StructurePrior(split_priors(opts.get("priors"))[0], data.n,
                           opts.get("expected_parents"),
                           opts.get("ebic_gamma", DEFAULT_EBIC_GAMMA))
    settings: dict[str, Any] = {"prior": prior,
                                "penalty_discount": opts.get("penalty_discount", DEFAULT_PENALTY_DISCOUNT)}
    if name == "bdeu":
        settings["ess"] = opts.get("ess", DEFAULT_ESS)
    if name == "cgd":
        settings["bins"] = opts.get("bins", 3)
    if name == "bge":
        settings.update(alpha_mu=opts.get("alpha_mu", DEFAULT_ALPHA_MU), alpha_w=opts.get("alpha_w"),
                        standardize=not opts.get("raw_units", False))
    if name == "mvp":
        degree = str(opts.get("mvp_degree", "log"))
        if degree != "log":
            try:
                degree = int(degree)
            except ValueError:
                raise InputError(f"--mvp-degree must be 'log' or a positive integer, got {degree!r}") from None
            if degree < 1:
                raise InputError(f"--mvp-degree must be 'log' or a positive integer, got {degree}")
        settings["degree"] = degree
    return make_score(name, data, **settings)
