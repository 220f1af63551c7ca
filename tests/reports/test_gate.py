"""gate.py: the verdict on one change (SAME, FASTER, SLOWER, UNSURE) on its decision boundaries, and the rules
the mutants name, end to end through `./report compare`."""

import pytest
import resultgen as g
from conftest import BASE, CAND, DISTURBED, null_coverage, write_runs
from stepwise_report.cli import main
from stepwise_report.gate.gate import (
    FASTER,
    SAME,
    SLOWER,
    UNSURE,
    Settings,
    classify,
    compare_samples,
    compare_speedups,
)
from stepwise_report.stats.speedup import floor_samples, smallest_p


def _noisy(median, cv, n, seed):
    return g.step_times(median, cv, n, seed)


def test_ten_percent_regression_is_slower():
    v = compare_samples(_noisy(100, 0.02, 40, 1), _noisy(110, 0.02, 40, 2), Settings(), "x")
    assert v.verdict == SLOWER and v.ratio == pytest.approx(1.10, rel=0.02)
    assert v.p_value < 1e-6 and v.ci_low > 1.05


def test_ten_percent_improvement_is_faster():
    assert compare_samples(_noisy(100, 0.02, 40, 1), _noisy(90, 0.02, 40, 2), Settings(), "x").verdict == FASTER


def test_identical_samples_are_same():
    a = _noisy(100, 0.05, 30, 1)
    v = compare_samples(a, list(a), Settings(), "x")
    assert v.verdict == SAME and v.ratio == 1.0 and v.p_value == 1.0
    assert compare_samples([5.0] * 20, [5.0] * 20, Settings(), "x").verdict == SAME


@pytest.mark.parametrize("seed", range(8))
def test_noisy_tie_is_never_slower(seed):
    v = compare_samples(_noisy(100, 0.15, 12, seed), _noisy(100, 0.15, 12, seed + 100), Settings(), "x")
    assert v.verdict in (SAME, UNSURE)


def test_significant_change_within_threshold_is_same_with_a_note():
    v = compare_samples(_noisy(100, 0.005, 200, 1), _noisy(102, 0.005, 200, 2), Settings(), "x")
    assert v.verdict == SAME and "within the ±5% threshold" in v.note


def test_too_few_samples_is_the_u_tests_own_floor():
    # With 3 per side the exact U test's smallest two-sided p is 2/C(6,3) = 0.1: no verdict is possible.
    v = compare_samples(_noisy(100, 0.01, 3, 1), _noisy(150, 0.01, 3, 2), Settings(), "x")
    assert v.verdict == UNSURE and "too few samples" in v.note and "fewer than 4 per side" in v.note
    assert v.needed >= 4
    # With 4 per side (smallest p 2/C(8,4) = 0.029) a clear slowdown is decided, not a fixed 9+.
    assert floor_samples(0.05) == 4 and floor_samples(0.01) == 5
    assert compare_samples(_noisy(100, 0.01, 4, 1), _noisy(150, 0.01, 4, 2), Settings(), "x").verdict == SLOWER
    # --min-samples still raises the floor when asked.
    assert (
        compare_samples(_noisy(100, 0.01, 5, 1), _noisy(150, 0.01, 5, 2), Settings(min_samples=9), "x").verdict
        == UNSURE
    )


def test_eight_fully_separated_steps_twice_as_slow_are_decisive():
    a, b = _noisy(100, 0.02, 8, 1), _noisy(200, 0.02, 8, 2)
    assert smallest_p(8, 8) == pytest.approx(1.554e-4, rel=1e-3)
    v = compare_samples(a, b, Settings(), "x")
    assert v.verdict == SLOWER and v.p_value == pytest.approx(1.554e-4, rel=1e-3) and v.ci_low > 1.8


def test_bootstrap_is_seeded():
    a, b = _noisy(100, 0.05, 30, 1), _noisy(103, 0.05, 30, 2)
    assert compare_samples(a, b, Settings(seed=3), "x") == compare_samples(a, b, Settings(seed=3), "x")


