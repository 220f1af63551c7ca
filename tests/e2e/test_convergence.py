"""--target-loss end to end on real text: each row trains to a validation loss on several seeds, and the convergence
guard must call a run that learns at half the rate "slower to converge", one whose attention sees the next token
"faster to converge", and every real flag a CPU runs "ok" (or "not judged" for the classes that declare a change).

The text is the fortunes corpus that set-up installs (scripts/corpus.py), tokenised here as bytes (vocabulary 256) so
that the tiny preset's steps cost milliseconds and a seed reaches the target in a second or two."""

import json
import os
import subprocess

import jsonschema
import pytest
from runs import BIN, BYTES_TARGET, ROOT, SCHEMA, USAGE, fortunes_as_bytes

# A half-rate run needs about 1.4x the baseline's steps to the target, a run that sees the next token about half. Five
# seeds give the t-test room (p near 0.01 at four).
TARGET = BYTES_TARGET


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    return fortunes_as_bytes(tmp_path_factory.mktemp("corpora"))


@pytest.fixture(scope="module")
def half_rate(corpus_dir, tmp_path_factory):
    """The baseline and a half-rate flash row, each with its Python eager row: trained once for the engine's guard
    (test_a_broken_variant...) and the Python rows' (test_python_rows...), which read the same runs."""
    out = tmp_path_factory.mktemp("half_rate")
    run, docs = ablate(
        corpus_dir,
        out,
        "--enable=flash",
        "--vs-baseline",
        "--implementations=libtorch,python-eager",
        env={"STEPWISE_TEST_BREAK": "half_lr"},
    )
    return out, run, docs


