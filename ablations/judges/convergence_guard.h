// The convergence guard: a flag whose math class says it keeps the math must not change how many steps it takes to
// reach the target. Its steps to target across seeds are held against the baseline's with Welch's two-sided t-test:
// a difference at p < 0.05 is "slower to converge" or "faster to converge" (a broken flag can converge faster too,
// as an attention that sees the next token does), and the verdict carries the test and its numbers.
#pragma once

#include "ablations/judges/loss_check.h"
#include "bench/measure/convergence.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::ablations {

// The significance level of the guard's test.
constexpr double kConvergenceAlpha = 0.05;

struct ConvergenceVerdict {
  // "baseline", "ok", "slower to converge", "faster to converge", "not judged" (the class changes the math, or too
  // few seeds), "no baseline"; class learning, whose flags mean to change how fast it learns: "faster to target",
  // "slower to target" or "no difference", never a fault.
  std::string status;
  std::string reason;               // one line with the figures
  std::optional<std::string> math;  // the class in effect
  std::optional<double> t, df, p;
  // The test the verdict rests on: Welch's t-test on steps to target, or for class learning Gehan's test over every
  // seed, one that missed censored where it stopped (bench/measure/censored.h)
  std::string test = "Welch's two-sided t-test on steps to target, alpha 0.05";
  std::optional<double> steps_ratio, time_ratio;  // median over the baseline's median
  std::vector<double> steps, baseline_steps;      // the seeds' steps to target (a seed that never reached it: the cap)
  size_t not_reached = 0, baseline_not_reached = 0;
};

// `runs` against `baseline` (nullopt: this is the baseline, or none finished), judged by the loosest class in effect.
// A seed that did not reach the target enters Welch's test at the step it stopped at (the horizon `horizon`, or the
// cap `max_steps`), which understates how much slower it is; class learning, whose rows are meant to differ, is
// judged by Gehan's test with such a seed censored there and the reached fraction in the reason, so a row is never
// judged on its fastest seeds alone, and is "not judged" where Gehan's exact test cannot reach the level at these
// seeds (3 against 3: its smallest p is 0.1). Two seeds on each side are the least a verdict needs.
ConvergenceVerdict judge_convergence(const std::vector<bench::SeedRun>& runs,
                                     const std::optional<std::vector<bench::SeedRun>>& baseline, MathClass math,
                                     bool is_baseline, int64_t max_steps,
                                     std::optional<int64_t> horizon = std::nullopt);

}  // namespace stepwise::ablations
