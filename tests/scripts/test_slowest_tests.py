"""scripts/dev/slowest_tests.sh, the end of the test command: from logs as long as CI's (hundreds of ctest lines,
thousands of pytest durations, far more than a pipe holds) it prints the 15 slowest of each, slowest first, and
exits 0. A summary that took the first 15 with `head` under pipefail once turned a green run into exit 141."""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "dev" / "slowest_tests.sh"
TESTS = 400  # about CI's count of ctest tests
DURATIONS = 6000  # pytest --durations lines across the log: well over a 64 KiB pipe once sorted


def write_logs(tmp_path):
    ctest_log = tmp_path / "ctest.log"
    ctest_log.write_text(
        "".join(
            f"{i}/{TESTS} Test #{i}: suite.test_{i} {'.' * 60}   Passed   {i / 10:.2f} sec\n"
            for i in range(1, TESTS + 1)
        )
    )
    last_test_log = tmp_path / "LastTest.log"
    last_test_log.write_text(
        "".join(f"{i / 100:.2f}s call     tests/e2e/test_x.py::test_case_{i}\n" for i in range(1, DURATIONS + 1))
    )
    return ctest_log, last_test_log


def summary_lines(out, title):
    lines = out.splitlines()
    start = lines.index(title) + 1
    taken = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        taken.append(line.split())
    return taken


def test_long_logs_give_the_fifteen_slowest_of_each_and_exit_zero(tmp_path):
    ctest_log, last_test_log = write_logs(tmp_path)
    done = subprocess.run(
        [str(SCRIPT), str(ctest_log), str(last_test_log)], capture_output=True, text=True, timeout=120
    )  # hang guard only
    assert done.returncode == 0, done.stderr
    ctest = summary_lines(done.stdout, "The 15 slowest tests (ctest, seconds):")
    assert [name for _, name in ctest] == [f"suite.test_{i}" for i in range(TESTS, TESTS - 15, -1)]
    pytest = summary_lines(done.stdout, "The 15 slowest pytest cases (seconds):")
    assert [case for _, _, case in pytest] == [
        f"tests/e2e/test_x.py::test_case_{i}" for i in range(DURATIONS, DURATIONS - 15, -1)
    ]


def test_a_log_without_pytest_durations_prints_an_empty_list_and_exits_zero(tmp_path):
    ctest_log, last_test_log = write_logs(tmp_path)
    last_test_log.write_text("no durations here\n")
    done = subprocess.run(
        [str(SCRIPT), str(ctest_log), str(last_test_log)], capture_output=True, text=True, timeout=120
    )  # hang guard only
    assert done.returncode == 0, done.stderr
    assert summary_lines(done.stdout, "The 15 slowest pytest cases (seconds):") == []