def test_classify_needs_significance_and_threshold():
    s = Settings()
    assert classify(1.2, 0.9, 1.5, s, worse_when_above=True)[0] == UNSURE
    assert classify(1.2, 1.1, 1.3, s, worse_when_above=True)[0] == SLOWER
    assert classify(0.8, 0.7, 0.9, s, worse_when_above=False)[0] == SLOWER  # a speedup that shrank
    assert classify(1.01, 0.99, 1.03, s, worse_when_above=True)[0] == SAME


def test_speedup_comparison_is_independent_of_machine_speed():
    # The candidate machine is 30% slower overall, but the flag's speedup (2×) is unchanged.
    base_ref, base_step = _noisy(100, 0.02, 30, 1), _noisy(50, 0.02, 30, 2)
    cand_ref, cand_step = _noisy(130, 0.02, 30, 3), _noisy(65, 0.02, 30, 4)
    v = compare_speedups(base_ref, base_step, cand_ref, cand_step, 1.0, 1.0, Settings(), "x")
    assert v.verdict == SAME
    lost = compare_speedups(base_ref, base_step, cand_ref, _noisy(90, 0.02, 30, 4), 1.0, 1.0, Settings(), "x")
    assert lost.verdict == SLOWER


# --- each rule of the gate on its decision boundary ------------------------------------------------------------------
# Each test below fails when its one rule is changed alone (tests/mutants/mutants.toml lists those changes and
# scripts/dev/mutants.py checks that they are caught): the threshold, alpha, the interval excluding 1, the interval's
# confidence, the minimum samples.


@pytest.mark.parametrize("change, verdict", [(1.04, SAME), (1.06, SLOWER), (0.96, SAME), (0.94, FASTER)])
def test_the_threshold_decides_between_4_and_6_percent_at_low_noise(change, verdict):
    # 40 steps at 0.2% spread: every one of these changes is significant (p < 1e-10, CI far from 1), so only the
    # 5% threshold tells a 4% change (SAME, with a note) from a 6% one (SLOWER / FASTER).
    v = compare_samples(_noisy(100, 0.002, 40, 1), _noisy(100 * change, 0.002, 40, 2), Settings(), "x")
    assert v.p_value < 1e-10 and (v.ci_low > 1 or v.ci_high < 1)
    assert v.verdict == verdict, v
    if verdict == SAME:
        assert "within the ±5% threshold" in v.note


@pytest.mark.parametrize("kept, verdict", [(0.96, SAME), (0.94, SLOWER)])
def test_the_threshold_decides_a_lost_speedup_between_4_and_6_percent(kept, verdict):
    # A flag's 2× speedup keeps 96% or 94% of itself in the candidate.
    base_ref, base_step = _noisy(100, 0.002, 40, 1), _noisy(50, 0.002, 40, 2)
    cand_ref, cand_step = _noisy(100, 0.002, 40, 3), _noisy(50 / kept, 0.002, 40, 4)
    v = compare_speedups(base_ref, base_step, cand_ref, cand_step, 1.0, 1.0, Settings(), "x")
    assert v.ci_high < 1 and v.verdict == verdict, v


def test_the_threshold_option_reaches_the_gate(tmp_path):
    base = g.cumulative(BASE, "raschka", g.RASCHKA[:3], n=40, cv=0.002)
    for factor, code in ((1.04, 0), (1.06, 1)):
        cand = g.cumulative(CAND, "raschka", g.RASCHKA[:3], n=40, cv=0.002, base_ms=200 * factor)
        b, c = write_runs(tmp_path / str(factor), base, cand)
        assert main(["compare", b, c, "--threshold", "5", "--gate", "absolute"]) == code


# 5 steps a side. Exact two-sided U-test p-values for 5 vs 5 are 2·k/C(10,5) for the k arrangements at least as
# extreme: 3 pairs out of order gives p = 14/252 = 0.056, 2 pairs gives 8/252 = 0.032. The order of the steps is
# kept as measured: the seeded bootstrap resamples by position, and this order's interval excludes 1.
P06_BASE, P06_CAND = [102.5, 96.5, 106.6, 105.0, 100.3], [104.9, 108.6, 106.5, 108.5, 108.0]


