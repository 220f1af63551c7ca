"""Time to a target loss (results written with --target-loss): the table beside a suite's throughput table, and the
two pictures a user reads first: validation loss against steps (same function?) and against timed seconds (sooner?).

Everything here is read from each result's `convergence` section (results/README.md): the seeds' curves, their
summaries and the convergence guard's verdict, which the engine computed; nothing is re-judged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..analysis.analysis import SuiteRow
from ..read.results import InputError, Result, implementation_rank
from .formats import Table
from .plots import figure_width, pyplot, step_labels, tab10, titles


def has_convergence(suite_rows: list[SuiteRow]) -> bool:
    return any(s.result.data.get("convergence") for s in suite_rows)


def _summary(c: dict, key: str) -> dict | None:
    return c.get(key) if c else None


def _median_cell(summary: dict | None, fmt: str) -> str:
    if not summary:
        return "-"
    text = format(summary["median"], fmt)
    if summary.get("median_low") is not None and summary.get("median_high") is not None:
        text += f" [{format(summary['median_low'], fmt)}–{format(summary['median_high'], fmt)}]"
    return text


def _ratio_cell(value: float | None) -> str:
    return f"×{value:.2f}" if value is not None else "-"


def _guard_cell(guard: dict) -> str:
    status = guard.get("status", "-")
    return f"{status} (p {guard['p']:.3f})" if guard.get("p") is not None else status


def _convergence_row(index: str, label: str, result: Result) -> list[str]:
    c = result.data.get("convergence")
    if not c:
        return [index, label, result.status, "", "", "", "", "", "", ""]
    guard = c.get("guard") or {}
    time_s = _summary(c, "time_s")
    return [
        index,
        label,
        f"{c['reached']}/{c['runs']}",
        _median_cell(_summary(c, "steps"), ",.0f"),
        _median_cell(_summary(c, "tokens"), ",.0f"),
        _median_cell(time_s, ".2f"),
        f"{time_s['olympic_mean']:.2f}" if time_s else "-",
        _ratio_cell(guard.get("time_ratio")),
        _ratio_cell(guard.get("steps_ratio")),
        _guard_cell(guard),
    ]


def convergence_table(
    suite_rows: list[SuiteRow], python: dict[tuple[str, int], dict[str, Result]] | None = None
) -> Table:
    """Steps, tokens and timed seconds to the target per configuration (medians over the seeds that reached it),
    × the baseline's time and steps, and the guard's verdict; under each, its Python rows (`python`: by the suite and
    index of the row they stand beside), judged against the Python baseline of their own implementation."""
    rows = []
    for s in suite_rows:
        rows.append(_convergence_row(str(s.index), s.label, s.result))
        beside = (python or {}).get((s.result.suite_name, s.result.index), {})
        rows += [
            _convergence_row("", f"  {name}", beside[name])
            for name in sorted(beside, key=implementation_rank)
            if beside[name].data.get("convergence")
        ]
    target = next(
        (s.result.data["convergence"]["target_loss"] for s in suite_rows if s.result.data.get("convergence")), 0
    )
    return Table(
        headers=[
            "#",
            "row",
            "reached",
            "steps to target",
            "tokens",
            "seconds",
            "olympic s",
            "× base time",
            "× base steps",
            "convergence",
        ],
        rows=rows,
        caption=f"time to a validation loss of {target:g}",
        align=["r", "l", "r", "r", "r", "r", "r", "r", "r", "l"],
    )


def convergence_notes(suite_rows: list[SuiteRow], references: list[tuple[Path, dict]] | None = None) -> list[str]:
    configs = [s.result.config.get("target") for s in suite_rows if s.result.config.get("target")]
    notes = [
        "seconds: timed training only (evaluation, warm-up and compile apart); medians over the seeds that reached "
        "the target, [95% interval] from six seeds on; olympic: the mean without the fastest and slowest seed.",
        "convergence: Welch's t-test on steps to target against the baseline's seeds (alpha 0.05); a flag that keeps "
        "the function must be 'ok': slower or faster both mean the math changed. bf16 and batch rows are not judged; "
        "a learning flag (the speedrun's) is meant to change it: faster or slower to target is its result.",
    ]
    if configs:
        t = configs[0]
        notes.append(
            f"each seed evaluated every {t['eval_every']} steps on {t['eval_batches']} fixed validation batches, "
            f"at most {t['max_steps']:,} steps; {t['seeds']} seeds per configuration."
        )
    verdicts = [v for s in suite_rows if (v := against_reference(s.result, references or []))]
    notes += [f"reference convergence point: {v.text}." for v in verdicts]
    return notes


def _curves(suite_row: SuiteRow) -> list[list[dict]]:
    c = suite_row.result.data.get("convergence") or {}
    return [seed["curve"] for seed in c.get("seeds", []) if seed.get("curve")]


def _band(curves: list[list[dict]], x_key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The seeds' median validation loss and its min–max band on a common x grid (each seed interpolated; a seed
    that stopped earlier does not count beyond its end)."""
    end = min(curve[-1][x_key] for curve in curves)
    xs = np.linspace(0, end, 200)
    losses = np.array([np.interp(xs, [p[x_key] for p in c], [p["val_loss"] for p in c]) for c in curves])
    return xs, np.median(losses, axis=0), losses.min(axis=0), losses.max(axis=0)


