"""scripts/verify-gpu.sh --check-bundle (scripts/verify/bundle_check.py): before a call, one command makes deps/ when it
does not fit the working tree that travels, and says when it was made and in how long, whether the prebuilt fits,
its size beside the tree's against what a call carries, the node's packages in deps/site, and any module the node's
Python side imports that neither the image nor the bundle has; only a bundle that fits in every way exits 0. The
bundle here is made up (a build id, a site of dist-info folders), and making one is replaced by writing it."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import prebuilt  # noqa: E402
from verify import bundle_check, node_imports  # noqa: E402

# What the node's python lacks and the bundle carries for it (scripts/setup.sh's BUNDLED_WHEELS).
CARRIED = {"jsonschema": "4.26.0", "referencing": "0.37.0", "rpds_py": "2026.9.1", "jsonschema_specifications": "1"}


def made_up(deps: pathlib.Path, site: dict[str, str] = CARRIED, sources: str | None = None) -> None:
    """A bundle as scripts/setup.sh --bundle leaves it, for the node's python: its manifest, the prebuilt's build id
    and deps/site/python<node> with a dist-info and a module folder per package."""
    deps.mkdir(parents=True, exist_ok=True)
    (deps / "MANIFEST.txt").write_text(
        "# stepwise offline bundle: scripts/setup.sh --bundle on builder, 2026-12-06T00:00:00Z\n# made in 777 s\n"
    )
    (deps / "prebuilt").mkdir(exist_ok=True)
    ident = {"sources": sources or prebuilt.source_hash(ROOT)[0], "commit": "c0ffee", "torch": "2.11.0", "packed": "x"}
    (deps / "prebuilt" / prebuilt.ID_FILE).write_text(json.dumps(ident))
    target = deps / "site" / f"python{bundle_check.NODE_PYTHON}"
    target.mkdir(parents=True, exist_ok=True)
    for name, version in site.items():
        info = target / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        module = "rpds" if name == "rpds_py" else name
        (info / "top_level.txt").write_text(module + "\n")
        (target / module).mkdir()
        (target / module / "__init__.py").write_text("")
    (target / ".stepwise-complete").touch()


@pytest.fixture
def deps(tmp_path, monkeypatch):
    d = tmp_path / "deps"
    monkeypatch.setenv("STEPWISE_DEPS", str(d))
    return d


def test_a_missing_bundle_is_made_then_checked_with_its_time_and_size(deps, monkeypatch, capsys):
    made = []
    monkeypatch.setattr(bundle_check, "make", lambda d: (made.append(d), made_up(d), (0, 42.0))[-1])
    assert bundle_check.check_bundle() == 0, capsys.readouterr().out
    out = capsys.readouterr().out.splitlines()
    assert made == [deps.resolve()]
    assert out[0].startswith("bundle: making deps/ for the tree that travels (there is no ")
    assert out[1] == "bundle: made now, on builder at 2026-12-06T00:00:00Z, in 42 s", out
    assert out[2].startswith("bundle: prebuilt fits the working tree that travels"), out
    assert " of the 64.0 MiB a call carries: fits" in out[3] and "the tree that travels" in out[3], out
    assert "jsonschema 4.26.0" in out[4], out
    assert out[5].startswith("bundle: every module the node's Python side imports is in the image"), out
    assert "jsonschema (deps/site)" in out[5] and "torch (the image)" in out[5], out


def test_a_bundle_that_fits_is_not_made_again(deps, monkeypatch, capsys):
    made_up(deps)
    monkeypatch.setattr(bundle_check, "make", lambda d: pytest.fail("a bundle that fits was made again"))
    assert bundle_check.check_bundle() == 0
    assert "bundle: made on builder at 2026-12-06T00:00:00Z, in 777 s; it fits this tree" in capsys.readouterr().out


def test_a_stale_prebuilt_is_made_again_and_a_failed_make_says_so(deps, monkeypatch, capsys):
    made_up(deps, sources="0123456789abcdef")
    monkeypatch.setattr(bundle_check, "make", lambda d: (1, 3.0))
    assert bundle_check.check_bundle() == 1
    out = capsys.readouterr().out
    assert "(deps/prebuilt was built from other sources than the working tree that travels)" in out
    assert out.strip().endswith("bundle: scripts/setup.sh --bundle failed (exit 1) after 3 s: deps/ is not fit")


def test_a_module_neither_the_image_nor_the_bundle_has_is_named_with_who_imports_it(deps, monkeypatch, capsys):
    """The node's image has no jsonschema: a bundle without it fails, naming the file that imports it."""
    made_up(deps, site={k: v for k, v in CARRIED.items() if k != "jsonschema"})
    monkeypatch.setattr(bundle_check, "make", lambda d: pytest.fail("a bundle that fits the tree was made again"))
    assert bundle_check.check_bundle() == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("bundle: the node's Python side imports what neither the image nor deps/site has: "), last
    assert "jsonschema (imported by bench/python/request.py:" in last, last


def test_a_bundle_over_what_a_call_carries_does_not_fit(deps, monkeypatch, capsys):
    made_up(deps)
    (deps / "corpus").mkdir()
    (deps / "corpus" / "big.bin").write_bytes(b"\0" * 2**20)
    monkeypatch.setattr(bundle_check, "CARRY_LIMIT_BYTES", 2**20)
    assert bundle_check.check_bundle() == 1
    assert "of the 1.0 MiB a call carries: does NOT fit" in capsys.readouterr().out


def test_the_node_side_imports_are_read_from_every_program_a_call_runs():
    """The Python rows' jsonschema (unconditional), ./report's (optional: it runs unvalidated without it), the gpu
    tests' pytest and the corpus's tiktoken, each with where it is imported."""
    found = {(i.module, i.optional) for i in node_imports.node_imports()}
    assert {("jsonschema", False), ("jsonschema", True), ("pytest", False), ("torch", False)} <= found, found
    # ./report's plots and statistics, reached only through its package's relative imports
    assert {("matplotlib", False), ("scipy", False)} <= found, found
    where = {i.where for i in node_imports.node_imports() if i.module == "jsonschema" and not i.optional}
    assert any(w.startswith("bench/python/request.py:") for w in where), where


def test_check_bundle_from_the_wrapper_writes_nothing_but_its_lines(tmp_path):
    deps = tmp_path / "deps"
    made_up(deps)
    env = {**os.environ, "STEPWISE_DEPS": str(deps)}
    run = subprocess.run(
        [str(ROOT / "scripts" / "verify-gpu.sh"), "--check-bundle"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert [l.split(":")[0] for l in run.stdout.splitlines()] == ["bundle"] * 5, run.stdout
    assert not (ROOT / "reports" / "gpu" / "pass1").exists()
