// One seed trained for every budget of a grid at about the cost of the longest: the warmup-stable-decay property
// (arXiv 2405.18392) that the speedrun's trapezoid has. Its schedule for a budget n is the longest budget's up to the
// step n's cool-down begins (n - D), so one line of training on the longest budget's schedule serves every budget: at
// each shorter budget's branch point a copy of the state trains that budget's cool-down to its end and is evaluated
// there, then the line goes on from where it paused. A constant rate branches at the budget itself (nothing cools
// down); a cosine decays over the budget from its first step, so each budget trains from scratch (train_to_target).
#pragma once

#include "bench/lr_schedule.h"
#include "bench/measure/convergence.h"
#include "bench/run_config.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepwise::bench {

// The step at which budget n's schedule leaves the longest one's: the trapezoid's n - D(n) (its cool-down begins), a
// constant rate's n; nullopt for a cosine, which depends on n from step 0.
std::optional<int64_t> branch_point(const LrSchedule& schedule, int64_t n);

// Why `config` cannot serve a grid from one line per seed (a cosine schedule, compile's captured step), or nullopt.
std::optional<std::string> cannot_branch(const RunConfig& config);

// The steps one seed trains for `budgets` (ascending) branched: the longest budget's, and each shorter one's
// cool-down; without branching, the sum of the budgets.
int64_t branched_steps(const LrSchedule& schedule, const std::vector<int64_t>& budgets);

// One seed (config.seed) trained to every budget of `budgets` (ascending; cannot_branch must be nullopt), on
// config.lr_schedule over each budget. Each budget's SeedRun is the one train_to_target records with --step-budget at
// that budget (tests/bench/measure/budget_branches_test.cpp holds them to each other within the exact class): its
// curve, steps and timed seconds up to the branch point are the line's, the rest its own cool-down's. A seed the caps
// stopped before a budget's branch point records that stop for it; never throws for the run's own failures.
std::vector<SeedRun> train_to_budgets(const RunConfig& config, const std::shared_ptr<const Tokens>& train,
                                      const std::shared_ptr<const Tokens>& val, const TargetOptions& options,
                                      const std::vector<int64_t>& budgets,
                                      const ConvergenceProgress& on_progress = nullptr,
                                      const std::atomic<bool>* interrupted = nullptr);

}  // namespace stepwise::bench