P03_BASE, P03_CAND = [100.0, 101.0, 102.0, 103.0, 104.0], [102.5, 110.0, 111.0, 112.0, 113.0]


def test_p_of_0_06_is_not_significant_at_alpha_0_05():
    v = compare_samples(P06_BASE, P06_CAND, Settings(), "x")
    # The bootstrap interval alone would call it a 5.4% slowdown; the U test does not, so it is not significant.
    assert v.p_value == pytest.approx(14 / 252) and v.ci_low > 1 and v.ratio > 1.05
    assert v.verdict == UNSURE and "the U test does not (p=0.0556)" in v.note
    # The same with a made-up interval: only p decides.
    assert classify(1.08, 1.02, 1.12, Settings(), True, p_value=14 / 252)[0] == UNSURE
    assert classify(1.08, 1.02, 1.12, Settings(alpha=0.1), True, p_value=14 / 252)[0] == SLOWER


def test_p_of_0_03_is_significant_at_alpha_0_05():
    v = compare_samples(P03_BASE, P03_CAND, Settings(), "x")
    assert v.p_value == pytest.approx(8 / 252) and v.ci_low > 1
    assert v.verdict == SLOWER, v
    assert classify(1.08, 1.02, 1.12, Settings(), True, p_value=8 / 252)[0] == SLOWER
    assert classify(1.08, 1.02, 1.12, Settings(alpha=0.01), True, p_value=8 / 252)[0] == UNSURE


def test_a_significant_u_test_is_not_enough_when_the_interval_contains_1():
    # The disturbed baseline: p ≈ 0.0005, but the interval of the ratio of medians reaches below 1.
    v = compare_samples(DISTURBED, [t * 1.25 for t in DISTURBED], Settings(), "x")
    assert v.p_value < 0.001 and v.ci_low < 1 < v.ci_high
    assert v.verdict == UNSURE
    # A speedup comparison has no U test: the interval is all there is.
    assert classify(0.8, 0.6, 1.1, Settings(), False)[0] == UNSURE
    assert classify(0.8, 0.7, 0.9, Settings(), False)[0] == SLOWER


def test_the_gates_interval_covers_no_change_95_percent_of_the_time():
    # A 95% interval contains the true ratio (1) about 95% of the time; a 50% one about half the time.
    def gate(a, b, seed):
        v = compare_samples(a, b, Settings(), f"coverage {seed}")
        return v.ci_low, v.ci_high

    assert 0.90 <= null_coverage(gate) <= 0.99
    narrow = Settings(confidence=0.5)
    a, b = _noisy(100, 0.05, 30, 1), _noisy(100, 0.05, 30, 2)
    wide, half = compare_samples(a, b, Settings(), "x"), compare_samples(a, b, narrow, "x")
    # Normal-ish data: the 95% interval is about 1.96 / 0.67 ≈ 2.9 times as wide as the 50% one.
    assert 2 < (wide.ci_high - wide.ci_low) / (half.ci_high - half.ci_low) < 4.5


def test_too_few_samples_leave_a_speedup_unjudged_however_clear():
    # Three steps per set: a flag lost 30% of its gain, and the bootstrap alone would call that decisive, but the
    # U test's floor (4 per side at alpha 0.05) holds for speedups too.
    three = [g.step_times(m, 0.01, 3, s) for m, s in ((100, 1), (50, 2), (100, 3), (70, 4))]
    v = compare_speedups(*three, 1.0, 1.0, Settings(), "x")
    assert v.verdict == UNSURE and v.ci_low is None and "too few samples (smallest set 3)" in v.note
    assert v.needed == 4
    four = [g.step_times(m, 0.01, 4, s) for m, s in ((100, 1), (50, 2), (100, 3), (70, 4))]
    assert compare_speedups(*four, 1.0, 1.0, Settings(), "x").verdict == SLOWER
