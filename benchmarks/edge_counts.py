"""Within-class edge shares of one chain component: Clique-Picking against the source-vertex recursion.

A class's directed-edge posteriors need #AMO(C; a → b) for every edge a — b of each chain component C
(``bnilp.mec._edge_counts``). The source-vertex recursion of He, Jia & Yu (2015) (``_edge_counts_rooted``) is
exponential on dense components; Clique-Picking (Wienöbst, Bannach & Liśkiewicz 2021) is polynomial. This
prints both on dense chordal components and on many small ones (the shapes a class report meets most):

    OPENBLAS_NUM_THREADS=1 python benchmarks/edge_counts.py [--rooted-max-nodes 20]

The source-vertex recursion runs only on components of at most ``--rooted-max-nodes`` nodes (it took
minutes on 16–20 dense nodes). Both must agree wherever both run.
"""

from __future__ import annotations

import argparse
import random
import time

import networkx as nx

from bnilp.mec import _edge_counts, _edge_counts_rooted


def split_graph(k: int, m: int, rng: random.Random) -> nx.Graph:
    """A k-clique and m more vertices, each joined to 2..k−1 of the clique's: chordal, dense, many cliques."""
    g = nx.complete_graph(k)
    for v in range(k, k + m):
        g.add_edges_from((v, c) for c in rng.sample(range(k), rng.randrange(2, k)))
    return g


def clique_less_edge(k: int) -> nx.Graph:
    g = nx.complete_graph(k)
    g.remove_edge(0, 1)
    return g


def grown_chordal(n: int, p: float, rng: random.Random) -> nx.Graph:
    """Each new vertex joins a random clique around a random earlier vertex (neighbours kept with chance p)."""
    g = nx.Graph()
    g.add_node(0)
    for v in range(1, n):
        u = rng.randrange(v)
        clique = [u] + [w for w in g.neighbors(u) if rng.random() < p]
        clique = [w for w in clique if all(g.has_edge(w, x) for x in clique if x != w)]
        g.add_edges_from((v, w) for w in clique)
    return g


def _adj(g: nx.Graph) -> dict[str, set[str]]:
    return {f"v{u:03d}": {f"v{w:03d}" for w in g.neighbors(u)} for u in g.nodes}


def _time(fn, adjs: list[dict[str, set[str]]]) -> tuple[float, list]:
    t = time.perf_counter()
    out = [fn(frozenset(a), a, {}) for a in adjs]
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooted-max-nodes", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(0)
    small: list[dict[str, set[str]]] = []
    while len(small) < 400:
        n = rng.randrange(4, 9)
        g = grown_chordal(n, 0.5, rng)
        if n - 1 < g.number_of_edges() < n * (n - 1) // 2:
            small.append(_adj(g))
    rows = [("K16 less one edge", [_adj(clique_less_edge(16))]),
            ("split graph 10 + 8", [_adj(split_graph(10, 8, random.Random(1)))]),
            ("split graph 12 + 8", [_adj(split_graph(12, 8, random.Random(2)))]),
            ("split graph 14 + 6", [_adj(split_graph(14, 6, random.Random(3)))]),
            ("split graph 30 + 20", [_adj(split_graph(30, 20, random.Random(4)))]),
            ("grown chordal 60 nodes, p 0.95", [_adj(grown_chordal(60, 0.95, random.Random(60)))]),
            ("400 small components, 4-8 nodes", small)]
    print("| components | nodes | edges | Clique-Picking s | source-vertex s | ratio |")
    print("|---|---|---|---|---|---|")
    for name, adjs in rows:
        nodes = max(len(a) for a in adjs)
        edges = sum(len(v) for a in adjs for v in a.values()) // 2
        t_cp, got = _time(_edge_counts, adjs)
        if nodes <= args.rooted_max_nodes:
            t_rooted, want = _time(_edge_counts_rooted, adjs)
            assert got == want, name
            rooted, ratio = f"{t_rooted:.3f}", f"{t_rooted / t_cp:.1f}×"
        else:
            rooted, ratio = "(not run)", "—"
        print(f"| {name} | {nodes} | {edges:,} | {t_cp:.3f} | {rooted} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
