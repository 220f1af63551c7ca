"""results/schema.json and results/README.md name every flag option results hold, as the flags declare it
(scripts/dev/results_schema.py generates both parts from ./ablate --list-flags --json): a declared option missing from
either, or one left there after its flag dropped it, fails here. The generator itself is held to a synthetic option
added and removed, so a check that silently compares nothing is caught."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "dev"))
import results_schema  # noqa: E402

ABLATE = os.environ.get("STEPWISE_BIN") or str(ROOT / "ablate")


def test_the_committed_schema_and_readme_are_the_declarations():
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "dev" / "results_schema.py"), f"--ablate={ABLATE}", "--check"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    flags = results_schema.declarations(ABLATE)
    config = json.loads(results_schema.SCHEMA.read_text())["properties"]["config"]["properties"]
    readme = results_schema.README.read_text()
    for flag, option in results_schema.recorded(flags):
        assert option["name"] in config, f"{flag}'s {option['name']} is not in results/schema.json"
        assert f"| `{option['name']}` | `{flag}` |" in readme, f"{option['name']} is not in results/README.md"
    assert {"muon_lr", "softcap", "bf16_mode"} <= set(config), "the speedrun's options are recorded, and typed"


def test_an_option_added_or_dropped_changes_the_generated_parts_only():
    flags = results_schema.declarations(ABLATE)
    schema = json.loads(results_schema.SCHEMA.read_text())
    new = {"name": "throwaway_depth", "cli": "--throwaway-depth", "help": "with throwaway: how deep", "type": "integer"}
    new |= {"minimum": 1.0, "default": "2", "in_results": True, "acts_while_off": False}
    added = [*flags, {"name": "throwaway", "options": [new]}]
    config = results_schema.with_generated(schema, added)["properties"]["config"]["properties"]
    assert config["throwaway_depth"]["type"] == ["integer", "null"] and config["throwaway_depth"]["minimum"] == 1
    assert "| `throwaway_depth` | `throwaway` |" in results_schema.with_table(results_schema.README.read_text(), added)
    # Dropped again: its entry goes, and the hand-written keys stay.
    again = results_schema.with_generated(results_schema.with_generated(schema, added), flags)
    assert again == results_schema.with_generated(schema, flags) and "throwaway_depth" not in json.dumps(again)
    assert "muon_adam_record" in again["properties"]["config"]["properties"], "a hand-written key is kept"
