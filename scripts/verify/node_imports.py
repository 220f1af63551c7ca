"""What the node's Python side imports, read from the sources (no process runs): every program a call starts under the
node's python3 (the Python rows, ./report, the gpu tests, the budget search, verify itself), followed through the
checkout's own modules, each third-party module with the file and line that imports it, and whether the import is
optional there (inside a try that catches its ImportError). --check-bundle holds them against the image's list and the
bundle's site; the rehearsal (--as-node) can only meet the imports on the paths a CPU runs, this reads them all."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from verify.target import ROOT

# The programs a call runs with the node's python (scripts/verify/steps.py, bench/python/python_step.cpp).
ENTRY_POINTS = (
    "scripts/verify_gpu.py",
    "scripts/prebuilt.py",
    "scripts/find_budget.py",
    "scripts/corpus.py",
    "bench/python/step.py",
    "bench/python/serve.py",
    "reports/stepwise_report/__main__.py",
    "tests/gpu/conftest.py",
    "tests/gpu/test_gpu_results.py",
)
# Where those programs find the checkout's own modules: each program's folder, and the folders put on their path.
SEARCH = ("scripts", "bench/python", "reports", "tests/gpu", "tests")
# Caught, an import of these is optional: the program goes on without the module.
CATCHES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


@dataclass(frozen=True)
class Import:
    module: str  # the top-level name
    where: str  # file:line, relative to the checkout
    optional: bool


def caught(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in CATCHES for n in names)


def imports_of(path: Path) -> list[tuple[str, int, bool, int, tuple[str, ...]]]:
    """(the module named, its line, optional, relative level, the names imported from it) for every import in the
    file, at any depth."""
    found = []

    def visit(node: ast.AST, optional: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno, optional, 0, ()) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.lineno, optional, node.level, tuple(a.name for a in node.names)))
        if isinstance(node, ast.Try):
            guarded = optional or any(caught(h) for h in node.handlers)
            for child in node.body:
                visit(child, guarded)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, optional)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, optional)

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def local(name: str, folders: list[Path]) -> Path | None:
    """The checkout's own module of that top-level name, as a program searching these folders would find it."""
    for folder in folders:
        if (folder / f"{name}.py").is_file():
            return folder / f"{name}.py"
        if (folder / name).is_dir():
            init = folder / name / "__init__.py"
            return init if init.is_file() else folder / name
    return None


def relative(path: Path, module: str, level: int, names: tuple[str, ...]) -> list[Path]:
    """The checkout's files a relative import names: the module itself, or each name imported from the package."""
    base = path.parent
    for _ in range(level - 1):
        base = base.parent
    target = base.joinpath(*module.split(".")) if module else base
    found = [target.with_suffix(".py"), target / "__init__.py"]
    found += [target / f"{n}.py" for n in names] + [target / n / "__init__.py" for n in names]
    return [f for f in found if f.is_file()]


def files_of(found: Path) -> list[Path]:
    """A module's files: the file, or every file of a package (its submodules are imported by name from it)."""
    if found.is_dir():
        return sorted(found.rglob("*.py"))
    if found.name == "__init__.py":
        return sorted(found.parent.rglob("*.py"))
    return [found]


def node_imports(root: Path = ROOT) -> list[Import]:
    """Every third-party import of the node's Python side, once per (module, file, line)."""
    search = [root / s for s in SEARCH]
    todo = [root / e for e in ENTRY_POINTS if (root / e).exists()]
    seen: set[Path] = set()
    out: dict[tuple[str, str], Import] = {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        folders = [path.parent, *search]
        for name, line, optional, level, names in imports_of(path):
            if level:  # the checkout's own, by where the file is
                todo += relative(path, name, level, names)
                continue
            top = name.split(".")[0]
            if not top or top in sys.stdlib_module_names or top == "__future__":
                continue
            own = local(top, folders)
            if own is not None:
                todo += files_of(own)
                continue
            where = f"{path.relative_to(root)}:{line}"
            out.setdefault((top, where), Import(top, where, optional))
    return sorted(out.values(), key=lambda i: (i.module, i.where))
