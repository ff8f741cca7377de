"""Named constants of the ILP: tolerances, SCIP parameters, plugin priorities, statuses and the
enumeration units. One place for each: the plugins and :mod:`bnilp.ilp.search` import them."""

from __future__ import annotations

from typing import Any

_INT_TOL = 0.5          # an integral value is read as 1 when above this
_CUT_TOL = 1e-6         # minimal violation of a separated cluster cut
_SUPPORT_TOL = 1e-7     # LP values below this are treated as 0 by the separator
_THRESHOLDS = (0.999, 0.5, 0.25, 1e-6)   # arrow-weight thresholds for the SCC separator

#: Extra SCIP parameters of phase 2 (enumeration must not lose solutions: no restarts, no dual
#: reductions, no conflict analysis; presolving and heuristics are switched off in ``solve``).
PHASE2_PARAMS: dict[str, Any] = {
    "presolving/maxrestarts": 0,
    "misc/allowstrongdualreds": False,
    "misc/allowweakdualreds": False,
    "conflict/enable": False,
    # No objective scaling: where the scores are multiples of one number (rounded score files, integer tables)
    # SCIP scales the objective to integers and then asks every solution to beat the objective limit by a
    # whole scaled unit, which cut DAGs tied at OPT (ε = 0) on tables scaled by 100 to 1e12 (found by review)
    "misc/scaleobj": False,
    # Without presolving the rows stay "linear" constraints, whose knapsack separation took
    # 19 of 28 s of the nltcs root: rows not in the LP are still added by enforcement.
    "constraints/linear/sepafreq": -1,
    # one separation round per node below the root (cuts still come from the pool and enforcement):
    # hailfinder500 BF 3 networks per CPU second 1.25x, wine BF 3 1.15x (benchmarks/search_ab.py)
    "separating/maxrounds": 1,
    # phase 2 keeps SCIP's default pricing and branching (SCIP_PARAMS sets phase 1's): hailfinder500 BF 3
    # networks per CPU second 1.45x over steepest edge + lookahead 1 (benchmarks/search_ab.py)
    "lp/pricing": "l",
    "branching/relpscost/maxlookahead": 9,
    "branching/relpscost/inferenceweight": 0.0001,
}

#: Dynamic programming over variable subsets (:mod:`bnilp.ilp.dp`) up to this many variables:
#: it proves OPT instead of phase 1's branch-and-cut (unless background knowledge needs rows) and removes,
#: before phase 2, every family that no credible DAG uses. n·2^(n−1) float64 entries: 22 variables 460 MB.
#: 0 turns the programme off everywhere (also the large-table rule and the race below).
DP_MAX_VARIABLES = 22

#: ... and up to this many variables when the table has at least DP_LARGE_TABLE_FAMILIES parent sets (the
#: LP of branch-and-cut is then huge: sensors, 25 variables and 962,366 sets, is not proven in 20 minutes,
#: the programme proves it in 45 s and 4 GB), if the time limit leaves room for it and the memory is free.
DP_LARGE_TABLE_MAX_VARIABLES = 29
DP_LARGE_TABLE_FAMILIES = 100_000

#: Entries of the programme's best-parent tables (float64; 2^27 = 1 GiB): bps_v is stored over the subsets
#: of v's candidate parents C_v, or, where those would take more, of the parents of v's best sets (then the
#: most frequent), the other sets scanned per lookup (:func:`bnilp.ilp.dp.table_masks`).
DP_TABLE_MAX_ENTRIES = 2 ** 27

#: ... unless the scans then cost more than larger tables: budgets doubled up to this many entries (2^29 =
#: 4 GiB) are estimated too, within half the free memory, and the fastest plan by
#: :func:`bnilp.ilp.dp.dp_seconds` is kept (:func:`bnilp.ilp.dp.plan_tables`). sensors BF 20 (25 variables,
#: 1,010,209 sets): 2^27 entries leave ~535 sets scanned per look-up (2.2e11 steps a pass); 2^29 holds every
#: C_v (3.4 GB of tables) and scans none.
DP_TABLE_GROWN_MAX_ENTRIES = 2 ** 29

