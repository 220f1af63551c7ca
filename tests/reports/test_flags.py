"""flags.py: the report reads the flag table from the results (or the built engine), never from a copy of its own,
so a flag it has never heard of still shows up, and the published tables are checked against what the results know."""

import stat

import resultgen as g
from stepwise_report.cli import main
from stepwise_report.read.results import Result
from stepwise_report.render.flags import UNDESCRIBED, flag_names, flag_table, flags_table

RUN = "20260301T120000Z_t_h100"
# A flag no version of the report has heard of, declared in the made-up results' own flag table.
WARP = {"name": "warp_drive", "summary": "steps taken faster than light", "applies": "cuda"}


def _alone(speeds: dict[str, float], flags_info: list[dict]) -> list[dict]:
    return g.one_at_a_time(RUN, speeds, flags_info=flags_info)


def test_a_flag_the_report_never_heard_of_is_in_the_table_and_one_no_table_describes_too():
    docs = _alone({"bf16": 2.0, "warp_drive": 1.5}, g.FLAGS_INFO + [WARP])
    # A result of an engine whose table lacks a flag it ran with: the flag is still shown, undescribed.
    hyper = g.make_result(run_id=RUN, name="single/00_hyperspace", flags=["flash"])
    hyper["config"]["flags"] = hyper["config"]["flags_requested"] = ["hyperspace"]
    results = [Result(None, d) for d in docs + [hyper]]
    table = flag_table(results)
    assert [f["name"] for f in table] == g.FLAG_ORDER + ["warp_drive", "hyperspace"]
    assert table[-2] == WARP and table[-1]["summary"] == UNDESCRIBED
    assert flags_table(table).rows[-2:] == [
        ["warp_drive", "steps taken faster than light", "cuda"],
        ["hyperspace", UNDESCRIBED, "—"],
    ]
    assert flag_names(results) == set(g.FLAG_ORDER) | {"warp_drive", "hyperspace"}


def test_the_report_shows_a_flag_it_never_heard_of_everywhere_the_results_name_it(tmp_path):
    for doc in _alone({"bf16": 2.0, "warp_drive": 1.5}, g.FLAGS_INFO + [WARP]):
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0  # the published tables check out
    md = (tmp_path / "out" / "report.md").read_text()
    steps = md[md.index("### one_at_a_time") : md.index("## flags")]
    assert "| 2 | warp_drive | warp_drive | ok |" in steps  # the step table
    assert "| warp_drive | steps taken faster than light |" in md[: md.index("### one_at_a_time")]  # the flag matrix
    assert "| warp_drive | steps taken faster than light | cuda |" in md[md.index("## flags") :]


def test_a_published_row_keyed_by_a_flag_the_results_do_not_know_is_bad_input(tmp_path, capsys):
    # The results' table lacks fused_adamw, which the published raschka table adds: a misspelt key and a flag the
    # engine dropped look the same, and either would silently never align.
    info = [f for f in g.FLAGS_INFO if f["name"] != "fused_adamw"]
    for doc in _alone({"bf16": 2.0}, info):
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 2
    assert "unknown flag(s) ['fused_adamw']" in capsys.readouterr().err


def test_without_a_table_in_the_results_the_built_engine_is_asked(tmp_path):
    fake = tmp_path / "ablate"
    fake.write_text('#!/bin/sh\n[ "$*" = "--list-flags --json" ] && echo \'[{"name": "bf16"}, {"name": "flash"}]\'\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    doc = g.make_result(run_id=RUN, name="single/00_x", flags=["bf16"])
    del doc["flags_info"]  # a result written before the table was
    results = [Result(None, doc)]
    assert flag_table(results) == [{"name": "bf16", "summary": UNDESCRIBED, "applies": None}]
    assert flag_names(results, fake) == {"bf16", "flash"}
    assert flag_names(results, tmp_path / "not_built") is None  # nothing to check the names against


def test_a_report_of_results_without_a_table_and_no_engine_says_the_names_were_not_checked(tmp_path, monkeypatch):
    monkeypatch.setattr("stepwise_report.render.flags.ABLATE", tmp_path / "not_built")
    for doc in g.cumulative(RUN, "karpathy", g.KARPATHY[:3]):
        del doc["flags_info"]
        g.write(tmp_path / "r", doc)
    assert main([str(tmp_path / "r"), "--out", str(tmp_path / "out")]) == 0
    assert (
        "> **note:** the published tables' flag names were not checked" in (tmp_path / "out" / "report.md").read_text()
    )
