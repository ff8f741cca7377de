"""Independent oracles for tests: brute-force DAG enumeration and credible sets (n ≤ 5).

Written without any bnilp search code so that it can check it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from fractions import Fraction

import networkx as nx
import numpy as np

from bnilp.scorefile import ScoreTable

Parents = dict[str, frozenset[str]]


def is_acyclic(parents: Parents) -> bool:
    """Kahn's algorithm on the parent map."""
    remaining = {v: set(p) for v, p in parents.items()}
    while remaining:
        sinks = [v for v, p in remaining.items() if not p]
        if not sinks:
            return False
        for v in sinks:
            del remaining[v]
        for p in remaining.values():
            p.difference_update(sinks)
    return True


def all_dags(nodes: list[str]) -> Iterator[Parents]:
    """Every labelled DAG on ``nodes`` once (1, 3, 25, 543, 29281 for n = 1..5)."""
    seen: set[tuple[frozenset[str], ...]] = set()
    for order in itertools.permutations(nodes):
        choices = []
        for pos in range(len(order)):
            before = order[:pos]
            choices.append([frozenset(c) for k in range(len(before) + 1)
                            for c in itertools.combinations(before, k)])
        for combo in itertools.product(*choices):
            parents = dict(zip(order, combo, strict=True))
            key = tuple(parents[v] for v in nodes)
            if key not in seen:
                seen.add(key)
                yield {v: parents[v] for v in nodes}


def brute_force_networks(table: ScoreTable) -> list[tuple[float, Parents]]:
    """Every DAG the table admits, with its fsum score, best first."""
    names = table.variables
    out = []
    if math.prod(len(table.families[v]) for v in names) > 30000 and len(names) <= 5:
        candidates: Iterator[Parents] = (p for p in all_dags(names)
                                         if all(p[v] in table.families[v] for v in names))
    else:
        candidates = (dict(zip(names, combo, strict=True))
                      for combo in itertools.product(*(list(table.families[v]) for v in names)))
    for parents in candidates:
        if is_acyclic(parents):
            out.append((math.fsum(table.families[v][parents[v]] for v in names), parents))
    out.sort(key=lambda sp: -sp[0])
    return out


def brute_force_credible(table: ScoreTable, epsilon: float) -> tuple[float, list[tuple[float, Parents]]]:
    """(OPT, every admitted DAG with score ≥ OPT − ε)."""
    nets = brute_force_networks(table)
    opt = nets[0][0]
    return opt, [(s, p) for s, p in nets if s >= opt - epsilon - 1e-9 * max(1.0, abs(opt))]


def markov_class(parents: Parents) -> tuple[frozenset, frozenset]:
    """Verma & Pearl (1990): a DAG's class is fixed by its skeleton and its unshielded colliders u → z ← v."""
    skeleton = frozenset(frozenset((u, v)) for v, ps in parents.items() for u in ps)
    colliders = frozenset((frozenset((u, v)), z) for z, ps in parents.items() for u in ps for v in ps
                          if u < v and frozenset((u, v)) not in skeleton)
    return skeleton, colliders


def posteriors_by_listing(credible: list[tuple[float, Parents]], prior: str
                          ) -> tuple[dict[tuple[str, str], float], dict[frozenset[str], float]]:
    """(P(u → v), P(u — v undirected in the CPDAG)) over listed credible DAGs grouped into their classes, each class
    weighted by exp(score − OPT) ("mecs": its weight shared equally by its DAGs) or that times its DAGs ("dags");
    an edge is undirected in a class's CPDAG iff the class's DAGs orient it both ways."""
    classes: dict[tuple, list[tuple[float, Parents]]] = {}
    for s, p in credible:
        classes.setdefault(markov_class(p), []).append((s, p))
    opt = max(s for s, _ in credible)
    arrows: dict[tuple[str, str], float] = {}
    undirected: dict[frozenset[str], float] = {}
    total = 0.0
    for members in classes.values():
        w = math.exp(max(s for s, _ in members) - opt) * (len(members) if prior == "dags" else 1)
        total += w
        held: dict[tuple[str, str], int] = {}
        for _, p in members:
            for v, ps in p.items():
                for u in ps:
                    held[(u, v)] = held.get((u, v), 0) + 1
        for (u, v), k in held.items():
            arrows[(u, v)] = arrows.get((u, v), 0.0) + w * k / len(members)
            if u < v and (v, u) in held:
                undirected[frozenset((u, v))] = undirected.get(frozenset((u, v)), 0.0) + w
    return {a: x / total for a, x in arrows.items()}, {e: x / total for e, x in undirected.items()}