#: Above DP_MAX_VARIABLES and up to this many variables on the other tables, branch-and-cut runs first, for
#: DP_RACE_BUDGET_FACTOR × the programme's estimated time (:func:`bnilp.ilp.dp.dp_seconds`, both phases
#: together); if it has not finished by then, the programme (and peeling) take over — so the whole solve
#: costs at most about twice the faster of the two. The estimate is generous (it guards the time limit:
#: 1.2–2.3× the measured time on five inputs, scans of sets outside D_v included), so the budget is half of
#: it, about the programme's real time. Only where the time limit leaves room for both and the programme's
#: tables fit in half the available memory. parkinsons BF 20 (23 variables): branch-and-cut had
#: listed 24,986 DAGs after 600 s; the programme and peeling list all of them in 20 s. At 30 and 31 variables
#: the programme runs in bound mode (DP_EXACT_MAX_VARIABLES below) and needs room for its estimate once:
#: wdbc BF 20 was not listed in 30 minutes by branch-and-cut; the race lists all 28,428 DAGs in 947 s.
DP_RACE_MAX_VARIABLES = 31
DP_RACE_BUDGET_FACTOR = 0.5

#: Up to this many variables the programme keeps F, R and the sinks in float64 (29: 8.5 GiB) and filters
#: phase 2's families exactly; above it, up to DP_RACE_MAX_VARIABLES, it runs in bound mode
#: (:func:`bnilp.ilp.dp.bound_mode`): F alone, in float32 rounded up (31 variables: 8 GiB), OPT and the
#: credible set by peeling under it.
DP_EXACT_MAX_VARIABLES = 29

#: Bound mode only where float32 can tell the networks apart: its slack δ = n·2^−23·Σ_v max|s(v, ·)| (F32
#: exceeds F by up to one float32 rounding per variable added) at most this many nats — the programme must
#: peel every DAG within δ of its bound to prove OPT. wdbc BF 20 (31 variables): δ = 0.044. A table of
#: |OPT| ≈ 7e7 had δ ≈ 117 and its peeling did not end in 20 s where branch-and-cut proved OPT in 0.3 s; past
#: this slack the search is branch-and-cut's.
DP_BOUND_MAX_SLACK = 1.0

#: Threads of the programme's passes (F and R layer by layer, the filter child by child; its compiled loops
#: hold no GIL); 0: one per core.
DP_THREADS = 0
#: Under knowledge rows, where the programme has run (its best DAG through each family, unconstrained), phase 1's
#: branch-and-cut first sees only the families within a band of this many nats below the programme's OPT (the
#: band widened fourfold while no DAG of the knowledge lies in it); 0 turns the bands off (the whole table, the
#: code before). wine under a dependence its optimum keeps (BIC BF 3, 114,688 families unpruned): phase 1
#: 11.5 s on the table, 52 families in the first band (search.``_optimum_in_bands``)
KNOWLEDGE_BAND_NATS = 1.0
#: … and a band that holds more than this share of the table is the whole table
KNOWLEDGE_BAND_MAX_SHARE = 0.5

#: Phase 2 without branch-and-cut where the dynamic programme ran (and no knowledge needs rows): every
#: credible DAG by canonical sink peeling under its bound (:class:`bnilp.ilp.dp.Peeler`).
DP_ENUMERATION = True
#: phase 1 and class enumeration by forests where every family has at most one parent and each arrow's reverse is
#: held and scored alike (:mod:`bnilp.ilp.forests`): Kruskal's heaviest forest is OPT's class, and the credible
#: classes are listed heaviest first by Lawler's partition, no LP
FOREST_ENUMERATION = True

#: On tables of at most one parent a variable that the forests do not serve (arrows missing one way: tiers,
#: forbidden or required arrows; required adjacencies): OPT by the maximum spanning arborescence, and the
#: credible DAGs or classes listed heaviest first by Lawler's partition (:mod:`bnilp.ilp.branchings`), no LP
BRANCHING_ENUMERATION = True

#: Class enumeration by peeling lists the classes' DAGs; beyond this many, if the classes found so far
#: average more than DP_ENUMERATION_DAGS_PER_CLASS DAGs, it hands over to class enumeration by
#: branch-and-cut, which never lists a class's members (fast on a few large classes, 15–25 classes a
#: second on many small ones, where peeling lists tens of thousands of DAGs a second).
DP_ENUMERATION_MAX_DAGS = 200_000
DP_ENUMERATION_DAGS_PER_CLASS = 1000

#: skip LP separation at integral LP points (enforcement cuts off their cycles with the same cut)
SKIP_INTEGRAL_SEPA = False

