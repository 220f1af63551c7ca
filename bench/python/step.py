#!/usr/bin/env python3
"""Runs one stepwise configuration in PyTorch Python and writes its raw measurements.

    python bench/python/step.py REQUEST_DIR
    python bench/python/step.py --serve     (a warm start for a CPU's rows: bench/python/serve.py)

REQUEST_DIR holds request.json, weights.safetensors, tokens.bin and batches.bin (and val_tokens.bin when training to
a target), written by the C++ harness; this writes REQUEST_DIR/result.json (formats: bench/python/README.md). The
step and its timing mirror bench/step/train_step.cpp and bench/measure/runner.cpp, training to a target loss mirrors
bench/measure/convergence.cpp; the statistics, MFU, loss checks and the convergence guard are left to the C++ side.
The work is done by the modules beside this one, a concept each: request (the schema and its checks), train_state
(model, weights, optimizer), train_step (the eager and the CUDA-graph step), timers, memory, lr_schedule, measure
(the measure loop), convergence (training to a target), result (the document and its atomic write), failure.
Exit status: 0 when result.json was written (a failed run is a result too), 2 for a bad request, 1 when not even
the result could be written.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # `import model` as a script or a module

import json  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

from convergence import train_to_target  # noqa: E402
from failure import describe  # noqa: E402
from measure import run  # noqa: E402
from request import UsageError, read_request  # noqa: E402
from result import finite_or_null, new_result, write_atomically  # noqa: E402

USAGE = 2


def main(argv):
    if argv[1:] == ["--serve"]:
        from serve import serve

        return serve(main)
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return USAGE
    request_dir = Path(argv[1])
    try:
        request, tokens, starts, val_tokens = read_request(request_dir)
    except UsageError as e:
        print(f"step.py: invalid request: {e}", file=sys.stderr)
        return USAGE
    result = new_result(request)
    try:
        if request["target"]:
            train_to_target(request, request_dir, tokens, starts, val_tokens, result)
        else:
            run(request, request_dir, tokens, starts, result)
    except (Exception, KeyboardInterrupt) as e:  # a failure is a result: out of memory, compile error, NaN loss
        traceback.print_exc()
        result.update(status="failed", reason=describe(e), stop_reason="failed", short=False)
    try:
        write_atomically(request_dir / "result.json", json.dumps(finite_or_null(result), indent=1, allow_nan=False))
    except (OSError, ValueError) as e:
        print(f"step.py: cannot write {request_dir / 'result.json'}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
