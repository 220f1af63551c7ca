"""formats.py: how a speedup reads with its interval."""

from stepwise_report.render.formats import fmt_speedup
from stepwise_report.stats.speedup import Speedup

# --- every speedup with its interval -----------------------------------------------------------


def test_a_speedup_reads_with_its_interval_and_never_as_a_gain_when_it_contains_one():
    assert fmt_speedup(Speedup(1.06, 0.98, 1.15, 30, 30)) == "1.06× (0.98–1.15): no measurable change"
    assert fmt_speedup(Speedup(2.21, 2.15, 2.27, 30, 30)) == "2.21× (2.15–2.27)"
    assert fmt_speedup(Speedup(0.80, 0.75, 0.86, 30, 30)) == "0.80× (0.75–0.86)"
    assert fmt_speedup(Speedup(1.50, None, None, 3, 3)) == "1.50× (too few steps for an interval)"
