"""The README's quoted outputs are the code's: every figure its worked examples print is recomputed here.

Quoted output rots silently otherwise: a greedy move that is an exact tie under a score-equivalent score
is broken by the scores' last bits, and a change to the scoring code once moved the proxy-search example's
figures without any change to the search (README, "Worked example"). Each test reads the figures from the
README text itself, so a change that moves one fails here until the README is re-run. Times are not checked.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

import bnilp
from bnilp.cli import COMMANDS, main

README = Path(__file__).resolve().parents[1] / "README.md"
ASIA = Path(__file__).resolve().parents[1] / "instances" / "asia.csv"
CLASS_ROW = re.compile(r"^│ (\d+) │ +(-?\d+\.\d+) │ +(\d+\.\d+) │ +([\d.]+) │ +(\d+) │ +(\d+) │ +(\d\.\d+) │$", re.M)
NETWORK_LINE = re.compile(r"^  (\w+) ← (.+)$", re.M)


def readme() -> str:
    return README.read_text(encoding="utf-8")


def quoted_block(command: str) -> str:
    """The README's quoted output of ``$ command``: from that line to the closing fence."""
    text = readme()
    start = text.index(f"$ {command}\n")
    return text[start:text.index("```", start)]


def field(block: str, label: str) -> str:
    """The value printed beside ``label`` in a rich panel or two-column table."""
    match = re.search(rf"│ {re.escape(label)}\s+│?\s*(.+?)\s+│", block)
    assert match, f"README block has no {label!r} line"
    return match.group(1)


