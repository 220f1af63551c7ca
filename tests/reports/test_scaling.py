"""scaling.py: tokens/s on N ranks against N times one rank, the ranks' spread, and the published multi-GPU figures."""

import resultgen as g
from conftest import column
from stepwise_report.analysis.analysis import find_scaling
from stepwise_report.analysis.reference import load_references
from stepwise_report.read.results import Result
from stepwise_report.render.scaling import published_scaling_table, scaling_table

RUN = "20260301T120000Z_t_h100"


def _pairs(**distributed):
    """bf16 on four ranks at 110 ms a step beside the same on one rank at 100 ms."""
    multi = g.make_result(
        run_id=RUN,
        name="single/00_ddp",
        flags=["bf16"],
        median_ms=110,
        distributed={"world_size": 4, "backend": "nccl", "bucket_bytes": 25 << 20, **distributed},
    )
    multi["summary"]["tokens_per_s"] *= 4  # global, as the engine writes it
    one = g.make_result(run_id=RUN, name="single/01_one_rank", flags=["bf16"], median_ms=100)
    return find_scaling([Result(None, d) for d in (multi, one)])


def test_efficiency_is_n_ranks_over_n_times_one_and_the_slowest_rank_is_named():
    table = scaling_table(_pairs(rank_step_ms_median=[100, 104, 108, 110], slowest_rank=3))
    assert column(table, "ranks") == ["4"] and column(table, "backend") == ["nccl"]
    assert column(table, "scaling efficiency") == ["90.9%"]  # 100 ms on one rank, 110 on each of four
    assert column(table, "tok/s on N (global)") == ["18,667"] and column(table, "per rank") == ["4,667"]
    assert column(table, "rank step-time spread") == ["+10.0% (slowest rank 3)"]
    assert column(scaling_table(_pairs()), "rank step-time spread") == ["—"]  # no per-rank medians recorded


def test_the_published_scaling_is_set_beside_ours():
    table = published_scaling_table(list(load_references().values()))
    # Raschka's four A100s against his one-GPU step 10: 419,259 ÷ (4 × 142,156).
    assert table.rows == [
        [
            "Raschka, LLMs-from-scratch: LLM training speed (1× A100)",
            "4× A100, DDP (02_opt_multi_gpu_ddp.py)",
            "4",
            "142,156",
            "419,259",
            "73.7%",
        ]
    ]
    assert published_scaling_table([]) is None
