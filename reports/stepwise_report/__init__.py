"""stepwise_report: tables, plots, a dashboard, CI exports and a regression gate over stepwise result files.

One subpackage per concern, bottom to top, each importing only from itself and those below it: read (results,
machine, micro, budget_file, inputs), stats (speedup, sequential), analysis (analysis, reference), render (formats,
flags, tables, suite_tables, run_header, matrix, python_rows, op_counts, scaling, micro_tables, plots, convergence,
target_verdicts, record_times, budget_search, memory, sweep, document, markdown, dashboard, terminal, exports) and
gate (gate, gated_run, work_comparison, comparison, run_comparison, round_comparison, micro_comparison, gate_output);
at the top, cli (the commands) and __main__. Each subpackage's __init__ says what it holds and in which order.
tests/structure/test_layers.py keeps the layers (REPORT_LAYERS) and the imports free of cycles.
"""
