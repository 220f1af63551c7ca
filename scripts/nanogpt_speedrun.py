#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""Does the speedrun's stack pay at nanoGPT's size? A benchmark, not a test: it prints a ratio and asserts nothing.

nanoGPT's CPU "baby GPT" (4 layers, 4 heads, 128 wide, block 64, batch 12, no dropout) on the fortunes text as bytes,
trained to a target loss on a declared horizon: the baseline (AdamW, learned positions, GELU, a cosine over the
horizon) at its tuned learning rate against every speedrun technique together (the trapezoid and rotary, Muon with
record #8's Adam group, ReLU², zero-init projections, QK-norm, the padded vocabulary, the logit softcap), each seed
training all N steps. It prints the engine's time-to-target table and, for the stack, its Kaplan–Meier median
seconds to the target over the baseline's with the 95% bootstrap interval (docs/convergence.md): below 1.00 with the
interval below 1.00, the stack reaches the target sooner by a margin the seeds hold.

    scripts/nanogpt_speedrun.py                      # the measured defaults (docs/convergence.md)
    scripts/nanogpt_speedrun.py --tune 1e-3,2e-3,4e-3  # first the baseline's rate: the lowest mean loss at N wins
    scripts/nanogpt_speedrun.py --find-budget        # each side's N, the speedrun's way (./ablate --find-budget)

With --find-budget it asks the record's question instead: each side's smallest N on a grid up to the horizon at
which the record rule holds (docs/convergence.md#the-budget-search), and prints both Ns and their seconds with the
brackets that bound them, and the stack's over the baseline's as intervals from the two brackets.

Needs the bytes corpus: STEPWISE_CORPUS_DIR=DIR scripts/corpus.py build fortunes --tokenizer=bytes, then the same
STEPWISE_CORPUS_DIR here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reports"))
import corpus  # noqa: E402  (scripts/corpus.py: where ./ablate reads --data=corpus:NAME)
from stepwise_report.read.budget_file import BUDGET_FILE, load_search  # noqa: E402
from stepwise_report.read.inputs import read_results  # noqa: E402
from stepwise_report.read.results import Result  # noqa: E402

# nanoGPT's README, "I only have a macbook": --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128
# --dropout=0.0 (it trains on characters; the bytes of the fortunes text are the nearest built corpus).
NANOGPT = [
    "--preset=tiny",
    "--n-layer=4",
    "--n-head=4",
    "--n-embd=128",
    "--context-length=64",
    "--seq-len=64",
    "--batch-size=12",
    "--dropout=0",
    "--data=corpus:fortunes",
]
STACK = ["trapezoid", "rotary", "muon", "relu2", "zero_init_proj", "qk_norm", "vocab_padding", "logit_softcap"]


def suite_file(directory: Path) -> Path:
    path = directory / "nanogpt_speedrun.json"
    path.write_text(
        json.dumps(
            {
                "name": "nanogpt_speedrun",
                "description": "The tuned baseline against the speedrun's techniques together, at nanoGPT's CPU size.",
                "source": "scripts/nanogpt_speedrun.py",
                "kind": "cumulative",
                "rows": [{"label": "baseline", "add": []}, {"label": "speedrun stack", "add": STACK}],
            }
        )
    )
    return path


def corpus_problem() -> str | None:
    """Why ./ablate would not read the fortunes text as bytes here, or None. Set-up builds it as GPT-2 tokens by
    default: with that corpus every row would train another model (a 50,257-token head), slower by far."""
    where = corpus.corpus_root() / "fortunes"
    meta = corpus.built_meta("fortunes")
    if meta is None:
        return f"no fortunes corpus in {where}"
    if meta.get("tokenizer") != "bytes":
        return f"the fortunes corpus in {where} is {meta.get('tokenizer')} tokens, not bytes"
    return None


def run(ablate: str, args: list[str], out: Path) -> list[Result]:
    """The rows trained to the target, in suite order."""
    cmd = [ablate, *NANOGPT, *args, "--no-progress", f"--out={out}"]
    print("$ " + " ".join(cmd), flush=True)
    done = subprocess.run(cmd)
    if done.returncode not in (0, 1):
        sys.exit(f"nanogpt_speedrun: ./ablate exited {done.returncode}")
    return sorted((r for r in read_results([out]) if r.data.get("convergence")), key=lambda r: r.index)


def tune(ablate: str, rates: list[str], common: list[str], scratch: Path) -> str:
    """The baseline's rate with the lowest mean validation loss at the horizon, two seeds each."""
    losses = {}
    for lr in rates:
        (row,) = run(ablate, [*common, f"--lr={lr}", "--target-seeds=2"], scratch / f"lr_{lr}")
        seeds = row.data["convergence"]["seeds"]
        at_n = [s["loss_at_budget"] for s in seeds if s.get("loss_at_budget") is not None]
        losses[lr] = statistics.mean(at_n) if at_n else float("inf")
        print(f"  lr {lr}: mean loss at the horizon {losses[lr]:.4f}", flush=True)
    return min(losses, key=losses.get)


def interval(cell: dict | None, key: str, decimals: int) -> str:
    """ "0.44 (0.30-0.67]": a figure known to lie in (low, high]."""
    if not cell or cell.get(key) is None:
        return "-"
    high = "inf" if cell.get("high") is None else f"{cell['high']:.{decimals}f}"
    return f"{cell[key]:.{decimals}f} ({cell.get('low') or 0:.{decimals}f}-{high}]"


def find_budget(ablate: str, args: list[str], out: Path, first: int, ratio: float) -> int:
    """Both sides' N by ./ablate --find-budget, printed with their brackets from its budget.json."""
    grid = [f"--budget-first={first}", f"--budget-ratio={ratio:g}"]
    cmd = [ablate, "--find-budget", *NANOGPT, *args, *grid, "--no-progress", f"--out={out}"]
    print("$ " + " ".join(cmd), flush=True)
    if subprocess.run(cmd).returncode not in (0, 1):
        sys.exit("nanogpt_speedrun: ./ablate --find-budget failed")
    search = load_search(out / BUDGET_FILE).data
    print(f"\neach side's N on the grid {search['grid']} ({search['grid_from']}), {search['seeds']} seeds a probe:")
    for row in search["rows"]:
        n = row["budget"]
        bracket = "-" if n is None else f"({row['below'] or 0}, {n}]"
        print(
            f"  {row['label']:<16} N {n if n is not None else 'none':>5} in {bracket:<12} seconds at N "
            f"{interval(row['seconds_at_n'], 'median', 1):<18} search {row['search_s']:.0f} s "
            f"({'branched' if row['branched'] else 'from scratch'})"
        )
    stack = search["rows"][-1]
    print(f"the stack over the baseline: N x{interval(stack.get('n_ratio'), 'ratio', 2)}, ", end="")
    print(f"seconds at N x{interval(stack.get('seconds_ratio'), 'ratio', 2)} (each side within its bracket)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ablate", default=str(ROOT / "ablate"))
    ap.add_argument(
        "--lr", default="4e-3", help="the baseline's AdamW rate (default: the best of 1e-3, 2e-3, 4e-3, 8e-3 here)"
    )
    ap.add_argument("--tune", default="", help="comma-separated rates to tune the baseline's over first")
    ap.add_argument("--target-loss", default="2.3", help="a loss the tuned baseline reaches at about 0.7 N")
    ap.add_argument("--step-budget", type=int, default=500, help="the horizon N every schedule ends at")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None, help="keep the results here (default: a temporary folder)")
    ap.add_argument("--find-budget", action="store_true", help="each side's N on a grid up to the horizon instead")
    ap.add_argument("--budget-first", type=int, default=100, help="with --find-budget: the grid's first budget")
    ap.add_argument("--budget-ratio", type=float, default=1.5, help="with --find-budget: the grid's ratio")
    a = ap.parse_args(argv)
    if problem := corpus_problem():
        print(
            f"nanogpt_speedrun: {problem}. It trains on the text's bytes, as nanoGPT's baby GPT trains on characters:\n"
            "  STEPWISE_CORPUS_DIR=DIR scripts/corpus.py build fortunes --tokenizer=bytes\n"
            "then run it with the same STEPWISE_CORPUS_DIR.",
            file=sys.stderr,
        )
        return 2
    common = [
        f"--target-loss={a.target_loss}",
        f"--step-budget={a.step_budget}",
        f"--max-steps={a.step_budget}",
        "--eval-every=25",
        "--eval-batches=4",
    ]
    with tempfile.TemporaryDirectory(prefix="stepwise-nanogpt-") as scratch:
        out = a.out or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        lr = tune(a.ablate, a.tune.split(","), common, out) if a.tune else a.lr
        if a.find_budget:
            searched = [x for x in common if not x.startswith("--step-budget=")]
            args = [f"--suite={suite_file(out)}", *searched, f"--lr={lr}", f"--target-seeds={a.seeds}"]
            return find_budget(a.ablate, args, out / "search", a.budget_first, a.budget_ratio)
        rows = run(
            a.ablate, [f"--suite={suite_file(out)}", *common, f"--lr={lr}", f"--target-seeds={a.seeds}"], out / "run"
        )
        if len(rows) != 2:
            sys.exit(f"nanogpt_speedrun: expected the baseline's and the stack's results, found {len(rows)}")
        verdict = (rows[1].data["convergence"].get("verdict") or {}).get("time") or {}
        ratio, low, high = verdict.get("ratio"), verdict.get("low"), verdict.get("high")
        print(f"\nthe speedrun stack's seconds to loss {a.target_loss} over the tuned baseline's (lr {lr}), ", end="")
        print(f"{a.seeds} seeds each, horizon {a.step_budget} steps:")
        if ratio is None:
            print("  not given: fewer than half a side's seeds reached the target (the table above says which)")
            return 0
        high_text = "inf" if high is None else f"{high:.2f}"
        if high is not None and high < 1:
            word = "the stack is faster to the target"
        elif low is not None and low > 1:
            word = "the stack is slower to the target"
        else:
            word = "no difference the interval holds"
        print(f"  x{ratio:.2f} [95% {0 if low is None else low:.2f}-{high_text}]: {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
