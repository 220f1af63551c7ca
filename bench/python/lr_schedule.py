"""The learning rate of each optimizer step, as bench/lr_schedule.cpp: constant, nanoGPT's linear warm-up and
cosine decay, or the speedrun's trapezoid. The Python rows must follow the engine's schedule step for step, or their
losses would part from the C++ row's.
"""

import math


class LrSchedule:
    """The rate of each optimizer step: bench/lr_schedule.cpp's lr_at (nanoGPT's get_lr), set before each
    optimizer step as bench/step/train_state.cpp's optimizer_step does. `steps` counts the optimizer steps taken."""

    def __init__(self, spec, base_lr):
        self.spec, self.base_lr, self.steps = spec, base_lr, 0

    def trapezoid_factor(self, step):
        """(s + 1) / W during the warm-up, 1 until the last D of N steps, then (N - s) / D down to 1 / D. D is the
        cool-down the engine resolved (bench/lr_schedule.h: cooldown(), as config.lr_schedule.cooldown_steps records
        it)."""
        W, N, D = self.spec["warmup_steps"], self.spec["decay_steps"], self.spec["cooldown_steps"]
        if step < W:
            return (step + 1) / W
        if step < N - D:
            return 1.0
        return max(N - step, 1) / D

    def lr_at(self, step):
        s, base = self.spec, self.base_lr
        if s["kind"] == "constant":
            return base
        if s["kind"] == "trapezoid":
            return base * self.trapezoid_factor(step)
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
            lr = self.lr_at(self.steps)
            if hasattr(optimizer, "set_lr"):  # Muon: its own group scaled by the same factor (muon.py)
                optimizer.set_lr(lr)
            else:
                for group in optimizer.param_groups:
                    group["lr"] = lr
        self.steps += 1
