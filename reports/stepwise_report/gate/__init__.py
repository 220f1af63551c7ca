"""The regression gate (`./report compare`), the top layer below the command line: it judges with stats/, reads with
read/, and writes its verdicts with render/'s number formats and Table; op_counts' counts are what work_comparison
compares. Nothing below imports it.

In order, each module importing only from those before it: gate (the verdict on one change), gated_run (a gated run on
disk: its definition, machine, rounds and stopping plan), work_comparison (what one step dispatches, two sides compared
exactly), comparison (the gate's decision and exit status), run_comparison (two runs), round_comparison (two gated
runs, round by round), micro_comparison (two micro-benchmark files) and gate_output (what the gate prints).
"""
