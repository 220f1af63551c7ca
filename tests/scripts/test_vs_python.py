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
    """Each run's ./ablate command; a run's medians: C++ 100 ms, Python `python_ms` (a list, one per run, cycled);
    tf32 is not applied here, and a configuration with 'broken' in it has its Python row fail."""
    asked: list[list[str]] = []
    python_ms = [100.0]

    def one_run(flags, args, order):
        asked.append(vs_python.ablate_command(flags, args, order, "OUT"))
        if "broken" in flags:
            return vs_python.Run(ms={"libtorch": 100.0}, problem="python-eager failed: the row's process died")
        ms = {"libtorch": 100.0, "python-eager": python_ms[(len(asked) - 1) % len(python_ms)]}
        return vs_python.Run(ms=ms, skipped={"tf32": "CUDA only"} if "tf32" in flags else {})

    monkeypatch.setattr(vs_python, "one_run", one_run)
    monkeypatch.setattr(vs_python, "host_allocator_modes", lambda: (["glibc-tunables", "jemalloc"], "glibc-tunables"))
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


def test_a_row_that_measures_nothing_says_why_and_the_next_configuration_runs(runs, capsys):
    asked, _ = runs
    vs_python.main(["--rounds", "3", "--flags", "broken", "flash"])
    assert [option(cmd, "enable").split(",")[0] for cmd in asked] == ["broken"] + ["flash"] * 6  # no more rounds of it
    table = capsys.readouterr().out.splitlines()
    broken = next(line for line in table if line.startswith("broken "))
    assert broken.endswith("not measured: python-eager failed: the row's process died")
    assert any(line.startswith("flash ") and line.endswith("no measurable difference") for line in table)


def test_a_flag_this_device_does_not_apply_is_said_under_the_table(runs, capsys):
    vs_python.main(["--rounds", "1", "--flags", "tf32"])
    assert "tf32: not applied on cpu (CUDA only); its rows ran without it" in capsys.readouterr().out.splitlines()


def test_an_unknown_allocator_is_a_usage_error_naming_the_valid_ones(runs, capsys):
    with pytest.raises(SystemExit) as exit:
        vs_python.main(["--flags", "", "--host-allocator", "mimalloc"])
    assert exit.value.code == 2
    assert "unknown mode 'mimalloc' (valid: glibc-tunables, jemalloc, none)" in capsys.readouterr().err
    assert runs[0] == []  # nothing ran


def test_the_modes_are_the_flag_tables():
    """From the built ./ablate: the host_allocator flag's modes, its default the one heap a CPU comparison uses."""
    modes, default = vs_python.host_allocator_modes()
    assert default == "glibc-tunables" and default in modes
