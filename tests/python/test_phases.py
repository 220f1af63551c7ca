"""The Python step's phase split (bench/python/timers.py, train_step.py), as the C++ step's: each phase is the clock
between two marks inside the step, read back with the step's own time; measured, never apportioned."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "python"))  # the modules of bench/python

from step_requests import request, result, run_step, write_request  # noqa: E402
from timers import PerfCounterTimer  # noqa: E402
from train_step import EagerStep  # noqa: E402

PHASES = ["batch", "forward", "backward", "optimizer"]


class FakeClock:
    """Seconds that advance only when a test says so."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_each_phase_is_the_clock_between_its_marks_and_outside_a_step_nothing():
    clock = FakeClock()
    timer = PerfCounterTimer(now=clock)
    timer.mark("forward")  # before a step: ignored
    timer.start()
    for phase, seconds in [("batch", 0.001), ("forward", 0.002), ("comm", 0.0005), ("optimizer", 0.004)]:
        clock.t += seconds
        timer.mark(phase)
    clock.t += 0.0001  # the step's return, in the step's time but in no phase
    timer.stop()
    timer.mark("backward")  # after the step: ignored
    ms, phases = timer.collect_steps()
    assert ms == [pytest.approx(7.6)]
    assert phases == [pytest.approx({"batch": 1.0, "forward": 2.0, "comm": 0.5, "optimizer": 4.0})]
    assert list(phases[0]) == ["batch", "forward", "comm", "optimizer"]


class Costs:
    """Stand-ins for the step's loader, model, loss, schedule and optimizer, each advancing the fake clock by its
    cost in seconds: the optimizer's is the one a test makes slower (a costlier update, as Muon's)."""

    def __init__(self, clock, optimizer_s):
        self.clock, self.optimizer_s = clock, optimizer_s

    def next(self):  # the loader
        self.clock.t += 0.001
        return None, None

    def forward(self, x, y):
        self.clock.t += 0.003
        return None, self

    def backward(self):  # the loss
        self.clock.t += 0.006

    def apply(self, optimizer):  # the schedule
        pass

    def step(self):  # the optimizer
        self.clock.t += self.optimizer_s

    def zero_grad(self, set_to_none=True):
        pass


def test_a_slower_optimizer_lands_in_the_optimizer_phase():
    """The step's own marks, on a fake clock: only the phase that got slower grows."""

    def split(optimizer_s):
        clock = FakeClock()
        costs = Costs(clock, optimizer_s)
        step = EagerStep(costs.forward, costs, costs, False, torch.device("cpu"), costs)
        step.marks = timer = PerfCounterTimer(now=clock)
        timer.start()
        step.train_once()
        timer.stop()
        return timer.collect_steps()[1][0]

    fast, slow = split(0.002), split(0.020)
    assert list(fast) == PHASES
    assert fast == pytest.approx({"batch": 1.0, "forward": 3.0, "backward": 6.0, "optimizer": 2.0})
    assert slow == pytest.approx({"batch": 1.0, "forward": 3.0, "backward": 6.0, "optimizer": 20.0})


def test_every_measured_step_carries_its_phases_adding_up_to_the_step(tmp_path):
    directory = write_request(tmp_path / "request", request())
    run = run_step(directory)
    assert run.returncode == 0, run.stderr
    doc = result(directory)
    for s in doc["steps"]:
        assert list(s["phases"]) == PHASES
        total = sum(s["phases"].values())
        # The marks lie between the step's start and stop; what they leave out is the step's return.
        assert 0.9 * s["ms"] <= total <= s["ms"] * (1 + 1e-9)
