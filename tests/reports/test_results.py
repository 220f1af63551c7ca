"""results.py: a result document's accessors, and runs and suites."""

import pytest
import resultgen as g
from conftest import BASE, DISTURBED, QUIET
from stepwise_report.read.inputs import load_inputs
from stepwise_report.read.results import Result, group_runs


def test_tokens_per_step_is_the_engines_else_derived_from_tok_s_and_the_median():
    doc = g.make_result(
        run_id="20260301T120000Z_t_h100",
        name="single/00_ddp",
        median_ms=110,
        distributed={"world_size": 4, "backend": "nccl", "rank_step_ms_median": [110] * 4},
    )
    # As the engine writes a 4-rank run: both count every rank's tokens; tok/s rounded, as a reader might.
    doc["summary"]["tokens_per_step"] *= 4
    doc["summary"]["tokens_per_s"] = round(doc["summary"]["tokens_per_s"] * 4)
    assert Result(None, doc).tokens_per_step == 4 * 8 * 64  # exactly, not tok/s × median
    del doc["summary"]["tokens_per_step"]
    s = doc["summary"]
    assert Result(None, doc).tokens_per_step == pytest.approx(s["tokens_per_s"] * s["step_ms"]["median"] / 1000)


# --- runs and suites --------------------------------------------------------------------------


def test_runs_are_newest_first_and_mixed_devices_are_split(tmp_path):
    g.standard_run(tmp_path, "20260301T120000Z_a_h100")
    docs = g.cumulative("20260305T120000Z_b_mixed", "karpathy", g.KARPATHY)
    docs[3] = g.make_result(
        run_id=docs[3]["run_id"],
        name=docs[3]["name"],
        suite=docs[3]["suite"],
        flags=docs[3]["config"]["flags"],
        device_name="NVIDIA A100-SXM4-40GB",
    )
    for d in docs:
        g.write(tmp_path, d)
    runs = group_runs(load_inputs([str(tmp_path)]).results)
    assert [r.run_id for r in runs] == ["20260305T120000Z_b_mixed", "20260301T120000Z_a_h100"]
    mixed = runs[0]
    assert len(mixed.suites) == 2 and {s.device for s in mixed.suites} == {
        "NVIDIA H100 80GB HBM3 (cuda)",
        "NVIDIA A100-SXM4-40GB (cuda)",
    }
    assert "2 devices" in mixed.messages[0] and "no ratio across devices" in mixed.messages[0]


def test_the_noise_of_older_results_is_judged_from_their_own_fields():
    noisy = g.make_result(run_id=BASE, name="single/00_x", samples=DISTURBED, max_noise=0.02, write_noisy=False)
    assert "noisy" not in noisy["summary"] and Result(None, noisy).noisy  # 41% > 2%
    calm = g.make_result(run_id=BASE, name="single/00_x", samples=QUIET, max_noise=0.02, write_noisy=False)
    assert not Result(None, calm).noisy
    # Where the engine wrote summary.noisy, its word stands.
    calm["summary"]["noisy"] = True
    assert Result(None, calm).noisy
