"""scripts/vs_python.py's runs and verdicts, with a stand-in for one run of ./ablate: on a CPU both rows run under one
explicit host allocator unless told 'none' (the heap as it comes), on a GPU under the heap each starts with; every
round runs both orders; and the verdict follows the interval of Python's time over C++'s."""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import vs_python  # noqa: E402


@pytest.fixture
def runs(monkeypatch):
    """Each run's ./ablate command; a run's medians: C++ 100 ms, Python `python_ms` (a list, one per run, cycled)."""
    asked: list[list[str]] = []
    python_ms = [100.0]

    def one_run(flags, args, order):
        asked.append(vs_python.ablate_command(flags, args, order, "OUT"))
        return {"libtorch": 100.0, "python-eager": python_ms[(len(asked) - 1) % len(python_ms)]}

    monkeypatch.setattr(vs_python, "one_run", one_run)
    return asked, python_ms


def option(cmd: list[str], name: str) -> str | None:
    return next((a.split("=", 1)[1] for a in cmd if a.startswith(f"--{name}=")), None)


def test_on_a_cpu_both_rows_run_under_one_explicit_heap(runs, capsys):
    asked, _ = runs
    assert vs_python.main(["--rounds", "2", "--flags", "", "flash"]) == 0
    assert len(asked) == 2 * 2 * 2  # two configurations, two rounds, a run in each order
    assert all(option(cmd, "host-allocator-mode") == "glibc-tunables" for cmd in asked)
    assert [option(cmd, "enable") for cmd in asked] == ["host_allocator"] * 4 + ["flash,host_allocator"] * 4
    assert "both rows under glibc-tunables" in capsys.readouterr().out.splitlines()[0]


def test_none_leaves_each_row_the_heap_as_it_comes(runs, capsys):
    asked, _ = runs
    assert vs_python.main(["--rounds", "1", "--flags", "", "flash", "--host-allocator", "none"]) == 0
    assert [option(cmd, "enable") for cmd in asked] == [None, None, "flash", "flash"]
    assert not any(option(cmd, "host-allocator-mode") for cmd in asked)
    assert "each row under the C library's heap as it comes" in capsys.readouterr().out.splitlines()[0]


def test_on_a_gpu_no_allocator_is_imposed_unless_asked(runs):
    asked, _ = runs
    vs_python.main(["--rounds", "1", "--flags", "flash", "--device", "cuda"])
    vs_python.main(["--rounds", "1", "--flags", "flash", "--device", "cuda", "--host-allocator", "jemalloc"])
    assert [option(cmd, "host-allocator-mode") for cmd in asked] == [None, None, "jemalloc", "jemalloc"]


def test_each_round_runs_both_orders(runs):
    asked, _ = runs
    vs_python.main(["--rounds", "2", "--flags", ""])
    firsts = [option(cmd, "implementations").split(",")[0] for cmd in asked]
    assert firsts == ["libtorch", "python-eager", "python-eager", "libtorch"]


@pytest.mark.parametrize(
    ("python_ms", "verdict"),
    [
        ([96.0, 97.0], "Python faster"),
        ([104.0, 103.0], "C++ faster"),
        ([96.0, 104.0, 100.0], "no measurable difference"),
    ],
)
def test_the_verdict_is_the_intervals(runs, capsys, python_ms, verdict):
    _, times = runs
    times[:] = python_ms
    vs_python.main(["--rounds", "6", "--flags", "flash", "--host-allocator", "none"])
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("flash "))
    assert row.endswith(verdict)
