"""Same-machine Python rows through ./ablate: PyTorch Python starts from the exact weights and batches the C++ row
uses and runs the same ATen ops in the same order, so its losses are the C++ row's to the last bit — fp32 and bf16,
dropout on (the same ATen dropout, drawn in the same order) — at both ends of a suite and nowhere between;
torch.compile agrees within fp32 and keeps its compile time out of the step times; every row writes its own JSON,
with the implementation in its name and in `implementation`."""

import json
import os
import pathlib
import subprocess

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "ablate"))
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
FAST = ["--preset=tiny", "--device=cpu", "--warmup=2", "--steps=8", "--max-steps=8", "--max-time=600", "--no-progress"]
FP32_FLAGS = ["dynamic_mask", "fused_adamw", "native_layers", "flash", "vocab_padding"]


def ablate(tmp_path, *args):
    run = subprocess.run([BIN, *args, f"--out={tmp_path}", *FAST], capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    docs = {}
    for path in sorted(tmp_path.rglob("*.json")):
        if path.name == "suite.json":
            continue
        doc = json.loads(path.read_text())
        jsonschema.validate(doc, SCHEMA)
        docs[path.name] = doc
    return docs, run.stdout


def losses(doc):
    return [s["loss"] for s in doc["warmup"] + doc["steps"]]


def assert_same_function(py, cpp):
    """Identical losses at every step, warm-up included, and a vs_libtorch check that says so in the exact class —
    whose tolerances are far below what the run's own loss drop would let through."""
    assert losses(py) == losses(cpp), (losses(py), losses(cpp))
    check = py["summary"]["loss"]["vs_libtorch"]
    assert check["status"] == "ok" and check["class"] == "exact", check
    drop = losses(cpp)[0] - losses(cpp)[-1]
    assert check["tolerance"]["start_rel"] * losses(cpp)[0] < drop / 100, (check, drop)


def test_python_eager_is_the_same_function_at_both_ends_of_a_suite_and_nowhere_between(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(
        json.dumps(
            {
                "name": "ends",
                "description": "test",
                "kind": "cumulative",
                "rows": [
                    {"label": "baseline", "add": []},
                    {"label": "two", "add": FP32_FLAGS[:2]},
                    {"label": "five", "add": FP32_FLAGS[2:]},
                ],
            }
        )
    )
    docs, stdout = ablate(
        tmp_path, f"--suite={suite}", "--implementations=libtorch,python-eager", "--implementations-at=ends"
    )
    assert sorted(docs) == [
        "00_baseline.json",
        "00_baseline.python-eager.json",
        "01_two.json",
        "02_five.json",
        "02_five.python-eager.json",
    ]
    for stem in ("00_baseline", "02_five"):
        cpp, py = docs[stem + ".json"], docs[stem + ".python-eager.json"]
        assert cpp["implementation"] == "libtorch" and py["implementation"] == "python-eager"
        assert py["name"] == cpp["name"] + ".python-eager"
        assert py["config"]["optimizer"] == cpp["config"]["optimizer"]
        assert py["env"]["python"]["torch"].startswith("2.")
        assert_same_function(py, cpp)
    # The end of the run draws the report's C++ vs Python eager table (./report show), both ends of the suite in it.
    table = stdout[stdout.index("C++ vs Python eager") :]
    assert "Python ÷ C++ time" in table and "ends 0 baseline" in table and "ends 2 five" in table, table[:2000]


def test_bf16_autocast_rows_are_the_same_function_and_dropout_draws_the_same_masks(tmp_path):
    # Dropout on (the preset's 0.1): the eager step draws its masks from the same generator in the same order.
    docs, _ = ablate(
        tmp_path, "--enable=bf16,native_layers", "--bf16-mode=autocast", "--implementations=libtorch,python-eager"
    )
    (cpp_name,) = [n for n in docs if not n.endswith("python-eager.json")]
    cpp, py = docs[cpp_name], docs[cpp_name.replace(".json", ".python-eager.json")]
    assert cpp["config"]["model"]["dropout"] > 0
    assert_same_function(py, cpp)


def test_torch_compile_rows_are_the_same_function_within_fp32_and_keep_compile_time_apart(tmp_path):
    docs, _ = ablate(
        tmp_path, "--dropout=0", "--enable=native_layers,flash", "--implementations=libtorch,python-compile"
    )
    (compiled,) = [d for n, d in docs.items() if n.endswith(".python-compile.json")]
    (cpp,) = [d for n, d in docs.items() if not n.endswith(".python-compile.json")]
    assert compiled["status"] == "ok", compiled["reason"]
    check = compiled["summary"]["loss"]["vs_libtorch"]
    assert check["class"] == "fp32" and check["status"] == "ok", check
    # Inductor's fused kernels round differently, but it is the same function from the same start.
    assert abs(losses(compiled)[0] - losses(cpp)[0]) <= 1e-4 * losses(cpp)[0]
    # The first step is where it compiled: that time is reported apart and is not among the measured steps.
    compile_s = compiled["summary"]["compile_s"]
    assert compile_s > 0 and compiled["warmup"][0]["ms"] >= 1000 * compile_s * 0.9
    assert max(s["ms"] for s in compiled["steps"]) < 1000 * compile_s


def test_a_flag_the_python_model_lacks_skips_its_python_row_with_the_reason(tmp_path):
    # The Python model has no checkpointing or chunked loss: its row would be the plain model under the flag's name,
    # so it is a planned skip that says so, while the engine's row runs.
    docs, stdout = ablate(tmp_path, "--enable=chunked_ce", "--implementations=libtorch,python-eager")
    engine, python = docs["00_chunked_ce.json"], docs["00_chunked_ce.python-eager.json"]
    assert engine["status"] == "ok"
    assert python["status"] == "skipped" and "no twin of chunked_ce" in python["reason"], python["reason"]
    assert "skipped (the Python model" in stdout
