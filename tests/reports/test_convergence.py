"""convergence.py: the time-to-target table, its figures, and the section the report gives results written with
--target-loss (and only those)."""

import json

import numpy as np
import resultgen as g
from conftest import column
from stepwise_report.analysis.analysis import build_chain
from stepwise_report.cli import main as report_main
from stepwise_report.read.results import Result
from stepwise_report.render.convergence import (
    against_reference,
    convergence_figure,
    convergence_table,
    has_convergence,
    load_reference_points,
    reference_key,
)

RUN = "20260301T120000Z_t_cpu"
TARGET = 2.8


def _curve(reached_at: int, ms_per_step: float, every: int = 10) -> list[dict]:
    """A loss falling from 5.5 to TARGET at `reached_at`, evaluated every `every` steps."""
    points = []
    for step in range(0, reached_at + 1, every):
        loss = 5.5 - (5.5 - TARGET) * (step / reached_at) ** 0.5
        points.append(
            {
                "step": step,
                "tokens": step * 256,
                "time_s": step * ms_per_step / 1000,
                "val_loss": loss - (1e-9 if step == reached_at else 0),
                "train_loss": None if step == 0 else loss + 0.05,
            }
        )
    return points


def _summary(values: list[float], interval: bool = False) -> dict:
    v = sorted(values)
    median = float(np.median(v))
    return {
        "n": len(v),
        "median": median,
        "median_low": v[0] if interval else None,
        "median_high": v[-1] if interval else None,
        "olympic_mean": float(np.mean(v[1:-1])) if len(v) >= 3 else float(np.mean(v)),
        "mean": float(np.mean(v)),
        "mean_low": None,
        "mean_high": None,
    }


def convergence(steps: list[int], ms_per_step: float, guard: dict, interval: bool = False) -> dict:
    seeds = [
        {
            "seed": i,
            "status": "ok",
            "reason": None,
            "stop_reason": "target",
            "reached": True,
            "steps": s,
            "tokens": s * 256,
            "time_s": s * ms_per_step / 1000,
            "warmup_s": 0.1,
            "eval_s": 0.2,
            "curve": _curve(s, ms_per_step),
        }
        for i, s in enumerate(steps)
    ]
    return {
        "target_loss": TARGET,
        "seeds": seeds,
        "runs": len(steps),
        "reached": len(steps),
        "steps": _summary(steps, interval),
        "tokens": _summary([s * 256 for s in steps], interval),
        "time_s": _summary([s * ms_per_step / 1000 for s in steps], interval),
        "guard": {"status": "ok", "reason": "", "class": "fp32", "test": "Welch", **guard},
    }


def target_docs() -> list[dict]:
    """A baseline and two flags: one as fast per step and converging alike, one learning at half the rate."""
    docs = g.one_at_a_time(
        RUN, {"flash": 1.0, "native_layers": 1.5}, device_kind="cpu", device_name="Test CPU", mfu=None
    )
    docs[0]["convergence"] = convergence([150, 160, 170], 5.0, {"status": "baseline"})
    docs[1]["convergence"] = convergence([150, 160, 170], 5.0, {"p": 1.0, "steps_ratio": 1.0, "time_ratio": 1.0})
    docs[2]["convergence"] = convergence(
        [300, 320, 340, 310, 330, 320],
        5.0 / 1.5,
        {"status": "slower to converge", "p": 0.001, "steps_ratio": 2.0, "time_ratio": 4 / 3},
        interval=True,
    )
    for doc in docs:
        doc["config"]["target"] = {
            "loss": TARGET,
            "eval_every": 10,
            "eval_batches": 4,
            "max_steps": 400,
            "max_time_s": 600,
            "warmup_steps": 2,
            "seeds": 3,
        }
        if g.VALIDATOR:
            g.VALIDATOR.validate(doc)
    return docs


def test_the_table_gives_medians_ratios_and_the_guards_verdict():
    steps = build_chain([Result(None, d) for d in target_docs()])
    assert has_convergence(steps)
    table = convergence_table(steps)
    assert column(table, "reached") == ["3/3", "3/3", "6/6"]
    assert column(table, "steps to target") == ["160", "160", "320 [300–340]"], "the interval only where given"
    assert column(table, "seconds") == ["0.80", "0.80", "1.07 [1.00–1.13]"]
    assert column(table, "× base time") == ["-", "×1.00", "×1.33"]
    assert column(table, "× base steps") == ["-", "×1.00", "×2.00"]
    assert column(table, "convergence") == ["baseline", "ok (p 1.000)", "slower to converge (p 0.001)"]
    assert table.caption == "time to a validation loss of 2.8"


def test_python_rows_sit_under_their_configuration_with_their_own_verdict():
    docs = target_docs()
    steps = build_chain([Result(None, d) for d in docs])
    python = json.loads(json.dumps(docs[2]))
    python["implementation"] = "python-eager"
    python["convergence"]["guard"] = {**python["convergence"]["guard"], "status": "ok", "p": 0.5}
    table = convergence_table(
        steps, {(python["suite"]["name"], python["suite"]["index"]): {"python-eager": Result(None, python)}}
    )
    assert column(table, "row")[2:] == [steps[2].label, "  python-eager"]
    assert column(table, "#")[3] == "" and column(table, "convergence")[3] == "ok (p 0.500)"


def test_throughput_results_have_no_time_to_target_section(tmp_path):
    docs = target_docs()
    for doc in docs:
        doc["convergence"] = None
        doc["config"]["target"] = None
        g.write(tmp_path / "r", doc)
    assert not has_convergence(build_chain([Result(None, d) for d in docs]))
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    assert "time to target" not in (tmp_path / "out" / "report.md").read_text()


