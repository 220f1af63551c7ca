"""The training step the measure loop times, as one interface with two kinds, the shape of bench/step/train_step.h:
the eager step, and the step of a model compiled in reduce-overhead mode on CUDA, whose graph trees replay CUDA
graphs and so need each iteration marked and the loss copied out (bench/step/compile.h's CudaGraphStep is the C++
side's graphed step). The loop never asks which kind it holds.
"""

import abc
import contextlib

import torch
from request import IMPLEMENTATIONS


def autocast_context(autocast, device):
    """A context factory: bf16 autocast on the device, or nothing."""
    return (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if autocast else contextlib.nullcontext


class Step(abc.ABC):
    """One step: batch -> copy -> forward -> loss -> backward -> optimizer step -> zero grads. Calling it returns the
    detached loss, still on the device: nothing inside waits for the device, and reading the loss is left to the
    caller."""

    def __init__(self, forward, optimizer, loader, autocast, device, schedule):
        self.forward, self.optimizer, self.loader, self.schedule = forward, optimizer, loader, schedule
        self.cast = autocast_context(autocast, device)
        self.marks = None  # the timer whose mark(phase) ends each phase (timers.py), once the measure loop sets it

    def mark(self, phase):
        if self.marks is not None:
            self.marks.mark(phase)

    @abc.abstractmethod
    def __call__(self):
        """One step; the detached loss on the device."""

    def train_once(self):
        """The step both kinds run; the loss as the forward returned it."""
        x, y = self.loader.next()  # (B, T) each, on the device
        self.mark("batch")
        with self.cast():
            _, loss = self.forward(x, y)
        self.mark("forward")
        loss.backward()
        self.mark("backward")
        self.schedule.apply(self.optimizer)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.mark("optimizer")
        return loss


class EagerStep(Step):
    """The model (eager or compiled without CUDA graphs) runs the step as it comes."""

    def __call__(self):
        return self.train_once().detach()


class CudaGraphStep(Step):
    """torch.compile's reduce-overhead on CUDA: its graph trees replay the forward and backward as CUDA graphs, and
    the optimizer steps eagerly after each replay (as the C++ CudaGraphStep). The forward and the backward are separate
    graphs here (AOTAutograd's), replayed from the host one after the other, so the events between them split them."""

    def __call__(self):
        torch.compiler.cudagraph_mark_step_begin()  # a new iteration: the previous replay's outputs may go
        # A replay overwrites its static outputs, so the step hands out a copy (as the C++ CUDA-graph step).
        return self.train_once().detach().clone()


def make_step(request, forward, optimizer, loader, device, schedule):
    """The request's step: reduce-overhead on CUDA replays graphs; everywhere else, and on a CPU (where
    reduce-overhead records no CUDA graphs), the step is eager."""
    autocast = request["bf16"] and request["bf16_mode"] == "autocast"
    graphed = IMPLEMENTATIONS[request["implementation"]] == "reduce-overhead" and device.type == "cuda"
    kind = CudaGraphStep if graphed else EagerStep
    return kind(forward, optimizer, loader, autocast, device, schedule)
