"""The project's layering, checked from the sources so that it cannot erode unnoticed.

- reports/stepwise_report: subpackages run bottom to top as REPORT_LAYERS says: a module imports only from its own
  subpackage and those below it (read < stats < analysis < render < gate < the command line at the top), with no
  exception, function-level imports included; only the command line sits at the top. Inside that, the modules'
  imports of each other form no cycle (a cycle is what made two modules one concept in two files).
- C++: layers run ablations -> bench -> model; a file under model/ never includes bench/ or ablations/,
  and a file under bench/ never includes ablations/.
- Inside bench/, subfolders run bottom to top as BENCH_LAYERS says: a file includes only its own subfolder and those
  below it. An include that still runs back up is listed in BENCH_BACK_ARROWS with why, and the list may only
  shrink: a new one fails, and so does a listed one that is gone (take it off the list).
- Inside ablations/, subfolders run bottom to top as ABLATIONS_LAYERS says, with no exception (MathClass sits beside
  the flag table, a row's losses are judged in run/, the plan's table is the command line's).
- Every source under model/, bench/, ablations/ and reports/stepwise_report/ opens by saying what it is
  for: a // comment (C++) or a module docstring (Python).

Each checking function also runs on synthetic input that must fail, so a check that silently finds
nothing is itself caught.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reports" / "stepwise_report"
CXX_LAYERS = ("model", "bench", "ablations")  # bottom to top: a layer includes only itself and those before it
CXX_SUFFIXES = (".cpp", ".h")
SOURCE_DIRS = ("model", "bench", "ablations", "reports/stepwise_report")
_INCLUDE = re.compile(r'^\s*#\s*include\s*"((model|bench|ablations)/[^"]+)"', re.M)
# bench/'s subfolders, bottom to top ("" is bench/ itself): the optimizers; what every part shares (the configuration,
# the device, the statistics, the phase marks and the step timer, the memory counters, the tokens, the learning-rate
# schedule); the data, the collectives, the step, the trace, the measurement that runs steps, the Python rows that
# measure the same way, the micro-benchmarks over all of it.
BENCH_LAYERS = ("optim", "", "data", "distributed", "step", "trace", "measure", "python", "micro")
# The includes that still run back up between bench/'s subfolders, each with why: none (muon's ns_dtype auto, which
# reads the device, is resolved in bench/run_config.h before Muon is built). A new one fails until it moves down.
BENCH_BACK_ARROWS: frozenset[str] = frozenset()
# ablations/'s subfolders, bottom to top ("" is ablate.cpp): plain-text tables; the flag table with each flag's math
# class; the judges of a row's losses and times; running a suite (a row's losses judged, its result written); the
# command line with the plan's table; the flags, which declare themselves into the table. No include runs back up.
ABLATIONS_LAYERS = ("tables", "flag_table", "judges", "run", "command_line", "flags", "")
# reports/stepwise_report/'s subpackages, bottom to top ("" is the package itself): reading the files (standard library
# only, so verify reads results under a GPU node's bare python); the statistics (a speedup's interval, the sequential
# plan's looks); what the report derives (ratio chains, the published alignment); everything it draws (formats' Table,
# each section, the document and its renderings, the exports); the gate, which draws its verdicts with render's Table
# and compares op_counts' counts, and which nothing below knows; the command line. No import runs back up.
REPORT_LAYERS = ("read", "stats", "analysis", "render", "gate", "")
# What stays at the package's top: the command line. A new module goes into the subpackage of its concern.
REPORT_TOP = frozenset({"__init__", "__main__", "cli"})


# --- checking functions ----------------------------------------------------------------------------


def internal_imports(source: str, package: str, modules: set[str], name: str = "") -> set[str]:
    """The package's modules that `source` (its module `name`, dotted below the package: "render.document", "cli",
    "read.__init__") imports, at any depth (function-level too): `from . import x`, `from .x import y`,
    `from ..sub.x import y`, `from package.sub.x import y`, `import package.sub.x`. Relative imports resolve from the
    module's own subpackage. A name that is not a module (`from . import NAME`) counts as importing that package's
    __init__."""
    here = name.split(".")[:-1]  # the module's own subpackage, as parts ("read.__init__" and "read.x": ["read"])
    found: set[str] = set()

    def add(target: list[str], names: list[str]) -> None:
        for n in names:
            if ".".join(target + [n]) in modules:
                found.add(".".join(target + [n]))
            elif ".".join(target) in modules:
                found.add(".".join(target))
            else:
                found.add(".".join(target + ["__init__"]))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level >= 1 and node.level - 1 <= len(here):
                base = here[: len(here) - (node.level - 1)]
                add(base + (node.module.split(".") if node.module else []), names)
            elif node.level == 0 and node.module and (node.module == package or node.module.startswith(package + ".")):
                add(node.module.split(".")[1:], names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(package + "."):
                    add(alias.name.split(".")[1:-1], alias.name.split(".")[-1:])
    return found & modules


def import_graph(sources: dict[str, str], package: str) -> dict[str, set[str]]:
    """Module name (dotted below the package) -> the modules of the same package it imports."""
    modules = set(sources)
    return {name: internal_imports(text, package, modules, name) - {name} for name, text in sources.items()}


def report_layer(name: str) -> str:
    """The subpackage a module (dotted below the package) belongs to; "" for the package's top."""
    return name.split(".")[0] if "." in name else ""


