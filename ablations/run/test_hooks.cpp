// The test-only fault hooks (ablations/run/test_hooks.h), read from the environment.
#include "ablations/run/test_hooks.h"

#include <cstdlib>
#include <string>

namespace stepwise::ablations {

std::optional<size_t> injected_rank_failure(const std::shared_ptr<bench::Collectives>& collectives) {
  const char* rank = std::getenv("STEPWISE_TEST_FAIL_RANK");
  if (!rank || !collectives || std::to_string(collectives->rank()) != rank) return std::nullopt;
  return 1;
}

void break_for_test(bench::RunConfig& run) {
  const char* mode = std::getenv("STEPWISE_TEST_BREAK");
  if (!mode) return;
  if (std::string(mode) == "lr0") run.adamw.lr(1e-12);
  if (std::string(mode) == "half_lr") run.adamw.lr(run.adamw.lr() / 2);
  if (std::string(mode) == "future_token") run.model.test_sees_next_token(true);
}

}  // namespace stepwise::ablations
