"""The clocks around each step, as bench/measure/step_timer.h: a pair of CUDA events on the compute stream, or the
host's monotonic clock on a CPU. A timer only records while the steps are queued; collect() is the one place that
waits for the device, so timing never adds a host sync inside a chunk.
"""

import time

import torch


class CudaEventTimer:
    """A pair of events per step on the current (compute) stream; collect() waits for the last one only."""

    clock = "cuda_event"

    def __init__(self):
        self.pairs = []

    def start(self):
        self.pairs.append((torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)))
        self.pairs[-1][0].record()

    def stop(self):
        self.pairs[-1][1].record()

    def collect(self):
        if not self.pairs:
            return []
        self.pairs[-1][1].synchronize()
        ms = [begin.elapsed_time(end) for begin, end in self.pairs]
        self.pairs = []
        return ms


class PerfCounterTimer:
    """Host wall time per step. `now` is the clock in seconds: time.perf_counter, or a test's fake clock."""

    # time.perf_counter is CLOCK_MONOTONIC on Linux, the clock std::chrono::steady_clock reads: one name in the schema
    clock = "steady_clock"

    def __init__(self, now=time.perf_counter):
        self.now, self.pending = now, []

    def start(self):
        self.began = self.now()

    def stop(self):
        self.pending.append((self.now() - self.began) * 1e3)

    def collect(self):
        ms, self.pending = self.pending, []
        return ms


def make_timer(device):
    return CudaEventTimer() if device.type == "cuda" else PerfCounterTimer()


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
