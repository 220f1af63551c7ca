"""matrix.py: each flag alone beside among all the others, with the marks of its measurements."""

import pytest
import resultgen as g
from conftest import DISTURBED, NOISY_MARK
from stepwise_report.analysis.analysis import flag_effects
from stepwise_report.read.results import Result, SuiteGroup
from stepwise_report.render.matrix import matrix_table

RUN = "20260301T120000Z_t_h100"


def test_matrix_shows_alone_vs_among_all_and_skips():
    alone_docs = g.one_at_a_time(RUN, {"tf32": 2.0, "bf16": 3.0, "flash": 1.5})
    alone_docs[1] = g.make_result(
        run_id=RUN, name=alone_docs[1]["name"], suite=alone_docs[1]["suite"], status="skipped", reason="tf32 needs CUDA"
    )
    removed_docs = g.leave_one_out(RUN, {"tf32": 1.0, "bf16": 1.5, "flash": 2.0})
    groups = [
        SuiteGroup(name, name, "d", [Result(None, d) for d in docs])
        for name, docs in (("one_at_a_time", alone_docs), ("leave_one_out", removed_docs))
    ]
    effects = flag_effects(groups[0], groups[1], g.FLAGS_INFO)
    assert [e.flag for e in effects] == ["tf32", "bf16", "flash"]  # flag-table order
    flash = effects[2]
    assert flash.speedup_alone == pytest.approx(1.5, rel=0.05)
    assert flash.speedup_in_context == pytest.approx(2.0, rel=0.05)
    assert flash.interaction > 1.2
    table = matrix_table(effects, *groups)
    assert table.rows[0][2] == "skipped: tf32 needs CUDA" and table.rows[0][4] == "—"
    assert table.rows[2][1] == "fused scaled-dot-product attention"  # from flags_info, not hard-coded


def test_a_noisy_measurement_is_marked_in_the_flag_matrix():
    alone = g.one_at_a_time(RUN, {"bf16": 2.0}, max_noise=0.02)
    alone[1] = g.make_result(
        run_id=RUN, name=alone[1]["name"], suite=alone[1]["suite"], flags=["bf16"], samples=DISTURBED, max_noise=0.02
    )
    removed = g.leave_one_out(RUN, {"bf16": 1.5}, max_noise=0.02)
    groups = [
        SuiteGroup(n, n, "d", [Result(None, d) for d in docs])
        for n, docs in (("one_at_a_time", alone), ("leave_one_out", removed))
    ]
    table = matrix_table(flag_effects(groups[0], groups[1], g.FLAGS_INFO), *groups)
    assert table.rows[0][2].endswith(f"({NOISY_MARK})") and "noisy" not in table.rows[0][3]


def test_short_marks_in_the_flag_matrix():
    alone = g.one_at_a_time(RUN, {"bf16": 2.0})
    alone[1] = g.make_result(
        run_id=RUN, name=alone[1]["name"], suite=alone[1]["suite"], flags=["bf16"], median_ms=100, n=3, short=True
    )
    removed = g.leave_one_out(RUN, {"bf16": 1.5})
    groups = [
        SuiteGroup(n, n, "d", [Result(None, d) for d in docs])
        for n, docs in (("one_at_a_time", alone), ("leave_one_out", removed))
    ]
    table = matrix_table(flag_effects(groups[0], groups[1], g.FLAGS_INFO), *groups)
    assert "(short: n=3, noise" in table.rows[0][2] and "short" not in table.rows[0][3]
