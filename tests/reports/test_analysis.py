"""analysis.py: each suite's ratio chain (× previous against the last step that ran, × baseline)."""

import pytest
import resultgen as g
from stepwise_report.analysis.analysis import build_chain
from stepwise_report.read.results import Result

# --- the ratio chain --------------------------------------------------------------------------


def _results(docs):
    return [Result(None, d) for d in docs]


def test_chain_skips_unmeasured_steps_and_compares_with_the_last_ok_one():
    docs = g.cumulative(
        "20260301T120000Z_t_h100", "raschka", g.RASCHKA, skip={4: "not on this device"}, fail={8: "capture failed"}
    )
    steps = build_chain(_results(docs))
    tps = {s.index: s.result.tokens_per_s for s in steps if s.ok}
    assert steps[0].x_previous is None and steps[0].x_baseline == pytest.approx(1.0)
    assert steps[3].x_previous == pytest.approx(tps[3] / tps[2])
    assert steps[4].x_previous is None and steps[4].x_baseline is None
    # Step 5 is compared with step 3, across the skipped step 4.
    assert steps[5].previous.index == 3 and steps[5].spans == ["pinned memory"]
    assert steps[5].x_previous == pytest.approx(tps[5] / tps[3])
    assert steps[9].previous.index == 7 and steps[9].spans == ["compile (CUDA graph)"]
    assert steps[10].x_baseline == pytest.approx(tps[10] / tps[0])
    # The chain multiplies out to × baseline.
    product = 1.0
    for s in steps:
        product *= s.x_previous or 1.0
    assert product == pytest.approx(steps[10].x_baseline)


def test_failed_baseline_leaves_no_x_baseline_but_keeps_x_previous():
    docs = g.cumulative("20260301T120000Z_t_h100", "karpathy", g.KARPATHY, fail={0: "out of memory"})
    steps = build_chain(_results(docs))
    assert all(s.x_baseline is None for s in steps)
    assert steps[1].x_previous is None and steps[2].x_previous is not None


def test_non_cumulative_suites_have_no_x_previous():
    steps = build_chain(_results(g.one_at_a_time("20260301T120000Z_t_h100", {"tf32": 2.0, "bf16": 3.0})))
    assert all(s.x_previous is None for s in steps)
    assert steps[2].x_baseline == pytest.approx(3.0, rel=0.05)
