"""What a new flag with options takes: its declaration (ablations/flags/<name>.cpp) and the files its declaration
lists as its code, nothing else. An option's name is spelled as a key (a string literal) only there: the command
line, suite files, results, the schema, the startup table and the Python rows' request all come from the
declaration, so a file that spells it again is a second place the option is written. Counted for a real flag with an
option, logit_softcap, against the number docs/flags.md states. Each check also runs on synthetic input that must
fail."""

import json
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ABLATE = os.environ.get("STEPWISE_BIN") or str(ROOT / "ablate")
SCANNED = ("model/", "bench/", "ablations/", "reports/", "scripts/")
SUFFIXES = (".cpp", ".h", ".py", ".sh")
# Files that set a flag's options as a suite file does, not code that reads them.
SUITE_WRITERS = {"scripts/verify/steps.py": "scripts/verify-gpu.sh's pass 1 writes its suite file with them"}
# The real flag with an option whose count docs/flags.md states.
COUNTED = "logit_softcap"


def flag_table() -> list[dict]:
    run = subprocess.run([ABLATE, "--list-flags", "--json"], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def sources() -> dict[str, str]:
    files = subprocess.run(["git", "ls-files", *SCANNED], cwd=ROOT, capture_output=True, text=True, check=True)
    return {p: (ROOT / p).read_text(errors="replace") for p in files.stdout.split() if p.endswith(SUFFIXES)}


def respelled(flags: list[dict], texts: dict[str, str]) -> list[str]:
    """An option's name as a string literal in a file that is neither its flag's declaration nor in its code list."""
    problems = []
    for flag in flags:
        allowed = set(flag["code"]) | set(SUITE_WRITERS)
        for option in flag.get("options", []):
            literal = re.compile(r"[\"']" + re.escape(option["name"]) + r"[\"']")
            problems += [
                f"{path} spells {flag['name']}'s option '{option['name']}': read it from the declaration, or list "
                f"the file in the flag's code"
                for path, text in sorted(texts.items())
                if path not in allowed and literal.search(text)
            ]
    return problems


def stated_count(docs: str, flag: str) -> int | None:
    match = re.search(rf"`{flag}`[^.]*?is \*\*(\d+) files\*\*", docs)
    return int(match.group(1)) if match else None


def test_an_option_is_spelled_only_in_its_declaration_and_the_code_it_switches():
    flags = flag_table()
    texts = sources()
    assert len(texts) > 100 and any(f.get("options") for f in flags), "the scan found almost nothing"
    assert respelled(flags, texts) == []


def test_the_docs_say_how_many_files_a_flag_with_an_option_takes():
    (flag,) = [f for f in flag_table() if f["name"] == COUNTED]
    assert flag["options"], f"{COUNTED} has no option any more: count another flag that has one"
    docs = (ROOT / "docs" / "flags.md").read_text()
    assert stated_count(docs, COUNTED) == len(set(flag["code"])), (
        f"docs/flags.md states {stated_count(docs, COUNTED)} files for {COUNTED}; its declaration and code list "
        f"are {len(set(flag['code']))}: {flag['code']}"
    )


def test_synthetic_respellings_and_counts_are_caught():
    flags = [{"name": "throwaway", "code": ["ablations/flags/throwaway.cpp"], "options": [{"name": "throwaway_rows"}]}]
    texts = {
        "ablations/flags/throwaway.cpp": 'positive_option("throwaway_rows", ...)',
        "bench/python/request.py": 'rows = config["throwaway_rows"]',
        "bench/step/train_step.cpp": "// throwaway_rows, in a comment without quotes",
    }
    assert respelled(flags, texts) == [
        "bench/python/request.py spells throwaway's option 'throwaway_rows': read it from the declaration, or list "
        "the file in the flag's code"
    ]
    assert stated_count("`throwaway` (its option `--rows`) is **3 files**: ...", "throwaway") == 3
    assert stated_count("`throwaway` takes three files.", "throwaway") is None
