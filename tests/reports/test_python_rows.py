"""python_rows.py: the same configurations in PyTorch Python, as report.md shows them: C++ against Python eager,
stepwise's CUDA graph against torch.compile beside the published steps, and never inside the suite tables."""

import re

import pytest
import resultgen as g
from stepwise_report.analysis.analysis import EagerPair
from stepwise_report.cli import main
from stepwise_report.read.results import Result
from stepwise_report.render.python_rows import eager_notes


@pytest.fixture(scope="module")
def python_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("py")
    run = "20260301T120000Z_t_h100"
    docs = g.cumulative(run, "raschka", g.RASCHKA)
    by_index = {d["suite"]["index"]: d for d in docs}
    extra = [g.python_row(by_index[i], "python-eager", slower=1.25) for i in (0, 7, 8)]
    extra += [
        g.python_row(by_index[7], "python-compile", slower=0.8, compile_s=38.5),
        g.python_row(by_index[7], "python-compile-max-autotune", slower=0.75, compile_s=212.0),
        g.python_row(by_index[0], "python-compile", slower=1.0, vs_libtorch="math changed"),
    ]
    for doc in docs + extra:
        g.write(root / "r", doc)
    out = root / "out"
    assert main([str(root / "r"), "--out", str(out)]) == 0
    return out, run


def test_python_rows_stay_out_of_the_suite_tables(python_report):
    out, _ = python_report
    md = (out / "report.md").read_text()
    suite = md[md.index("### raschka: Raschka's cumulative steps") : md.index("#### ours vs published")]
    assert "python" not in suite.lower()
    versus = md[md.index("#### ours vs published") : md.index("### C++ vs Python eager")]
    assert "python" not in versus.lower()
    assert "plus 6 PyTorch Python rows (3 python-eager, 2 python-compile, 1 python-compile-max-autotune; 6 ok)" in md
    assert "| Python rows | python 3.11.2, torch 2.11.0+cu130, triton 3.6.0 |" in md


def test_cpp_vs_python_eager_table(python_report):
    out, run = python_report
    md = (out / "report.md").read_text()
    section = md[md.index("### C++ vs Python eager") : md.index("### compile: stepwise's CUDA graph vs torch.compile")]
    assert (
        "| configuration | C++ (libtorch) ms/step | Python eager ms/step | "
        "Python ÷ C++ time (95% CI; > 1: C++ faster) | loss vs libtorch |"
    ) in section
    rows = [line for line in section.splitlines() if line.startswith("| raschka ")]
    assert [r.split(" | ")[0] for r in rows] == [
        "| raschka 0 baseline",
        "| raschka 7 flash",
        "| raschka 8 compile (CUDA graph)",
    ]
    assert all(re.search(r"\| 1\.25× \(1\.\d\d–1\.\d\d\) \| ok \((exact|bf16)\) \|$", r) for r in rows), rows
    for suffix in (".png", ".svg"):
        assert (out / "plots" / run / f"cpp_vs_python_eager{suffix}").stat().st_size > 1000


def test_compile_table_sets_cuda_graph_beside_torch_compile_and_the_published_steps(python_report):
    out, run = python_report
    md = (out / "report.md").read_text()
    section = md[md.index("### compile: stepwise's CUDA graph vs torch.compile") : md.index("## flags")]
    flash = [line for line in section.splitlines() if line.startswith("| raschka 7 flash / raschka 8 compile")]
    assert [r.split(" | ")[1] for r in flash] == [
        "libtorch eager",
        "libtorch CUDA graph (compile flag)",
        "python-eager",
        "python-compile",
        "python-compile-max-autotune",
    ]
    cells = {r.split(" | ")[1]: r.split(" | ") for r in flash}
    assert cells["python-eager"][3] == "1.00× (reference)"
    assert cells["python-compile"][3].startswith("1.56× (") and cells["python-compile"][5] == "38.5"
    assert cells["python-compile-max-autotune"][5] == "212.0"
    assert cells["libtorch eager"][3].startswith("1.25× (")  # C++ eager over Python eager
    assert cells["libtorch CUDA graph (compile flag)"][4].startswith("1.22× (")  # over libtorch eager
    # Raschka's step 8 and Karpathy's compile step, as published, beside ours.
    assert "| Raschka, LLMs-from-scratch: LLM training speed (1× A100) | step 8: torch.compile | 1.22× |" in section
    assert "| Karpathy, build-nanogpt: reproducing GPT-2 124M (1× A100) | step 3: torch.compile | 2.31× |" in section
    # Steps 9 and 10 keep the compile flag but have no Python rows.
    assert "| raschka 9 vocab padding | libtorch CUDA graph (compile flag) |" in section
    assert "no python-eager row" in section
    # The loss agreement of a Python row that disagrees with the libtorch row is explained.
    assert "raschka 0 baseline (python-compile): math changed —" in section
    for suffix in (".png", ".svg"):
        assert (out / "plots" / run / f"compile_vs_torch_compile{suffix}").stat().st_size > 1000
    page = (out / "dashboard.html").read_text()
    assert "C++ vs Python eager" in page and "stepwise&#x27;s CUDA graph vs torch.compile" in page


@pytest.mark.parametrize(
    ("device", "mode", "noted"),
    [("cpu", "off", True), ("cpu", "glibc-tunables", False)] + [("cuda", "off", False), ("cpu", None, False)],
)
def test_a_cpu_pair_under_the_heap_as_it_comes_is_told_to_compare_under_one(device, mode, noted):
    """Where both rows ran under the C library's malloc as it comes on a CPU, the ratio carries each process's heap
    history: the notes say so and how to take it out; under one host allocator, on a GPU or in older results, not."""
    cpp = g.make_result(run_id="20261206T000000Z_tiny_cpu", name="single/00", device_kind=device)
    if mode:
        cpp["env"]["host_allocator"] = {"mode": mode, "library": None, "glibc_tunables": None}
    py = g.python_row(cpp, "python-eager", slower=0.97)
    py["env"]["host_allocator"] = cpp["env"].get("host_allocator")
    notes = eager_notes([EagerPair(Result(None, cpp), Result(None, py))])
    assert any(n.startswith("one heap for both") for n in notes) == noted
