#!/usr/bin/env python3
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


def run(ablate: str, args: list[str], out: Path) -> list[dict]:
    cmd = [ablate, *NANOGPT, *args, "--no-progress", f"--out={out}"]
    print("$ " + " ".join(cmd), flush=True)
    done = subprocess.run(cmd)
    if done.returncode not in (0, 1):
        sys.exit(f"nanogpt_speedrun: ./ablate exited {done.returncode}")
    docs = [json.loads(p.read_text()) for p in sorted(out.rglob("*.json"))]
    return sorted((d for d in docs if d.get("convergence")), key=lambda d: (d.get("suite") or {}).get("index", 0))


def tune(ablate: str, rates: list[str], common: list[str], scratch: Path) -> str:
    """The baseline's rate with the lowest mean validation loss at the horizon, two seeds each."""
    losses = {}
    for lr in rates:
        (doc,) = run(ablate, [*common, f"--lr={lr}", "--target-seeds=2"], scratch / f"lr_{lr}")
        at_n = [s["loss_at_budget"] for s in doc["convergence"]["seeds"] if s.get("loss_at_budget") is not None]
        losses[lr] = statistics.mean(at_n) if at_n else float("inf")
        print(f"  lr {lr}: mean loss at the horizon {losses[lr]:.4f}", flush=True)
    return min(losses, key=losses.get)


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
    a = ap.parse_args(argv)
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
        docs = run(
            a.ablate, [f"--suite={suite_file(out)}", *common, f"--lr={lr}", f"--target-seeds={a.seeds}"], out / "run"
        )
        if len(docs) != 2:
            sys.exit(f"nanogpt_speedrun: expected the baseline's and the stack's results, found {len(docs)}")
        verdict = (docs[1]["convergence"].get("verdict") or {}).get("time") or {}
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