#: Arrow variables a(j→i) = Σ_{Π∋j} x(i, Π) with a higher branching priority than the families.
ARROW_VARIABLES = False

#: SCIP parameters of both phases (measured on wine.BIC.3 and random 25-variable tables).
SCIP_PARAMS: dict[str, Any] = {
    "misc/usesymmetry": 0,                   # symmetry detection does not see the cluster handler
    "limits/gap": 0.0,
    "limits/absgap": 0.0,
    "separating/aggregation/freq": -1,       # seconds per round, never a cut on BNSL
    "separating/rapidlearning/freq": -1,     # sub-SCIP without the cluster handler: 2x slower
    "separating/gomory/freq": -1,            # wine.BIC.3: phase 1 1.3 s -> 0.2 s, phase 2 4.4 -> 1.4 s
    "cutselection/hybrid/minorthoroot": 0.0,  # cluster cuts overlap: keep near-parallel ones
    "cutselection/hybrid/minortho": 0.0,
    # steepest-edge pricing: nltcs BF 20 phase 1 59,466 -> 20,879 LP iterations (CPU 0.57x), adult
    # 949 -> 386 nodes (0.66x), hepatitis 0.49x; zoo 1.2 -> 1.6 s (benchmarks/search_ab.py)
    "lp/pricing": "s",
    # GOBNILP's branching (probdata_bn.c): with steepest edge, adult BF 20 386 -> 44 nodes (CPU 0.86),
    # zoo 1.6 -> 1.1 s; nltcs unchanged (benchmarks/search_ab.py)
    "branching/relpscost/maxlookahead": 1,
    "branching/relpscost/inferenceweight": 0.1,
}

#: how a class no-good is written: over the family variables (dense) or over adjacency/collider
#: indicator variables linked to the families once ("indicators", GOBNILP kbestMEC's form)
MEC_ROW_FORM = "indicators"
#: class enumeration with indicators: the kinds ("adj", "col") made binary and branched on before the
#: families (SCIP branching priority; a kind not named stays continuous). Branching on adjacencies and
#: colliders splits the space of classes instead of the orientations inside one: wine BF 20 11.2 → 3.1 CPU s
#: (3,623 → 179 nodes), zoo BF 20 17.5 → 14.5 s, adult BF 3 (both phases) 224 → 73 s, hepatitis BF 150
#: 2,096 → 3,102 classes in 60 s. Adjacencies alone, colliders alone, either first, or both at the
#: families' priority were each worse on one of these (benchmarks/search_ab.py --enumerate mecs); autos BF 3
#: is 1.5× slower with it (more cluster cuts and LP iterations at the same nodes; README, "Credible sets")
MEC_BRANCH_PRIORITY: dict[str, int] = {"adj": 10, "col": 10}
#: how phase 2 keeps what it recorded out (DAGs, or classes): "lazy" — a compact hash table of the recorded
#: DAGs, or of one DAG per recorded class told apart by its class words (bnilp.ilp.classbest); each integral
#: acyclic point is looked up, and a no-good becomes an LP row only when a point it excludes turns up
#: (removable, so it can leave the LP again) — or "constraints":
#: each no-good a linear constraint of the model (MEC_ROWS_IN_LP and NOGOODS_IN_LP say whether it is in the
#: LP from the start). Constraints cost every node a pass over all of them (SCIP's propagation and checks;
#: a class no-good holds every adjacency indicator), so the rate fell as classes were found: hailfinder100
#: BF 150 listed 234 classes/s in its first 15 s and 44/s after 2 minutes; lazily it lists all 40,344 in
#: 111 s (``benchmarks/nogoods.py``; README, "Class enumeration")
NOGOODS = "lazy"
NOGOODS_MODES = ("lazy", "constraints")
#: "lazy": whether a no-good's row also goes to SCIP's global cut pool (which checks every pooled row)
NOGOOD_POOL = False

#: "constraints": whether each class no-good enters the LP at once (True) or only enforces integral points
#: (False)
MEC_ROWS_IN_LP = False

#: "constraints": whether each DAG no-good enters the LP at once (True) or only when an LP point violates it
#: (False: SCIP's linear handler separates it then, and enforcement always checks it)
NOGOODS_IN_LP = True

