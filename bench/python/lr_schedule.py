"""The learning rate of each optimizer step, as bench/step/lr_schedule.cpp: constant, or nanoGPT's linear warm-up
and cosine decay. The Python rows must follow the engine's schedule step for step, or their losses would part from
the C++ row's.
"""

import math


class LrSchedule:
    """The rate of each optimizer step: bench/step/lr_schedule.cpp's lr_at (nanoGPT's get_lr), set before each
    optimizer step as bench/step/train_state.cpp's optimizer_step does. `steps` counts the optimizer steps taken."""

    def __init__(self, spec, base_lr):
        self.spec, self.base_lr, self.steps = spec, base_lr, 0

    def lr_at(self, step):
        s, base = self.spec, self.base_lr
        if s["kind"] == "constant":
            return base
        warmup, decay = s["warmup_steps"], s["decay_steps"]
        if step < warmup:
            return base * (step + 1) / (warmup + 1)
        min_lr = base * s["min_ratio"]
        if step >= decay or decay <= warmup:
            return min_lr
        ratio = (step - warmup) / (decay - warmup)
        coefficient = 0.5 * (1.0 + math.cos(math.pi * min(max(ratio, 0.0), 1.0)))
        return min_lr + coefficient * (base - min_lr)

    def apply(self, optimizer):
        if self.spec["kind"] != "constant":
            for group in optimizer.param_groups:
                group["lr"] = self.lr_at(self.steps)
        self.steps += 1
