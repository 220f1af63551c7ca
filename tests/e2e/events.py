"""Waiting on what a running ./ablate does, never on the wall clock.

A test that sends a signal "mid-suite" must wait until the suite is there: a file appears, a line is printed. A slow
or busy machine only makes that later, so the wait has no deadline of its own: it ends when the event happens, or
fails at once when the process ends without it (with what it printed). HANG_GUARD_S is there only so that a hung
binary fails the test instead of ctest's timeout; it is far above what any of these events takes on a slow machine.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

# Only a hang guard: ten times the slowest wait seen on two loaded AVX2 cores, not a measure of speed.
HANG_GUARD_S = 900
POLL_S = 0.1


def wait_for(event: Callable[[], bool], proc: subprocess.Popen, what: str) -> None:
    """Returns once `event()` holds; fails if `proc` ends first (the event can no longer happen) or hangs."""
    began = time.monotonic()
    while not event():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the process ended (status {proc.returncode}) before {what}:\n{out[-2000:]}{err}")
        if time.monotonic() - began > HANG_GUARD_S:
            proc.kill()
            raise AssertionError(f"hang guard: {what} did not happen within {HANG_GUARD_S} s")
        time.sleep(POLL_S)
