"""What every end-to-end test of ./ablate shares: the binary, the result schema, the smallest honest run, and
running it (a timeout only as a hang guard) and reading back its schema-valid results."""

import json
import os
import pathlib
import subprocess

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
# The smallest honest run: one warm-up step, three measured steps.
# A generous --max-time: these tests count steps, and a loaded 2-core machine must not cut them short.
FAST = ["--preset=tiny", "--device=cpu", "--warmup=1", "--steps=3", "--max-steps=3", "--max-time=600", "--no-progress"]
USAGE = 2


def ablate(*args, timeout=600, **kwargs):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def results(directory):
    files = sorted(pathlib.Path(directory).rglob("*.json"))
    docs = [json.loads(f.read_text()) for f in files]
    for doc in docs:
        jsonschema.validate(doc, SCHEMA)
    return docs
