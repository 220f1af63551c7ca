"""The speedrun suite end to end on real text, at a CPU size: the speedrun's techniques added in the records' order,
each row trained to a target loss on five seeds. Every technique changes the function, so the loss check must say
"changes the function" (never "math changed") and the guard faster, slower or no different to target, never a fault;
each result records the techniques' options and validates against the schema.

The text is the fortunes corpus as bytes (tests/e2e/runs.py), on which the tiny preset reaches 3.0 nats in under a
hundred steps; every seed trains to the declared horizon of 150 steps."""

import os
import re
import subprocess

import pytest
from runs import BIN, BYTES_TARGET, FAST, ablate, fortunes_as_bytes, results

SEEDS = 5  # the least: the speedrun's one-sided t-test needs room
# A horizon declared before the runs, shorter than the suite's own (300 at tiny) to keep the test cheap: every seed of
# every row trains all of it, and at 3.0 nats the baseline's cosine on it reaches the target by about step 90.
HORIZON = 150
TARGET = [*(a for a in BYTES_TARGET if not a.startswith("--target-loss")), "--target-loss=3.0"]
TARGET += [f"--seeds={SEEDS}", f"--step-budget={HORIZON}"]
LEARNING_VERDICTS = {"faster to target", "slower to target", "no difference"}


@pytest.fixture(scope="module")
def speedrun(tmp_path_factory):
    corpus = fortunes_as_bytes(tmp_path_factory.mktemp("corpora"))
    out = tmp_path_factory.mktemp("speedrun")
    run = subprocess.run(
        [BIN, "--suite=speedrun", *TARGET, f"--out={out}"],
        capture_output=True,
        text=True,
        timeout=1200,  # hang guard only: about 30 s alone on two cores
        env={**os.environ, "STEPWISE_CORPUS_DIR": str(corpus)},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    docs = sorted(results(out), key=lambda d: d["suite"]["index"])
    return run, docs


def test_every_row_trains_every_seed_and_is_judged_by_time(speedrun):
    run, docs = speedrun
    assert [d["suite"]["label"] for d in docs][0].startswith("baseline")
    assert len(docs) == 5
    for doc in docs:
        c = doc["convergence"]
        assert doc["status"] == "ok", doc["name"]
        assert c["runs"] == SEEDS, doc["name"]
    assert docs[0]["convergence"]["reached"] == SEEDS, "the baseline reaches the target within the horizon"
    for doc in docs[1:]:
        check = doc["summary"]["loss"]["check"]
        assert check["status"] == "changes the function" and check["class"] == "learning", check
        assert doc["convergence"]["guard"]["status"] in LEARNING_VERDICTS, doc["convergence"]["guard"]
    # No row of the tables at the end says it (their notes explain what "math changed" would mean for other flags).
    rows = [line for line in run.stdout.splitlines() if re.match(r"\s*\d+\s", line)]
    assert rows and not [line for line in rows if "math changed" in line], rows


def test_every_row_trains_every_seed_to_the_suites_declared_horizon_and_the_trapezoid_cools_down(speedrun):
    # The declared horizon, never the step cap (400): every schedule ends there, every seed of every row trains to it
    # (on past its first crossing) and is evaluated there, and the record rule judges every row there.
    run, docs = speedrun
    horizon = docs[0]["config"]["target"]["step_budget"]
    assert horizon == HORIZON < docs[0]["config"]["target"]["max_steps"], "the horizon is not the cap"
    assert f"{HORIZON} steps (--step-budget)" in run.stdout
    for doc in docs:
        config, c = doc["config"], doc["convergence"]
        assert config["target"]["step_budget"] == horizon and config["lr_schedule"]["decay_steps"] == horizon
        assert c["record_rule"]["budget"] == horizon, doc["name"]
        for seed in c["seeds"]:
            assert seed["curve"][-1]["step"] == horizon and seed["loss_at_budget"] == seed["curve"][-1]["val_loss"]
            assert seed["steps"] <= horizon
    # The trapezoid row (#2): its cool-down spans the last D of the horizon's steps, and every seed trained through
    # it, to the end (before the horizon, the cool-down began at 0.6 of the cap and no seed ever reached it).
    trapezoid = docs[1]
    cooldown = trapezoid["config"]["lr_schedule"]["cooldown_steps"]
    assert trapezoid["config"]["lr_schedule"]["kind"] == "trapezoid" and 1 <= cooldown < horizon
    for seed in trapezoid["convergence"]["seeds"]:
        assert len(seed["curve"]) > 1 and seed["curve"][-1]["step"] == horizon > horizon - cooldown


def test_both_verdicts_and_the_phase_split_are_printed_and_recorded(speedrun):
    run, docs = speedrun
    # The console: the verdict table under the time-to-target one, and where each row's step went.
    assert "speedrun's rule" in run.stdout and "where the step goes" in run.stdout
    base = docs[0]["convergence"]
    assert base["verdict"] is None and base["guard"]["status"] == "baseline"
    for doc in docs[1:]:
        c = doc["convergence"]
        for what in ("time", "steps"):
            v = c["verdict"][what]
            assert v["runs"] == v["baseline_runs"] == SEEDS and 0 <= v["p"] <= 1, v
            assert v["ratio"] is None or (v["low"] or 0) <= v["ratio"] <= (v["high"] or float("inf")), v
        rule = c["record_rule"]
        assert rule["budget_from"] == "--step-budget" and rule["budget"] == HORIZON, rule
        assert rule["n"] == len(rule["losses"]) == SEEDS, rule
        assert rule["status"] in ("meets the record rule", "does not meet the record rule"), rule
    # Each row's step split as the throughput rows split theirs; Muon's orthogonalisation lands in its optimizer
    # phase (five Newton-Schulz iterations per matrix against AdamW's elementwise update, in the same run).
    phases = [{p["name"]: p["median_ms"] for p in d["phases"]["phases"]} for d in docs]
    assert all({"forward", "backward", "optimizer"} <= set(p) for p in phases), phases
    assert phases[2]["optimizer"] > 1.5 * phases[1]["optimizer"], (phases[1], phases[2])


def test_the_rows_add_the_techniques_in_the_records_order_with_their_options(speedrun):
    _, docs = speedrun
    added = [sorted(d["suite"]["added"]) for d in docs]
    assert added == [
        [],
        ["rotary", "trapezoid"],
        ["muon"],
        ["qk_norm", "relu2", "vocab_padding", "zero_init_proj"],
        ["logit_softcap"],
    ]
    last = docs[-1]["config"]
    assert last["lr_schedule"]["kind"] == "trapezoid" and last["lr_schedule"]["cooldown_steps"] >= 1
    assert docs[0]["config"]["lr_schedule"]["kind"] == "cosine"  # on the suite's horizon
    assert last["softcap"] == 30
    assert last["muon_momentum"] == 0.95 and last["muon_scale"] == "sqrt_out_over_in"


def test_muons_optimizer_state_is_what_it_holds_not_adamws_two_moments(tmp_path):
    # Muon keeps one momentum per block matrix and AdamW's two moments for the rest, so the memory split must not
    # charge it AdamW's 2x the trained bytes (which would understate the activations by the difference).
    for name in ("muon", "dynamic_mask"):
        run = ablate(*FAST, f"--enable={name}", f"--out={tmp_path / name}")
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    muon, adamw = (results(tmp_path / name)[0]["summary"]["memory"] for name in ("muon", "dynamic_mask"))
    assert adamw["optimizer_state_bytes"] == 2 * adamw["gradients_bytes"]
    assert muon["gradients_bytes"] < muon["optimizer_state_bytes"] < 2 * muon["gradients_bytes"], muon