#: how phase 2 (DAG enumeration) excludes a recorded DAG: "nogoods" (a global row Σ_i x(i,Π_i) ≤ n − 1
#: per DAG, GOBNILP_dev's collect-and-exclude) or "branch" (SCIP counting style: branch until the DAG's
#: families are all fixed, record it at that leaf and cut the leaf off; no rows)
ENUMERATION = "nogoods"
ENUMERATION_MODES = ("nogoods", "branch")

#: phase 2, class enumeration by branch-and-cut with lazy no-goods: use the transpositions of variables that map
#: the score table to itself (identical columns; :mod:`bnilp.ilp.symmetry`) — lex-leader rows on the adjacency
#: indicators, so the search finds about one class per orbit, and the rest of each orbit recorded with it
SYMMETRY = True
#: at most this many disjoint transpositions (orbits of up to 2^k classes are recorded together)
SYMMETRY_MAX_PAIRS = 6
#: a transposition maps the table to itself when each family's image scores within this relative tolerance
SYMMETRY_RTOL = 1e-12

#: what phase 2 enumerates: every credible DAG, or one representative per credible Markov equivalence class
ENUMERATE_UNITS = ("dags", "mecs")
#: the most networks (classes under class enumeration) listed unless asked otherwise (``max_networks``,
#: ``--max-networks``): the seed's cap of 150,000 DAGs (Liao et al. 2019, Table 1)
DEFAULT_MAX_NETWORKS = 150_000

#: phase 2 (branch-and-cut, or peeling between its chunks, counting at most max_networks classes there: the
#: rest go to the compact tail) stops with status "memory_limit" (exit 3, what it found kept and reported) when
#: the system's free memory falls below ENUMERATION_MEMORY_FLOOR_SHARE of its physical memory (at least
#: ..._BYTES) plus, for each network (or class) recorded, what building its report will need once the search ends
#: (ENUMERATION_REPORT_BYTES, by unit) — instead of the out-of-memory killer ending the run with nothing.
#: SCIP's search tree grows by about 20 KB a class in phase 2 (hailfinder500 BF 3: 2.5 GB at 106,267
#: classes in 300 s; its open nodes hold the rows cut in above them); the report then needs, by unit, (base,
#: per variable, per edge, at most) bytes a network, its edges the mean of those recorded
#: (``search.report_bytes``). Measured (2026-12-05; the peak of the report and its JSON text per network, from
#: the difference between two caps; n variables, e mean edges): a DAG takes 2.8 KB at n = 6 (e = 8), 4.2 at
#: 12 (13), 3.8 at 20 (27), 7.8 at 28 (39), 14.5 at 56 (55) — its parent map per variable dominates; 27.7 at 56
#: before ``mec.network_items`` shared one frozenset per distinct parent list, when 20 KB flat was short —, so
#: 2 KB + 0.25 KB·n + 0.1 KB·e; a class 4.0 KB at n = 6 (e = 7),
#: 13.1 at 12 (14: a flat table's, mostly undirected edges — each a set, and a share both ways), 8.7 at 20
#: (26), 16.1 at 28 (40), 18.4 at 56 (55), so 2 KB + 0.25 KB·n + 1 KB·e, at most the 30 KB of before up to
#: MASK_MAX_VARIABLES (62) variables (wholly undirected classes of more than about 25 edges may need more, as
#: before); past it the sum alone — a forest's class of 300 variables takes 305 KB (``search.report_bytes``) —,
#: and so under background knowledge, where classes are counted in Python (hailfinder500 at palim 1 in five
#: tiers, 48 edges a class: 49.7 KB, 38.5 KB since each chain component is counted once for all its classes)
ENUMERATION_MEMORY_FLOOR_SHARE = 0.05
ENUMERATION_MEMORY_FLOOR_BYTES = 1 << 29
ENUMERATION_REPORT_BYTES: dict[str, tuple[int, int, int, int | None]] = {
    "dags": (2_000, 250, 100, None), "mecs": (2_000, 250, 1_000, 30_000)}
