"""Where verify's steps run: the GPU at GPT-2 size, or a CPU rehearsing the same table at the tiny preset. Each field
is what a step passes ablate on that target; a rehearsal is capped in steps and batches, never in seconds, so a slow
or busy CPU changes how long it takes, not what it finds."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("STEPWISE_BUILD_DIR") or ROOT / "build")
SUITES = ROOT / "ablations" / "suites"


@dataclass(frozen=True)
class Target:
    device: str
    preset: str
    timing: tuple[str, ...]  # short measurements: every path runs and its numbers are sane, not the last digit
    karpathy_batch: int  # Karpathy's video runs B=16
    micro_seq: int  # the sequence length of the micro-benchmarks kept (the preset's longest)
    shape: tuple[str, ...] = ()
    # The memory steps' shape (the flags beside the baseline, the largest-batch probes): one where activations (and
    # the logits) outweigh weights and AdamW state, so what a memory flag frees shows.
    memory_shape: tuple[str, ...] = ()
    # The largest-batch probe's limit (verify needs the probe past the base batch, not the true largest) and its own
    # time cap (a GPU's guard against a slow probe; a rehearsal's limit in batches decides instead).
    probe: tuple[str, ...] = ()
    # The fp8 suite's model sizes in pass 2 (pass 1 runs it at `preset`).
    sweep_presets: tuple[str, ...] = ()
    # A short time to a target loss on the fortunes corpus.
    to_target: tuple[str, ...] = ()
    # The speedrun suite to a target its baseline reaches, two seeds a row, searched for each row's budget the
    # speedrun's way (scripts/find_budget.py; issue 37): `speedrun` is the suite's ablate arguments, --max-steps the
    # grid's bound, and `budget_grid` find_budget's grid. The largest probe is the suite trained to the target on a
    # horizon of --max-steps (issue 34's first GPU time-to-target table of the speedrun's techniques).
    speedrun: tuple[str, ...] = ()
    budget_grid: tuple[str, ...] = ()
    # Pass 3's counted steps (issue 42): the preset and timing of both rows, and the implementations beside the CUDA
    # graph's row.
    counts: tuple[str, ...] = ()
    counts_compiled: str = "libtorch"

    def args(self, *args: str) -> list[str]:
        """ablate's options on this target; an option the step passes replaces the target's own (a sweep over
        presets replaces --preset)."""
        own = [f"--device={self.device}", f"--preset={self.preset}", *self.shape, *self.timing, "--no-progress"]
        given = {a.split("=")[0] for a in args}
        given |= {"--" + a.split("=")[1].replace("_", "-") for a in args if a.startswith("--sweep=")}
        return [*(a for a in own if a.split("=")[0] not in given), *args]


# At gpt2-124m the probe's limit (64) sits well past the base batch; 15 s per probe bounds its three fp32 probes.
GPU = Target(
    "cuda",
    "gpt2-124m",
    ("--warmup=3", "--min-steps=8", "--max-steps=60", "--max-time=2"),
    16,
    1024,
    probe=("--max-batch-limit=64", "--max-batch-time=15"),
    sweep_presets=("small", "gpt2-medium"),
    to_target=(
        "--enable=tf32,bf16,flash,fused_adamw,compile",
        "--target-loss=7.0",
        "--eval-every=20",
        "--eval-batches=4",
        "--target-seeds=1",
        "--max-steps=400",
        "--max-time=17",  # a row: the baseline's and the fast flags', within the step's 40 s with their start-up
    ),
    # fp32 at gpt2-124m (a suite takes no --enable beside it), 5 rows x 2 seeds a probe on a grid of 25, 50 and 100
    # steps: the bisection probes 100 and 50, then 25 where 50 held, each probe a whole run of the suite whose seeds
    # train to its N (175 steps a seed at most). At 4 x 256 tokens a step fp32 is a few ms to tens of ms a step, so
    # the search fits its 30 s with the processes' start-up. An estimate (no GPU has run it yet): a row that stops
    # short says "reached 0/2" with its best loss, and a row whose rule holds nowhere on the grid says "none"; the
    # shape, the budget or the target is what to change. --max-time is a seed's guard, not its stop.
    speedrun=(
        "--batch-size=4",
        "--seq-len=256",
        "--target-loss=7.5",
        "--eval-every=10",
        "--eval-batches=2",
        "--target-seeds=2",
        "--max-steps=100",
        "--max-time=20",
    ),
    budget_grid=("--first=25", "--ratio=2"),
    # tiny: a step of a few hundred kernels of microseconds each, launch-bound as the smaller models are on a GPU; its
    # torch.compile row compiles (cold) in tens of seconds, a fraction of gpt2-124m's.
    counts=("--preset=tiny", "--batch-size=4", "--seq-len=64"),
    counts_compiled="libtorch,python-compile",
)
REHEARSAL = Target(
    "cpu",
    "tiny",
    ("--warmup=1", "--min-steps=3", "--max-steps=3", "--max-time=600"),
    2,
    64,
    ("--batch-size=2", "--seq-len=32"),
    # At 2 x 32 one chunk of chunked_ce covers every row and AdamW's state outweighs the activations.
    memory_shape=("--batch-size=4", "--seq-len=64"),
    probe=("--max-batch-limit=16", "--max-batch-time=600"),
    sweep_presets=("tiny", "mini"),
    to_target=(
        "--enable=flash,fused_adamw",
        "--target-loss=8.0",
        "--eval-every=10",
        "--eval-batches=2",
        "--target-seeds=1",
        "--max-steps=60",
        "--max-time=600",
        "--lr=3e-3",
    ),
    # The grid within the cap (15, 30, 60): the suite's own horizon at tiny (300) is beyond it.
    speedrun=(
        "--target-loss=8.0",
        "--eval-every=10",
        "--eval-batches=2",
        "--target-seeds=2",
        "--max-steps=60",
        "--max-time=600",
        "--lr=3e-3",
    ),
    budget_grid=("--first=15", "--ratio=2"),
    # The CUDA graph's row is a SKIP on a CPU; Inductor's cold compile on a CPU of two cores would cost a minute to
    # rehearse a row that does not pair with it.
    counts=("--preset=tiny",),
)