def contract_twins(parents: Parents, pairs: list[tuple[str, str]]) -> Parents:
    """A DAG with twin pairs (a kept, b merged) in which one twin, U, is the other's only parent, each pair contracted
    into a (bnilp.twins' map φ, written out): a takes U's parents but the other twin, every child of a twin becomes a
    child of a, b is removed. A DAG that is not of that form is an AssertionError."""
    g = {v: set(ps) for v, ps in parents.items()}
    for a, b in pairs:
        assert (a in g[b]) != (b in g[a]), "neither twin, or both, the other's parent"
        upper, lower = (a, b) if a in g[b] else (b, a)
        assert g[lower] == {upper}, "the lower twin has another parent"
        family = g[upper] - {lower}
        for v in g:
            assert not {a, b} <= g[v] or v in (a, b), "a child with both twins"
            g[v] = {a if u == b else u for u in g[v]}
        g[a] = family
        del g[b]
    return {v: frozenset(ps) for v, ps in g.items()}


def cpdag_class(directed: Iterable[tuple[str, str]], undirected: Iterable[Iterable[str]]
                ) -> tuple[frozenset, frozenset]:
    """:func:`markov_class`'s key of the class a CPDAG stands for: its skeleton, and its unshielded colliders (the
    v-structures, directed in a CPDAG)."""
    directed = list(directed)
    skeleton = frozenset({frozenset(e) for e in directed} | {frozenset(e) for e in undirected})
    into: dict[str, set[str]] = {}
    for u, z in directed:
        into.setdefault(z, set()).add(u)
    colliders = frozenset((frozenset((u, v)), z) for z, us in into.items() for u in us for v in us
                          if u < v and frozenset((u, v)) not in skeleton)
    return skeleton, colliders


def classes_by_contraction(credible: list[tuple[float, Parents]], pairs: list[tuple[str, str]]
                           ) -> dict[tuple, list[tuple[float, int]]]:
    """Listed credible DAGs grouped into their classes, and the classes by the class of their DAGs contracted
    (:func:`contract_twins`): that class's :func:`markov_class` key → [(a class's score, its DAGs listed), …]. The
    DAGs of one class must contract into one class (an AssertionError otherwise)."""
    classes: dict[tuple, list[tuple[float, Parents]]] = {}
    for s, p in credible:
        classes.setdefault(markov_class(p), []).append((s, p))
    out: dict[tuple, list[tuple[float, int]]] = {}
    for members in classes.values():
        keys = {markov_class(contract_twins(p, pairs)) for _, p in members}
        assert len(keys) == 1, "a class's DAGs contract into different classes"
        out.setdefault(keys.pop(), []).append((max(s for s, _ in members), len(members)))
    return out


def dp_optimum(table: ScoreTable) -> float:
    """Exact OPT by dynamic programming over subsets (Silander & Myllymäki 2006), n ≤ ~15.

    best_sink(v, U) = max score of a parent set of v inside U; OPT(W) = max_v OPT(W∖v) + best_sink(v, W∖v).
    """
    names = table.variables
    index = {v: i for i, v in enumerate(names)}
    n = len(names)
    fams = [[(sum(1 << index[p] for p in ps), s) for ps, s in table.families[v].items()] for v in names]
    full = (1 << n) - 1
    best = [-math.inf] * (1 << n)
    best[0] = 0.0
    for w in range(1, full + 1):
        value = -math.inf
        rest = w
        while rest:
            bit = rest & -rest
            rest ^= bit
            v = bit.bit_length() - 1
            u = w ^ bit
            if best[u] == -math.inf:
                continue
            local = max((s for mask, s in fams[v] if mask & ~u == 0), default=-math.inf)
            value = max(value, best[u] + local)
        best[w] = value
    return best[full]


