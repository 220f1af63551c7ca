"""Reading what ./ablate and stepwise_micro wrote, the bottom layer: nothing here imports from another subpackage.

In order, each module importing only from those before it: results (a result document: the Result view, runs and
suites, InputError), machine (the machine a result ran on, its fingerprint), micro (google/benchmark files),
budget_file (budget.json, the budget search as read) and inputs (finding the files under RESULTS, deciding what each
is, checking it against the schema; read_results and read_plan, the readers the scripts use).

Standard library only (jsonschema where it is installed): verify's judges read results with it under a GPU node's bare
python.
"""
