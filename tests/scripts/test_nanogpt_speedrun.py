"""scripts/nanogpt_speedrun.py, the benchmark of the speedrun's stack at nanoGPT's size, against a stand-in ./ablate
that records what it was asked and writes the two results a run would: the suite it runs is the tuned baseline
against every speedrun technique at nanoGPT's shape, on a declared horizon, and the ratio it prints is the stack's
time verdict from the results (the engine's, not one of its own)."""

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "reports"))
import nanogpt_speedrun  # noqa: E402
import resultgen  # noqa: E402

FAKE = """#!/usr/bin/env python3
import json, pathlib, sys
args = sys.argv[1:]
out = pathlib.Path(next(a.split("=", 1)[1] for a in args if a.startswith("--out=")))
suite = next(a.split("=", 1)[1] for a in args if a.startswith("--suite="))
(out.parent / "asked.json").write_text(json.dumps({"args": args, "suite": json.loads(pathlib.Path(suite).read_text())}))
(out / "suite").mkdir(parents=True)
for i, doc in enumerate(DOCS):
    (out / "suite" / f"{i:02}.json").write_text(json.dumps(doc))
"""


@pytest.fixture(autouse=True)
def bytes_corpus(tmp_path, monkeypatch):
    """The fortunes corpus as bytes where ./ablate reads corpora: only its meta.json, the stand-in reads nothing."""
    (tmp_path / "corpus" / "fortunes").mkdir(parents=True)
    (tmp_path / "corpus" / "fortunes" / "meta.json").write_text(json.dumps({"tokenizer": "bytes", "vocab_size": 256}))
    monkeypatch.setenv("STEPWISE_CORPUS_DIR", str(tmp_path / "corpus"))
    return tmp_path / "corpus" / "fortunes"


def results(ratio, low, high) -> list[dict]:
    """The two results a run would write, whole (they are read as ./report reads results, schema and all): the
    baseline's, and the stack's with its time verdict against it."""
    docs = []
    for i, (label, added) in enumerate([("baseline", []), ("speedrun stack", nanogpt_speedrun.STACK)]):
        suite = resultgen.suite_info("nanogpt_speedrun", "cumulative", i, 2, label, added)
        doc = resultgen.make_result(
            run_id="20261206T000000Z_tiny_cpu", name=f"nanogpt_speedrun/{i:02}", suite=suite, device_kind="cpu"
        )
        cell = {"ratio": ratio, "low": low, "high": high, "p": 0.01, "n": 5, "baseline_n": 5}
        guard = {"status": "baseline" if i == 0 else "faster to target", "reason": "", "test": "Welch"}
        doc["convergence"] = {"target_loss": 2.3, "seeds": [], "runs": 5, "reached": 5, "guard": guard}
        doc["convergence"] |= {"steps": None, "tokens": None, "time_s": None}
        doc["convergence"]["verdict"] = None if i == 0 else {"time": cell, "steps": cell}
        docs.append(doc)
    return docs


def run(tmp_path, capsys, ratio, low, high):
    tmp_path.mkdir(parents=True, exist_ok=True)
    fake = tmp_path / "ablate"
    fake.write_text(FAKE.replace("DOCS", repr(results(ratio, low, high))))
    fake.chmod(0o755)
    assert nanogpt_speedrun.main(["--ablate", str(fake), "--out", str(tmp_path / "results")]) == 0
    asked = json.loads((tmp_path / "results" / "asked.json").read_text())
    return asked, capsys.readouterr().out


def test_the_tuned_baseline_against_the_whole_stack_at_nanogpts_shape(tmp_path, capsys):
    asked, out = run(tmp_path, capsys, 0.62, 0.55, 0.71)
    rows = asked["suite"]["rows"]
    assert [s["add"] for s in rows] == [[], nanogpt_speedrun.STACK]
    assert {"--n-layer=4", "--n-head=4", "--n-embd=128", "--seq-len=64", "--batch-size=12", "--dropout=0"} <= set(
        asked["args"]
    )
    assert {"--step-budget=500", "--max-steps=500", "--lr=4e-3", "--target-seeds=5"} <= set(asked["args"])
    assert "x0.62 [95% 0.55-0.71]: the stack is faster to the target" in out