def satisfies_knowledge(parents: Parents, k) -> bool:
    """Whether the DAG satisfies background knowledge ``k`` — read from its fields directly (not with
    bnilp's own checks): arrows, adjacencies, ancestor relations (reachability by search), tiers, and
    conditional independences and dependences (networkx's d-separation test, ``nx.is_d_separator``)."""
    def arrow(a: str, b: str) -> bool:
        return a in parents[b]

    def reaches(a: str, b: str) -> bool:
        seen, stack = set(), [a]
        while stack:
            x = stack.pop()
            for c, ps in parents.items():
                if x in ps and c not in seen:
                    seen.add(c)
                    stack.append(c)
        return b in seen

    tier = {v: i for i, t in enumerate(k.tiers) for v in t}
    for c, ps in parents.items():
        for p in ps:
            if p in tier and c in tier and (tier[p] > tier[c] or (tier[p] == tier[c] and tier[p] in k.strict_tiers)):
                return False
    return (all(arrow(a, b) for a, b in k.required)
            and not any(arrow(a, b) for a, b in k.forbidden)
            and all(arrow(a, b) or arrow(b, a) for a, b in k.required_adjacent)
            and not any(arrow(a, b) or arrow(b, a) for a, b in k.forbidden_adjacent)
            and all(reaches(a, b) for a, b in k.required_ancestors)
            and not any(reaches(a, b) for a, b in k.forbidden_ancestors)
            and all(nx.is_d_separator(_digraph(parents), {a}, {b}, set(z)) for a, b, z in k.independent)
            and not any(nx.is_d_separator(_digraph(parents), {a}, {b}, set(z)) for a, b, z in k.dependent))


def _digraph(parents: Parents) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(parents)
    graph.add_edges_from((p, c) for c, ps in parents.items() for p in ps)
    return graph


def family_counts(codes, arities, child: int, parents: tuple[int, ...], ess: float = 1.0) -> dict[str, float]:
    """Counts and scores of one discrete family straight from the rows (a dict of cells, no bnilp code):
    LL = Σ n_ijk ln(n_ijk/n_ij), N·H(Π) = N ln N − Σ n_ij ln n_ij, q⁺, c⁺ and BDeu (Heckerman, Geiger &
    Chickering 1995) with α = ``ess``."""
    cells: dict[tuple, int] = {}
    for row in codes:
        key = (tuple(int(row[p]) for p in parents), int(row[child]))
        cells[key] = cells.get(key, 0) + 1
    configs: dict[tuple, int] = {}
    for (config, _), n in cells.items():
        configs[config] = configs.get(config, 0) + n
    n_total = sum(configs.values())
    q = math.prod(int(arities[p]) for p in parents)
    a_j, a_jk = ess / q, ess / q / int(arities[child])
    ll = sum(n * math.log(n / configs[c]) for (c, _), n in cells.items())
    bdeu = sum(math.lgamma(a_j) - math.lgamma(a_j + n) for n in configs.values()) \
        + sum(math.lgamma(a_jk + n) - math.lgamma(a_jk) for n in cells.values())
    nh = n_total * math.log(n_total) - sum(n * math.log(n) for n in configs.values())
    return {"ll": ll, "nh": nh, "q_plus": len(configs), "c_plus": len(cells), "bdeu": bdeu, "q": q}


def power_columns(x: np.ndarray, degree: int) -> list[list[Fraction]]:
    """x, x², …, x^degree of a float column as exact fractions (every float is a rational; ``x ** k`` in floats is
    rounded, which for values far from zero loses the differences between rows)."""
    base = [Fraction(float(v)) for v in x]
    out, current = [], [Fraction(1)] * len(base)
    for _ in range(degree):
        current = [c * b for c, b in zip(current, base, strict=True)]
        out.append(current)
    return out


def exact_variance(y: np.ndarray) -> Fraction:
    """Population variance of a float column, exactly."""
    values = [Fraction(float(v)) for v in y]
    mean = sum(values, Fraction(0)) / len(values)
    return sum(((v - mean) ** 2 for v in values), Fraction(0)) / len(values)


