"""Same-machine Python rows through ./ablate: PyTorch Python starts from the exact weights and batches the C++ row
uses, so with dropout off (and on: the same ATen dropout, drawn in the same order) its losses are the C++ row's, for
the baseline, for every CPU fp32 flag together, and for bf16; torch.compile agrees within fp32; every row writes its
own JSON, with the implementation in its name and in `implementation`."""
import json
import os
import pathlib
import subprocess

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("STEPWISE_BIN", str(ROOT / "build" / "ablations" / "stepwise"))
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
FAST = ["--preset=tiny", "--device=cpu", "--warmup=2", "--steps=8", "--max-steps=8", "--max-time=600", "--no-progress"]
FP32_FLAGS = "dynamic_mask,fused_adamw,native_layers,flash,vocab_padding"


def ablate(tmp_path, *args):
    run = subprocess.run([BIN, *args, f"--out={tmp_path}", *FAST], capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    docs = {}
    for path in sorted(tmp_path.rglob("*.json")):
        doc = json.loads(path.read_text())
        jsonschema.validate(doc, SCHEMA)
        docs[path.name] = doc
    return docs, run.stdout


def losses(doc):
    return [s["loss"] for s in doc["warmup"] + doc["steps"]]


def test_python_eager_computes_the_same_function_from_the_same_weights_and_batches(tmp_path):
    docs, stdout = ablate(tmp_path, "--dropout=0", f"--enable={FP32_FLAGS}", "--vs-baseline",
                          "--implementations=libtorch,python-eager")
    assert sorted(docs) == ["00_baseline.json", "00_baseline.python-eager.json",
                            f"01_{FP32_FLAGS.replace(',', '+')}.json",
                            f"01_{FP32_FLAGS.replace(',', '+')}.python-eager.json"]
    for stem in ("00_baseline", f"01_{FP32_FLAGS.replace(',', '+')}"):
        cpp, py = docs[stem + ".json"], docs[stem + ".python-eager.json"]
        assert cpp["implementation"] == "libtorch" and py["implementation"] == "python-eager"
        assert py["name"] == cpp["name"] + ".python-eager"
        assert py["config"]["optimizer"] == cpp["config"]["optimizer"]
        assert py["env"]["python"]["torch"].startswith("2.")
        # Same weights, same batches, same ops: the loss at every step, warm-up included, within fp32 rounding.
        for a, b in zip(losses(py), losses(cpp), strict=True):
            assert abs(a - b) <= 1e-5 * abs(b), (stem, losses(py), losses(cpp))
        assert py["summary"]["loss"]["vs_libtorch"]["status"] == "ok", py["summary"]["loss"]["vs_libtorch"]
        assert py["summary"]["loss"]["vs_libtorch"]["class"] == "exact"
    assert "x C++" in stdout


def test_bf16_rows_agree_within_bf16_and_dropout_draws_the_same_masks(tmp_path):
    # Dropout on (the preset's 0.1): the eager step draws its masks from the same generator in the same order.
    docs, _ = ablate(tmp_path, "--enable=bf16,native_layers", "--bf16-mode=autocast",
                     "--implementations=libtorch,python-eager")
    (cpp_name,) = [n for n in docs if not n.endswith("python-eager.json")]
    cpp, py = docs[cpp_name], docs[cpp_name.replace(".json", ".python-eager.json")]
    for a, b in zip(losses(py), losses(cpp), strict=True):
        assert abs(a - b) <= 2e-2 * abs(b)
    assert py["summary"]["loss"]["vs_libtorch"]["status"] in ("ok", "too short to judge")


def test_torch_compile_rows_run_on_the_cpu_and_report_their_compile_time(tmp_path):
    docs, _ = ablate(tmp_path, "--dropout=0", "--enable=native_layers,flash",
                     "--implementations=libtorch,python-compile")
    (compiled,) = [d for n, d in docs.items() if n.endswith(".python-compile.json")]
    assert compiled["status"] == "ok", compiled["reason"]
    assert compiled["summary"]["compile_s"] > 0
    assert compiled["summary"]["loss"]["vs_libtorch"]["class"] == "fp32"
    cpp = [d for n, d in docs.items() if not n.endswith(".python-compile.json")][0]
    # Inductor's fused kernels round differently, but it is the same function from the same start.
    assert abs(losses(compiled)[0] - losses(cpp)[0]) <= 1e-4 * losses(cpp)[0]


def test_python_rows_at_the_ends_of_a_suite_only(tmp_path):
    docs, _ = ablate(tmp_path, "--suite=karpathy", "--implementations=libtorch,python-eager",
                     "--implementations-at=ends")
    python = sorted(n for n in docs if n.endswith(".python-eager.json"))
    assert python == ["00_baseline_fp32_native_layers.python-eager.json", "06_fused_adamw.python-eager.json"]
    assert docs["06_fused_adamw.python-eager.json"]["summary"]["loss"]["check"]["status"] in (
        "ok", "too short to judge")