def ablate(corpus_dir, out, *args, env=None, seeds=5):
    run = subprocess.run(
        [BIN, *TARGET, f"--seeds={seeds}", *args, f"--out={out}"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "STEPWISE_CORPUS_DIR": str(corpus_dir), **(env or {})},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    docs = {p.stem: json.loads(p.read_text()) for p in sorted(out.rglob("*.json"))}
    for doc in docs.values():
        jsonschema.validate(doc, SCHEMA)
    return run, docs


@pytest.mark.parametrize("mode,verdict", [("half_lr", "slower to converge"), ("future_token", "faster to converge")])
def test_a_broken_variant_converges_at_another_rate_and_the_guard_says_so(corpus_dir, tmp_path, mode, verdict, request):
    if mode == "half_lr":  # the half-rate run the Python rows' test reads too (its Python rows change nothing here)
        _, run, docs = request.getfixturevalue("half_rate")
    else:
        run, docs = ablate(corpus_dir, tmp_path, "--enable=flash", "--vs-baseline", env={"STEPWISE_TEST_BREAK": mode})
    convergence = docs["01_flash"]["convergence"]
    guard = convergence["guard"]
    assert guard["status"] == verdict, guard
    assert guard["p"] < 0.05 and guard["class"] == "fp32"
    assert (guard["steps_ratio"] > 1) == (mode == "half_lr"), guard
    assert convergence["reached"] == convergence["runs"] == 5
    assert verdict in run.stdout, "the console's time-to-target table shows the verdict"

    # The verdict beside the guard: steps against the baseline's with the interval and Welch's p (every seed reached).
    from scipy.stats import ttest_ind

    steps = [s["steps"] for s in convergence["seeds"]]
    base_steps = [s["steps"] for s in docs["00_baseline"]["convergence"]["seeds"]]
    v = convergence["verdict"]["steps"]
    assert v["n"] == v["baseline_n"] == v["runs"] == 5 and v["low"] <= v["ratio"] <= v["high"], v
    assert (v["ratio"] > 1) == (mode == "half_lr"), v
    if len(set(steps)) > 1 and len(set(base_steps)) > 1:
        assert v["p"] == pytest.approx(ttest_ind(steps, base_steps, equal_var=False).pvalue, rel=1e-6)
    assert convergence["record_rule"] is None, "a speed flag's row is left to the guard"

    if mode == "half_lr":
        return  # the resumed run below once is enough, and the half-rate runs are shared
    # --resume keeps the baseline and still judges the row measured again against the kept baseline's seeds.
    next(tmp_path.rglob("01_flash.json")).unlink()
    resumed = subprocess.run(
        [BIN, *TARGET, "--seeds=5", "--enable=flash", "--vs-baseline", f"--resume={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "STEPWISE_CORPUS_DIR": str(corpus_dir), "STEPWISE_TEST_BREAK": mode},
    )
    assert resumed.returncode == 0 and "kept" in resumed.stdout, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    again = json.loads(next(tmp_path.rglob("01_flash.json")).read_text())["convergence"]["guard"]
    assert again["status"] == verdict and again["baseline_steps"] == guard["baseline_steps"], again


def test_every_real_flag_converges_as_the_baseline(corpus_dir, tmp_path):
    # Three seeds: an exact flag takes the baseline's steps to the step, an fp32 one within an evaluation.
    run, docs = ablate(corpus_dir, tmp_path, "--suite=one_at_a_time", "--max-batch-limit=8", seeds=3)
    baseline = docs["00_baseline"]
    # No horizon declared: the stated default, a constant rate, never a cosine decaying over the step cap.
    assert baseline["config"]["target"]["loss"] == 2.8 and baseline["config"]["lr_schedule"]["kind"] == "constant"
    assert baseline["config"]["target"]["budget_from"].startswith("none declared")
    assert "horizon" in run.stdout and "none declared" in run.stdout
    assert baseline["config"]["data"]["provenance"]["val"] in ("file", "split")
    expected = {"00_baseline": "baseline", "05_bf16": "not judged", "10_max_batch": "not judged"}
    judged = {name: d["convergence"]["guard"] for name, d in docs.items() if d["status"] == "ok"}
    for name, guard in judged.items():
        assert guard["status"] == expected.get(name, "ok"), (name, guard["reason"])
    ran = {name.split("_", 1)[1] for name in judged}
    assert {"dynamic_mask", "fused_adamw", "bf16", "native_layers", "flash", "vocab_padding", "max_batch"} <= ran
    for doc in docs.values():
        if doc["status"] != "ok":
            continue
        for seed in doc["convergence"]["seeds"]:
            curve = seed["curve"]
            assert curve[0]["step"] == 0 and seed["reached"] and seed["stop_reason"] == "target"
            assert curve[-1]["val_loss"] <= 2.8 < curve[-2]["val_loss"], "it stops at the first evaluation below"
            assert seed["steps"] == curve[-1]["step"] and seed["eval_s"] > 0
    # max_batch trains each seed at the batch its probe chose, as its throughput row measures at it.
    grown = docs["10_max_batch"]
    assert grown["max_batch_probe"]["chosen"] == grown["config"]["batch_size"] > baseline["config"]["batch_size"]
    assert (
        grown["convergence"]["seeds"][0]["tokens"]
        == grown["convergence"]["seeds"][0]["steps"] * grown["config"]["batch_size"] * grown["config"]["seq_len"]
    )
    assert "steps to target" in run.stdout
    # The baseline against the committed reference convergence point of these settings
    # (reports/reference/convergence/fortunes-bytes_tiny.json): the same steps to target, by Welch's test.
    check = subprocess.run(
        [str(ROOT / "report"), "convergence-check", str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert check.returncode == 0 and "fortunes-bytes_tiny.json" in check.stdout, check.stdout + check.stderr


def test_python_rows_train_to_the_target_beside_the_engine_and_are_guarded(half_rate):
    # PyTorch eager in Python trains each seed from the same weights on the same batches, validation windows, schedule
    # and dropout seed: on a CPU its validation curve is the engine's to the last bit, and the convergence guard judges
    # it against the Python baseline's seeds, so a half-rate run is "slower to converge" there too.
    _, run, docs = half_rate
    for name in ("00_baseline", "01_flash"):
        engine, python = docs[name]["convergence"], docs[f"{name}.python-eager"]["convergence"]
        assert python["runs"] == python["reached"] == 5
        for mine, theirs in zip(python["seeds"], engine["seeds"], strict=True):
            assert [p["val_loss"] for p in mine["curve"]] == [p["val_loss"] for p in theirs["curve"]], name
            assert mine["steps"] == theirs["steps"] and mine["time_s"] > 0
        assert docs[f"{name}.python-eager"]["summary"]["loss"]["vs_libtorch"]["status"] == "ok"
    guard = docs["01_flash.python-eager"]["convergence"]["guard"]
    assert guard["status"] == "slower to converge" and guard["p"] < 0.05, guard
    python_baseline = docs["00_baseline.python-eager"]["convergence"]["seeds"]
    assert guard["baseline_steps"] == [s["steps"] for s in python_baseline], "judged against the Python baseline"
    assert "python-eager" in run.stdout.split("steps to target")[1], "the time-to-target table shows the Python rows"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--seeds=0"], "--seeds must be a positive integer"),
        (["--eval-every=0"], "--eval-every must be a positive integer"),
        (["--step-budget=500"], "--step-budget 500 is beyond the step cap 400"),
        (["--record-p=1.5"], "--record-p"),
        (["--record-p=0.05"], "add --step-budget=N"),
        (["--lr-schedule=cosine"], "add --step-budget=N"),
        (["--enable=trapezoid"], "add --step-budget=N"),
    ],
)
def test_bad_target_options_exit_2_naming_the_problem(corpus_dir, tmp_path, args, message):
    run = subprocess.run(
        [BIN, *TARGET, *args, f"--out={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "STEPWISE_CORPUS_DIR": str(corpus_dir)},
    )
    assert run.returncode == USAGE and message in run.stderr, run.stderr
