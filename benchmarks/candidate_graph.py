"""Does the candidate-parent graph of a score file fall apart? (issue 10: the SCC split)

GOBNILP splits a problem into the strongly connected components of the candidate-parent graph
(u → v when u is in some candidate parent set of v): a DAG is then one DAG per component, and OPT
the sum of the components' optima. This prints the component sizes of each score file, to see
where the split could pay.

    python benchmarks/candidate_graph.py scorefiles/*.scores /tmp/t1tables/*.jkl
"""

from __future__ import annotations

import sys

import networkx as nx

from bnilp.ilp.result import to_digraph
from bnilp.scorefile import read_jaakkola


def candidate_graph(path: str) -> tuple[nx.DiGraph, int]:
    """The candidate-parent graph of a score file and its number of parent sets."""
    table = read_jaakkola(path)
    union = {v: sorted({p for parents in sets for p in parents}) for v, sets in table.families.items()}
    return to_digraph(union), table.n_parent_sets()


def main() -> None:
    print(f"{'score file':<30} {'n':>4} {'sets':>8} {'SCCs':>5}  sizes")
    for path in sys.argv[1:]:
        graph, sets = candidate_graph(path)
        sizes = sorted((len(c) for c in nx.strongly_connected_components(graph)), reverse=True)
        shown = ", ".join(map(str, sizes[:6])) + (", …" if len(sizes) > 6 else "")
        print(f"{path.rsplit('/', 1)[-1]:<30} {graph.number_of_nodes():>4} {sets:>8} {len(sizes):>5}  {shown}")


if __name__ == "__main__":
    main()
