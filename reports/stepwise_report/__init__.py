"""stepwise_report: tables, plots, a dashboard, CI exports and a regression gate over stepwise result files.

One noun per module, each importing only from those listed before it: results (a result document, runs and suites),
machine (the machine a result ran on, its fingerprint), micro (google/benchmark files), budget_file (budget.json, the
budget search as read), inputs (finding and checking files), speedup (a speedup with its interval: bootstrap, U test,
noise), formats (number formats and the Table), flags (the engine's flag table, read from the results), analysis (ratio
chains, flag effects, pairs and groups), reference (published tables and alignment), op_counts (what one step
dispatches), gate (the verdict on one change), sequential (when a gated run looks, and the level each look spends),
gated_run (a gated run on disk: its definition, machine, rounds and stopping plan), work_comparison (what one step
dispatches, two sides compared exactly), comparison (the gate's decision and exit status), run_comparison (two runs),
round_comparison (two gated runs, round by round), micro_comparison (two micro-benchmark files), gate_output (what the
gate prints), tables (the cells and notes every table shares), suite_tables (a suite's rows, published, versus, trace),
run_header, matrix (flag interactions), python_rows (C++ vs Python eager, torch.compile), scaling (distributed),
micro_tables (micro-benchmark files), plots (the figures), convergence (time to a target loss), target_verdicts (against
the baseline, the speedrun's record rule), record_times (the speedrun's published minutes beside ours), budget_search
(the speedrun's budget search, find_budget's table), memory (what the memory flags buy), sweep (./ablate --sweep),
document (what the report contains, as blocks), markdown (report.md), dashboard (dashboard.html), terminal (the same
blocks as text: ./report show, the end of ./ablate's run), exports (CI formats) and cli (the commands).
tests/structure/test_layers.py keeps the imports free of cycles.
"""
