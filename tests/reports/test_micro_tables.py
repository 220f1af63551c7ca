"""micro_tables.py: a micro-benchmark file's cases, each baseline above its variants, speedups with intervals."""

import re
from pathlib import Path

from conftest import micro_file
from stepwise_report.read.micro import Case, MicroFile
from stepwise_report.render.micro_tables import case_groups, case_label, case_table


def test_manual_time_names_pair_and_lose_their_suffix():
    ctx = {"stepwise_baselines": "attention=explicit", "stepwise_device": "cuda:0: NVIDIA H100 80GB HBM3"}
    names = [
        "attention/gpt2-124m/explicit/fwd+bwd/bf16/B:8/T:1024/manual_time",
        "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:1024/manual_time",
        "attention/gpt2-124m/sdpa_flash/fwd+bwd/bf16/B:8/T:512/manual_time",
    ]
    cases = [Case(n, n.split("/"), "ms", [t]) for n, t in zip(names, (4.0, 1.0, 0.5))]
    m = MicroFile(Path("gpu.json"), ctx, cases)
    assert m.speedup(cases[1]) == 4.0 and m.speedup(cases[2]) is None  # no explicit run at T:512
    assert case_label(m, cases[1]) == "sdpa_flash/fwd+bwd/bf16/B:8/T:1024" and m.manual_time
    assert [t for t, _ in case_groups(m)] == ["attention · gpt2-124m"]


def test_rows_put_each_baseline_above_its_variants():
    ((title, cases),) = [g for g in case_groups(micro_file()) if g[0] == "layernorm · tiny"]
    assert [case_label(micro_file(), c) for c in cases[:4]] == [
        "handwritten/fwd/B:4/T:16",
        "native/fwd/B:4/T:16",
        "handwritten/fwd/B:4/T:64",
        "native/fwd/B:4/T:64",
    ]


def test_micro_speedups_carry_the_interval_of_their_repetitions():
    from conftest import MICRO_RAW, micro_rows
    from stepwise_report.read.micro import parse_micro

    m = parse_micro(Path("micro.json"), micro_rows(MICRO_RAW, 3))  # 9 repetitions per case
    ((_, cases),) = [g_ for g_ in case_groups(m) if g_[0] == "layernorm · tiny"]
    native = next(c for c in cases if case_label(m, c) == "native/fwd/B:4/T:16")
    cell = case_table(m, cases).rows[cases.index(native)][-1]
    assert re.fullmatch(r"7\.79× \(\d+\.\d\d–\d+\.\d\d\)", cell), cell
