"""A warm start for the Python rows on a CPU: one process imports torch and the step's modules once, then forks a
fresh child for each request, so a row pays neither the interpreter's start-up nor torch's import (seconds per row,
more than a tiny step's whole measurement), and still runs in a process of its own with nothing left of the row before.

    python bench/python/step.py --serve        (started by bench/python/python_server.cpp)

The protocol, one line each way per row: the harness writes a request directory; this answers `started PID` when the
child runs and `exited STATUS` (the exit status, or 128 + the signal) when it ends. The child's stdout and stderr go
to the request's step.log, as a cold start's do. End of input ends the server. Only on a CPU: the CUDA driver cannot
be used in a child forked after it was initialised, so a CUDA row starts its own interpreter (python_step.cpp).
"""

import os
import signal
import sys

import memory

# Imported here, before any fork, so that every child starts with them loaded: torch._dynamo is what torch.optim's
# first optimizer would import in each row.
import torch  # noqa: F401
import torch._dynamo  # noqa: F401


def run_child(request_dir, main):
    """In the forked child: the signals a fresh interpreter has, the output into step.log, then the step itself."""
    memory.FORKED_FROM_WARM_SERVER = True
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        log = os.open(os.path.join(request_dir, "step.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
    except OSError:
        pass  # no request directory: step.py says so (exit 2) on the server's stderr
    code = 1
    try:
        code = main(["step.py", request_dir])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(main):
    """Answers requests on stdin until it closes; returns the exit status."""
    # Ctrl-C reaches the whole process group: the harness decides what stops (it signals the row's child itself).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answer = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # a stray print must not interleave with the answers
    answer.write("ready\n")
    for line in sys.stdin:
        request_dir = line.rstrip("\n")
        pid = os.fork()
        if pid == 0:
            answer.close()
            run_child(request_dir, main)
        answer.write(f"started {pid}\n")
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        answer.write(f"exited {code if code >= 0 else 128 - code}\n")
    return 0
