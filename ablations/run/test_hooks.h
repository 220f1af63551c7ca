// The test-only fault hooks, in one place: environment variables that break a run on purpose so the tests can prove
// that the loss check and the data-parallel failure handling catch what they promise to. Unset, they do nothing.
#pragma once

#include "bench/distributed/collectives.h"
#include "bench/run_config.h"

#include <cstddef>
#include <memory>
#include <optional>

namespace stepwise::ablations {

// STEPWISE_TEST_FAIL_RANK=R (tests/e2e/test_distributed.py): rank R's configurations fail before their second
// measured step while the other ranks run on, the case a data-parallel run must end cleanly instead of hanging.
// Returns the measured step to fail before (bench::RunHooks::fail_before_step) on that rank.
std::optional<size_t> injected_rank_failure(const std::shared_ptr<bench::Collectives>& collectives);

// STEPWISE_TEST_BREAK=lr0|half_lr|future_token (tests/e2e/test_loss_check.py, tests/e2e/test_convergence.py): breaks
// a configuration — a learning rate of ~0, or half of it, or an attention that also sees the next token — so the loss
// check must call it "math changed" and the convergence guard slower or faster. Applied to every configuration but a
// suite's baseline.
void break_for_test(bench::RunConfig& run);

}  // namespace stepwise::ablations
