"""Shared fixtures for the report tests: synthetic result trees and one end-to-end ./report run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reports"))

import resultgen  # noqa: E402  (beside this file)

OLD_RUN = "20260301T120000Z_gpt2-tiny_h100"
NEW_RUN = "20260302T120000Z_gpt2-tiny_h100"


def run_report(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """./report as a user runs it, on the interpreter running the tests."""
    env = {**os.environ, "STEPWISE_PYTHON": sys.executable}
    return subprocess.run([str(ROOT / "report"), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT)


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory) -> Path:
    """results/ with two full runs (all four suites) on one device, from different commits."""
    root = tmp_path_factory.mktemp("results")
    resultgen.standard_run(root, OLD_RUN)
    resultgen.standard_run(root, NEW_RUN, git_commit="fedcba9876543210fedcba9876543210fedcba98")
    # Something a directory scan must skip rather than choke on.
    (root / NEW_RUN / "notes.json").write_text('{"tool": "something else"}')
    return root


@pytest.fixture(scope="session")
def report_out(two_runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    proc = run_report(two_runs, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


def pytest_configure(config):
    # matplotlib 3.9 calls pyparsing APIs that newer pyparsing deprecates; not ours to fix.
    config.addinivalue_line("filterwarnings", "ignore:.*deprecated - use:DeprecationWarning")
