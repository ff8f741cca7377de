"""Where a solve spent its time, read from SCIP's own statistics (``writeStatisticsJson``)."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any


def scip_timing(model: Any) -> dict[str, Any]:
    """Seconds per part of one SCIP solve: ``lp`` (primal, dual, barrier and resolve LPs),
    ``strong_branching_lp``, ``separators`` (SCIP's own, each with time > 1 ms), ``acyclic``
    (the cluster handler: separation, enforcement, check, as SCIP clocks them — they include the
    Python callbacks), ``propagation`` (all propagators), ``heuristics`` (all primal heuristics),
    ``branching`` (all branching rules, strong branching included) and ``solving`` (the whole solve).
    Empty when the statistics cannot be read."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.writeStatisticsJson(path)
        with open(path, encoding="utf-8") as handle:
            st = json.load(handle)
    except Exception:       # statistics are optional: a failed SCIP call must not end a finished solve
        return {}
    finally:
        os.unlink(path)
    lp = st.get("lp", {})
    seps = {name: round(p.get("exec_time", 0.0), 3) for name, p in st.get("separator", {}).get("plugins", {}).items()
            if isinstance(p, dict) and p.get("exec_time", 0.0) > 1e-3}
    acyc = st.get("constiming", {}).get("plugins", {}).get("acyclic", {})
    return {
        "solving": st.get("timing", {}).get("solving_time", 0.0),
        "lp": sum(lp.get(k, {}).get("time", 0.0) for k in ("primal_lp", "dual_lp", "barrier_lp", "resolve_lp",
                                                          "lex_dual_lp")),
        "strong_branching_lp": lp.get("strongbranch_lp", {}).get("time", 0.0),
        "separators": seps,
        "acyclic": {k: acyc.get(k, 0.0) for k in ("separation_time", "enforcement_lp_time", "enforcement_ps_time",
                                                  "check_time", "propagation_time")},
        "propagation": sum(p.get("total_time", 0.0) for p in st.get("propagator", {}).get("plugins", {}).values()
                           if isinstance(p, dict)),
        "heuristics": sum(p.get("time", 0.0) or 0.0 for p in st.get("heuristics", {}).get("plugins", {}).values()
                          if isinstance(p, dict)),
        "branching": sum(p.get("time", 0.0) for p in st.get("branchrules", {}).get("plugins", {}).values()
                         if isinstance(p, dict)),
    }
