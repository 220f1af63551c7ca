"""The peak memory of the measured steps, as bench/memory.cpp: the CUDA caching allocator's peaks, or on a
CPU the process's peak RSS (VmHWM), each reset after the warm-up so the peak covers the measured steps only, and the
`scope` the result states when the reset could not be made.
"""

import torch

# Set by serve.py in a row forked from the warm server: such a row's RSS holds the shared libraries' pages only as far
# as the row itself touches them, where a fresh interpreter's also holds what its imports touched.
FORKED_FROM_WARM_SERVER = False


def proc_status_bytes():
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0]) * 1024  # kB
    return fields


def reset_peak_memory(device):
    """Starts the peak window of the measured steps; returns the `scope` the result states."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        return "measured steps (CUDA caching allocator peaks reset after the warm-up)"
    before = proc_status_bytes()
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    except OSError as e:
        return f"whole process: resetting the peak RSS through /proc/self/clear_refs failed ({e})"
    after = proc_status_bytes()
    if after.get("VmHWM", 0) > after.get("VmRSS", 0) and after.get("VmHWM") == before.get("VmHWM"):
        return "whole process: writing /proc/self/clear_refs did not reset VmHWM"
    scope = "measured steps (VmHWM reset through /proc/self/clear_refs after the warm-up)"
    if FORKED_FROM_WARM_SERVER:
        scope += (
            "; a process forked from the warm server (bench/python/serve.py): libraries' pages as this row touched them"
        )
    return scope


def read_memory(device, scope):
    if device.type == "cuda":
        return {
            "kind": "cuda_caching_allocator",
            "peak_allocated_bytes": torch.cuda.max_memory_allocated(device),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(device),
            "current_allocated_bytes": torch.cuda.memory_allocated(device),
            "current_reserved_bytes": torch.cuda.memory_reserved(device),
            "peak_rss_bytes": None,
            "scope": scope,
        }
    status = proc_status_bytes()
    # As the C++ side: on a CPU the "reserved" columns are the process's peak and current RSS.
    return {
        "kind": "process_rss",
        "peak_allocated_bytes": None,
        "peak_reserved_bytes": status.get("VmHWM"),
        "current_allocated_bytes": None,
        "current_reserved_bytes": status.get("VmRSS"),
        "peak_rss_bytes": status.get("VmHWM"),
        "scope": scope,
    }
