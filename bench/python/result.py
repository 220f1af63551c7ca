"""The result document step.py writes (bench/python/README.md, "result.json"): its fields before a run fills them,
JSON's lack of NaN and inf (they become null), and the atomic write (temporary file, fsync, os.replace) that lets the
C++ side read result.json and progress.json without ever seeing half a file.
"""

import contextlib
import importlib.metadata
import math
import os
import platform

import torch


def versions():
    try:
        triton = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        triton = None
    return {"python": platform.python_version(), "torch": torch.__version__, "triton": triton}


def new_result(request):
    return {
        "status": "ok",
        "reason": None,
        "implementation": request["implementation"],
        "clock": "cuda_event" if request["device"].startswith("cuda") else "perf_counter",
        "warmup": [],
        "steps": [],
        "stop_reason": None,
        "short": False,
        "compile_s": None,
        "optimizer": request["optimizer"],
        "memory": None,
        "sdpa_backend_used": None,
        "convergence": None,
        "op_counts": None,  # --count-ops: op_counts.py's raw counts
        "versions": versions(),
    }


def finite_or_null(obj):
    """JSON has no NaN or inf: they become null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite_or_null(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [finite_or_null(v) for v in obj]
    return obj


def write_atomically(path, text):
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
