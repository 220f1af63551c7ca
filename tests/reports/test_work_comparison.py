"""work_comparison.py: what one step dispatches, the baseline's side against the candidate's, exactly — an operator
more (or a new one) is MORE work and fails the gate unless accepted, bytes within 1% are alignment, fewer operators
are LESS, and a side that did not count, or whose counts varied, is never judged."""

from __future__ import annotations

from pathlib import Path

from stepwise_report.gate.comparison import gate_reasons
from stepwise_report.gate.work_comparison import LESS, MORE, NOT_COUNTED, SAME_WORK, added_work, compare_work
from stepwise_report.read.results import Result

OPS = {"aten::mm": 24, "aten::add_": 12, "aten::gelu": 4}


def result(ops: dict | None, cpu_bytes: int = 1_000_000, same: bool = True, status: str = "ok") -> Result:
    counts = (
        {"status": "unavailable", "reason": "CUPTI did not load"}
        if status != "ok"
        else None
        if ops is None
        else {
            "status": "ok",
            "steps_counted": 3,
            "same_each_step": same,
            "varying": {},
            "per_step": {
                "aten_ops": ops,
                "aten_op_total": sum(ops.values()),
                "allocations": {"cpu": {"count": 40, "bytes": cpu_bytes}},
                "device_activities": None,
                "device_activity_total": None,
            },
        }
    )
    return Result(Path("r.json"), {"name": "s/00_baseline", "status": "ok", "op_counts": counts})


def verdict(base: Result, cand: Result, accepted: set[str] = frozenset()) -> dict:
    (row,) = compare_work([("s/00_baseline", [base] * 3, [cand] * 3)], set(accepted))
    return row


def test_equal_counts_are_the_same_work():
    assert verdict(result(OPS), result(OPS))["verdict"] == SAME_WORK


def test_one_operator_more_or_a_new_one_is_more_work_and_fails_the_gate_unless_accepted():
    more = verdict(result(OPS), result({**OPS, "aten::add_": 13}))
    assert more["verdict"] == MORE and more["more"] == {"aten::add_": {"baseline": 12, "candidate": 13}}
    new = verdict(result(OPS), result({**OPS, "aten::copy_": 2}))
    assert new["verdict"] == MORE and "aten::copy_ 0 -> 2 (new)" in new["note"]
    reasons = gate_reasons([], [], [], [], "both", "step time", [new])
    assert reasons == [f"s/00_baseline: more work {new['note']}"]
    accepted = verdict(result(OPS), result({**OPS, "aten::copy_": 2}), {"s/00_baseline"})
    assert accepted["verdict"] == MORE and accepted["accepted"] and not added_work([accepted])
    assert not added_work([verdict(result(OPS), result({**OPS, "aten::copy_": 2}), {"all"})])


def test_bytes_beyond_one_percent_are_more_work_within_it_they_are_not():
    assert verdict(result(OPS, 1_000_000), result(OPS, 1_009_000))["verdict"] == LESS  # moved, within 1%: not more
    grown = verdict(result(OPS, 1_000_000), result(OPS, 1_020_000))
    assert grown["verdict"] == MORE and "cpu bytes 1,000,000 -> 1,020,000 (+2.0%)" in grown["note"]


def test_fewer_operators_are_less_work_and_pass():
    less = verdict(result(OPS), result({"aten::mm": 24, "aten::gelu": 4}))
    assert less["verdict"] == LESS and not added_work([less]) and "aten::add_ 12 -> 0" in less["note"]


def test_a_side_that_did_not_count_or_varied_is_not_judged():
    assert verdict(result(None), result(OPS))["verdict"] == NOT_COUNTED
    failed = verdict(result(OPS), result(OPS, status="unavailable"))
    assert failed["verdict"] == NOT_COUNTED and "CUPTI did not load" in failed["note"]
    varied = verdict(result(OPS), result({**OPS, "aten::mm": 30}, same=False))
    assert varied["verdict"] == NOT_COUNTED and "differed" in varied["note"]


def test_a_gated_run_whose_step_does_more_work_fails_naming_it_until_the_change_says_it_meant_it(tmp_path):
    import json

    from stepwise_report.cli import main
    from test_round_comparison import gated_run

    def counted(root: Path, extra: dict) -> Path:
        for path in root.glob("round-*/one_at_a_time/*.json"):
            doc = json.loads(path.read_text())
            ops = {**OPS, **(extra if doc["name"].endswith("dynamic_mask") else {})}
            doc["op_counts"] = result(ops).data["op_counts"]
            path.write_text(json.dumps(doc))
        return root

    base = counted(gated_run(tmp_path / "a", seed=1, drift=0.01, partner="gated-2"), {})
    cand = counted(gated_run(tmp_path / "b", seed=2, drift=0.01, partner="gated-1"), {"aten::clone": 1})

    def gate(*extra: str) -> dict:
        out = tmp_path / "compare.json"
        code = main(["compare", str(base), str(cand), "--json-out", str(out), *extra])
        verdict = json.loads(out.read_text())
        assert code == verdict["gate"]["exit_code"]
        return verdict

    verdict = gate()
    assert verdict["gate"]["exit_code"] == 1, verdict["gate"]
    assert verdict["gate"]["regressions"] == [
        "one_at_a_time/01_dynamic_mask: more work per step: aten::clone 0 -> 1 (new)"
    ]
    assert {r["name"]: r["verdict"] for r in verdict["work"]}["one_at_a_time/00_baseline"] == SAME_WORK
    accepted = gate("--accept-work", "one_at_a_time/01_dynamic_mask")
    assert accepted["gate"]["exit_code"] == 0 and not accepted["gate"]["regressions"], accepted["gate"]
