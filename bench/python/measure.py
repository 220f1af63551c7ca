"""The measure loop, as bench/measure/runner.cpp: warm-up steps, then measured chunks of check_every steps until the
stop rule (bench/python/stats.py) says max_steps, noise or max_time; and `run`, a throughput run of a request from
its model to its memory peak. The step times and losses are all it keeps: the C++ side computes the statistics.
"""

import math
import time

import torch
from failure import StepFailure
from loader import loader_for
from lr_schedule import LrSchedule
from memory import read_memory, reset_peak_memory
from op_counts import count_step_work
from request import IMPLEMENTATIONS, required_warmup, warmup_steps
from stats import StopRule, stop_after_chunk, time_is_up
from timers import synchronize
from train_state import make_optimizer, prepare
from train_step import make_step


def pair_steps(records, ms, losses, phases=None):
    """Pairs a chunk's step times with its losses (one device->host copy) and, when timed by phase, each step's
    phases ({name: ms}); returns the losses."""
    if not losses:
        return []
    values = torch.stack(losses).float().cpu().double().tolist()
    losses.clear()
    records.extend({"ms": m, "loss": v} for m, v in zip(ms, values))
    for r, split in zip(records[len(records) - len(values) :], phases or []):
        r["phases"] = split
    return values


def append(records, chunk, losses, phase):
    """pair_steps() of a chunk (its ms and phases, as collect_steps returns them), and a non-finite loss fails the run."""
    first = len(records)
    pair_steps(records, chunk[0], losses, chunk[1])
    for i in range(first, len(records)):
        if not math.isfinite(records[i]["loss"]):
            raise StepFailure(f"loss is {records[i]['loss']} at {phase} step {i}")


def measure(result, step, timer, timing, device, compiled=False, min_warmup=1, warmup=None, now=time.perf_counter):
    """Warm-up, then measured chunks of check_every steps until a stop reason; fills `result` as it goes, so a
    failure keeps what was measured. `warmup` overrides timing["warmup"]; `now` is the clock in seconds the time caps
    and compile_s read (a test's fake clock makes them exact)."""
    rule = StopRule(timing["min_steps"], timing["max_steps"], timing["max_noise"], timing["max_time_s"])
    warmup = timing["warmup"] if warmup is None else warmup
    losses = []
    step.marks = timer  # the step marks its phases' ends on the timer, which keeps those of timed steps

    # Warm-up: compilation, allocator growth, kernel heuristics. Recorded, never summarised. Bounded by max_time_s
    # once min_warmup steps ran; the first step's compile time is reported as compile_s and not counted.
    began, compile_s = now(), 0.0
    for i in range(warmup):
        if i >= min_warmup and now() - began - compile_s >= rule.max_time_s:
            break
        if i == 0:
            synchronize(device)  # the first step may sync: it is warm-up, and its wall time is the compile time
            first_began = now()
        timer.start()
        losses.append(step())
        timer.stop()
        if i == 0:
            synchronize(device)
            if compiled:
                compile_s = result["compile_s"] = now() - first_began
    append(result["warmup"], timer.collect_steps(), losses, "warm-up")

    synchronize(device)
    scope = reset_peak_memory(device)
    began, times = now(), []
    while True:
        done = 0
        while done < timing["check_every"] and len(times) + done < rule.max_steps:
            if time_is_up(rule, len(times) + done, now() - began):
                break  # the hard cap: a slow step never overshoots by a whole chunk
            # ---------------- TIMED REGION BEGIN ----------------
            timer.start()
            loss = step()
            timer.stop()
            # ---------------- TIMED REGION END ------------------
            losses.append(loss)
            done += 1
        chunk = timer.collect_steps()  # waits for the chunk's last step: the only host sync of the measured phase
        append(result["steps"], chunk, losses, "measured")
        times.extend(chunk[0])
        stop = stop_after_chunk(rule, times, now() - began)
        if stop:
            break
    result["stop_reason"] = stop
    result["short"] = stop == "max_time" and len(times) < rule.min_steps
    result["memory"] = read_memory(device, scope)


def run(request, request_dir, tokens, starts, result):
    """A throughput run: the request's model, optimizer, schedule and step, measured by `measure`; then, with
    count_steps, that many more steps counted by the profiler (op_counts.py), as the C++ runner counts after its own."""
    device, model, forward, timer = prepare(request, request_dir, result)
    optimizer, result["optimizer"] = make_optimizer(model, request)
    schedule = LrSchedule(request["lr_schedule"], request["adamw"]["lr"])
    with loader_for(request, tokens, starts, device) as loader:
        step = make_step(request, forward, optimizer, loader, device, schedule)
        measure(
            result,
            step,
            timer,
            request["timing"],
            device,
            compiled=IMPLEMENTATIONS[request["implementation"]] is not None,
            min_warmup=required_warmup(request),
            warmup=warmup_steps(request),
        )
        if request["count_steps"]:
            result["op_counts"] = count_step_work(step, device, request["count_steps"])