#: and for a class past the cap, kept compact (``count_past_cap``; peeling's classes past the cap): its row of
#: :class:`~bnilp.ilp.result.ClassTail` (4 bytes a variable and its score) and the ranking's temporaries
ENUMERATION_TAIL_BYTES = 1_000
#: a search stopped by its time limit with classes past the cap (``count_past_cap``, peeling): counting their
#: DAGs and edge shares for the posteriors (:func:`bnilp.mec.class_tail_mass`, tens of µs a class where the
#: chain components vary) may take TAIL_COUNT_SHARE of the time limit more, and at least
#: TAIL_COUNT_SECONDS; the classes not reached by then are left out of the averages, and the report says so
#: (a flat table of 12 variables at palim 2: 4.2 M classes found in ``time_limit=10``, then 260 s of counting)
TAIL_COUNT_SHARE = 0.25
TAIL_COUNT_SECONDS = 60.0
#: seconds between two looks at the free memory in phase 2 (one read of /proc/meminfo, ~20 µs)
ENUMERATION_MEMORY_CHECK_SECONDS = 0.5

#: phase 2 by branch-and-cut on ``jobs`` > 1 processes (:mod:`bnilp.ilp.cubes`): it runs serially for
#: PHASE2_SERIAL_SECONDS first (a small credible set is listed there without starting workers), then splits the
#: rest into 2^k ≥ PHASE2_CUBES_PER_JOB × jobs cubes by adjacency, handed to the workers as they free up; a
#: worker sends what it found every PHASE2_CUBE_FLUSH_SECONDS
PHASE2_SERIAL_SECONDS = 10.0
#: ... unless a time limit leaves less than PHASE2_SERIAL_SECONDS + this: then phase 2 stays on this process to the
#: limit. Starting the workers (a process each, bnilp and SCIP imported, the problem loaded) takes 1–3 s here, more
#: on a loaded machine: cubes handed out just before the limit found nothing, and the run ended seconds past it
#: waiting for them (a review: --time-limit 4 ended at 7–10 s with fewer networks than one process listed)
PHASE2_CUBES_MIN_SECONDS = 10.0
PHASE2_CUBES_PER_JOB = 4
PHASE2_CUBE_FLUSH_SECONDS = 0.5
#: once no cube waits and a worker is idle, the cube running longest gives one side of a pair to a new cube if it
#: has run this many seconds since it started or last split; None (the default): never split a running cube —
#: on 2 cores the new cube's search again of what the running one had explored on its side cost more than the
#: idle tail it removed (hailfinder100 BF 150: phase 2 103.7 s with splits after 5 s, 91.6 s without; sponge
#: BF 20 160.4 vs 162.5 s; both from a tree split since replaced; benchmarks/phase2_jobs.py --steal). At most
#: PHASE2_MAX_CUBES cubes in all
PHASE2_STEAL_SECONDS: float | None = None
PHASE2_MAX_CUBES = 4096

#: every status a solve can end in (defined with no import of the search, for the command line's readers)
from bnilp.statuses import STATUSES  # noqa: E402, F401  (re-exported: bnilp.ilp.STATUSES)

