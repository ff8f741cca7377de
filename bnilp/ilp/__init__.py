"""Exact Bayesian-network structure learning by integer programming: OPT, then the credible set.

Model (Jaakkola et al., AISTATS 2010; Cussens, UAI 2011; Bartlett & Cussens, AIJ 2017):

- one binary ``x(i, Π)`` per candidate parent set Π of variable i, objective ``s(i, Π)``, maximize;
- convexity ``Σ_Π x(i, Π) = 1`` for every i;
- acyclicity by *cluster constraints*: for every cluster C (|C| ≥ 2)
  ``Σ_{i∈C} Σ_{Π∩C≠∅} x(i, Π) ≤ |C| − 1``, written in whichever of this form and the equivalent
  ``Σ_{i∈C} Σ_{Π∩C=∅} x(i, Π) ≥ 1`` has fewer nonzeros. All 2-clusters (the arrow constraints
  ``a(j→i) + a(i→j) ≤ 1`` written in family variables) are rows from the start; larger clusters are
  added lazily by a ``pyscipopt.Conshdlr``: ``conscheck``/``consenfolp``/``consenfops`` test the
  integral parent choice with a topological sort and cut off every cycle with the cluster cut of
  its strongly connected component; ``conssepalp`` separates cluster cuts from the fractional LP
  point with numpy heuristics over the support families: seeds are the SCCs of the arrow-weight
  digraph at several thresholds and each variable's heaviest two-way pair, improved by a best
  add/drop local search on the violation. GOBNILP's exact cluster sub-IP
  (:mod:`~bnilp.ilp.sepa_subip`) runs after it in phase 1 on tables of at least 23 variables
  (``SUBIP_MODE = "auto"``, ``SUBIP_AUTO_MIN_VARIABLES``; its cuts enter phase 2's model): there it
  proves OPT where the heuristic alone stalls (wdbc, soybean), while on adult, nltcs and zoo it lost.
  The implied set-packing rows (:meth:`_Data.set_packing_clusters`) and the 4B cuts
  (:mod:`~bnilp.ilp.sepa_fourb`) are implemented, tested for validity, and off by default
  (``SET_PACKING``, ``FOURB``): on adult, nltcs and zoo neither beat the heuristic separator alone
  (README, "Search techniques").
- a sink-finding primal heuristic (``pyscipopt.Heur``) rounds the LP solution to a DAG; the same
  routine on the scores alone gives the starting solution; a user DAG can be a warm start. An
  order-based local search on its roundings (:mod:`~bnilp.ilp.heur_orders`, ``SINK_ORDER_SEARCH``) is
  implemented, tested, and off: it did not speed phase 1 (README, "Search techniques"). Window search
  (:mod:`~bnilp.ilp.heur_windows`, ``WINDOW_SEARCH``, on from 32 variables once phase 1 has run 5 s)
  re-orders blocks of 20 consecutive variables of a rounding's order exactly, by dynamic programming: on
  soybean it finds OPT where SCIP's incumbent stalled, and phase 1 at BF 150 fell from 612 to 237 s.

The objective is shifted by each variable's best local score (coefficients ≤ 0, small magnitudes);
reported scores are always recomputed with ``math.fsum`` from the table.

Phase 1 proves OPT by branch-and-cut. Phase 2 lists every DAG G with s(G) ≥ OPT − ε in ONE further
branch-and-cut ("collect and exclude", as GOBNILP_dev in Liao et al., AAAI 2019): the objective limit
is OPT − ε − tol (tol = 1e-5·max(1, |shifted OPT| + ε)), ``conscheck`` rejects every candidate, and
``consenfolp``/``consenfops`` record each integral acyclic solution and cut it off by its global no-good
``Σ_i x(i, Π_i) ≤ n − 1``. The recorded DAGs (or one DAG per recorded class) are a compiled hash table of
family rows (``bnilp.ilp.classbest``, 4 bytes a variable), and a no-good enters the LP
as a removable row only when an integral point it excludes turns up again (``NOGOODS = "lazy"``); as
constraints of the model (``"constraints"``, GOBNILP's way) every node paid a pass over all of them, so
the listing slowed as it went (hailfinder100 BF 150, classes: 234 a second in the first 15 s, 44 after
2 minutes, not done in 30 minutes; lazily all 40,344 in 111 s); presolving, restarts, symmetry handling, conflict
analysis, primal heuristics and dual reductions are off so that no DAG is lost. Phase 2 stops with status
``memory_limit`` (what it found kept) when the free memory falls below a floor plus what the report of the
networks recorded will need (``ENUMERATION_REPORT_BYTES``), and frees SCIP's tree before the report is built
(SCIP's open nodes hold the rows cut in above them: about 20 KB a class). The solve ends
"infeasible" once every credible DAG has been excluded — the normal end. The phase-1 cluster cuts
start phase 2 as rows. Collected DAGs are filtered with their fsum scores against
OPT − ε − 1e-9·max(1, |OPT|): the tiny tolerance (the same as the tests' brute-force oracle) keeps
score-equivalent DAGs whose file scores differ by rounding — wine.BIC.3 (8 decimals) has 12 DAGs
at exactly OPT and 36 more at OPT − 1e-8, all listed at BF 1.

Measured (2 shared cores, PySCIPOpt 6.3 / SCIP 10; ``benchmarks/solve_table1.py``):

- SCIP's ``aggregation`` separator took 5 of 8 s of a 25-variable root and never cut: off;
  ``rapidlearning`` (a sub-SCIP that cannot see the handler) doubled wine phase 2: off;
  ``gomory`` off: wine.BIC.3 phase 1 1.3 → 0.2 s, phase 2 (BF 3) 4.4 → 1.4 s;
  hybrid cut selection with orthogonality 0 (cluster cuts overlap): 16 → 10 s on a dense root.
- sparse cluster rows: nltcs (8,929 families) phase 1 46 → 25 s, zoo 3.1 → 1.4 s.
- phase 2 without ``constraints/linear`` separation (rows are plain linear constraints there; their
  knapsack separation took 19 of 28 s of the nltcs root): wine 2.5 → 2.3 s, zoo 3.5 → 3.0 s.
- the sink-finding heuristic: same LPs and nodes with and without it on zoo, tic-tac-toe and a
  dense table (SCIP's own heuristics find the optimum first); kept for time-limited runs.
- arrow variables with branching priority (``ARROW_VARIABLES``): no gain on wine, asia, alarm or a
  dense 25-variable table, so off. Pseudocost-only branching: no gain.
- steepest-edge LP pricing and GOBNILP's branching settings (relpscost lookahead 1, inference
  weight 0.1): adult BF 20 phase 1 949 → 44 nodes, nltcs LP iterations 59,466 → 20,879; one
  separation round per node in phase 2 (README, "Search techniques", for the figures).

Up to :data:`~bnilp.ilp.settings.DP_MAX_VARIABLES` variables (22) a dynamic programme over variable
subsets (:mod:`~bnilp.ilp.dp`; Silander & Myllymäki 2006) replaces phase 1 — it proves OPT in well under
a second where branch-and-cut took 30–60 s (adult, nltcs) or did not finish in 200 s (letter, msnbc) —
and computes, for each family, the score of the best DAG that contains it: phase 2 then runs on the
families of at least one credible DAG only (adult BF 3: 83 of 3,935), which leaves the credible set
unchanged and the LP far tighter. Phase 2 itself then needs no branch-and-cut either
(``DP_ENUMERATION``): every credible DAG is listed once by peeling its largest sink again and again,
depth first, cut off by the programme's bound F(S) on what the DAG on the variables still left can score
(:class:`~bnilp.ilp.dp.Peeler`); classes are the listed DAGs grouped by their Verma–Pearl key, and past
``DP_ENUMERATION_MAX_DAGS`` DAGs class enumeration by branch-and-cut takes over. With knowledge that
needs rows (required adjacencies, ancestry) the programme over the table is only an upper bound: OPT and
the credible set come from branch-and-cut; the filter still runs. From 23 to
:data:`~bnilp.ilp.settings.DP_RACE_MAX_VARIABLES` (31) variables branch-and-cut races the programme: it runs
for the programme's estimated time, and if it has not finished the programme and peeling take over (where
the time limit and the memory allow; best-parent tables over each child's candidate parents keep the
memory to F, R and the sinks, 17·2^n bytes). Past :data:`~bnilp.ilp.settings.DP_EXACT_MAX_VARIABLES` (29),
that is at 30 and 31 variables, the programme runs in bound mode (:func:`~bnilp.ilp.dp.bound_mode`): F
alone, in float32 rounded up — an upper bound on F in 4·2^n bytes (8 GiB at 31) — no R and no filter;
OPT is the best DAG that peeling finds above F32(V) less its rounding, and phase 2 peels under the same
bound. The passes are split among :data:`~bnilp.ilp.settings.DP_THREADS` threads (F and R layer by layer,
the filter child by child).

On a table of at most one parent a variable whose every arrow's reverse is held and scored alike, phase 1 and
class enumeration need neither: each class is a forest scored by its edges, OPT's class is Kruskal's heaviest
forest and the credible classes are listed heaviest first by Lawler's partition (:mod:`~bnilp.ilp.forests`,
``FOREST_ENUMERATION``).

Class enumeration (``enumerate_by="mecs"``, score-equivalent scores): phase 2 records one DAG per class
and excludes its whole Markov equivalence class by GOBNILP's kbestMEC no-good (:meth:`_Data.mec_row`),
written over adjacency and collider indicator variables linked to the families once
(``MEC_ROW_FORM``) and cut in lazily like the DAG no-goods (the class words of
:meth:`_Data.class_words` are the hash key); the indicators are binary
and branched on before the families (``MEC_BRANCH_PRIORITY``), so the tree splits classes, not
orientations. Measured on hepatitis BF 20 before that branching (120 s, 2 cores): dense family rows
in the LP 1,842 classes (12,639 DAGs counted in 400 s),
family rows lazily 2,355, indicator rows lazily 3,102 (18,522 DAGs); DAG enumeration lists 15,260 DAGs
in the same time. wine BF 20: 19.9 s for 101 classes against 21.1 s for their 3,449 DAGs.

Phase 2 by branch-and-cut on several processes (``jobs``): after
:data:`~bnilp.ilp.settings.PHASE2_SERIAL_SECONDS` in the main process, the rest is split into cubes that fix
whether a few variable pairs are adjacent (:mod:`~bnilp.ilp.cubes`): a class's DAGs share their skeleton, so
each class lies in one cube, and each cube is phase 2's own branch-and-cut in a worker process.

SCIP's counting mode itself has no binding to read the solutions back; its scheme is built instead
(``ENUMERATION = "branch"``: branch until a DAG's families are all fixed, record it at that leaf, cut
the leaf off, no rows) and gives the same credible sets, but was slower than the no-goods (README).

Layout (one module per SCIP plugin, as GOBNILP splits its C sources): :mod:`~bnilp.ilp.settings`
(constants), :mod:`~bnilp.ilp.families` (arrays and rows), :mod:`~bnilp.ilp.model` (building),
:mod:`~bnilp.ilp.cons_acyclic` (the handler), :mod:`~bnilp.ilp.sepa_cluster` (cluster separation),
:mod:`~bnilp.ilp.sepa_subip` (the cluster sub-IP), :mod:`~bnilp.ilp.sepa_fourb` (4B cuts),
:mod:`~bnilp.ilp.timing` (SCIP's clocks into ``stats``),
:mod:`~bnilp.ilp.heur_sinks` (the heuristic), :mod:`~bnilp.ilp.heur_orders` and
:mod:`~bnilp.ilp.heur_windows` (its local searches),
:mod:`~bnilp.ilp.dp` (the dynamic programme),
:mod:`~bnilp.ilp.search` (the phases), :mod:`~bnilp.ilp.cubes` (phase 2 on several processes),
:mod:`~bnilp.ilp.result` (what is returned).
"""

from bnilp.graphs import to_digraph
from bnilp.ilp.result import Network, Parents, SolveResult
from bnilp.ilp.search import solve
from bnilp.ilp.settings import (
    DEFAULT_MAX_NETWORKS,
    ENUMERATE_UNITS,
    MEC_ROW_FORM,
    MEC_ROWS_IN_LP,
    PHASE2_PARAMS,
    SCIP_PARAMS,
    STATUSES,
)

__all__ = ["DEFAULT_MAX_NETWORKS", "ENUMERATE_UNITS", "MEC_ROW_FORM", "MEC_ROWS_IN_LP", "PHASE2_PARAMS", "SCIP_PARAMS",
           "STATUSES", "Network", "Parents", "SolveResult", "solve", "to_digraph"]
