"""Time to a target loss (results written with --target-loss): the table beside a suite's throughput table, and the
two pictures a user reads first: validation loss against steps (same function?) and against timed seconds (sooner?).

Everything here is read from each result's `convergence` section (results/README.md): the seeds' curves, their
summaries and the convergence guard's verdict, which the engine computed; nothing is re-judged.
"""

from __future__ import annotations

import numpy as np

from .analysis import Step
from .formats import Table
from .plots import _step_labels, _titles, _width, plt

# One colour per configuration, in suite order (matplotlib's tab10: distinct and colour-blind tolerable).
COLOURS = plt.get_cmap("tab10").colors


def has_convergence(steps: list[Step]) -> bool:
    return any(s.result.data.get("convergence") for s in steps)


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


def convergence_table(steps: list[Step]) -> Table:
    """Steps, tokens and timed seconds to the target per configuration (medians over the seeds that reached it),
    × the baseline's time and steps, and the guard's verdict."""
    rows = []
    for s in steps:
        c = s.result.data.get("convergence")
        if not c:
            rows.append([str(s.index), s.label, s.result.status, "", "", "", "", "", "", ""])
            continue
        guard = c.get("guard") or {}
        time_s = _summary(c, "time_s")
        rows.append(
            [
                str(s.index),
                s.label,
                f"{c['reached']}/{c['runs']}",
                _median_cell(_summary(c, "steps"), ",.0f"),
                _median_cell(_summary(c, "tokens"), ",.0f"),
                _median_cell(time_s, ".2f"),
                f"{time_s['olympic_mean']:.2f}" if time_s else "-",
                _ratio_cell(guard.get("time_ratio")),
                _ratio_cell(guard.get("steps_ratio")),
                _guard_cell(guard),
            ]
        )
    target = next((s.result.data["convergence"]["target_loss"] for s in steps if s.result.data.get("convergence")), 0)
    return Table(
        headers=[
            "#",
            "step",
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


def convergence_notes(steps: list[Step]) -> list[str]:
    configs = [s.result.config.get("target") for s in steps if s.result.config.get("target")]
    notes = [
        "seconds: timed training only (evaluation, warm-up and compile apart); medians over the seeds that reached "
        "the target, [95% interval] from six seeds on; olympic: the mean without the fastest and slowest seed.",
        "convergence: Welch's t-test on steps to target against the baseline's seeds (alpha 0.05); a flag that keeps "
        "the function must be 'ok': slower or faster both mean the math changed. bf16 and batch rows are not judged.",
    ]
    if configs:
        t = configs[0]
        notes.append(
            f"each seed evaluated every {t['eval_every']} steps on {t['eval_batches']} fixed validation batches, "
            f"at most {t['max_steps']:,} steps; {t['seeds']} seeds per configuration."
        )
    return notes


def _curves(step: Step) -> list[list[dict]]:
    c = step.result.data.get("convergence") or {}
    return [seed["curve"] for seed in c.get("seeds", []) if seed.get("curve")]


def _band(curves: list[list[dict]], x_key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The seeds' median validation loss and its min–max band on a common x grid (each seed interpolated; a seed
    that stopped earlier does not count beyond its end)."""
    end = min(curve[-1][x_key] for curve in curves)
    xs = np.linspace(0, end, 200)
    losses = np.array([np.interp(xs, [p[x_key] for p in c], [p["val_loss"] for p in c]) for c in curves])
    return xs, np.median(losses, axis=0), losses.min(axis=0), losses.max(axis=0)


def convergence_figure(steps: list[Step], x_key: str, title: str, subtitle: str):
    """Validation loss against `x_key` ("step" or "time_s"): per configuration the seeds' median, the min–max band
    over the seeds, and the target as a horizontal line."""
    shown = [s for s in steps if _curves(s)]
    fig, ax = plt.subplots(figsize=(max(6.5, _width(len(steps))), 4.0))
    for i, (s, label) in enumerate(zip(shown, _step_labels(shown), strict=True)):
        curves = [[p for p in c if p["val_loss"] is not None] for c in _curves(s)]
        curves = [c for c in curves if len(c) > 1]
        if not curves:
            continue
        xs, median, low, high = _band(curves, x_key)
        colour = COLOURS[i % len(COLOURS)]
        ax.plot(xs, median, color=colour, linewidth=1.3, label=f"{label} ({len(curves)} seeds)")
        ax.fill_between(xs, low, high, color=colour, alpha=0.15, linewidth=0)
    target = next((s.result.data["convergence"]["target_loss"] for s in shown), None)
    if target is not None:
        ax.axhline(target, color="#555555", linestyle="--", linewidth=0.8, label=f"target {target:g}")
    ax.set_xlabel("training steps" if x_key == "step" else "timed training seconds (evaluation apart)")
    ax.set_ylabel("validation loss (nats per token)")
    ax.grid(True, axis="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    _titles(fig, ax, title, subtitle + " · median of the seeds, band: min–max")
    fig.tight_layout()
    return fig
