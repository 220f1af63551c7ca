"""The published reference tables: their data, the loader's checks, and alignment with our steps."""

import copy
import json

import pytest
import resultgen as g
from conftest import ROOT
from stepwise_report.analysis.analysis import build_chain
from stepwise_report.analysis.reference import REFERENCE_DIR, align, direction, load_references, parse_reference
from stepwise_report.read.results import InputError, Result
from stepwise_report.render.flags import listed_flags

# The engine's flags: each is declared once, in ablations/flags/<name>.cpp; the built engine lists them too.
DECLARED = {p.stem for p in (ROOT / "ablations" / "flags").glob("*.cpp")}


@pytest.fixture(scope="module")
def refs():
    return load_references()


def test_every_published_row_is_keyed_by_known_flags_and_sourced(refs):
    assert len(DECLARED) > 10, "found almost no flag declarations: the scan is broken"
    listed = listed_flags()
    engine = [DECLARED] + ([{f["name"] for f in listed}] if listed is not None else [])
    assert load_references(flags=set.intersection(*engine)) == refs  # what ./report checks, against the engine's names
    assert set(refs) == {"raschka", "karpathy", "speedrun"}
    for ref in refs.values():
        assert all(ref.source[k] for k in ("repository", "path", "commit", "url"))
        assert ref.hardware and ref.software and ref.workload and ref.metric_notes
        assert sum(r.baseline for r in ref.rows) == 1
        for row in ref.rows:
            assert all(set(row.added) <= names for names in engine)
            if ref.minutes:  # the speedrun's records: minutes to the target instead of a throughput
                assert row.minutes_to_target and row.minutes_to_target > 0
            else:
                assert row.throughput and row.throughput > 0
            assert row.baseline or row.added


def test_published_figures_are_the_spec_values(refs):
    raschka = {r.step: r for r in refs["raschka"].rows}
    assert raschka[0].tokens_per_s == 12525 and raschka[10].tokens_per_s == 142156
    assert raschka[7].added == ("flash",) and raschka[7].reserved_gib == pytest.approx(5.9004)
    assert refs["raschka"].scaling[0]["tokens_per_s"] == 419259
    karpathy = refs["karpathy"]
    assert [r.ms_per_step for r in karpathy.rows] == [1000, 333, 300, 130, 96, 93, 90]
    # Only ms/step is published: tok/s is derived from it and says so.
    assert karpathy.rows[3].tokens_per_s is None
    assert karpathy.rows[3].throughput == pytest.approx(16384 / 0.130)
    assert karpathy.x_baseline(karpathy.rows[-1]) == pytest.approx(1000 / 90)


def test_loader_rejects_unknown_flags_and_missing_sources():
    data = json.loads((REFERENCE_DIR / "raschka.json").read_text())
    bad = copy.deepcopy(data)
    bad["rows"][3]["added"] = ["fused_adam"]
    with pytest.raises(InputError, match="unknown flag"):
        parse_reference(bad, "bad", flags=g.FLAG_ORDER)  # the flag names the made-up results carry
    assert parse_reference(bad, "bad").rows[3].added == ("fused_adam",)  # no flag table known: names not checked
    bad = copy.deepcopy(data)
    bad["source"]["commit"] = ""
    with pytest.raises(InputError, match="source lacks"):
        parse_reference(bad, "bad")
    bad = copy.deepcopy(data)
    bad["rows"][4]["added"] = ["tf32"]
    with pytest.raises(InputError, match="same flags"):
        parse_reference(bad, "bad")


def test_direction_dead_band():
    assert direction(1.019, 0.02) == "flat" and direction(0.981, 0.02) == "flat"
    assert direction(1.03, 0.02) == "up" and direction(0.95, 0.02) == "down"
    assert direction(None, 0.02) is None


def test_alignment_by_added_flags_spans_and_direction(refs):
    steps_spec = [list(s) for s in g.RASCHKA]
    steps_spec[1][2] = 0.90  # our dynamic mask slows down; the published one is flat
    docs = g.cumulative("20260301T120000Z_t_h100", "raschka", steps_spec, skip={4: "n/a"})
    steps = build_chain([Result(None, d) for d in docs])
    aligned = align(steps, refs["raschka"], dead_band=0.02)
    by_index = {a.step.index: a for a in aligned}
    assert by_index[0].row.baseline and by_index[7].row.added == ("flash",)
    assert by_index[1].differs and (by_index[1].ours_direction, by_index[1].published_direction) == ("down", "flat")
    assert not by_index[2].differs
    # Step 5 spans the skipped step 4: the published ratio covers the same span (row 5 over row 3).
    assert by_index[5].published_x_previous == pytest.approx(45486 / 28399)
    assert by_index[4].published_x_previous is None and by_index[4].ours_direction is None
