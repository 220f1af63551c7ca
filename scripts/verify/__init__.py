"""scripts/verify_gpu.py's parts, one concept each: what a line of verify.md is (line), the deadline runner
(runner), where the steps run (target), the binaries a pass uses (binaries), the warm-up before the clock (warmup),
the preflight (preflight), the judges of results and of tests (judges, test_runs), the step table of each pass and
the call's budgets (steps), and the two writers (summary, archive)."""
