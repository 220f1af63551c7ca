// trapezoid (the speedrun's record #2, arXiv 2405.18392's warm-up-stable-decay): the learning rate warms up, stays
// flat, then falls linearly over the last part of the run, in place of the run's schedule, for every parameter group.
// The trapezoid's one spelling (--lr-schedule takes constant or cosine), so it can be switched per configuration in a
// suite. Its warm-up and span are --lr-warmup-steps and the declared horizon, its cool-down its own option below
// (bench/lr_schedule.h).
#include "ablations/flag_table/flags.h"

namespace stepwise::ablations {
namespace {

const FlagRegistration trapezoid({
    .name = "trapezoid",
    .position = 205,
    .summary = "the learning rate on the speedrun's trapezoid: warm-up, flat, then a linear cool-down over the last "
               "--lr-cooldown-steps (default 0.4 of the run)",
    .reference = "the run's --lr-schedule (constant for throughput rows, cosine when training to a target)",
    .stage = "optimizer",
    .math = MathClass::Learning,
    .applies = Applies::Both,
    .code = {"ablations/flags/trapezoid.cpp", "bench/lr_schedule.cpp", "bench/python/lr_schedule.py"},
    .apply = [](bench::RunConfig& c) { c.lr_schedule.kind = bench::LrScheduleKind::Trapezoid; },
    // Recorded in config.lr_schedule.cooldown_steps as the D that ran (the fraction's when not given), not here.
    .options = {positive_option(
                    "lr_cooldown_steps", "steps", [](auto& c) -> auto& { return c.lr_schedule.cooldown_steps; },
                    "with trapezoid: steps of the linear cool-down at the end of the horizon",
                    "0.4 of the horizon, the speedrun's later records (record #18)")
                    .in_suite_files()
                    .not_in_results()},
});

}  // namespace
}  // namespace stepwise::ablations