def upward_imports(graph: dict[str, set[str]], layers: tuple[str, ...] = REPORT_LAYERS) -> list[str]:
    """`module -> module` for every import of a subpackage above the importer's own (`layers`, bottom to top; "" is
    the package's top), with the two layers."""
    return [
        f"{name} -> {target} ({report_layer(name) or 'the top'} may not import {report_layer(target) or 'the top'})"
        for name in sorted(graph)
        for target in sorted(graph[name])
        if layers.index(report_layer(target)) > layers.index(report_layer(name))
    ]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that ends where it starts (['a', 'b', 'a']), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def include_violations(rel_path: str, text: str) -> list[str]:
    """`file: includes "x"` for every include of a layer above the file's own (see CXX_LAYERS)."""
    layer = rel_path.split("/", 1)[0]
    if layer not in CXX_LAYERS:
        return []
    rank = CXX_LAYERS.index(layer)
    return [
        f'{rel_path}: includes "{target}" ({layer} may not include {top})'
        for target, top in _INCLUDE.findall(text)
        if CXX_LAYERS.index(top) > rank
    ]


def back_arrows(rel_path: str, text: str, top: str, layers: tuple[str, ...]) -> set[str]:
    """`file -> include` for every include of a `top`/ subfolder above the file's own (`layers`, bottom to top; ""
    is `top`/ itself)."""
    if not rel_path.startswith(top + "/"):
        return set()

    def layer(path: str) -> int:
        parts = path.split("/")
        return layers.index(parts[1] if len(parts) > 2 else "")

    return {
        f"{rel_path} -> {target}"
        for target, t in _INCLUDE.findall(text)
        if t == top and layer(target) > layer(rel_path)
    }


def bench_back_arrows(rel_path: str, text: str) -> set[str]:
    """`file -> include` for every include of a bench/ subfolder above the file's own (see BENCH_LAYERS)."""
    return back_arrows(rel_path, text, "bench", BENCH_LAYERS)


def lacks_opening_comment(rel_path: str, text: str) -> bool:
    """True when the file does not open by saying what it is: C++ must start with a // line (after blank
    lines), Python with a module docstring."""
    if rel_path.endswith(".py"):
        try:
            return ast.get_docstring(ast.parse(text)) is None
        except SyntaxError:
            return True
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return not first.startswith("//")


# --- the sources -----------------------------------------------------------------------------------