def convergence_figure(suite_rows: list[SuiteRow], x_key: str, title: str, subtitle: str):
    """Validation loss against `x_key` ("step" or "time_s"): per configuration the seeds' median, the min–max band
    over the seeds, and the target as a horizontal line."""
    shown = [s for s in suite_rows if _curves(s)]
    fig, ax = pyplot().subplots(figsize=(max(6.5, figure_width(len(suite_rows))), 4.0))
    colours = tab10()  # one per configuration, in suite order
    for i, (s, label) in enumerate(zip(shown, step_labels(shown), strict=True)):
        curves = [[p for p in c if p["val_loss"] is not None] for c in _curves(s)]
        curves = [c for c in curves if len(c) > 1]
        if not curves:
            continue
        xs, median, low, high = _band(curves, x_key)
        colour = colours[i % len(colours)]
        ax.plot(xs, median, color=colour, linewidth=1.3, label=f"{label} ({len(curves)} seeds)")
        ax.fill_between(xs, low, high, color=colour, alpha=0.15, linewidth=0)
    target = next((s.result.data["convergence"]["target_loss"] for s in shown), None)
    if target is not None:
        ax.axhline(target, color="#555555", linestyle="--", linewidth=0.8, label=f"target {target:g}")
    ax.set_xlabel("training steps" if x_key == "step" else "timed training seconds (evaluation apart)")
    ax.set_ylabel("validation loss (nats per token)")
    ax.grid(True, axis="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    titles(fig, ax, title, subtitle + " · median of the seeds, band: min–max")
    fig.tight_layout()
    return fig


# --- reference convergence points ----------------------------------------------------------------------------------
# As MLPerf keeps reference convergence points: a baseline's steps to target per seed, measured by stepwise on a
# corpus and preset and committed with the command that produced it (reports/reference/convergence/). A later
# baseline under the same settings must take as many steps (Welch's t-test); one that does not has changed the math
# of the baseline itself, which no within-run guard can see.

POINTS_DIR = Path(__file__).resolve().parents[2] / "reference" / "convergence"
REFERENCE_ALPHA = 0.05


def reference_key(result: Result) -> dict:
    """What must be equal for two baselines' steps to target to be compared: the data (by its files' sha256), the
    model, the batch, the optimizer's LR and schedule, the target and how it is looked for."""
    c = result.config
    provenance = (c.get("data") or {}).get("provenance") or {}
    target = dict(c.get("target") or {})
    target.pop("max_time_s", None)  # a time cap depends on the machine; a seed that hit it is not reached anyway
    target.pop("seeds", None)
    # The record rule's budget and level judge the loss at a step; they move no seed's steps to target.
    target.pop("step_budget", None)
    target.pop("record_p", None)
    return {
        "train_sha256": [f["sha256"] for f in provenance.get("files", [])],
        "val_sha256": [f["sha256"] for f in provenance.get("val_files", [])],
        "val_fraction": provenance.get("val_fraction"),
        "model": {k: v for k, v in c["model"].items() if k not in ("parameters", "flops_per_token")},
        "batch_size": c["batch_size"],
        "seq_len": c["seq_len"],
        "seed": c["seed"],
        "lr": c.get("lr"),
        "weight_decay": c.get("weight_decay"),
        "lr_schedule": schedule_key(c.get("lr_schedule")),
        "target": target,
    }


def schedule_key(schedule: dict | None) -> dict | None:
    """The schedule as a reference compares it: a cool-down of None (every kind but the trapezoid, which results
    written before it lack) is left out, so a reference from before the trapezoid still matches its cosine."""
    if schedule is None:
        return None
    return {k: v for k, v in schedule.items() if not (k == "cooldown_steps" and v is None)}


def _reached_steps(convergence: dict) -> list[float]:
    return [float(s["steps"]) for s in convergence["seeds"] if s.get("reached")]


def make_reference(result: Result, command: str) -> dict:
    """A reference from a baseline result written with --target-loss."""
    c = result.data.get("convergence")
    if not c or result.flags:
        raise InputError(f"{result.path}: a reference is made from a baseline (no flags) run with --target-loss")
    steps = _reached_steps(c)
    if len(steps) < 3 or c["reached"] < c["runs"]:
        raise InputError(
            f"{result.path}: {c['reached']} of {c['runs']} seeds reached the target; a reference needs three or more "
            "seeds, all reaching it (lower --target-loss or raise --max-steps)"
        )
    env = result.data["env"]
    return {
        "kind": "stepwise convergence reference",
        "command": command,
        "measured": {
            "run_id": result.run_id,
            "device": env.get("device_name"),
            "cpu_capability": env.get("cpu_capability"),
            "torch": env.get("torch_version"),
            "git_commit": env.get("git_commit"),
        },
        "key": reference_key(result),
        "target_loss": c["target_loss"],
        "steps": steps,
        "time_s": [float(s["time_s"]) for s in c["seeds"] if s.get("reached")],
        "summary": c["steps"],
    }


def load_reference_points(directory: Path = POINTS_DIR) -> list[tuple[Path, dict]]:
    """The committed reference convergence points, each with its file (the published tables are reference.py's)."""
    return [(p, json.loads(p.read_text())) for p in sorted(directory.glob("*.json"))] if directory.is_dir() else []


@dataclass
class ReferenceVerdict:
    path: Path
    status: str  # "same convergence", "differs", "too few seeds"
    steps_ratio: float
    p: float | None
    text: str


def against_reference(result: Result, references: list[tuple[Path, dict]]) -> ReferenceVerdict | None:
    """The baseline's steps to target against the committed reference of the same settings, if there is one."""
    c = result.data.get("convergence")
    if not c or result.flags:
        return None
    key = reference_key(result)
    match = next(((p, r) for p, r in references if r["key"] == key), None)
    if match is None:
        return None
    path, ref = match
    ours = _reached_steps(c) + [float(ref["key"]["target"]["max_steps"])] * (c["runs"] - c["reached"])
    ratio = float(np.median(ours) / np.median(ref["steps"])) if ours else float("nan")
    counts = f"{len(ours)} seeds vs the reference's {len(ref['steps'])}"
    if len(ours) < 2:
        return ReferenceVerdict(path, "too few seeds", ratio, None, f"{counts}: give --target-seeds=3 or more")
    from scipy.stats import ttest_ind

    same = np.ptp(ours) == 0 and np.ptp(ref["steps"]) == 0 and ours[0] == ref["steps"][0]
    p = 1.0 if same else float(ttest_ind(ours, ref["steps"], equal_var=False).pvalue)
    status = "same convergence" if p >= REFERENCE_ALPHA else "differs"
    text = (
        f"baseline steps to target ×{ratio:.2f} the reference's ({path.name}, measured on "
        f"{ref['measured'].get('device')}), Welch's p = {p:.3f} over {counts}: {status}"
    )
    return ReferenceVerdict(path, status, ratio, p, text)
