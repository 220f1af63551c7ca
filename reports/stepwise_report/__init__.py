"""stepwise_report: tables, plots, a dashboard, CI exports and a regression gate over stepwise result files.

One noun per module, each importing only from those listed before it: results (a result document, runs and suites),
micro (google/benchmark files), inputs (finding and checking files), speedup (a speedup with its interval: bootstrap,
U test, noise), formats (number formats and the Table), analysis (ratio chains, flag effects, pairs and groups),
reference (published tables and alignment), gate (the regression gate), tables, plots, render (report.md and
dashboard.html), exports (CI formats) and cli (the commands). tests/structure/test_layers.py keeps the imports free of
cycles.
"""
