"""How a run that failed says why: the failure whose message is the whole reason, and the one line a result gives
for any exception (out of memory, a compile error, a non-finite loss). A failure is a result, never a crash: step.py
catches it and writes result.json with this line as its `reason`."""

import torch


class StepFailure(Exception):
    """A failure whose message is the whole reason (no exception type in front)."""


def is_out_of_memory(e):
    text = str(e)
    return isinstance(e, torch.OutOfMemoryError) or any(
        s in text for s in ("can't allocate memory", "out of memory", "ALLOC_FAILED")
    )


def describe(e):
    """One line for the result: the first line of the message (and the next one when the first only announces it,
    as torch.compile's "backend='inductor' raised:")."""
    if isinstance(e, KeyboardInterrupt):
        return "interrupted"
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:
        text += " " + lines[1]
    text = text[:1000]
    if is_out_of_memory(e):
        return "out of memory: " + text
    return text if isinstance(e, StepFailure) else f"{type(e).__name__}: {text}"