# ---- plugin priorities and frequencies (SCIP's meaning; GOBNILP uses the same kinds of values) ----
#: the acyclicity handler separates before SCIP's own separators (positive) and enforces after the
#: linear constraints (very negative: integrality and the rows decide first)
ACYCLIC_SEPAPRIORITY = 100
ACYCLIC_ENFOPRIORITY = -2_000_000
ACYCLIC_CHECKPRIORITY = -2_000_000
ACYCLIC_SEPAFREQ = 1
#: the ancestry handler (background knowledge) enforces after integrality and the rows, before the
#: acyclicity handler, so phase 2 records only DAGs that satisfy the knowledge
ANCESTRY_ENFOPRIORITY = -1_000_000
ANCESTRY_CHECKPRIORITY = -1_000_000
#: … and separates the independences' rows at fractional LP points too (0: never; else SCIP's frequency, 1 = every
#: node): read off the families with x > ½ (at most one per child), cut where the LP point violates them. alarm1000
#: BIC, OPT under 2–3 independences its best DAG breaks, seconds with / without (benchmarks/knowledge_overhead.py
#: and a scratch run on the BF 20 table): 45.9 / 82.8, 16.6 / 17.2, 4.4 / 1.6; 56 / 79, 10.8 / 20.9, 0.9 / 0.9 —
#: geometric mean 1.11× faster, the hard ones most; ~0.1 s slower where the statements agree with the data. The
#: ancestor relations' rows separated the same way lost (8.7 / 5.3, 3.0 / 2.8 s), so they stay lazy
ANCESTRY_SEPAFREQ = 1
ANCESTRY_SEPAPRIORITY = 0
#: a conditional independence's trails of two arrows written into the model up front (knowledge_rows.
#: short_trail_rows: one row per third variable, colliders on a given variable fixed to 0). alarm1000 BIC BF 3, OPT
#: under 3 independences its best DAG breaks (benchmarks/knowledge_overhead.py --no-short-trails for off), seconds
#: off / on: 30.8 / 34.3, 8.9 / 3.5, 2.5 / 1.5 (geometric mean 1.58× faster); credible sets 13.0 / 6.0, 10.0 / 2.6 s
INDEPENDENCE_SHORT_TRAILS = True
#: ancestor-closure propagation (prop_ancestors.py; GOBNILP's arrow propagator): at each node, families
#: that close a cycle with the arrows every allowed family already has are fixed to 0. Off: no node
#: saved; adult phase 1 CPU 1.01, wine BF 20 phase 2 0.80, hailfinder500 BF 3 0.93 (search_ab.py)
ANCESTOR_PROPAGATION = False
#: before SCIP's own propagators of the same timing (GOBNILP gives its propagator a high priority)
ANCESTOR_PROP_PRIORITY = 100_000
#: every node (1); k: every k-th depth
ANCESTOR_PROP_FREQ = 1
#: the sink-finding heuristic runs after every node LP, before SCIP's rounding heuristics
SINK_HEUR_PRIORITY = 1000
SINK_HEUR_FREQ = 1
#: when it runs: after each node's LP ("afterlpnode"), or also after every LP of the separation loop
#: ("duringlploop": GOBNILP rounds after each LP of the root's cutting loop)
SINK_HEUR_TIMING = "afterlpnode"
SINK_HEUR_TIMINGS = ("afterlpnode", "duringlploop")
#: improve each new rounding of the sink heuristic by order-based local search (heur_orders.climb_orders:
#: best insertion moves on its topological order). Off: phase 1 by branch-and-cut (programme off, BIC BF 20,
#: ``search_ab.py scorefiles/{adult,nltcs,zoo,hepatitis,wine}.BIC.20.scores --config off:DP_MAX_VARIABLES=0,
#: SINK_ORDER_SEARCH=False --config on:DP_MAX_VARIABLES=0,SINK_ORDER_SEARCH=True``) CPU 1.12, 1.04, 1.01,
#: 1.31, 1.17 of off; on soybean BF 3 and 150 it never found OPT (the LP did, at node 32–40)
SINK_ORDER_SEARCH = False
#: ... while the local search has taken at most this share of the heuristic's phase so far (plus one second)
SINK_ORDER_SEARCH_SHARE = 0.1
#: improve new roundings of the sink heuristic by window search (heur_windows.window_search: blocks of
#: WINDOW_SEARCH_SIZE consecutive variables of the order re-ordered exactly), once phase 1 has run
#: WINDOW_SEARCH_AFTER seconds without proving OPT, on tables of at least WINDOW_SEARCH_MIN_VARIABLES variables
#: (where branch-and-cut is the only route: fewer, the programme proves OPT or races branch-and-cut, and on
#: wdbc BF 3, 31 variables, branch-and-cut alone with the search on was not proven in 300 and 400 s against
#: 235 s without — a path on which the sub-IP's calls took 179–266 s against 38), while it has taken at most
#: WINDOW_SEARCH_SHARE of the phase so far divided by 1 + the searches that did not beat the incumbent.
#: WINDOW_SEARCH_SIZE is at most heur_windows.MAX_WINDOW. Phase 1 on soybean (36 variables), off → on:
#: BF 150 612 s and 433 nodes → 237 s and 35 nodes (its first search, after the root, found OPT), BF 20
#: 221 → 173 s, BF 3 140 → 135 s; rows whose phase 1 takes a few seconds unchanged (README, "Search techniques")
WINDOW_SEARCH = True
WINDOW_SEARCH_SIZE = 20
WINDOW_SEARCH_AFTER = 5.0
WINDOW_SEARCH_MIN_VARIABLES = 32
WINDOW_SEARCH_SHARE = 0.2

