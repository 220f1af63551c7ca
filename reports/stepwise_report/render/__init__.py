"""Everything the report draws, above analysis/: the Table and its formats, each section's tables and figures, the
document built once from them and its three renderings, and the CI exports.

In order, each module importing only from those before it (and from read/, stats/, analysis/): formats (number formats
and the Table with its Markdown, HTML and text renderings), flags (the engine's flag table, read from the results, and
the flags table), tables (the cells and notes every table shares), suite_tables (a suite's rows, published, versus,
trace), run_header, matrix (flag interactions), python_rows (C++ vs Python eager, torch.compile), op_counts (what one
step dispatches), scaling (distributed), micro_tables (micro-benchmark files), plots (the figures), convergence (time
to a target loss), target_verdicts (against the baseline, the speedrun's record rule), record_times (the speedrun's
published minutes beside ours), budget_search (find_budget's tables, from read/'s budget_file), memory (what the memory
flags buy), sweep (./ablate --sweep), document (what the report contains, as blocks), markdown (report.md), dashboard
(dashboard.html), terminal (the same blocks as text: ./report show, the end of ./ablate's run) and exports (CI
formats).

Nothing here knows the gate: gate/ sits above and draws with formats' Table.
"""