def exact_least_squares(columns: list, targets: np.ndarray) -> tuple[np.ndarray, list[Fraction]]:
    """Least squares of each column of ``targets`` (rows × t) on the design ``columns`` (float arrays, taken as the
    rationals they are, or lists of fractions such as :func:`power_columns`') in exact rational arithmetic: the
    normal equations XᵀXβ = XᵀY solved by Gauss–Jordan elimination over fractions (a column in the span of the ones
    before it has a zero pivot and is dropped, exactly). Returns the fitted values rounded to floats (rows × t)
    and each target's residual sum of squares as a fraction. For designs of a few columns and a few hundred rows."""
    x = [[v if isinstance(v, Fraction) else Fraction(float(v)) for v in col] for col in columns]
    y = [[Fraction(float(v)) for v in col] for col in np.asarray(targets, dtype=float).reshape(len(x[0]), -1).T]
    m, rows = len(x), len(x[0])
    gram = [[sum((a * b for a, b in zip(x[i], x[j], strict=True)), Fraction(0)) for j in range(m)] for i in range(m)]
    rhs = [[sum((a * b for a, b in zip(x[i], t, strict=True)), Fraction(0)) for t in y] for i in range(m)]
    keep: list[int] = []
    for col in range(m):                # a column in the span of the kept ones makes their Gram matrix singular
        if _nonsingular([[gram[i][j] for j in keep + [col]] for i in keep + [col]]):
            keep.append(col)
    sub = [[gram[i][j] for j in keep] for i in keep]
    beta = _solve(sub, [[rhs[i][t] for t in range(len(y))] for i in keep])
    fitted = np.empty((rows, len(y)))
    rss: list[Fraction] = []
    for t in range(len(y)):
        values = [sum((beta[k][t] * x[col][r] for k, col in enumerate(keep)), Fraction(0)) for r in range(rows)]
        fitted[:, t] = [float(v) for v in values]
        rss.append(sum(((y[t][r] - values[r]) ** 2 for r in range(rows)), Fraction(0)))
    return fitted, rss


def _nonsingular(matrix: list[list[Fraction]]) -> bool:
    """Whether a square matrix of fractions is nonsingular (exact elimination)."""
    a = [row[:] for row in matrix]
    size = len(a)
    for c in range(size):
        p = next((r for r in range(c, size) if a[r][c] != 0), None)
        if p is None:
            return False
        a[c], a[p] = a[p], a[c]
        for r in range(c + 1, size):
            f = a[r][c] / a[c][c]
            a[r] = [u - f * v for u, v in zip(a[r], a[c], strict=True)]
    return True


def _solve(matrix: list[list[Fraction]], rhs: list[list[Fraction]]) -> list[list[Fraction]]:
    """X with matrix·X = rhs, exactly (Gauss–Jordan; the matrix nonsingular)."""
    size = len(matrix)
    a = [matrix[i][:] + rhs[i][:] for i in range(size)]
    for c in range(size):
        p = next(r for r in range(c, size) if a[r][c] != 0)
        a[c], a[p] = a[p], a[c]
        a[c] = [v / a[c][c] for v in a[c]]
        for r in range(size):
            if r != c and a[r][c] != 0:
                f = a[r][c]
                a[r] = [u - f * v for u, v in zip(a[r], a[c], strict=True)]
    return [row[size:] for row in a]


def mml_length_cell_by_cell(score, child: int, parents: tuple[int, ...]) -> float:
    """MML's message length of a continuous child's family (Li & Dai eqs. 3.8, 3.12–3.14) fitted cell by cell on
    its rows — :func:`bnilp.scores.mml.gaussian_length` or :func:`~bnilp.scores.mml.regression_length` (a
    least-squares fit on each cell's design) per observed configuration of the discrete parents; the score's own
    path reads per-cell sums instead."""
    from bnilp.scores.mml import gaussian_length, regression_length, structure_length

    disc = [j for j in parents if score.discrete[j]]
    cont = sorted(j for j in parents if not score.discrete[j])
    q = float(math.prod(score.arities[j] for j in disc))
    codes = np.zeros(score.N, dtype=np.int64)
    for j in disc:
        codes = codes * score.arities[j] + score.codes[j]
    length = structure_length(score.n, len(parents)) + q * math.log(q)
    for cell in np.unique(codes):
        rows = codes == cell
        v = score.centred[child][rows]
        if not cont:
            length += gaussian_length(v, score.floor[child])
            continue
        x = np.column_stack([score.centred[j][rows] for j in cont])
        if score.intercept:
            x = np.column_stack([np.ones(v.size), x])
        length += regression_length(v, x, score.floor[child])
    return length


def mml_regression_length_exact(v: np.ndarray, x: np.ndarray, floor: float) -> float:
    """Eq. 3.13 of one cell (T rows, design ``x`` T × K of full rank, T > K) with ln|XᵀX| and the RSS taken in
    exact rational arithmetic (every float is a rational) and only the last steps in floats: the value the data as
    given define, for what :func:`bnilp.scores.mml.regression_length` and the sums path compute in floats."""
    from bnilp.scores.mml import _LN2PI, log_kappa

    t, k = x.shape
    cols = [[Fraction(float(a)) for a in x[:, j]] for j in range(k)]
    gram = [[sum((a * b for a, b in zip(cols[i], cols[j], strict=True)), Fraction(0)) for j in range(k)]
            for i in range(k)]
    det = _determinant(gram)
    log_det = math.log(det.numerator) - math.log(det.denominator)
    rss = float(exact_least_squares(list(x.T), v)[1][0])
    s2 = max(rss / (t - k), floor)
    return (0.5 * math.log(t / 2.0) + 0.5 * log_det + (k + 1) / 2 * log_kappa(k + 1) + (k + 1) / 2
            + t / 2 * _LN2PI + (t - k) / 2 * math.log(s2) + rss / (2 * s2))


