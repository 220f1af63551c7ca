"""Training to a target validation loss, as bench/measure/convergence.cpp's train_to_target: the warm-up run, then
undone, then training with the clock around each step and the validation loss taken off the clock every eval_every
steps, until the target, max_steps, max_time_s or a diverged loss stops it. The curve goes to progress.json as it
grows, for the C++ side's progress line.
"""

import json
import math
import time
from pathlib import Path

import numpy as np
import torch
from failure import StepFailure
from loader import loader_for
from lr_schedule import LrSchedule
from measure import pair_steps
from request import IMPLEMENTATIONS, warmup_steps
from result import finite_or_null, write_atomically
from timers import synchronize
from train_state import make_optimizer, prepare
from train_step import autocast_context, make_step

from model import cross_entropy


def validation_set(val_tokens, batches, batch_size, seq_len, device):
    """The first `batches` batches of consecutive windows of the validation stream, in order, as
    bench/measure/convergence.cpp's validation_set: the same ones at every evaluation and in every run."""
    B, T = batch_size, seq_len
    windows = (len(val_tokens) - 1) // T if len(val_tokens) > T else 0
    if windows < B:
        raise StepFailure(
            f"the validation stream holds {windows} windows of {T + 1} tokens, fewer than one batch of {B}"
        )
    out = []
    for b in range(min(batches, windows // B)):
        starts = (b * B + np.arange(B)) * T
        w = torch.from_numpy(val_tokens[starts[:, None] + np.arange(T + 1)].astype(np.int64))  # (B, T+1)
        out.append((w[:, :-1].contiguous().to(device), w[:, 1:].contiguous().to(device)))
    return out


def validation_loss(model, validation, autocast, device):
    """The mean loss over the set: eval mode (no dropout), no gradients, the run's autocast, the loss in float32
    (pure bf16 would round the loss itself); one host sync. The eager model: compiling evaluation is not measured."""
    model.eval()
    total = None
    with torch.no_grad(), autocast_context(autocast, device)():
        for x, y in validation:
            logits, _ = model(x)
            loss = cross_entropy(logits.float(), y)
            total = loss if total is None else total + loss
    model.train()
    return total.item() / len(validation)


def write_progress(request_dir, convergence):
    """The curve so far, for the C++ side's progress line."""
    write_atomically(Path(request_dir) / "progress.json", json.dumps(finite_or_null(convergence["curve"])))


def train_to_target(request, request_dir, tokens, starts, val_tokens, result):
    """bench/measure/convergence.cpp's train_to_target: warm up and undo it, then train with the clock around each
    step and evaluate every eval_every steps off the clock, until the validation loss reaches the target or a cap
    stops the run."""
    target, B, T = request["target"], request["batch_size"], request["seq_len"]
    conv = result["convergence"] = {
        "reached": False,
        "steps": None,
        "tokens": None,
        "time_s": None,
        "warmup_s": 0.0,
        "eval_s": 0.0,
        "curve": [],
    }
    device, model, forward, timer = prepare(request, request_dir, result)
    validation = validation_set(val_tokens, target["eval_batches"], B, T, device)
    initial = [p.detach().clone() for p in model.parameters()]
    mode = IMPLEMENTATIONS[request["implementation"]]

    # Warm-up (allocator growth, kernel selection, compilation): timed apart, then undone.
    optimizer, result["optimizer"] = make_optimizer(model, request)
    schedule = LrSchedule(request["lr_schedule"], request["adamw"]["lr"])
    n_warmup = warmup_steps(request)
    synchronize(device)
    began = time.perf_counter()
    with loader_for(request, tokens, starts[: max(n_warmup, 1)], device) as loader:
        step = make_step(request, forward, optimizer, loader, device, schedule)
        for i in range(n_warmup):
            step()
            if i == 0 and mode is not None:
                synchronize(device)
                result["compile_s"] = time.perf_counter() - began
    synchronize(device)
    conv["warmup_s"] = time.perf_counter() - began
    # Undone: the initial weights copied back in place (graphs keep reading the same addresses), a fresh optimizer
    # and schedule, the data order from its start, and dropout's seed.
    with torch.no_grad():
        for p, p0 in zip(model.parameters(), initial):
            p.copy_(p0)
    optimizer, _ = make_optimizer(model, request)
    schedule = LrSchedule(request["lr_schedule"], request["adamw"]["lr"])
    torch.manual_seed(request["dropout_seed"])
    synchronize(device)

    autocast = request["bf16"] and request["bf16_mode"] == "autocast"

    def evaluate(steps, time_s, train_loss):
        began = time.perf_counter()
        loss = validation_loss(model, validation, autocast, device)
        conv["eval_s"] += time.perf_counter() - began
        conv["curve"].append(
            {"step": steps, "tokens": steps * B * T, "time_s": time_s, "val_loss": loss, "train_loss": train_loss}
        )
        write_progress(request_dir, conv)
        return loss

    evaluate(0, 0.0, None)
    steps, timed_s = 0, 0.0
    with loader_for(request, tokens, starts, device) as loader:
        step = make_step(request, forward, optimizer, loader, device, schedule)
        budget = target.get("step_budget")
        while True:
            stretch_began, losses = time.perf_counter(), []  # host time of this stretch: a bound on max_time_s
            # The next evaluation, as the engine's next_evaluation: the next multiple of K, the cap, or the budget.
            stretch_end = min((steps // target["eval_every"] + 1) * target["eval_every"], target["max_steps"])
            if budget is not None and steps < budget:
                stretch_end = min(stretch_end, budget)
            for i in range(stretch_end - steps):
                if i > 0 and timed_s + time.perf_counter() - stretch_began >= target["max_time_s"]:
                    break
                # ---------------- TIMED REGION BEGIN ----------------
                timer.start()
                loss = step()
                timer.stop()
                # ---------------- TIMED REGION END ------------------
                losses.append(loss)
                steps += 1
            ms = timer.collect()  # waits for the stretch's last step
            values = pair_steps(result["steps"], ms, losses)
            timed_s += sum(ms) / 1e3
            train_loss = sum(values) / len(values)
            if not math.isfinite(train_loss):
                result["stop_reason"] = "diverged"
                result["reason"] = f"the training loss is {train_loss} by step {steps}"
                break
            if evaluate(steps, timed_s, train_loss) <= target["loss"] and not conv.get("reached"):
                conv.update(reached=True, steps=steps, tokens=steps * B * T, time_s=timed_s)
                result["stop_reason"] = "target"
            # With a step budget (the declared horizon) every seed trains to it, crossed or not (censored there).
            if budget is not None:
                if steps >= budget:
                    if not conv.get("reached"):
                        result["stop_reason"] = "step_budget"
                    break
            elif conv.get("reached"):
                break
            if steps >= target["max_steps"]:
                if not conv.get("reached"):
                    result["stop_reason"] = "max_steps"
                break
            if timed_s >= target["max_time_s"]:
                if not conv.get("reached"):
                    result["stop_reason"] = "max_time"
                break