def test_the_figures_draw_each_configurations_median_and_band_up_to_the_earliest_seeds_end():
    steps = build_chain([Result(None, d) for d in target_docs()])
    fig = convergence_figure(steps, "step", "t", "s")
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    assert len(lines) == 3 and len(ax.collections) == 3, "a median line and a min–max band per configuration"
    ends = sorted(max(line.get_xdata()) for line in lines)
    assert ends == [150, 150, 300], "a band stops where its earliest seed stopped"
    target = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert [line.get_ydata()[0] for line in target] == [TARGET]
    fig = convergence_figure(steps, "time_s", "t", "s")
    assert sorted(max(line.get_xdata()) for line in fig.axes[0].get_lines()[:3]) == [0.75, 0.75, 1.0]


def test_the_report_shows_the_section_with_both_figures(tmp_path):
    for doc in target_docs():
        g.write(tmp_path / "r", doc)
    assert report_main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "#### one_at_a_time: time to target" in md
    assert "| 2 | native_layers | 6/6 | 320 [300–340] |" in md
    assert "one_at_a_time_convergence_steps.png" in md and "one_at_a_time_convergence_seconds.png" in md
    assert "each seed evaluated every 10 steps on 4 fixed validation batches, at most 400 steps" in md


def _write_docs(root):
    docs = target_docs()
    for doc in docs:
        doc["config"]["data"]["provenance"] = {
            "kind": "corpus",
            "files": [{"path": "/c/train.bin", "bytes": 2, "sha256": "a" * 64, "tokens": 1}],
            "val_files": [{"path": "/c/val.bin", "bytes": 2, "sha256": "b" * 64, "tokens": 1}],
            "val": "file",
            "vocab_size": 256,
            "vocab_source": "meta.json",
        }
        g.write(root, doc)
    return docs


def test_a_reference_point_holds_a_later_baseline_of_the_same_settings(tmp_path, capsys):
    docs = _write_docs(tmp_path / "r")
    baseline = next((tmp_path / "r").rglob("00_baseline.json"))
    refs = tmp_path / "refs"
    args = ["convergence-reference", str(baseline), "--command", "./ablate --target-loss=2.8"]
    assert report_main([*args, "--out", str(refs / "corpus_tiny.json")]) == 0
    reference = json.loads((refs / "corpus_tiny.json").read_text())
    assert reference["steps"] == [150, 160, 170] and reference["command"] == "./ablate --target-loss=2.8"
    assert report_main(["convergence-check", str(tmp_path / "r"), "--references", str(refs)]) == 0
    assert "×1.00 the reference's (corpus_tiny.json" in capsys.readouterr().out

    # The same settings taking twice the steps: the baseline's own math changed.
    reference["steps"] = [300, 320, 340]
    (refs / "corpus_tiny.json").write_text(json.dumps(reference))
    assert report_main(["convergence-check", str(tmp_path / "r"), "--references", str(refs)]) == 1
    assert "differs" in capsys.readouterr().out
    verdict = against_reference(Result(None, docs[0]), load_reference_points(refs))
    assert verdict.status == "differs" and verdict.p < 0.05 and verdict.steps_ratio == 0.5

    # Other settings (another learning rate) are never compared.
    docs[0]["config"]["lr"] = 1e-3
    assert against_reference(Result(None, docs[0]), load_reference_points(refs)) is None
    assert report_main(["convergence-check", str(baseline), "--references", str(tmp_path / "none")]) == 3


def test_a_schedule_without_a_cool_down_is_the_one_a_reference_recorded_before_the_field():
    # Results record lr_schedule.cooldown_steps since the trapezoid: null for every other kind, which the committed
    # reference points (written before it) lack; a real cool-down is another schedule and never matches them.
    docs = target_docs()
    cosine = {"kind": "cosine", "warmup_steps": 0, "decay_steps": 400, "min_ratio": 0.1}
    docs[0]["config"]["lr_schedule"] = {**cosine, "cooldown_steps": None}
    older = json.loads(json.dumps(docs[0]))
    older["config"]["lr_schedule"] = dict(cosine)
    assert reference_key(Result(None, docs[0])) == reference_key(Result(None, older))
    docs[0]["config"]["lr_schedule"] |= {"kind": "trapezoid", "cooldown_steps": 160}
    assert reference_key(Result(None, docs[0]))["lr_schedule"]["cooldown_steps"] == 160
    assert reference_key(Result(None, docs[0])) != reference_key(Result(None, older))


def test_a_reference_needs_a_baseline_whose_seeds_all_reached_the_target(tmp_path, capsys):
    docs = _write_docs(tmp_path / "r")
    flagged = next((tmp_path / "r").rglob("01_flash.json"))
    out = ["--command", "c", "--out", str(tmp_path / "ref.json")]
    assert report_main(["convergence-reference", str(flagged), *out]) == 2
    assert "made from a baseline" in capsys.readouterr().err
    docs[0]["convergence"]["reached"] = 2
    docs[0]["convergence"]["seeds"][2]["reached"] = False
    short = g.write(tmp_path / "short", docs[0])
    assert report_main(["convergence-reference", str(short), *out]) == 2
    assert "2 of 3 seeds reached the target" in capsys.readouterr().err
    assert report_main(["convergence-reference", str(tmp_path / "nowhere.json"), *out]) == 2
    assert "no such result file" in capsys.readouterr().err