def test_an_interval_across_one_is_no_difference(tmp_path, capsys):
    _, out = run(tmp_path, capsys, 0.95, 0.8, 1.1)
    assert "x0.95 [95% 0.80-1.10]: no difference the interval holds" in out
    _, out = run(tmp_path / "b", capsys, 1.3, 1.1, None)
    assert "x1.30 [95% 1.10-inf]: the stack is slower to the target" in out


SEARCH = """#!/usr/bin/env python3
import json, pathlib, sys
args = sys.argv[1:]
out = pathlib.Path(next(a.split("=", 1)[1] for a in args if a.startswith("--out=")))
out.mkdir(parents=True)
(out.parent / "asked.json").write_text(json.dumps({"args": args}))
def row(label, n, below, median, low, branched, ratio=None):
    return {"label": label, "budget": n, "below": below, "search_s": 12.0, "branched": branched,
            "seconds_at_n": {"median": median, "low": low, "high": median}, "n_ratio": ratio, "seconds_ratio": ratio}
rows = [row("baseline", 500, 338, 30.0, 20.0, False),
        row("speedrun stack", 150, 100, 10.0, 6.0, True, {"ratio": 0.3, "low": 0.2, "high": 0.44})]
doc = {"grid": [100, 150, 225, 338, 500], "grid_from": "from 100 at ratio 1.5", "seeds": 5, "rows": rows}
(out / "budget.json").write_text(json.dumps(doc))
"""


def test_find_budget_asks_ablate_for_each_sides_n_on_the_grid_and_prints_them_with_their_brackets(tmp_path, capsys):
    fake = tmp_path / "ablate"
    fake.write_text(SEARCH)
    fake.chmod(0o755)
    argv = ["--ablate", str(fake), "--out", str(tmp_path / "results"), "--find-budget", "--budget-first=100"]
    assert nanogpt_speedrun.main(argv) == 0
    asked = json.loads((tmp_path / "results" / "asked.json").read_text())["args"]
    assert "--find-budget" in asked and {"--budget-first=100", "--budget-ratio=1.5", "--max-steps=500"} <= set(asked)
    assert not any(a.startswith("--step-budget") for a in asked)  # each probe sets its own
    out = capsys.readouterr().out
    assert "baseline         N   500 in (338, 500]" in out
    assert "speedrun stack   N   150 in (100, 150]" in out
    assert "the stack over the baseline: N x0.30 (0.20-0.44]" in out


def test_without_the_bytes_corpus_it_says_how_to_build_it_and_runs_nothing(tmp_path, capsys, bytes_corpus):
    """Set-up's fortunes corpus is GPT-2 tokens: a run on it would measure another model, so it is refused (exit 2)
    before any ./ablate, naming the corpus it found and the command that builds the bytes one; so is a missing one."""
    fake = tmp_path / "ablate"
    fake.write_text("#!/bin/sh\ntouch " + str(tmp_path / "ran") + "\n")
    fake.chmod(0o755)
    (bytes_corpus / "meta.json").write_text(json.dumps({"tokenizer": "gpt2", "vocab_size": 50257}))
    assert nanogpt_speedrun.main(["--ablate", str(fake)]) == 2
    err = capsys.readouterr().err
    assert f"the fortunes corpus in {bytes_corpus} is gpt2 tokens, not bytes" in err
    assert "scripts/corpus.py build fortunes --tokenizer=bytes" in err
    (bytes_corpus / "meta.json").unlink()
    assert nanogpt_speedrun.main(["--ablate", str(fake)]) == 2
    assert f"no fortunes corpus in {bytes_corpus}" in capsys.readouterr().err
    assert not (tmp_path / "ran").exists()
