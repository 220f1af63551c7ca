"""The machine a result ran on, as the gate keys it: what makes two runs' step times comparable, and its fingerprint.

A regression gate may only divide times measured on the same kind of machine: an AVX-512 CPU computes bf16 natively
where an AVX2 one emulates it 10-100x slower, and the same row's speedup then means something else. Every result
records its machine in `env` (bench/measure/env.cpp); these are the keys of it that decide speed. The host name, the
time, the commit and the library paths are left out: a CI runner's name changes every job, and the commit is what the
gate compares. The fingerprint is a short hash of those keys, the name a CI cache keys a runner's baseline by.
"""

from __future__ import annotations

import hashlib
import json

# env keys that decide how fast a step runs, in the order the description reads them. Absent keys (older results,
# a CPU's GPU keys) count as absent on both sides.
MACHINE_KEYS = (
    "device_kind",
    "device_name",
    "gpu_count",
    "compute_capability",
    "driver_version",
    "cpu_model",
    "hardware_threads",
    "cpu_threads",
    "cpu_capability",
    "cpu_isa_caps",
    "cpu_bf16_native",
    "torch_version",
)
# Hex digits of the fingerprint: enough that two machines never share one in a project's life, short enough to read.
FINGERPRINT_DIGITS = 12


def machine_of(env: dict) -> dict:
    """The speed-deciding part of a result's `env` (or of ./ablate --dry-run --json's), with absent keys left out."""
    return {k: env[k] for k in MACHINE_KEYS if env.get(k) not in (None, {}, [])}


def fingerprint(env: dict) -> str:
    """A short, stable hash of machine_of(env): equal exactly when the machines are."""
    canonical = json.dumps(machine_of(env), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:FINGERPRINT_DIGITS]


def describe(env: dict) -> str:
    """The machine in one line: "AMD EPYC (cpu), 2 threads, ATen AVX512, bf16 native, torch 2.11.0+cu130"."""
    m = machine_of(env)
    parts = [f"{m.get('device_name', 'unknown device')} ({m.get('device_kind', '?')})"]
    if m.get("device_kind") == "cuda":
        if "gpu_count" in m:
            parts.append(f"{m['gpu_count']} GPU(s)")
        if "compute_capability" in m:
            parts.append(f"sm {m['compute_capability']}")
        if "driver_version" in m:
            parts.append(f"driver {m['driver_version']}")
        parts.append(f"host CPU {m.get('cpu_model', '?')}")
    if "cpu_threads" in m:
        parts.append(f"{m['cpu_threads']} threads")
    if "cpu_capability" in m:
        parts.append(f"ATen {m['cpu_capability']}")
    for name, cap in (m.get("cpu_isa_caps") or {}).items():
        parts.append(f"{name}={cap}")
    if "cpu_bf16_native" in m:
        parts.append("bf16 native" if m["cpu_bf16_native"] else "bf16 emulated")
    if "torch_version" in m:
        parts.append(f"torch {m['torch_version']}")
    return ", ".join(parts)


def differences(a: dict, b: dict) -> list[str]:
    """Where two machines differ, one "key: A vs B" each (empty when they are the same machine)."""
    ma, mb = machine_of(a), machine_of(b)
    return [f"{k}: {ma.get(k, 'absent')} vs {mb.get(k, 'absent')}" for k in MACHINE_KEYS if ma.get(k) != mb.get(k)]
