"""End to end through ./ablate: real data (llm.c shards by glob, nanoGPT's character-level meta.pkl, a corpus from the
cache) and the model's dimensions; what each result records of its data; and every bad input an exit 2 that names it.
"""

import hashlib
import json
import os
import pathlib
import pickle
import subprocess
import sys

import jsonschema
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
PYTHON = os.environ.get("STEPWISE_PYTHON", sys.executable)
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
# One warm-up step and two measured ones; a generous --max-time so a loaded machine does not cut them short.
FAST = ["--preset=tiny", "--device=cpu", "--warmup=1", "--steps=2", "--max-steps=2", "--max-time=600", "--no-progress"]
USAGE = 2


def ablate(*args, env=None, timeout=300):
    return subprocess.run(
        [BIN, *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def one_result(directory):
    (path,) = sorted(pathlib.Path(directory).rglob("*.json"))
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, SCHEMA)
    return doc


def llmc_shard(path, tokens):
    header = np.zeros(256, dtype=np.int32)
    header[:3] = [20240520, 1, len(tokens)]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(np.asarray(tokens, dtype=np.uint16).tobytes())


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def test_shards_by_glob_are_one_stream_in_name_order_and_recorded(tmp_path):
    rng = np.random.default_rng(0)
    for i in (2, 1, 3):
        llmc_shard(tmp_path / f"fineweb_train_00000{i}.bin", rng.integers(0, 50257, 4000))
    run = ablate(f"--data={tmp_path}/fineweb_train_*.bin", f"--out={tmp_path / 'out'}", *FAST)
    assert run.returncode == 0, run.stderr
    data = one_result(tmp_path / "out")["config"]["data"]
    assert data["source"] == "file" and data["format"] == "llmc"
    assert data["path"] == f"{tmp_path}/fineweb_train_*.bin"
    p = data["provenance"]
    assert [pathlib.Path(f["path"]).name for f in p["files"]] == [f"fineweb_train_00000{i}.bin" for i in (1, 2, 3)]
    for f in p["files"]:
        assert f["sha256"] == sha256(f["path"]) and f["bytes"] == 1024 + 2 * 4000 and f["tokens"] == 4000
    assert p["train_tokens"] == 12000
    assert p["val"] == "none", "a throughput run trains on the whole stream"
    assert p["vocab_source"] == "model" and p["vocab_size"] == 50257 and p["tokenizer"] is None
    assert "(3 files): 12,000 training tokens" in run.stdout


def test_a_character_level_data_set_sizes_the_model_from_its_meta_pkl(tmp_path):
    data_dir = tmp_path / "shakespeare_char"
    data_dir.mkdir()
    np.random.default_rng(1).integers(0, 65, 20000).astype(np.uint16).tofile(data_dir / "train.bin")
    with open(data_dir / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": 65, "itos": {i: chr(32 + i) for i in range(65)}}, f)
    run = ablate(
        f"--data={data_dir / 'train.bin'}", f"--out={tmp_path / 'out'}", *FAST, env={"STEPWISE_PYTHON": PYTHON}
    )
    assert run.returncode == 0, run.stderr
    doc = one_result(tmp_path / "out")
    assert doc["config"]["preset"] == "tiny"
    assert doc["config"]["model"]["vocab_size"] == 65
    p = doc["config"]["data"]["provenance"]
    assert p["vocab_source"] == "meta.pkl" and p["vocab_size"] == 65
    assert doc["steps"][0]["loss"] < 6, "a 65-token model starts near ln 65 = 4.2, not ln 50257 = 10.8"
    assert "tiny with vocab_size 65" in run.stdout and "vocabulary 65 (meta.pkl)" in run.stdout

    run = ablate(f"--data={data_dir / 'train.bin'}", "--vocab-size=50", *FAST, env={"STEPWISE_PYTHON": PYTHON})
    assert run.returncode == USAGE
    assert "--vocab-size 50 is smaller than the data's vocabulary 65 (declared in its meta.pkl)" in run.stderr


def test_a_corpus_from_the_cache_is_read_with_its_meta_json(tmp_path):
    text = tmp_path / "text"
    text.mkdir()
    lines = [f"Entry {i}: the quick brown fox jumps over the lazy dog, again and again." for i in range(400)]
    (text / "quotes").write_text("\n%\n".join(lines) + "\n")
    env = {"STEPWISE_CORPUS_DIR": str(tmp_path / "corpora")}
    build = subprocess.run(
        [PYTHON, str(ROOT / "scripts" / "corpus.py"), "build", "fortunes", "--tokenizer=bytes", f"--text-dir={text}"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert build.returncode == 0, build.stderr
    meta = json.loads((tmp_path / "corpora" / "fortunes" / "meta.json").read_text())
    run = ablate("--data=corpus:fortunes", f"--out={tmp_path / 'out'}", *FAST, env=env)
    assert run.returncode == 0, run.stderr
    doc = one_result(tmp_path / "out")
    assert doc["config"]["model"]["vocab_size"] == 256
    data = doc["config"]["data"]
    assert data["source"] == "corpus" and data["path"] == "corpus:fortunes"
    p = data["provenance"]
    assert p["kind"] == "corpus" and p["tokenizer"] == "bytes" and p["vocab_source"] == "meta.json"
    assert p["files"][0]["sha256"] == meta["train"]["sha256"] and p["train_tokens"] == meta["train"]["tokens"]
    assert p["corpus"]["name"] == "fortunes" and p["corpus"]["source"]["files"] == 1


def test_a_missing_corpus_is_a_usage_error_naming_the_command_that_builds_it(tmp_path):
    run = ablate("--data=corpus:fortunes", *FAST, env={"STEPWISE_CORPUS_DIR": str(tmp_path)})
    assert run.returncode == USAGE
    assert "corpus 'fortunes' is not built here" in run.stderr
    assert "scripts/setup.sh --corpus fortunes" in run.stderr


def test_the_models_dimensions_are_settable_beside_the_preset(tmp_path):
    dims = ["--n-layer=1", "--n-head=4", "--n-embd=32", "--context-length=48", "--vocab-size=1000"]
    run = ablate(*dims, "--seq-len=48", f"--out={tmp_path}", *FAST)
    assert run.returncode == 0, run.stderr
    doc = one_result(tmp_path)
    assert doc["config"]["preset"] == "tiny"
    model = doc["config"]["model"]
    assert (model["n_layer"], model["n_head"], model["n_embd"]) == (1, 4, 32)
    assert (model["context_length"], model["vocab_size"]) == (48, 1000)
    assert doc["config"]["data"]["provenance"]["vocab_size"] == 1000, "synthetic tokens follow the model's vocabulary"

    described = ablate("--describe", "--preset=tiny", *dims, "--json")
    assert described.returncode == 0, described.stderr
    d = json.loads(described.stdout)
    assert d["parameters"] == model["parameters"] and d["n_layer"] == 1 and d["seq_len"] == 48
    assert "n_layer 1" in d["overrides"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--n-head=3"], "n_head 3 (--n-head) must divide n_embd 64 (preset tiny's)"),
        (["--context-length=32", "--seq-len=64"], "--seq-len 64 is longer than the context length 32"),
        (["--n-layer=0"], "--n-layer must be a positive integer"),
        (["--val-fraction=1.5"], "--val-fraction must be a fraction in (0, 1)"),
        (["--data=/nonexistent/shard_*.bin"], "no token file matches /nonexistent/shard_*.bin"),
    ],
    ids=["heads", "context", "layers", "fraction", "glob"],
)
def test_bad_data_and_dimensions_exit_2_naming_the_problem(args, message):
    run = ablate(*FAST, *args)
    assert run.returncode == USAGE, (run.stdout, run.stderr)
    assert message in run.stderr