def _package_sources() -> dict[str, str]:
    """Every module of the package by its name below it: "read.results", "read.__init__", "cli", "__init__"."""
    return {
        ".".join(p.relative_to(PACKAGE).with_suffix("").parts): _text(p)
        for p in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def _files(dirs, suffixes) -> list[Path]:
    return [
        p
        for d in dirs
        for p in sorted((ROOT / d).rglob("*"))
        if p.is_file() and p.suffix in suffixes and "__pycache__" not in p.parts
    ]


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def _text(p: Path) -> str:
    return p.read_text(encoding="utf-8", errors="replace")


def test_report_modules_have_no_import_cycle():
    graph = import_graph(_package_sources(), "stepwise_report")
    assert len(graph) > 5 and any(graph.values()), "found no modules or no imports: the scan is broken"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in reports/stepwise_report: " + " -> ".join(cycle)


def test_report_subpackages_import_only_downwards():
    graph = import_graph(_package_sources(), "stepwise_report")
    assert sum(len(v) for v in graph.values()) > 50, "found almost no imports: the scan is broken"
    assert any("." in t for v in graph.values() for t in v), (
        "found no import of a subpackage's module: the scan is broken"
    )
    layers = {report_layer(name) for name in graph}
    assert layers == set(REPORT_LAYERS), f"REPORT_LAYERS {REPORT_LAYERS} does not match the subpackages {layers}"
    top = {name for name in graph if report_layer(name) == ""}
    assert top <= REPORT_TOP, f"put these in the subpackage of their concern: {sorted(top - REPORT_TOP)}"
    violations = upward_imports(graph)
    assert violations == [], (
        "reports/stepwise_report runs " + " < ".join(REPORT_LAYERS[:-1]) + " < the top:\n" + "\n".join(violations)
    )


def test_cxx_layers_include_only_downwards():
    files = _files(CXX_LAYERS, CXX_SUFFIXES)
    assert len(files) > 20, "found almost no C++ sources: the scan is broken"
    assert any(_INCLUDE.search(_text(p)) for p in files), "found no project #include: the scan is broken"
    violations = [v for p in files for v in include_violations(_rel(p), _text(p))]
    assert violations == [], "layers run ablations -> bench -> model:\n" + "\n".join(violations)


def test_bench_subfolders_include_only_downwards_but_for_the_listed_ones_which_only_shrink():
    files = _files(("bench",), CXX_SUFFIXES)
    assert len(files) > 20, "found almost no bench/ sources: the scan is broken"
    subfolders = {p.relative_to(ROOT / "bench").parts[0] for p in files if len(p.relative_to(ROOT / "bench").parts) > 1}
    assert subfolders <= set(BENCH_LAYERS), f"a bench/ subfolder BENCH_LAYERS does not place: {subfolders}"
    found = set().union(*(bench_back_arrows(_rel(p), _text(p)) for p in files))
    assert found - BENCH_BACK_ARROWS == set(), (
        "bench/ runs " + " < ".join(BENCH_LAYERS[1:]) + ": " + str(sorted(found - BENCH_BACK_ARROWS))
    )
    assert BENCH_BACK_ARROWS - found == set(), (
        f"gone, take them off BENCH_BACK_ARROWS: {sorted(BENCH_BACK_ARROWS - found)}"
    )


def test_ablations_subfolders_include_only_downwards():
    files = _files(("ablations",), CXX_SUFFIXES)
    assert len(files) > 20, "found almost no ablations/ sources: the scan is broken"
    rel = [p.relative_to(ROOT / "ablations").parts for p in files]
    subfolders = {parts[0] for parts in rel if len(parts) > 1}
    assert subfolders <= set(ABLATIONS_LAYERS), f"an ablations/ subfolder ABLATIONS_LAYERS does not place: {subfolders}"
    found = set().union(*(back_arrows(_rel(p), _text(p), "ablations", ABLATIONS_LAYERS) for p in files))
    assert found == set(), "ablations/ runs " + " < ".join(ABLATIONS_LAYERS[:-1]) + ": " + str(sorted(found))


def test_synthetic_ablations_back_arrows_are_reported():
    text = '#include "ablations/run/plan.h"\n#include "ablations/flag_table/flags.h"\n'
    # The two back-arrows this test was written against: the judges reading a planned row, the flag table a judge's.
    assert back_arrows("ablations/judges/row_losses.h", text, "ablations", ABLATIONS_LAYERS) == {
        "ablations/judges/row_losses.h -> ablations/run/plan.h"
    }
    flag_table = '#include "ablations/judges/loss_check.h"\n'
    assert back_arrows("ablations/flag_table/flags.h", flag_table, "ablations", ABLATIONS_LAYERS) == {
        "ablations/flag_table/flags.h -> ablations/judges/loss_check.h"
    }
    assert back_arrows("ablations/ablate.cpp", text, "ablations", ABLATIONS_LAYERS) == set()


def test_synthetic_bench_back_arrows_are_reported():
    text = '// x\n#include "bench/measure/runner.h"\n#include "bench/optim/adamw.h"\n#include "bench/device.h"\n'
    assert bench_back_arrows("bench/step/train_step.cpp", text) == {
        "bench/step/train_step.cpp -> bench/measure/runner.h"
    }
    assert bench_back_arrows("bench/run_config.h", text) == {"bench/run_config.h -> bench/measure/runner.h"}
    assert bench_back_arrows("bench/optim/muon.cpp", text) == {
        "bench/optim/muon.cpp -> bench/measure/runner.h",
        "bench/optim/muon.cpp -> bench/device.h",
    }
    assert bench_back_arrows("bench/micro/main.cpp", text) == set()
    assert bench_back_arrows("ablations/run/execute.cpp", text) == set()


def test_every_source_opens_with_what_it_is_for():
    files = _files(SOURCE_DIRS, CXX_SUFFIXES + (".py",))
    missing = [_rel(p) for p in files if lacks_opening_comment(_rel(p), _text(p))]
    assert missing == [], (
        "these files do not open with a // comment (C++) or a module docstring (Python):\n" + "\n".join(missing)
    )


# --- the checks themselves can fail ----------------------------------------------------------------


def test_a_synthetic_cycle_is_found_and_named():
    sources = {
        "__init__": '"""pkg"""\n',
        "low": '"""low"""\nimport json\n',
        "mid": '"""mid"""\nfrom .low import x\n',
        "a": '"""a"""\nfrom .mid import y\n\ndef f():\n    from pkg.b import z  # function-level imports count\n',
        "b": '"""b"""\nfrom . import a\n',
    }
    graph = import_graph(sources, "pkg")
    assert graph == {"__init__": set(), "low": set(), "mid": {"low"}, "a": {"mid", "b"}, "b": {"a"}}
    assert find_cycle(graph) == ["a", "b", "a"]
    del sources["b"]
    assert find_cycle(import_graph(sources, "pkg")) is None


@pytest.mark.parametrize(
    "source, imported",
    [
        ("from . import SOMETHING\n", {"__init__"}),
        ("import pkg.low\n", {"low"}),
        ("from pkg import low\n", {"low"}),
        ("from other.low import x\nimport low\n", set()),  # other packages and absolute names are not ours
    ],
)
def test_import_forms(source, imported):
    assert internal_imports(source, "pkg", {"__init__", "low"}) == imported


NESTED = {"__init__", "cli", "read.__init__", "read.results", "render.__init__", "render.formats", "render.tables"}


@pytest.mark.parametrize(
    "name, source, imported",
    [
        ("render.tables", "from .formats import Table\n", {"render.formats"}),
        ("render.tables", "from ..read.results import Result\n", {"read.results"}),
        ("render.tables", "from ..read import results\n", {"read.results"}),
        ("render.tables", "from ..read import SOMETHING\n", {"read.__init__"}),
        ("render.tables", "from .. import SOMETHING\n", {"__init__"}),
        ("render.tables", "from . import formats\n", {"render.formats"}),
        ("render.__init__", "from .formats import Table\n", {"render.formats"}),
        ("read.results", "def f():\n    from pkg.render.formats import Table\n", {"render.formats"}),
        ("read.results", "import pkg.render.formats\n", {"render.formats"}),
        ("cli", "from .read.results import Result\nfrom .render import formats\n", {"read.results", "render.formats"}),
        ("cli", "from .cli import main\n", {"cli"}),
        ("read.results", "from ...elsewhere import x\n", set()),  # above the package: not ours
    ],
)
def test_nested_import_forms(name, source, imported):
    assert internal_imports(source, "pkg", NESTED, name) == imported


def test_a_synthetic_upward_import_is_found_and_named():
    sources = {
        "__init__": '"""pkg"""\n',
        "cli": '"""the top imports anything"""\nfrom .gate.gate import judge\nfrom .read.results import R\n',
        "read.__init__": '"""read"""\n',
        "read.results": '"""results"""\ndef f():\n    from ..render.formats import Table  # function-level counts\n',
        "read.inputs": '"""inputs"""\nfrom .results import R\nfrom .. import VERSION\n',
        "render.formats": '"""formats"""\nfrom ..stats.speedup import S\n',
        "stats.speedup": '"""speedup"""\nimport pkg.read.results\n',
        "gate.gate": '"""gate"""\nfrom pkg.render.formats import Table\nfrom ..stats import speedup\n',
    }
    graph = import_graph(sources, "pkg")
    assert graph["cli"] == {"gate.gate", "read.results"}
    assert upward_imports(graph) == [
        "read.inputs -> __init__ (read may not import the top)",
        "read.results -> render.formats (read may not import render)",
    ]
    assert upward_imports(graph, ("read", "stats", "analysis", "gate", "render", "")) == [
        "gate.gate -> render.formats (gate may not import render)",
        "read.inputs -> __init__ (read may not import the top)",
        "read.results -> render.formats (read may not import render)",
    ]
    del sources["read.results"], sources["read.inputs"]
    assert upward_imports(import_graph(sources, "pkg")) == []


def test_synthetic_upward_includes_are_reported():
    text = '// x\n#include "model/config.h"\n#include "bench/measure/runner.h"\n  #  include "ablations/run/suite.h"\n'
    assert include_violations("model/attention.cpp", text) == [
        'model/attention.cpp: includes "bench/measure/runner.h" (model may not include bench)',
        'model/attention.cpp: includes "ablations/run/suite.h" (model may not include ablations)',
    ]
    assert include_violations("bench/measure/runner.cpp", text) == [
        'bench/measure/runner.cpp: includes "ablations/run/suite.h" (bench may not include ablations)'
    ]
    assert include_violations("ablations/main.cpp", text) == []
    assert include_violations("bench/data/loader.h", '#include "model/config.h"\n') == []


def test_synthetic_files_without_an_opening_comment_are_reported():
    assert lacks_opening_comment("model/x.h", "#pragma once\n// too late\n")
    assert lacks_opening_comment("bench/x.cpp", "/* block comments do not count */\n")
    assert not lacks_opening_comment("bench/x.cpp", "\n\n// what this file is for\n#include <vector>\n")
    assert lacks_opening_comment("reports/stepwise_report/x.py", "# a comment is not a docstring\nimport os\n")
    assert lacks_opening_comment("reports/stepwise_report/x.py", "import os\n'''not first'''\n")
    assert not lacks_opening_comment("bench/python/x.py", '#!/usr/bin/env python3\n"""Why this exists."""\n')