# ---- exact cluster separation by a sub-IP (sepa_subip.py; GOBNILP subip_cuts.c) ----
#: when the sub-IP runs: "off"; "fallback" (only when the heuristic separator found no cut);
#: "always" (after the heuristic separator, every call at an allowed depth); "auto": "always" on tables of
#: at least SUBIP_AUTO_MIN_VARIABLES variables, "off" on smaller ones
SUBIP_MODE = "auto"
SUBIP_MODES = ("off", "fallback", "always", "auto")
#: "auto" runs the sub-IP from this many variables up (``benchmarks/search_ab.py``, README "Search
#: techniques"): on adult, nltcs and zoo (15–17 variables) it cost 1.2–12× in phase 1; on wdbc BF 3 (31) and
#: soybean BF 3 and 150 (36) it proved OPT in 84–174 s and 22–51 nodes, where the heuristic separator alone
#: took 156 s and 546 nodes or had not in 240 s; on five rows of 39–57 variables phase 1 takes ≤ 6 s either way
SUBIP_AUTO_MIN_VARIABLES = 23
#: whether the sub-IP also runs in phase 2 (enumeration); phase 1's cuts enter phase 2's model either way.
#: Off: soybean BF 3 1.13× and bands BF 20 1.03× the classes per CPU second without it in phase 2 (both with it
#: in phase 1; ``search_ab.py FILE --bf B --enumerate mecs --config always:SUBIP_MODE=always --config
#: p1only:SUBIP_MODE=always,SUBIP_PHASE2=False``)
SUBIP_PHASE2 = False
#: the sub-IP runs at depths 0, SUBIP_DEPTH_FREQ, 2·SUBIP_DEPTH_FREQ, … (GOBNILP: sepafreq 10)
SUBIP_DEPTH_FREQ = 10
#: seconds per sub-IP call (GOBNILP: 10 s)
SUBIP_TIME_LIMIT = 10.0
#: the largest ``limits/time`` SCIP takes (its infinity): a longer time limit is none (a review's find: 1.1e20
#: stopped the search with SCIP's "invalid value" and a traceback)
SCIP_TIME_LIMIT_MAX = 1e20
#: cuts taken from one sub-IP call (most violated first)
SUBIP_MAX_CUTS = 50
#: sub-SCIP settings besides heuristics and separators off (``setHeuristics``/``setSeparating``):
#: depth-first, gap 0, room for many improving solutions (as GOBNILP)
SUBIP_PARAMS: dict[str, Any] = {
    "limits/gap": 0.0,
    "limits/maxsol": 200,
    "nodeselection/dfs/stdpriority": 1_000_000,
    "misc/usesymmetry": 0,
}

# ---- k-cluster cuts (sepa_cluster.kcluster_cuts) ----
#: when the k-cluster separator runs (k = 2 … KCLUSTER_MAX_K): "off"; "fallback" (only when the cluster
#: separators found no cut); "always" (after them, every call). Off: they close most of the root gap the
#: cluster cuts leave (``benchmarks/root_gap.py``: alarm BF 150 8.4 → 0 nats, bands BF 20 5.7 → 1.6), but the
#: search gained only where the programme proves OPT anyway (adult BF 3 by branch-and-cut: 1.37× the classes per
#: CPU second with "fallback"); on the rows branch-and-cut still serves, bands BF 20 1.02 / 0.90 ("fallback" /
#: "always"), alarm BF 150 0.96 / 1.06, soybean BF 3's phase 1 132 → 162 / 231 s, wdbc BF 3 unchanged
#: (``search_ab.py FILE --bf B --enumerate mecs --config off: --config fallback:KCLUSTER_MODE=fallback ...``)
KCLUSTER_MODE = "off"
KCLUSTER_MODES = ("off", "fallback", "always")
#: the largest k separated (2: the 2-cluster cuts; the triangles among them are GOBNILP's 3-member
#: set-packing rows)
KCLUSTER_MAX_K = 2
#: cuts per call and k, most violated first
KCLUSTER_MAX_CUTS = 50

# ---- implied constraints (GOBNILP set_packing_cuts.c) ----
#: add the set-packing rows of :meth:`_Data.set_packing_clusters` to the model up front
SET_PACKING = False
#: at most this many set-packing rows
SET_PACKING_MAX_ROWS = 5000

# ---- "4B" cuts (sepa_fourb.py; GOBNILP convex4 family b) ----
#: separate 4B cuts when the cluster separators found nothing
FOURB = False
#: only for n ≤ FOURB_MAX_N (the separator builds n⁴ tensors)
FOURB_MAX_N = 24
#: cuts per call, most violated first
FOURB_MAX_CUTS = 50
