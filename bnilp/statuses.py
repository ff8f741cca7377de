"""The statuses a solve ends in, with ``complete`` and the command line's exit code (README, "Statuses and exit
codes"): one list, read by the search (:mod:`bnilp.ilp.settings` re-exports it) and by the commands that read a
result (``compare``) without importing the search."""

from __future__ import annotations

#: every status a solve can end in, with ``complete`` and the CLI's exit code (README, "Statuses")
STATUSES = {
    "optimal": "OPT proven; the credible set is complete (exit 0)",
    "infeasible": "the score table admits no DAG (exit 2, no result)",
    "time_limit": "the time limit stopped phase 1 or 2; OPT or the set is not proven (exit 3)",
    "memory_limit": "the free memory would not hold the report of more networks (or SCIP's memory limit was "
                    "reached): phase 2 stopped; what was found is kept (exit 3)",
    "network_limit": "more than max_networks networks found, the best max_networks kept; there may be more (exit 3)",
    "interrupted": "SIGINT (Ctrl-C) or SIGTERM stopped the search, or a worker process of phase 2 died (--jobs); "
                   "what was found is kept (exit 3)",
    "count_limit": "bnilp count: a class of the merged table too large to expand (bnilp.twins.MAX_DAGS_PER_CLASS or "
                   "MAX_VARIED_ATTACHMENTS); the classes before it are counted (exit 3)",
}
