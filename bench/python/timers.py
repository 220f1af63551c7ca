"""The clocks around each step, as bench/step_timer.h: a pair of CUDA events on the compute stream, or the
host's monotonic clock on a CPU, and one more event (clock read) at each of the step's phase marks between them
(bench/phases.h). A timer only records while the steps are queued; collect() is the one place that waits for
the device, so timing never adds a host sync inside a chunk.
"""

import time

import torch


class CudaEventTimer:
    """A pair of events per step on the current (compute) stream; collect() waits for the last one only."""

    clock = "cuda_event"

    def __init__(self):
        self.pairs, self.marks, self.timing = [], [], False

    def start(self):
        self.pairs.append((torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)))
        self.marks.append([])
        self.pairs[-1][0].record()
        self.timing = True

    def mark(self, phase):
        """The stream's time since the previous mark (or start) belongs to `phase`; outside a timed step, nothing."""
        if self.timing:
            self.marks[-1].append((phase, torch.cuda.Event(enable_timing=True)))
            self.marks[-1][-1][1].record()

    def stop(self):
        self.pairs[-1][1].record()
        self.timing = False

    def collect(self):
        return self.collect_steps()[0]

    def collect_steps(self):
        """Each step's ms and its phases ({name: ms}), waiting for the last step only."""
        if not self.pairs:
            return [], []
        self.pairs[-1][1].synchronize()
        ms = [begin.elapsed_time(end) for begin, end in self.pairs]
        phases = []
        for (begin, _), marks in zip(self.pairs, self.marks):
            split, previous = {}, begin
            for phase, event in marks:
                split[phase] = split.get(phase, 0.0) + previous.elapsed_time(event)
                previous = event
            phases.append(split)
        self.pairs, self.marks = [], []
        return ms, phases


class PerfCounterTimer:
    """Host wall time per step. `now` is the clock in seconds: time.perf_counter, or a test's fake clock."""

    # time.perf_counter is CLOCK_MONOTONIC on Linux, the clock std::chrono::steady_clock reads: one name in the schema
    clock = "steady_clock"

    def __init__(self, now=time.perf_counter):
        self.now, self.pending, self.phases, self.timing = now, [], [], False

    def start(self):
        self.began = self.last = self.now()
        self.phases.append({})
        self.timing = True

    def mark(self, phase):
        """CPU work is synchronous: the clock since the previous mark (or start) is `phase`'s own time."""
        if self.timing:
            now = self.now()
            self.phases[-1][phase] = self.phases[-1].get(phase, 0.0) + (now - self.last) * 1e3
            self.last = now

    def stop(self):
        self.pending.append((self.now() - self.began) * 1e3)
        self.timing = False

    def collect(self):
        return self.collect_steps()[0]

    def collect_steps(self):
        """Each step's ms and its phases ({name: ms})."""
        ms, self.pending = self.pending, []
        phases, self.phases = self.phases, []
        return ms, phases


def make_timer(device):
    return CudaEventTimer() if device.type == "cuda" else PerfCounterTimer()


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