def _determinant(matrix: list[list[Fraction]]) -> Fraction:
    """The determinant of a square matrix of fractions (exact elimination)."""
    a = [row[:] for row in matrix]
    size, det = len(a), Fraction(1)
    for c in range(size):
        p = next((r for r in range(c, size) if a[r][c] != 0), None)
        if p is None:
            return Fraction(0)
        if p != c:
            a[c], a[p] = a[p], a[c]
            det = -det
        det *= a[c][c]
        for r in range(c + 1, size):
            f = a[r][c] / a[c][c]
            a[r] = [u - f * w for u, w in zip(a[r], a[c], strict=True)]
    return det


def nested_regression_lr_by_loops(y: np.ndarray, given: np.ndarray, cells: np.ndarray, x: np.ndarray,
                                  x_discrete: bool, floor: float) -> tuple[float, float]:
    """(ℓ₁ − ℓ₀, df) of the nested Gaussian regressions of y, cell by cell with ``np.linalg.lstsq`` on the columns
    as given (an intercept, then ``given``'s columns; x added as a column or as a split by its states), groups made
    by the rule of :func:`bnilp.scores.cg.nested_gaussian_lr` written as loops: sub-cells of at least k + 2 rows
    are groups, the other rows one group when k + 2 or more, else part of the largest sub-cell (the first state of
    equals). Variances are RSS/n + floor·var(y), var(y) over all rows (the floor on the standardised scale)."""
    k = given.shape[1]
    f = floor * float(y.var())

    def log_var(rows: np.ndarray, columns: np.ndarray) -> float:
        design = np.column_stack([np.ones(rows.size), columns[rows]]) if columns.shape[1] else np.ones((rows.size, 1))
        beta, *_ = np.linalg.lstsq(design, y[rows], rcond=None)
        rss = float(((y[rows] - design @ beta) ** 2).sum())
        return math.log(rss / rows.size + f)

    half, df = 0.0, 0.0
    for cell in np.unique(cells):
        rows = np.flatnonzero(cells == cell)
        null = rows.size * log_var(rows, given)
        if not x_discrete:
            if rows.size >= k + 3:
                half += max(0.5 * (null - rows.size * log_var(rows, np.column_stack([given, x]))), 0.0)
                df += 1
            continue
        subs = {int(s): rows[x[rows] == s] for s in np.unique(x[rows])}
        own = [g for g in subs.values() if g.size >= k + 2]
        rest = np.concatenate([g for g in subs.values() if g.size < k + 2] or [np.array([], dtype=int)])
        if not own:
            continue
        if rest.size >= k + 2:
            own.append(rest)
        elif rest.size:
            big = max(range(len(own)), key=lambda i: (own[i].size, -i))
            own[big] = np.concatenate([own[big], rest])
        if len(own) < 2:
            continue
        half += max(0.5 * (null - sum(g.size * log_var(g, given) for g in own)), 0.0)
        df += (k + 2) * (len(own) - 1)
    return half, df


def urlearning_style_read(text: str) -> tuple[list[str], dict[str, dict[frozenset[str], float]]]:
    """A PSS file read line by line the way URLearning's reader does (Malone's ``score_cache.cpp``, its behaviour
    restated, no code taken): comment (``#``) and empty lines skipped; any line that *contains* "meta" (any case) is
    a META line; any line that contains "var " opens the variable named by its second space-separated word; every
    other line is a score and its parents, split at spaces alone. Written apart from :func:`bnilp.scorefile.parse_pss`
    to check that what bnilp writes reads the same there."""
    variables: list[str] = []
    families: dict[str, dict[frozenset[str], float]] = {}
    child = None
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        low = line.lower()
        if "meta" in low:
            continue
        words = [w for w in line.strip().split(" ") if w]
        if "var " in low:
            child = words[1]
            variables.append(child)
            families[child] = {}
            continue
        if not words:
            continue
        families[child][frozenset(words[1:])] = float(words[0])
    return variables, families
