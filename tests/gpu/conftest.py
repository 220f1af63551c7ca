"""The `gpu` marker and the results the gpu tests read.

A gpu test checks a property only a GPU run settles, from stepwise result files: the directory named by
STEPWISE_GPU_RESULTS (scripts/verify-gpu.sh passes its own run's), or else small runs of its own on the GPU
(gpu_results.OWN_RUNS). On a machine without CUDA and without STEPWISE_GPU_RESULTS every gpu test skips, saying so.
"""

import os
from pathlib import Path

import pytest
from gpu_results import RESULTS_ENV, Results, cuda_unavailable, run_own


def pytest_configure(config):
    config.addinivalue_line("markers", f"gpu: needs a CUDA device, or a GPU run's results in ${RESULTS_ENV}")


@pytest.fixture(scope="session")
def results(tmp_path_factory) -> Results:
    given = os.environ.get(RESULTS_ENV)
    if given:
        assert Path(given).is_dir(), f"{RESULTS_ENV}={given} is not a directory"
        return Results.load(Path(given), f"{RESULTS_ENV}={given}")
    reason = cuda_unavailable()
    if reason:
        pytest.skip(f"{reason}, and no {RESULTS_ENV} to read")
    out = run_own(tmp_path_factory.mktemp("gpu-results"))
    return Results.load(out, f"this test's own runs ({out})")