def as_printed(printed: str, value: float) -> str:
    """``value`` formatted with as many decimals as ``printed`` has (the CLI's own rounding)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return f"{value:.{decimals}f}"


def assert_network(block: str, parents: dict[str, frozenset[str]]) -> None:
    lines = NETWORK_LINE.findall(block)
    assert lines, "README block lists no network"
    quoted = {child: frozenset() if rhs == "∅" else frozenset(rhs.split(", ")) for child, rhs in lines}
    assert quoted == {v: frozenset(ps) for v, ps in parents.items()}


def assert_class_rows(block: str, report: dict) -> None:
    rows = CLASS_ROW.findall(block)
    assert len(rows) == len(report["mecs"]), "README lists another number of classes"
    for (rank, score, ln_bf, bf, n_dags, size, posterior), mec in zip(rows, report["mecs"], strict=True):
        assert (score, ln_bf) == (as_printed(score, mec["score"]), as_printed(ln_bf, mec["ln_bf"])), rank
        assert bf == as_printed(bf, math.exp(mec["ln_bf"])), rank
        assert (int(n_dags), int(size)) == (mec["n_dags"], mec["class_size"]), rank
        assert posterior == as_printed(posterior, mec["posterior"]), rank


@pytest.fixture(scope="module")
def worked_example():
    block = quoted_block("bnilp learn")
    score, bf = re.search(r"score (\w+), BF (\d+)", block).groups()
    return block, bnilp.learn(ASIA, score=score, bf=float(bf))


def test_worked_example_scoring_table_is_current(worked_example) -> None:
    block, result = worked_example
    meta = result.table.meta
    assert re.search(rf"scored {meta['scored']}, kept {meta['kept']} parent sets", block)
    per_variable = meta["per_variable"]
    shown = re.findall(r"^│ (\w+) +│" + r" +(\d+) │" * 9, block, re.M)
    assert shown, "README shows no row of the scoring table"
    for name, scored, kept, *rules_and_size in shown:
        row = per_variable[name]
        pruned = [row["pruned"][rule] for rule in ("R1", "R2", "R3", "R4", "R5", "R6")]
        assert [int(scored), int(kept), *map(int, rules_and_size)] == [row["scored"], row["kept"], *pruned,
                                                                        row["max_kept_size"]], name


def test_worked_example_credible_set_is_current(worked_example) -> None:
    block, result = worked_example
    report = result.report
    optimum = field(block, "OPT (best score)")
    assert optimum == as_printed(optimum, result.solution.optimum)
    assert int(field(block, "credible DAGs").split()[0]) == report["n_networks"]
    assert int(field(block, "credible MECs")) == report["n_mecs"]
    assert field(block, "complete") == ("yes" if result.complete else "no")
    assert_network(block, result.solution.networks[0].parents)
    assert_class_rows(block, report)
    posteriors = result.edge_posteriors()
    quoted = re.findall(r"(\w+)→(\w+) (\d\.\d{4})", block.split("Directed edge posteriors")[1])
    assert quoted, "README quotes no edge posterior"
    for u, v, p in quoted:
        assert p == as_printed(p, posteriors.loc[u, v]), (u, v)


def test_api_model_string_is_current(worked_example) -> None:
    _, result = worked_example
    quoted = re.search(r'result\.model_string\(\) +# bnlearn: "([^"…]+)…"', readme()).group(1)
    assert result.model_string().startswith(quoted)


def test_worked_example_export_query_is_current(tmp_path) -> None:
    pgmpy_readers = pytest.importorskip("pgmpy.readwrite")
    inference = pytest.importorskip("pgmpy.inference")
    text = readme()
    block = quoted_block("bnilp learn --export asia.bif")
    query, evidence_var, evidence_value = re.search(
        r'query\(\["(\w+)"\], evidence=\{"(\w+)": "(\w+)"\}', block).groups()
    quoted = dict(re.findall(rf"\| {query}\((\w+)\) +\| +(\d\.\d+) \|", block))
    assert quoted, "README quotes no query result"
    path = tmp_path / "asia.bif"
    runner = CliRunner()
    res = runner.invoke(main, ["learn", "--export", str(path), "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    model = pgmpy_readers.BIFReader(str(path)).get_model()
    factor = inference.VariableElimination(model).query([query], evidence={evidence_var: evidence_value},
                                                        show_progress=False)
    states = factor.state_names[query]
    for state, p in quoted.items():
        assert p == as_printed(p, factor.values[states.index(state)]), state
    # the CPT row the README quotes for a configuration the data never show
    row = re.search(r"`probability \( (\w+) \| (\w+), (\w+) \) \{.*?\((\w+), (\w+)\)\s+([\d.]+), ([\d.]+); \}`",
                    text, re.S)
    child, p1, p2, s1, s2, q1, q2 = row.groups()
    bif = path.read_text()
    assert re.search(rf"probability \( {child} \| {p1}, {p2} \)", bif)
    assert re.search(rf"\({s1}, {s2}\) {q1}, {q2};", bif)


def tiers_example() -> tuple[str, list[list[str]]]:
    text = readme()
    tiers = re.search(r"^\$ bnilp learn --tiers '([^']+)'$", text, re.M).group(1)
    return quoted_block(f"bnilp learn --tiers '{tiers}'"), [t.split(",") for t in tiers.split(";")]


def test_tiers_example_is_current() -> None:
    block, tiers = tiers_example()
    result = bnilp.learn(ASIA, bf=20, knowledge=bnilp.Knowledge(tiers=tiers))
    report = result.report
    assert int(field(block, "credible DAGs").split()[0]) == report["n_networks"]
    assert int(field(block, "credible MECs")) == report["n_mecs"]
    optimum = re.search(r"optimal network \(score (-\d+\.\d+)\)", block).group(1)
    assert optimum == as_printed(optimum, result.solution.optimum)
    assert int(re.search(r"forbidden arrows: (\d+)", block).group(1)) == len(report["knowledge"]["forbidden_arrows"])
    assert_network(block, result.solution.networks[0].parents)
    assert_class_rows(block, report)
    side_by_side = re.search(r"\| credible set \(BF 20\) \| \| (\d+) DAGs in (\d+) classes \| (\d+) DAGs in (\d+) "
                             r"classes \|", readme()).groups()
    plain = bnilp.learn(ASIA, bf=20).report
    assert [int(x) for x in side_by_side] == [plain["n_networks"], plain["n_mecs"], report["n_networks"],
                                              report["n_mecs"]]


def test_required_arrow_example_is_current() -> None:
    text = readme()
    u, v, optimum, bf, alone, classes = re.search(
        r"`--require '(\w+)->(\w+)'` added to the tiers\) gives the textbook network\s+exactly \(OPT −(\d+\.\d+), "
        r"the only DAG within BF (\d+); the requirement alone leaves (\d+) DAGs in (\d+) classes\)", text).groups()
    _, tiers = tiers_example()
    result = bnilp.learn(ASIA, bf=float(bf), knowledge=bnilp.Knowledge(required=[(u, v)], tiers=tiers))
    assert "-" + optimum == as_printed(optimum, result.solution.optimum)
    assert result.report["n_networks"] == 1
    without_tiers = bnilp.learn(ASIA, bf=float(bf), knowledge=bnilp.Knowledge(required=[(u, v)]))
    assert (without_tiers.report["n_networks"], without_tiers.report["n_mecs"]) == (int(alone), int(classes))
    textbook = re.search(r"\| optimal network \| ([^|]+) \|", text).group(1).strip().split(", ")
    learned = {(p, child) for child, ps in result.solution.networks[0].parents.items() for p in ps}
    assert learned == {tuple(edge.split("→")) for edge in textbook}


def test_independence_example_is_current() -> None:
    """The worked example of an independence the data contradict: its optima, counts, cuts and nats."""
    found = re.search(r"--bf (\d+) --independent '(\w+),(\w+)\|(\w+)'`.*?OPT −(\d+\.\d+) against −(\d+\.\d+) without "
                      r"the statement, (\d+) DAGs in (\d+) class against (\d+) in (\d+); the model starts with (\d+) "
                      r"rows .*? and (\d+) family fixed at 0 .*?the search added (\d+) rows in phase 1 and (\d+) in "
                      r"phase 2.*?The (\d+\.\d+) nats", " ".join(readme().split()))
    (bf, a, b, given, opt, free_opt, dags, classes, free_dags, free_classes, short, fixed, cuts1, cuts2,
     nats) = found.groups()
    held = bnilp.learn(ASIA, bf=float(bf), knowledge=bnilp.Knowledge(independent=[(a, b, [given])]))
    free = bnilp.learn(ASIA, bf=float(bf))
    assert "-" + opt == as_printed(opt, held.solution.optimum)
    assert "-" + free_opt == as_printed(free_opt, free.solution.optimum)
    assert (held.report["n_networks"], held.report["n_mecs"]) == (int(dags), int(classes))
    assert (free.report["n_networks"], free.report["n_mecs"]) == (int(free_dags), int(free_classes))
    stats = held.solution.stats
    added = [sum(stats[phase]["cuts"].get(kind, 0) for kind in ("independence", "independence_sepa"))
             for phase in ("phase1", "phase2")]
    assert added == [int(cuts1), int(cuts2)]
    assert (stats["phase1"]["independence_rows"], stats["phase1"]["independence_fixed"]) == (int(short), int(fixed))
    assert f"{free.solution.optimum - held.solution.optimum:.2f}" == nats


def test_side_by_side_table_shows_the_learned_optimal_networks() -> None:
    """The ASIA table's "optimal network" row: without knowledge the class's fixed representative, with the
    tiers the same network (a review found the no-knowledge cell stale: lung→smoke)."""
    row = re.search(r"\| optimal network \| [^|]+ \| ([^|(]+)[^|]*\| the same network", readme())
    shown = {tuple(edge.split("→")) for edge in row.group(1).strip().split(", ")}
    _, tiers = tiers_example()
    for knowledge in (None, bnilp.Knowledge(tiers=tiers)):
        result = bnilp.learn(ASIA, bf=20.0, knowledge=knowledge)
        assert {(p, c) for c, ps in result.solution.networks[0].parents.items() for p in ps} == shown


#: NumPy's AVX-512 targets (X86_V4 from NumPy 2.4 on), switched off for the proxy example (a feature the CPU lacks,
#: or a NumPy that does not dispatch it, is ignored: an ImportWarning at most)
NO_AVX512 = "X86_V4 AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the example's figures are for OpenBLAS's x86-64 Haswell kernels")
def test_proxy_search_example_is_current(shared_data, tmp_path) -> None:
    """The proxy's fit stops unconverged at its iteration cap, so its network follows the last bits of the BLAS
    kernels and of NumPy's own SIMD paths (AVX-512 ones give another network than AVX2 ones, README): the command
    runs in a process with OpenBLAS's Haswell kernels and NumPy's AVX-512 paths off, as the README's figures were
    measured, whatever this machine would pick."""
    block = quoted_block("bnilp proxy-search ../shared/data/liao2019_ebnsl/alarm1000.csv --no-header "
                         "--score bic --seed 1")
    out = tmp_path / "proxy.json"
    args = [str(shared_data / "liao2019_ebnsl" / "alarm1000.csv"), "--no-header", "--score", "bic", "--seed", "1"]
    res = subprocess.run([sys.executable, "-m", "bnilp", "proxy-search", *args, "--json", str(out), "-q"],
                         env={**os.environ, "OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": NO_AVX512},
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    found = json.loads(out.read_text())
    exact = field(block, "exact score")
    assert exact == as_printed(exact, found["score"])
    # the fit stops at its iteration cap, so a tied move or two depend on the CPU's BLAS kernels (README), and a
    # sample on other NumPy/SciPy releases (2,439 for 2,438 on Python 3.13 with NumPy 2.5 and SciPy 1.18)
    assert abs(int(field(block, "local scores computed")) - found["evaluations"]) <= 5
    assert abs(int(field(block, "samples")) - found["samples"]) <= 5
    assert int(field(block, "edges")) == sum(len(ps) for ps in found["parents"].values())
    round_ = int(re.search(r"refinement climb \(round (\d+)\)", block).group(1))
    assert f"round {round_})" in found["found_by"]
    quoted_edges = re.findall(r"(\d+) -> (\d+)", block.split("edges:")[1])
    edges = {(p, child) for child, ps in found["parents"].items() for p in ps}
    assert quoted_edges and set(quoted_edges) <= edges
    # the prose beside it: exact greedy search on the same data
    greedy_score, greedy_evals = re.search(r"`--method greedy`: −(\d+\.\d+), ([\d,]+) local scores", readme()).groups()
    res = CliRunner().invoke(main, ["proxy-search", *args, "--method", "greedy", "--json", str(out), "-q"],
                             catch_exceptions=False)     # exact scores only: no BLAS in its choices
    assert res.exit_code == 0, res.output
    found = json.loads(out.read_text())
    assert "-" + greedy_score == as_printed(greedy_score, found["score"])
    assert int(greedy_evals.replace(",", "")) == found["evaluations"]



def documented_json_fields() -> tuple[set[str], set[str]]:
    """Field names the README gives the result JSON: (all it names, the top level's) — Formats, Background knowledge."""
    text = readme()
    schema = text[text.index("**Result JSON**"):text.index("`optimum_proven` is false")]
    schema = re.sub(r"#.*", "", schema[schema.index("```text"):])
    knowledge = text[text.index("**Reports**: the JSON has"):]
    knowledge = knowledge[:knowledge.index("\n\n")]
    named = set(re.findall(r'"(\w+)"', schema)) | set(re.findall(r"`\"?(\w+)\"?", knowledge))
    body = schema[schema.index("{") + 1:schema.rindex("}")]
    while (inner := re.sub(r"\{[^{}]*\}|\[[^\[\]]*\]", "", body)) != body:
        body = inner
    return named, set(re.findall(r'"(\w+)":', body)) | {"knowledge"}


RUNS = {"default": ["learn"], "knowledge and export": ["learn", "--require", "smoke->lung", "--export", "{tmp}/a.bif"],
        "palim cuts, DAGs": ["learn", "--palim", "1", "--enumerate", "dags"],
        "warm start": ["learn", "--warm-start", "greedy"],
        "DAGs listed past the cap": ["learn", "--list-dags", "--max-networks", "3"],
        "a searched start the table cannot hold": ["learn", "--warm-start", "greedy", "--require", "asia->tub"],
        "a start against the knowledge": ["learn", "--warm-start", "{tmp}/0.json", "--forbid", "lung->either"],
        "file pruned without the knowledge": ["solve", "{tmp}/asia.scores", "--bf", "20", "--require", "smoke->lung"],
        "a file that records no BF": ["solve", "{tmp}/bare.scores", "--bf", "20"],
        "identical columns": ["learn", "{tmp}/twins.csv", "--bf", "20"]}


@pytest.fixture(scope="module")
def result_jsons(tmp_path_factory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("json")
    runner = CliRunner()
    res = runner.invoke(main, ["score", str(ASIA), "--bf", "20", "-o", str(tmp / "asia.scores"), "-q"])
    assert res.exit_code == 0, res.output
    (tmp / "bare.scores").write_text((tmp / "asia.scores").read_text())          # no sidecar: pruning_note
    frame = pd.read_csv(ASIA)
    frame.assign(smoke_again=frame["smoke"]).to_csv(tmp / "twins.csv", index=False)     # twins_note
    results = {}
    for name, args in RUNS.items():
        out = tmp / f"{len(results)}.json"
        args = [a.format(tmp=tmp) for a in args] + ["--json", str(out), "-q"]
        res = runner.invoke(main, args, catch_exceptions=False)
        assert res.exit_code in (0, 3), (name, res.output)
        results[name] = json.loads(out.read_text())
    return results


@pytest.mark.parametrize("run", RUNS)
def test_result_json_writes_only_documented_fields(run, result_jsons) -> None:
    named, top_level = documented_json_fields()
    result = result_jsons[run]
    assert set(result) <= top_level
    for key in ("networks", "mecs", "edges", "adjacency"):
        assert set(result[key][0]) <= named, key
    assert set(result["mecs"][0]["cpdag"]) <= named


def test_every_documented_json_field_is_written(result_jsons) -> None:
    _, top_level = documented_json_fields()
    assert top_level <= set().union(*result_jsons.values())


def synopsis() -> dict[str, list[str]]:
    """The README's command synopsis (Command line): each command's lines."""
    text = readme()
    start = text.index("```text\nbnilp score DATA")
    lines: dict[str, list[str]] = {}
    command = ""
    for line in text[start:text.index("```", start + 7)].splitlines()[1:]:
        if match := re.match(r"bnilp ([\w-]+)", line):
            command, line = match.group(1), line[match.end():]
        lines.setdefault(command, []).append(line)
    return lines


def flags(lines: list[str]) -> set[str]:
    return {flag for line in lines for flag in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line)}


def command_options(name: str) -> set[str]:
    command = main.get_command(click.Context(main), name)
    return {opt for param in command.params for opt in param.opts + param.secondary_opts if opt.startswith("-")}


@pytest.mark.parametrize("name", COMMANDS)
def test_synopsis_names_each_commands_options_exactly(name) -> None:
    """Every flag the synopsis gives a command exists, and every option of the command is in the synopsis —
    directly or through its placeholders (score options, solve options, knowledge options)."""
    lines = synopsis()
    assert name in lines, "README synopsis misses a command"
    named = flags(lines[name])
    assert named <= command_options(name)
    placeholders = {"score options": flags(lines["score"]) - {"-o"}, "solve options": flags(lines["solve"]),
                    "knowledge options": {"--knowledge", "--require", "--forbid", "--tiers", "--independent",
                                          "--dependent"}}
    expanded = named.union(*(opts for text, opts in placeholders.items() if text in " ".join(lines[name])))
    aliases = {"--help", "--quiet", "--output"}   # -q and -o are the forms the README uses
    assert command_options(name) - aliases <= expanded | {"-q", "-o"}


def test_count_past_cap_variable_limit_is_the_one_the_code_applies() -> None:
    from bnilp.mec import MASK_MAX_VARIABLES
    said = re.search(r"works on\s+at most (\d+) variables \(`MASK_MAX_VARIABLES`", readme())
    assert said is not None and int(said.group(1)) == MASK_MAX_VARIABLES


def test_every_command_the_readme_shows_runs_as_written() -> None:
    """Every `bnilp COMMAND ...` the README shows uses only that command's options, and one given with its
    arguments (a data or score file) gives every required option: six `bnilp score` commands lacked `-o` and
    failed with exit 2 ("Missing option '-o'")."""
    text = readme()
    shown = 0
    for match in re.finditer(r"`(bnilp ([a-z-]+)(?: [^`]*)?)`", text):
        command_text, name = match.group(1), match.group(2)
        command = main.get_command(click.Context(main), name)
        assert command is not None, f"README shows an unknown command: {command_text!r}"
        used = flags([command_text])
        assert used <= command_options(name) | {"--help"}, (command_text, used - command_options(name))
        words = command_text.split()[2:]
        if words and not words[0].startswith("-"):          # a whole command line, not a fragment naming a flag
            shown += 1
            required = [p.opts for p in command.params if isinstance(p, click.Option) and p.required]
            assert all(set(opts) & used for opts in required), (command_text, required)
    assert shown >= 10
