"""stepwise_report: tables, plots, a dashboard, CI exports and a regression gate over stepwise result files.

Modules, each importing only from those listed before it: results (reading the inputs), stats (the gate's
judgement), reference (published tables), tables, plots, render (report.md and dashboard.html), exports
(CI formats) and cli (the commands). tests/structure/test_layers.py keeps the imports free of cycles.
"""
