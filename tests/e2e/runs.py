"""What every end-to-end test of ./ablate shares: the binary, the result schema, the smallest honest run, and
running it (a timeout only as a hang guard) and reading back its schema-valid results."""

import json
import os
import pathlib
import subprocess
import sys

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
# The smallest honest run: one warm-up step, three measured steps.
# A generous --max-time: these tests count steps, and a loaded 2-core machine must not cut them short.
FAST = ["--preset=tiny", "--device=cpu", "--warmup=1", "--steps=3", "--max-steps=3", "--max-time=600", "--no-progress"]
USAGE = 2
PYTHON = os.environ.get("STEPWISE_PYTHON", sys.executable)


def ablate(*args, timeout=600, **kwargs):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, **kwargs)


def results(directory):
    files = sorted(pathlib.Path(directory).rglob("*.json"))
    docs = [json.loads(f.read_text()) for f in files]
    for doc in docs:
        jsonschema.validate(doc, SCHEMA)
    return docs


# Time to 2.8 nats on that text at tiny (fortunes_as_bytes): bytes of English get there in about 150 steps at this
# learning rate, a second or two a seed.
BYTES_TARGET = [
    "--preset=tiny",
    "--device=cpu",
    "--data=corpus:fortunes",
    "--target-loss=2.8",
    "--eval-every=5",
    "--eval-batches=4",
    "--max-steps=400",
    "--lr=3e-3",
    "--no-progress",
]


def fortunes_as_bytes(directory):
    """The fortunes corpus that set-up installs (scripts/corpus.py), tokenised as bytes (vocabulary 256), in
    `directory`: real text on which the tiny preset reaches a target loss in a second or two."""
    build = subprocess.run(
        [PYTHON, str(ROOT / "scripts" / "corpus.py"), "build", "fortunes", "--tokenizer=bytes"],
        capture_output=True,
        text=True,
        timeout=300,  # hang guard only
        env={**os.environ, "STEPWISE_CORPUS_DIR": str(directory)},
    )
    assert build.returncode == 0, "the fortunes text comes from scripts/setup.sh (Debian's fortunes): " + build.stderr
    return directory
