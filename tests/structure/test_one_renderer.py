"""Every table drawn once, every statistic implemented once (docs/design/one-renderer.md), checked from the tree.

- The engine draws no table at the end of a run: ablations/tables/ holds only the plain-text columns its plan,
  listings and progress lines share, and ./ablate hands the files it wrote to ./report show.
- No C++ source computes a speedup's interval (a bootstrap of a ratio of medians): that statistic is the report's
  (reports/stepwise_report/stats/speedup.py), so the terminal and report.md cannot disagree on one.

Each check also runs on synthetic input that must fail.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_house import tracked

ROOT = Path(__file__).resolve().parents[2]
# What ablations/tables/ may hold: aligned columns, nothing that reads a result.
TABLES_ALLOWED = {"ablations/tables/text_table.h", "ablations/tables/text_table.cpp"}
# A bootstrap of a ratio of medians in C++: resampling two samples' medians in a loop and sorting the ratios. The
# censored one (Kaplan–Meier medians, km_median_ratio_interval) is the time-to-target verdict's, the engine's own.
_RATIO_INTERVAL = re.compile(r"\bmedian_ratio_interval\s*\(")


def end_of_run_tables(paths: list[str]) -> list[str]:
    """The files under ablations/tables/ beyond the plain-text columns."""
    return sorted(p for p in paths if p.startswith("ablations/tables/") and p not in TABLES_ALLOWED)


def ratio_intervals(sources: dict[str, str]) -> list[str]:
    """The C++ files that define or call a (non-censored) ratio-of-medians interval."""
    return sorted(path for path, text in sources.items() if _RATIO_INTERVAL.search(text.replace("km_median", "km_")))


def test_the_engine_draws_no_end_of_run_table():
    assert end_of_run_tables(tracked("ablations/tables/*")) == []
    ablate = (ROOT / "ablations" / "ablate.cpp").read_text()
    assert "show_report_tables(" in ablate, "./ablate's end-of-run tables come from ./report show"


def test_no_cxx_source_computes_a_speedups_interval():
    cxx = {p: (ROOT / p).read_text() for p in tracked("*.cpp", "*.h")}
    assert len(cxx) > 100
    assert ratio_intervals(cxx) == []


def test_synthetic_violations_are_reported():
    assert end_of_run_tables(["ablations/tables/results_table.cpp", "ablations/tables/text_table.h"]) == [
        "ablations/tables/results_table.cpp"
    ]
    sources = {
        "bench/stats.cpp": "std::optional<Interval> median_ratio_interval(std::span<const double> a) {",
        "bench/measure/censored.cpp": "auto i = km_median_ratio_interval(a, b, 2000, 0.95, 0);",
    }
    assert ratio_intervals(sources) == ["bench/stats.cpp"]
